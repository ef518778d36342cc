"""What a run imports and builds before it does any work (start-up, issue 8).

A one-file pre-commit run is mostly start-up, so each path imports only what
it uses: nothing that parses or plans when no file needs parsing, never the
heavy libraries (jsonschema, jinja2, the CEL library, rich) on the paths that
do not use them. The command line is parsed by click, whose imports (``inspect``,
``typing``, ``datetime``, ``uuid``) every run pays; the records are dataclasses. Every
command runs in a fresh interpreter, as ``python -m dra_migrate`` does; nothing is timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import DEPLOYMENT, NO_GPU
from tests.conftest import REPO, run_cli
from tests.validate.test_validate import TEMPLATE

# Runs ``python -m dra_migrate ARGS`` in this interpreter, then writes the modules it
# imported, the dataclasses defined in the package's loaded modules and the cyclic
# garbage collections the run made to $PROBE_OUT, from an exit function (run as the
# process ends through sys.exit).
PROBE = """\
import atexit, gc, json, os, runpy, sys
def collected():
    return sum(generation["collections"] for generation in gc.get_stats())
if os.environ.get("PROBE_DEFAULT_GC"):  # as Python runs it: no pause, nothing frozen
    gc.disable = gc.freeze = lambda: None
before = collected()
@atexit.register
def probe():
    classes = sorted(
        f"{name}.{attr}"
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == "dra_migrate"
        for attr, value in vars(module).items()
        if isinstance(value, type)
        and "__dataclass_fields__" in vars(value)
        and value.__module__ == name
    )
    with open(os.environ["PROBE_OUT"], "w") as out:
        json.dump(
            {
                "modules": sorted(sys.modules),
                "dataclasses": classes,
                "collections": collected() - before,  # made by the run
                "frozen": gc.get_freeze_count(),
                "collecting": gc.isenabled(),
            },
            out,
        )
