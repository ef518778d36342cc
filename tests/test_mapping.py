"""The mapping file: the built-ins are valid, and a project's file is checked."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

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


def test_the_builtin_mapping_is_read_from_the_users_cache_as_it_was_read_from_yaml(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    from_yaml = load_config(None)
    [kept] = (tmp_path / "dra-migrate").glob("defaults-*.json")
    assert load_config(None) == from_yaml
    # the kept copy is what is read, while defaults.yaml is unchanged
    kept.write_text(kept.read_text().replace('"gpu.nvidia.com"', '"kept.example.com"', 1))
    assert load_config(None) != from_yaml
