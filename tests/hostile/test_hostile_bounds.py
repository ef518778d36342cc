"""Hostile input (issue 22, bounds): work in proportion to the input, and no traceback
on numbers of any length or data nested deeply.

Cluster mode's bounds (deadlines, answer sizes, lists that must end) are tested against
the test API server in tests/cluster/test_cluster.py; here: dump files, name patterns,
conversion's growth with the workloads of a file, and numbers in every field read.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.convert import mapping
from dra_migrate.manifests import trees
from dra_migrate.pipeline import one_file
from tests.helpers.cli_runner import Result, invoke
from tests.helpers.invariants import gpu_pod

POSITIONED = re.compile(r"^\S+:\d+:\d+: DRA\d{3} ", re.M)


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


def cli(*args: str) -> Result:
    result = invoke(list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output and "DRA900" not in result.output, result.output
    return result


def pods(n: int, count: str = "1") -> str:
    return "".join("---\n" + gpu_pod(f"p{i}", count=count) for i in range(n))


# --- inventory reads dump files as manifests are read ------------------------------------


def test_inventory_dump_that_is_a_fifo_or_a_device(here: Path) -> None:
    os.mkfifo("pipe.yaml")  # opened with a blocking read, a FIFO waits for a writer forever
    Path("zero.yaml").symlink_to("/dev/zero")  # read whole, /dev/zero never ends
    result = cli("inventory", "pipe.yaml", "zero.yaml")
    assert result.exit_code == 123, result.output
    assert "pipe.yaml:1:1: DRA010" in result.output and "zero.yaml:1:1: DRA010" in result.output


def test_inventory_dump_larger_than_the_limit(here: Path) -> None:
    Path("big.yaml").write_text(pods(3), encoding="utf-8")
    result = cli("inventory", "--max-file-size", "100", "big.yaml")
    assert result.exit_code == 123 and "big.yaml:1:1: DRA011" in result.output, result.output
    assert cli("inventory", "big.yaml").exit_code == 0


def test_inventory_dump_nested_deeply(here: Path) -> None:
    Path("deep.json").write_text('{"items": ' + "[" * 100_000 + "]" * 100_000 + "}")
    Path("deep.yaml").write_text("a: " + "[" * 1000 + "]" * 1000 + "\n")
    result = cli("inventory", "deep.json", "deep.yaml")
    assert result.exit_code == 123, result.output
    assert "deep.json:1:1: DRA004" in result.output and "deep.yaml:1:" in result.output


# --- name patterns: linear matching, checked at load ---------------------------------------

# The old matcher: one backtracking regular expression a name.
_CAPTURE = "[A-Za-z0-9][A-Za-z0-9._+-]*"


def _regex_match(name: str, resource: str) -> dict[str, str] | None:
    out, pos = [], 0
    for m in re.finditer(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}", name):
        out.append(re.escape(name[pos : m.start()]) + f"(?P<{m[1]}>{_CAPTURE})")
        pos = m.end()
    found = re.fullmatch("".join(out) + re.escape(name[pos:]), resource)
    return found.groupdict() if found else None


_PIECES = st.sampled_from(["{a}", "{b}", "{c}", "-", ".", "/", "x", "1", "g", "_"])
_TEXT = st.text(alphabet="ax1.-_/+g", max_size=14)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=6, unique=True), _TEXT)
def test_placeholder_matching_gives_the_regex_captures(pieces: list[str], resource: str) -> None:
    name = "".join(pieces)
    assert mapping.match_name(name, resource) == _regex_match(name, resource)


def test_many_placeholders_and_a_long_key_match_at_once() -> None:
    """Twelve placeholders around separators they may also capture, on a key of the
    longest length a resource name can have: the regex took exponential time here."""
    name = "x/" + "-".join(f"{{p{i}}}" for i in range(12))
    resource = "x/" + ("a-" * 200)[: mapping.MAX_RESOURCE_NAME - 3] + "!"
    assert mapping.match_name(name, resource) is None
    fitting = "x/" + "-".join("ab" for _ in range(12))
    assert mapping.match_name(name, fitting) == {f"p{i}": "ab" for i in range(12)}
    assert mapping.match_name(name, fitting + "-" + "a" * 400) is None  # longer than a name


def test_adjacent_placeholders_are_a_configuration_error(here: Path) -> None:
    Path(".dra-migrate.yaml").write_text(
        "resources:\n  - name: example.com/gpu-{model}{memory}\n    deviceClass: gpu.example.com\n"
    )
    Path("pod.yaml").write_text(pods(1))
    result = cli("convert", "pod.yaml")
    assert result.exit_code == 2, result.output
    assert ".dra-migrate.yaml:2:11:" in result.output
    assert "{model} and {memory} are adjacent" in result.output


# --- conversion is linear in the GPU workloads of a file -----------------------------------


class _Counted(dict[str, Any]):
    """A loaded template that counts the comparisons made with it."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        _Counted.comparisons += 1
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]