runpy.run_module("dra_migrate", run_name="__main__", alter_sys=True)
"""

# Libraries that cost tens of milliseconds to import, and are needed by a few paths only.
HEAVY = ("jsonschema", "jinja2", "celpy", "lark", "rich", "dra_migrate.cel", "_hashlib")
# Read only where a configuration names what they hold: the catalog of GPU products
ON_DEMAND = ("dra_migrate.k8s.products",)
# What the standard library costs milliseconds to import, and none of these paths needs
# (click brings inspect, typing, datetime and uuid; the records are dataclasses): exact
# fractions for plain counts, shutil (click's help layout asks it for the terminal's
# width), pathlib (8 ms with urllib.parse and ipaddress: paths are strings until a run
# writes).
SLOW_STDLIB = ("pathlib", "urllib", "ipaddress", "fractions", "decimal", "shutil")
# The records of the options value, which every run builds
RECORDS = ("RunOptions", "ClusterOptions")
# The per-file stages: imported only when some file is parsed.
STAGES = (
    "dra_migrate.pipeline.one_file",
    "dra_migrate.convert.plan",
    "dra_migrate.convert.naming",
    "dra_migrate.convert.edit",
    "dra_migrate.validate",
    "dra_migrate.k8s.catalog",
    "dra_migrate.k8s.schemas",
    "dra_migrate.k8s.quantity",
    "dra_migrate.convert.writer",  # and difflib: nothing to write or show
)


def probe(tmp_path: Path, cwd: Path, *args: str) -> tuple[set[str], list[str]]:
    out = tmp_path / "probe.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PROBE_OUT": str(out),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # the built-in mapping is kept here
    }
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    assert done.returncode in (0, 1), done.stderr  # the run's own status: never a crash
    data = json.loads(out.read_text())
    return set(data["modules"]), data["dataclasses"]


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in modules or any(m.startswith(n + ".") for m in modules)]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A folder with one file that asks for GPUs and one that does not."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "gpu.yaml").write_text(DEPLOYMENT)
    (root / "plain.yaml").write_text(NO_GPU)
    return root


def test_help_imports_no_stage(tmp_path: Path) -> None:
    modules, _ = probe(tmp_path, tmp_path, "--help")
    assert "click" in modules  # the probe sees what the run imported
    assert loaded(modules, HEAVY + STAGES + ("dra_migrate.pipeline.many_files",)) == []


@pytest.mark.parametrize(
    "args",
    [
        ("scan", "."),  # nothing mentions a GPU: nothing is parsed
        ("convert", "--check", "--diff", "--context", ".", "plain.yaml"),  # the hook
    ],
    ids=["scan", "hook-without-gpu"],
)
def test_a_run_that_parses_nothing_imports_no_stage(
    tmp_path: Path, repo: Path, args: tuple[str, ...]
) -> None:
    (repo / "gpu.yaml").unlink()
    probe(tmp_path, repo, *args)  # the first run keeps the built-in mapping as JSON
    modules, classes = probe(tmp_path, repo, *args)
    assert "dra_migrate.pipeline.many_files" in modules
    assert loaded(modules, HEAVY + STAGES + ON_DEMAND) == []
    # nor the YAML parser (40 ms of imports): no file, not even the built-in mapping,
    # is parsed
    assert loaded(modules, ("yaml", "dra_migrate.manifests")) == []
    # the records every run builds: the options value is a dataclass (the probe sees them)
    assert {f"dra_migrate.pipeline.options.{name}" for name in RECORDS} <= set(classes)
    assert loaded(modules, SLOW_STDLIB) == []


def test_a_configured_hook_without_gpu_checks_its_configuration_once(
    tmp_path: Path, repo: Path
) -> None:
    """jsonschema checks a project's configuration; its verdict is kept in the user's
    cache folder, so the next runs of the hook read the file without jsonschema."""
    (repo / ".dra-migrate.yaml").write_text("version: 1\ntarget: v1\n")
    args = ("convert", "--check", "--diff", "--context", ".", "plain.yaml")
    first, _ = probe(tmp_path, repo, *args)
    assert loaded(first, ("jsonschema",)) == ["jsonschema"]
    again, _ = probe(tmp_path, repo, *args)
    assert loaded(again, ("jsonschema",)) == []


def test_the_hook_on_a_gpu_file_imports_its_stages_and_nothing_heavy(
    tmp_path: Path, repo: Path
) -> None:
    modules, classes = probe(
        tmp_path, repo, "convert", "--check", "--diff", "--context", ".", "gpu.yaml"
    )
    # the probe sees the stages the conversion needs ...
    assert loaded(modules, ("dra_migrate.pipeline.one_file", "dra_migrate.validate")) == [
        "dra_migrate.pipeline.one_file",
        "dra_migrate.validate",
    ]
    # ... and of the heavy libraries only jsonschema, which checks the generated
    # template: the text is laid out without rich, no CEL selector is parsed, no name
    # needs a hash
    assert loaded(modules, HEAVY) == ["jsonschema"]
    assert loaded(modules, ON_DEMAND) == []  # the built-in mapping names no product
    # (jsonschema imports dataclasses, typing, urllib, ...: SLOW_STDLIB is not checked
    # here, nor the records, which are dataclasses on this path)
    assert {f"dra_migrate.pipeline.options.{name}" for name in RECORDS} <= set(classes)
    assert "dra_migrate.manifests.sources.Source" in classes
    # the generated template's valid verdict is kept: the next run on the same file
    # (a hook run until the file is converted) needs no jsonschema, and says the same
    again, _ = probe(tmp_path, repo, "convert", "--check", "--diff", "--context", ".", "gpu.yaml")
    assert loaded(again, HEAVY) == []
    assert loaded(again, ("dra_migrate.pipeline.one_file",)) == ["dra_migrate.pipeline.one_file"]


def test_the_command_runs_with_its_imports_frozen_for_the_collector(
    tmp_path: Path, repo: Path
) -> None:
    """The console script and ``python -m`` go through ``__main__.py``: what the CLI imports
    is frozen, never walked by the collector again, and the collector runs on what
    the run makes (a one-file hook run: 36 collections at Python's default)."""
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["dra-migrate"] == "dra_migrate.__main__:main"
    out = tmp_path / "probe.json"
    # As an installed package runs: with its bytecode (pip compiles it). Without it
    # (PYTHONDONTWRITEBYTECODE on a source tree) every module imported after the freeze
    # is compiled in the run, and compiling allocates: the count then grows with the
    # size of the modules, not with what the run does (17 passes before this session's
    # merges, 18 and 19 after, against 15 and 15 with bytecode). The first run writes
    # the bytecode (and fills the cache folder); a warm run and a cold one are counted.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "PYTHONPATH": str(REPO),
        "PROBE_OUT": str(out),
        "PYTHONPYCACHEPREFIX": str(tmp_path / "bytecode"),
    }
    args = ("convert", "--check", "--diff", "--context", ".", "gpu.yaml")
    counted = {}
    for label, folder in (("first", "cache"), ("warm", "cache"), ("cold", "empty")):
        run_env = {**env, "XDG_CACHE_HOME": str(tmp_path / folder)}
        done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=repo, env=run_env)
        assert done.returncode == 1  # convert --check: a file would change
        run = json.loads(out.read_text())
        assert run["collecting"]
        assert run["frozen"] > 8_000  # the modules, classes and functions of the CLI
        counted[label] = run["collections"]
    # the same warm run as Python runs it by default: the collector walks the CLI's
    # objects while it is imported (36 passes when this test was written)
    run_env = {**env, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PROBE_DEFAULT_GC": "1"}
    subprocess.run([sys.executable, "-c", PROBE, *args], cwd=repo, env=run_env)
    default = json.loads(out.read_text())
    assert default["frozen"] == 0
    # 6 young-generation passes before the CLI parsed with click: the command's
    # parser is built after the freeze, and what a conversion imports later is not frozen
    # (15 to 17 passes, warm or cold: the records of the file stages are dataclasses,
    # and creating them allocates). Held to the default's count rather than to a fixed
    # number: a fixed bound broke with each module a branch added after the freeze
    # (one pass each), which says nothing about whether the freeze still works
    for label in ("warm", "cold"):
        assert counted[label] * 2 <= default["collections"] + 2, (counted, default["collections"])


# a misspelt attribute: a finding worth keeping
SELECTOR = TEMPLATE.replace("{expr}", "device.attributes['gpu.nvidia.com'].productname == 'H100'")


def test_a_selector_checked_before_needs_no_cel_library(tmp_path: Path) -> None:
    """cel.check_selector's answers are kept in the user's cache folder: the CEL
    library (half a second to import and load) is needed once a selector, not once
    a run; the findings are the same, and a damaged cache is answered again."""
    (tmp_path / "t.yaml").write_text(SELECTOR)

    def validate() -> bytes:
        return run_cli(["validate", "t.yaml"], tmp_path, cache=tmp_path / "cache").stdout

    first = validate()
    assert b" DRA332 " in first  # productName is misspelt: a finding worth keeping
    modules, _ = probe(tmp_path, tmp_path, "validate", "t.yaml")
    assert loaded(modules, ("celpy", "lark", "dra_migrate.cel")) == []
    assert validate() == first
    for kept in (tmp_path / "cache" / "dra-migrate").glob("cel-check-*.json"):
        kept.write_text('{"stamp": "damaged')
    assert validate() == first
    modules, _ = probe(tmp_path, tmp_path, "validate", "t.yaml")
    assert loaded(modules, ("celpy", "lark", "dra_migrate.cel")) == []  # kept again


_OVERLAY_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
  namespace: ml
spec:
  template:
    spec:
      containers:
      - name: server
        resources:
          limits:
            nvidia.com/gpu: 4
"""


def _overlaid(root: Path, more: dict[str, str] | None = None) -> Path:
    """A kustomize base with a GPU Deployment and an overlay that patches its count (and
    the files of ``more``)."""
    for name, text in {
        "base/deployment.yaml": DEPLOYMENT,
        "base/kustomization.yaml": "resources: [deployment.yaml]\n",
        "overlay/kustomization.yaml": "resources: [../base]\npatches:\n  - path: gpu.yaml\n",
        "overlay/gpu.yaml": _OVERLAY_PATCH,
        **(more or {}),
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_scan_of_a_base_its_overlays_patch_checks_no_generated_object(tmp_path: Path) -> None:
    """scan reports what convert would write and writes nothing: a kustomize base that an
    overlay patches is converted in memory for the overlay's plan, as convert does, but
    its generated templates are not schema-checked nor the converted text validated
    (convert checks them before it writes), so scan imports neither jsonschema nor the
    validator; what it reports is what it reports for any file."""
    root = _overlaid(tmp_path / "repo")
    # (a cache folder of its own: the probes below start with an empty one)
    scan = run_cli(["scan", "--format", "json", "."], root, cache=tmp_path / "json")
    files = {f["path"]: f["status"] for f in json.loads(scan.stdout)["files"]}
    assert files["base/deployment.yaml"] == "changed", scan.stdout
    modules, _ = probe(tmp_path, root, "scan", ".")
    assert "dra_migrate.pipeline.one_file" in modules  # the base was planned
    assert loaded(modules, ("jsonschema", "dra_migrate.validate")) == []
    # convert checks what it would write: the same base, the schemas' library imported
    modules, _ = probe(tmp_path, root, "convert", "--check", ".")
    assert loaded(modules, ("jsonschema", "dra_migrate.validate")) == [
        "jsonschema",
        "dra_migrate.validate",
    ]


def test_the_hook_on_a_file_no_overlay_builds_skips_the_overlay_pass(tmp_path: Path) -> None:
    """A repository's overlays patch GPU resources of their own bases: a hook on another
    file (or the whole repository's context) leaves them to the runs that hold their
    files, so the overlay pass is not imported; a hook on the base itself still holds
    it, as its overlay is outside the paths given (DRA222, nothing written)."""
    root = _overlaid(tmp_path / "repo", {"apps/gpu.yaml": DEPLOYMENT})
    hook = ("convert", "--check", "--diff", "--context", ".")
    modules, _ = probe(tmp_path, root, *hook, "apps/gpu.yaml")
    assert "dra_migrate.pipeline.one_file" in modules  # the file was converted
    assert loaded(modules, ("dra_migrate.convert.overlays",)) == []
    modules, _ = probe(tmp_path, root, *hook, "base/deployment.yaml")
    assert loaded(modules, ("dra_migrate.convert.overlays",)) == ["dra_migrate.convert.overlays"]
    check = ["convert", "--check", "--context", ".", "--format", "json", "base/deployment.yaml"]
    held = run_cli(check, root, cache=tmp_path / "cache")
    report = json.loads(held.stdout)
    assert [(f["path"], f["status"]) for f in report["files"]] == [
        ("base/deployment.yaml", "reported")
    ]
    assert "DRA222" in {f["code"] for f in report["findings"]}, held.stdout


def test_a_scan_whose_results_are_all_kept_imports_no_file_stage(
    tmp_path: Path, repo: Path
) -> None:
    """scan keeps what it found in each file (pipeline/kept.py): run again on the same
    files, it takes every result kept and never imports the file stage (the parsing,
    planning and editing modules; PyYAML is, for the kept results' stamp); a file
    changed since is parsed again, and the stages are imported for it."""
    first, _ = probe(tmp_path, repo, "scan", ".")
    assert loaded(first, ("dra_migrate.pipeline.one_file",)) == ["dra_migrate.pipeline.one_file"]
    again, _ = probe(tmp_path, repo, "scan", ".")
    assert loaded(again, STAGES) == []
    (repo / "gpu.yaml").write_text(DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 4"))
    changed, _ = probe(tmp_path, repo, "scan", ".")
    assert loaded(changed, ("dra_migrate.pipeline.one_file",)) == ["dra_migrate.pipeline.one_file"]
