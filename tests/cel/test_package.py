"""The cel package's shape: what importing it costs, what each path imports, and
that its records are the package's one record idiom."""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys

import pytest

from dra_migrate import cel
from tests.conftest import REPO

LIBRARIES = ("celpy", "lark", "re2")
EVALUATION = ("dra_migrate.cel.evaluator", "dra_migrate.cel.runtime", "dra_migrate.cel.operators")


def _loaded_after(code: str) -> list[str]:
    """The modules of the CEL libraries and of cel's evaluation that ``code`` imports."""
    probe = (
        f"import sys\n{code}\nimport json\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {LIBRARIES!r} "
        f"or m in {EVALUATION!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    found: list[str] = json.loads(done.stdout)
    return found


def test_importing_the_package_imports_no_cel_library() -> None:
    assert _loaded_after("import dra_migrate.cel") == []


def test_a_static_check_parses_but_does_not_load_the_evaluator() -> None:
    loaded = _loaded_after(
        "from dra_migrate.cel import check_selector\n"
        "assert check_selector(\"device.driver == 'gpu.nvidia.com'\") == []"
    )
    assert "lark" in loaded  # the parser
    assert not set(EVALUATION) & set(loaded)


def test_an_evaluation_loads_the_evaluator() -> None:
    loaded = _loaded_after(
        "from dra_migrate.cel import Device, evaluate_selector\n"
        "assert evaluate_selector(\"device.driver.trim() == 'x'\", Device('x', 'd', None))"
    )
    assert set(EVALUATION) <= set(loaded)


def test_the_package_reexports_exactly_its_public_names() -> None:
    public = {name for name in vars(cel) if not name.startswith("_")}
    modules = {name for name in public if isinstance(vars(cel)[name], type(cel))}
    assert sorted(cel.__all__) == sorted(public - modules)
    for name in cel.__all__:
        value = getattr(cel, name)
        assert name.isupper() or value.__module__.startswith("dra_migrate.cel."), name


@pytest.mark.parametrize(
    "record",
    [
        cel.Device("gpu.nvidia.com", "gpu-0", "node-a", {"gpu.nvidia.com": {"index": 0}}),
        cel.SemVer.parse("1.2.3-rc.1+build"),
        cel.parse_quantity("40Gi"),
        cel.InvalidVersion("1.x", "not a version"),
        cel.CelProblem("syntax", 3, "unexpected ')'"),
        cel.PROBLEM_CODES["syntax"],
    ],
    ids=lambda r: type(r).__name__,
)
def test_records_are_frozen_slotted_dataclasses_that_pickle(record: object) -> None:
    params = type(record).__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen
    assert "__slots__" in vars(type(record))
    first = dataclasses.fields(record)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, first, None)
    copy = pickle.loads(pickle.dumps(record))  # the process pool sends devices
    assert copy == record
    assert [getattr(copy, f.name) for f in dataclasses.fields(copy)] == [  # type: ignore[arg-type]
        getattr(record, f.name)
        for f in dataclasses.fields(record)  # type: ignore[arg-type]
    ]