def test_generated_templates_are_each_compared_once(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """_loads_back checked every generated template against a list of all the loaded
    ones: n * n / 2 comparisons for n GPU Pods in one file."""
    plain = trees.to_data

    def counted(node: Any) -> Any:
        data = plain(node)
        return _Counted(data) if isinstance(data, dict) else data

    monkeypatch.setattr(one_file.trees, "to_data", counted)
    Path("pods.yaml").write_text(pods(200))
    _Counted.comparisons = 0
    result = cli("convert", "--jobs", "1", "pods.yaml")
    assert result.exit_code == 0, result.output
    assert _Counted.comparisons <= 200, _Counted.comparisons


def _calls(path: Path) -> int:
    profile = cProfile.Profile()
    profile.enable()
    try:
        cli("convert", "--jobs", "1", str(path))
    finally:
        profile.disable()
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


@pytest.mark.parametrize("verdicts", ["kept", "checked"])
def test_convert_does_work_in_proportion_to_the_pods(
    here: Path, monkeypatch: pytest.MonkeyPatch, verdicts: str
) -> None:
    """Function calls, not time: 4 times the Pods in one file is 4 times the calls,
    with the schema verdicts of the files' conversions kept from a run before and
    with every object checked (a cache folder with no book)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(here / "cache"))
    small, large = Path("small.yaml"), Path("large.yaml")
    small.write_text(pods(100))
    large.write_text(pods(400))
    _calls(small), _calls(large)  # the first runs fill the caches, for both files
    assert len(list((here / "cache" / "dra-migrate").glob("schema-book-*.json"))) == 2

    def calls(path: Path) -> int:
        if verdicts == "checked":
            for book in (here / "cache" / "dra-migrate").glob("schema-book-*.json"):
                book.unlink()
        return _calls(path)

    ratio = calls(large) / calls(small)
    assert 3.5 < ratio < 4.4, ratio


# --- numbers of any length in every field that is read -------------------------------------

HUGE = st.integers(min_value=4300, max_value=6000).map(lambda n: "9" * n)
FORMS = st.sampled_from(["{}", '"{}"', "{}Gi", '"{}m"', "0x{}", "{}.5", "-{}", "{}e3"])


def _number(digits: str, form: str) -> str:
    return form.replace("{}", digits)


RCT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: t, namespace: ml}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: {value}
          selectors:
          - cel:
              expression: "device.attributes['gpu.nvidia.com'].index == {digits} && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{digits}Gi')) >= 0 && device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('{digits}.0.0'))"
"""
SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: s}}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {{name: n1, generation: {value}, resourceSliceCount: {value}}}
  devices:
  - name: gpu-0
    attributes:
      index: {{int: {value}}}
      driverVersion: {{version: {digits}.0.0}}
      productName: {{string: x}}
    capacity:
      memory: {{value: {value}}}
"""


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(HUGE, FORMS)
def test_numbers_of_any_length_are_positioned_findings(here: Path, digits: str, form: str) -> None:
    value = _number(digits, form)
    Path("pod.yaml").write_text(pods(1, value))
    Path("rct.yaml").write_text(RCT.format(value=value, digits=digits))
    Path("slices.yaml").write_text(SLICE.format(value=value, digits=digits))
    converted = cli("convert", "--jobs", "1", "pod.yaml")
    assert converted.exit_code == 1 and POSITIONED.search(converted.output), converted.output
    assert re.search(r"pod\.yaml:\d+:\d+: DRA10[18] ", converted.output), converted.output
    checked = cli("validate", "--jobs", "1", "rct.yaml", "slices.yaml")
    assert checked.exit_code == 1 and POSITIONED.search(checked.output), checked.output
    on_devices = cli("validate", "--jobs", "1", "--resource-slices", "slices.yaml", "rct.yaml")
    assert on_devices.exit_code in (0, 1, 2), on_devices.output
    Path("dump.json").write_text(
        '{"kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": '
        '{"name": "p", "namespace": "d"}, "spec": {"containers": [{"name": "c", '
        '"resources": {"limits": {"nvidia.com/gpu": ' + digits + "}}}]}}]}"
    )
    assert cli("inventory", "dump.json", "slices.yaml", "pod.yaml").exit_code == 0


def test_a_count_of_5000_digits_is_dra108(here: Path) -> None:
    Path("pod.yaml").write_text(pods(1, "9" * 5000))
    result = cli("convert", "pod.yaml")
    assert result.exit_code == 1, result.output
    assert "pod.yaml:13:25: DRA108" in result.output
    assert "(5000 characters)" in result.output  # the value is cut in the message


def test_cel_integer_literal_out_of_range_does_not_compile(here: Path) -> None:
    Path("rct.yaml").write_text(RCT.format(value="1", digits="9" * 30))
    result = cli("validate", "rct.yaml")
    assert result.exit_code == 1, result.output
    assert "DRA330" in result.output and "out of range" in result.output


_SUFFIXES = ["", "m", "k", "M", "G", "E", "Ki", "Gi", "Ei", "e3", "e-5", "E18", "e+19", "n"]


def _exact(text: str) -> Any:
    """The value of a quantity by the book, with no bound on its digits."""
    from fractions import Fraction

    found = re.fullmatch(r"([+-]?[0-9]*\.?[0-9]*)(.*)", text)
    assert found
    number, suffix = Fraction(found[1]), found[2]
    binary = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
    decimal = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15}
    if suffix in binary:
        return number * 2 ** binary[suffix]
    if suffix in decimal or suffix == "E":
        return number * Fraction(10) ** (18 if suffix == "E" else decimal[suffix])
    return number * Fraction(10) ** int(suffix[1:])


@settings(max_examples=500, deadline=None)
@given(
    st.from_regex(r"\A[+-]?0{0,3}[0-9]{1,140}(\.[0-9]{0,30})?\Z"),
    st.sampled_from(_SUFFIXES),
)
def test_too_large_agrees_with_the_exact_value(number: str, suffix: str) -> None:
    from dra_migrate.k8s import quantity

    text = number + suffix
    exact = _exact(text)
    assert quantity.too_large(text) == (exact > quantity.INT64_MAX)
    value = quantity.parse_quantity(text)
    assert value is None or value == exact
    digits = number.lstrip("+-").replace(".", " ").split()
    if len("".join(digits).strip("0")) <= quantity.MAX_DIGITS // 2:
        assert value == exact  # short numbers are always read exactly
