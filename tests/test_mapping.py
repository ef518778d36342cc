"""The mapping file: the built-ins are valid, and a project's file is checked."""

from __future__ import annotations

import json

import jsonschema

from dra_migrate import load
from dra_migrate.mapping import _DEFAULTS, Context, load_config
from dra_migrate.resources import schema_path


def test_builtin_defaults_pass_the_config_schema() -> None:
    """load_config does not re-check its own defaults at run time; this does."""
    schema = json.loads(schema_path("config.schema.json").read_text())
    [doc] = load.parse(load.decode(str(_DEFAULTS), _DEFAULTS.read_bytes()))
    jsonschema.Draft7Validator(schema).validate(load.to_data(doc.root))


def test_builtin_mig_profile_becomes_a_selector() -> None:
    choice = load_config(None).choose("nvidia.com/mig-1g.10gb", Context())
    assert choice is not None and choice.device_class == "mig.nvidia.com"
    assert choice.selectors == ("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",)
