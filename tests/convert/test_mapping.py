"""The mapping file: the built-ins are valid, and a project's file is checked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dra_migrate.convert.mapping import _DEFAULTS, Context, load_config
from dra_migrate.manifests import compose, sources, trees
from dra_migrate.package_data import schema_path
from dra_migrate.repo import discover


def test_builtin_defaults_pass_the_config_schema() -> None:
    """load_config does not re-check its own defaults at run time; this does."""
    schema = json.loads(Path(schema_path("config.schema.json")).read_text())
    [doc] = compose.parse(sources.decode(_DEFAULTS, Path(_DEFAULTS).read_bytes()))
    jsonschema.Draft7Validator(schema).validate(trees.to_data(doc.root))


def test_builtin_mig_profile_becomes_a_selector() -> None:
    choice = load_config(None).choose("nvidia.com/mig-1g.10gb", Context())
    assert choice is not None and choice.device_class == "mig.nvidia.com"
    assert choice.selectors == ("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",)


def test_the_builtin_mapping_is_built_into_the_package_as_read_from_yaml(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from dra_migrate.convert import mapping

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    from_json = mapping.builtin_mapping()
    assert from_json == mapping._read(mapping._DEFAULTS, "defaults.yaml", check=False)[0]
    assert not (tmp_path / "dra-migrate").exists()  # nothing kept in the cache folder
    # a defaults.yaml edited since the JSON was built is read itself
    edited = tmp_path / "defaults.yaml"
    edited.write_text(
        Path(mapping._DEFAULTS).read_text().replace("gpu.nvidia.com", "x.example.com")
    )
    monkeypatch.setattr(mapping, "_DEFAULTS", str(edited))
    assert "x.example.com" in json.dumps(mapping.builtin_mapping())


_TOKEN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_needles_find_every_spelling_of_every_name_the_mapping_takes(
    data: st.DataObject,
) -> None:
    # the byte search decides what is parsed at all: a name it misses is a GPU
    # request the run never sees. Every built-in name and detect pattern, filled in,
    # as a YAML or JSON key, in flow style, and as the last step of a JSON pointer
    config = load_config(None)
    pattern = data.draw(st.sampled_from([m.name for m in config.resources] + list(config.detect)))
    domain = data.draw(st.builds(lambda a, b: f"{a}.{b}", _TOKEN, _TOKEN))
    name = re.sub(r"\{[^}]*\}", lambda _m: data.draw(_TOKEN), pattern)
    name = name.replace("*/", domain + "/") if name.startswith("*/") else name
    name = re.sub(r"\*", lambda _m: data.draw(_TOKEN), name)
    assume(config.is_gpu(name))
    pointer = name.replace("~", "~0").replace("/", "~1")
    for text in (
        f"limits:\n  {name}: 1\n",
        f'{{"limits": {{"{name}": "1"}}}}',
        f"limits: {{{name}: 1, cpu: 2}}\n",
        f"- op: add\n  path: /spec/containers/0/resources/limits/{pointer}\n  value: 1\n",
    ):
        assert discover.mentions(text.encode(), config.needles()), (name, text)


def test_a_file_name_or_an_image_that_says_gpu_is_not_a_reason_to_parse() -> None:
    # the open-domain pattern */gpu keeps its separator: "gpu" alone is everywhere
    needles = load_config(None).needles()
    assert b"gpu" not in needles
    assert not discover.mentions(b"patches:\n  - path: gpu.yaml\n", needles)
    assert not discover.mentions(b"image: gpu-burn:latest\nname: gpu-operator\n", needles)


def test_builtin_amd_partition_names_take_the_modes_and_one_partition() -> None:
    """ROCm/k8s-device-plugin mixed naming (amd.com/cpx_nps4) to gpu.amd.com with the
    DRA driver's computePartition/memoryPartition and capacity partitions."""
    choice = load_config(None).choose("amd.com/cpx_nps4", Context())
    assert choice is not None and choice.device_class == "gpu.amd.com"
    assert choice.selectors == (
        "device.attributes['gpu.amd.com'].computePartition == 'cpx'",
        "device.attributes['gpu.amd.com'].memoryPartition == 'nps4'",
    )
    assert choice.capacity == (("partitions", "1"),)
    # passthrough names of the same naming strategy are no partitions
    assert load_config(None).choose("amd.com/gpu_vf", Context()) is None
    gaudi = load_config(None).choose("habana.ai/gaudi", Context())
    assert gaudi is not None and gaudi.device_class == "gaudi.intel.com"


@pytest.mark.parametrize("value", ["'a lot'", "-1", "{requests: 1}"])
def test_a_capacity_request_that_is_no_quantity_is_refused(tmp_path: Path, value: str) -> None:
    from dra_migrate.convert.mapping import ConfigError

    path = tmp_path / ".dra-migrate.yaml"
    path.write_text(
        f"resources:\n  - name: amd.com/gpu\n    deviceClass: gpu.amd.com\n"
        f"    capacity:\n      partitions: {value}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.line == 5
