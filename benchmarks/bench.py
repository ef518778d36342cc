"""dra-migrate benchmark: generated repositories, the tool against baselines, as ratios.

Generates a repository of manifest files (realistic shapes and comments; 10
percent with GPU requests; a few Helm charts and kustomize overlays) and, with
``--bundles``, install bundles shaped like kserve's (1 to 4 MB of
CustomResourceDefinitions whose descriptions mention ``nvidia.com/gpu``, no
GPU request). Then it times, in one run and on the same files:

- baselines: reading every file and searching its bytes; loading every file
  with PyYAML's C loader (libyaml);
- the tool, as a user runs it (a whole process, start-up included):
  ``convert --check``, ``scan`` and ``validate``;

and prints each time with its ratio to the baseline the issue sets a target
against, the peak memory of the tool's processes, and whether the target is
met. Every figure is the median of ``--repeat`` runs (at least 5 for the rows
of ``ROWS``, 11 for the hook's). Never a test: timing depends on the machine
(``tests/integration/test_benchmark.py`` only runs it small, so that it cannot rot).

    python benchmarks/bench.py                 # 5,000 files + kserve-like bundles
    python benchmarks/bench.py --files 50000   # the 50,000-file repository
    python benchmarks/bench.py --real-repo ../kserve   # also a real snapshot

The start-up rows against black and yamllint need them installed (the ``test``
extra has them); without them those rows are skipped and say so. ``--only ROW``
runs the named rows of ``ROWS`` alone, on the generated repository:

    python benchmarks/bench.py --only startup_against_peers --repeat 21
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
HERE = str(Path(__file__).resolve().parent)  # (the schema baseline's process imports bench)
CORPUS = ROOT.parent / "shared" / "corpus" / "dra"
NEEDLE = b"nvidia.com/gpu"

# --- the generated repository ------------------------------------------------------

_DEPLOYMENT = """\
# {name}: {comment}
# Owner: team-{team}. Changes go through review.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: team-{team}
  labels:
    app.kubernetes.io/name: {name}
    app.kubernetes.io/part-of: platform-{team}
  annotations:
    deploy.example.com/revision: "{revision}"
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app.kubernetes.io/name: {name}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {name}
    spec:
      serviceAccountName: {name}
      containers:
        - name: {name}
          image: registry.example.com/{team}/{name}:1.{revision}
          args: ["--port=8080", "--log-level=info"]  # keep in sync with the chart
          ports:
            - containerPort: 8080
              name: http
          env:
            - name: MODEL_PATH
              value: /models/{name}
            - name: WORKERS
              value: "{replicas}"
          readinessProbe:
            httpGet: {{path: /healthz, port: http}}
            periodSeconds: 10
          resources:
            requests:
              cpu: 500m
              memory: 1Gi
            limits:
              memory: 2Gi{gpu}
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: team-{team}
spec:
  selector:
    app.kubernetes.io/name: {name}
  ports:
    - port: 80
      targetPort: http
"""

_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: team-{team}
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: registry.example.com/{team}/trainer:2.{revision}
          command: ["python", "train.py", "--epochs", "{replicas}"]
          resources:
            limits:
              nvidia.com/gpu: {count}
"""

_CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: team-{team}
data:
  settings.yaml: |
    # rendered into the container at start-up
    retries: {replicas}
    endpoint: https://{name}.team-{team}.svc.cluster.local
  feature-flags: "alpha,beta"
"""

_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: {name}\nversion: 0.1.{revision}\n",
    "values.yaml": "replicas: 1\nresources:\n  limits:\n    nvidia.com/gpu: 1\n",
    "templates/deployment.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{{{ .Release.Name }}}}\n"
        "spec:\n  replicas: {{{{ .Values.replicas }}}}\n  template:\n    spec:\n"
        "      containers:\n        - name: app\n          image: x\n"
        "          resources:\n{{{{ toYaml .Values.resources | indent 12 }}}}\n"
    ),
}

_KUSTOMIZE = {
    "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
    "base/deployment.yaml": None,  # a GPU deployment
    "overlays/prod/kustomization.yaml": "resources:\n  - ../../base\npatches:\n  - path: gpu.yaml\n",
    "overlays/prod/gpu.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: {name}\n          resources:\n"
        "            limits:\n              nvidia.com/gpu: 2\n"
    ),
}

_CRD_HEAD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.serving.example.com
spec:
  group: serving.example.com
  names: {{kind: {kind}, plural: {plural}}}
  scope: Namespaced
  versions:
    - name: v1beta1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
"""
_CRD_FIELD = """\
            field{i}:
              description: Resources of the predictor container, for example
                nvidia.com/gpu or {lookalike} limits; see the Kubernetes documentation on resources.
              type: object
              properties:
                limits:
                  additionalProperties:
                    anyOf: [{{type: integer}}, {{type: string}}]
                    x-kubernetes-int-or-string: true
                  type: object
"""


def _words(rng: random.Random) -> str:
    pool = [
        "serves",
        "ranks",
        "embeds",
        "caches",
        "routes",
        "batches",
        "indexes",
        "streams",
        "scores",
        "tokens",
    ]
    return " ".join(rng.choice(pool) for _ in range(6))


def _manifest(rng: random.Random, i: int, gpu: bool) -> str:
    fields = {
        "name": f"svc-{i:05d}",
        "team": f"t{i % 37}",
        "revision": i % 97,
        "replicas": 1 + i % 5,
        "comment": _words(rng),
        "count": 1 + i % 4,
    }
    if gpu and i % 3 == 0:
        return _JOB.format(**fields)
    gpu_lines = f"\n              nvidia.com/gpu: {1 + i % 4}" if gpu else ""
    text = _DEPLOYMENT.format(gpu=gpu_lines, **fields)
    if i % 4 == 1:
        text += "---\n" + _CONFIGMAP.format(**fields)
    return text


# kserve's inferenceservice-config: JSON in strings, Go template actions inside them,
# resource-name look-alikes (the needle "/gpu" finds "custom.com/gpu")
_CONFIG_HEAD = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: inferenceservice-config
  namespace: kserve
data:
  ingress: |-
    {{
      "ingressGateway": "knative-serving/knative-ingress-gateway",
      "domainTemplate": "{{{{ .Name }}}}-{{{{ .Namespace }}}}.{{{{ .IngressDomain }}}}",
      "urlScheme": "http"
    }}
  resources: |-
    {{"accelerator": "custom.com/gpu", "example": "example.com/gpu"}}
"""
_CONFIG_ENTRY = '  template{i}: "{{{{ .Name }}}}-{{{{ .Namespace }}}}-{{{{ index .Annotations \\"x{i}\\" }}}}"\n'

# A PrometheusRule bundle: thousands of {{ $labels }} inside alert strings.
_RULES_HEAD = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: gpu-alerts-{index}
  namespace: monitoring
  annotations:
    description: alerts on the pods that ask for nvidia.com/gpu
spec:
  groups:
    - name: gpu
      rules:
"""
_RULE = """\
        - alert: GpuHot{i}
          expr: DCGM_FI_DEV_GPU_TEMP{{gpu="{i}"}} > 85
          for: 5m
          labels: {{severity: warning}}
          annotations:
            summary: "GPU {{{{ $labels.gpu }}}} on {{{{ $labels.instance }}}} is hot"
            description: "{{{{ $value }}}} degrees on {{{{ $labels.Hostname }}}}"
"""


def prometheus_rules(rules: int, index: int = 0) -> str:
    """A PrometheusRule of ``rules`` alerts, four template actions each, all in strings."""
    return _RULES_HEAD.format(index=index) + "".join(_RULE.format(i=i) for i in range(rules))


def bundle(size: int, index: int) -> str:
    """A kserve-like install bundle of about ``size`` bytes: CRDs whose descriptions
    mention nvidia.com/gpu and look-alikes, a ConfigMap of Go template text in
    strings (21 to 89 actions, as kserve's), no GPU request."""
    parts: list[str] = []
    total, crd = 0, 0
    while total < size:
        kind = f"Thing{index}x{crd}"
        text = _CRD_HEAD.format(kind=kind, plural=kind.lower() + "s")
        lookalike = ("custom.com/gpu", "example.com/gpu")[crd % 2]
        text += "".join(_CRD_FIELD.format(i=i, lookalike=lookalike) for i in range(200))
        parts.append(text)
        total += len(text)
        crd += 1
    entries = 9 + index * 7 % 35  # 2 actions each, 3 more in the head: 21 to 89
    config = _CONFIG_HEAD + "".join(_CONFIG_ENTRY.format(i=i) for i in range(entries))
    parts.insert(len(parts) // 2 + 1, config)
    return "---\n".join(parts)


def generate(root: Path, files: int, bundles: int, seed: int = 8, bundle_mb: float = 4) -> None:
    """A repository of ``files`` manifest files (10% with GPU requests), a few Helm
    charts and kustomize overlays, and ``bundles`` install bundles."""
    rng = random.Random(seed)
    charts = max(1, files // 1000)
    for i in range(files):
        folder = root / "apps" / f"team{i % 37}" / f"group{i // 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"svc-{i:05d}.yaml").write_text(_manifest(rng, i, gpu=i % 10 == 0))
    for c in range(charts):
        for rel, text in _CHART.items():
            path = root / "charts" / f"chart{c}" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.format(name=f"chart{c}", revision=c))
        for rel, text in _KUSTOMIZE.items():
            path = root / "kustomize" / f"app{c}" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            name = f"svc-{90000 + c:05d}"
            path.write_text(
                _manifest(rng, 90000 + c, gpu=True) if text is None else text.format(name=name)
            )
    for b in range(bundles):
        size = int((1 + rng.random() * (bundle_mb - 1)) * 1_000_000)
        path = root / "install" / f"v0.{b}.0" / "bundle.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(bundle(size, b))
        if b % 10 == 0:  # a PrometheusRule bundle beside every tenth release
            rules = root / "install" / f"v0.{b}.0" / "gpu-alerts.yaml"
            rules.write_text(prometheus_rules(1500, b))


def git_init(root: Path) -> None:
    """Make ``root`` a git repository with everything committed: platform engineers keep
    their manifests in git, and the tool then asks git for the files (.gitignore)."""
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    # packed, as a clone (a CI runner's checkout) and a repository git has gc'ed keep
    # their objects: a search of HEAD's tree (a first hook run, repo/context.py) over
    # 5,000 loose objects, each a file to open and inflate, took 0.6 s against 0.05 s
    steps = (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"])
    for args in (*steps, ["repack", "-a", "-d", "-q"], ["prune"]):
        subprocess.run([*git, *args], cwd=root, check=True, capture_output=True)
    # the files and git's objects just written (440 MB at 50,000 files) go to disk
    # now, not while the rows are timed
    os.sync()


def compile_package() -> None:
    """Byte-compile the package, as ``pip install`` does: a run from a source tree
    with ``PYTHONDONTWRITEBYTECODE`` set would compile every module on every start."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "dra_migrate")],
        check=True,
        capture_output=True,
    )


def yaml_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.suffix in (".yaml", ".yml", ".json") and ".git" not in p.relative_to(root).parts
    )


# --- measuring ---------------------------------------------------------------------


@dataclass
class Timing:
    seconds: float
    peak_mb: float = 0.0
    runs: list[float] = field(default_factory=list)


Run = Callable[[], float | tuple[float, float]]  # seconds, or (seconds, peak MB)


def turns(args: argparse.Namespace, least: int = 5) -> int:
    """Runs of a row with a target: ``--repeat``, at least ``least`` (medians of 5 or
    more), but one in a smoke run (``--repeat 1``, the test's)."""
    return 1 if args.repeat == 1 else max(args.repeat, least)


def median_of(repeat: int, run: Run) -> Timing:
    return interleaved(repeat, run)[0]


def interleaved(repeat: int, *runs: Run) -> list[Timing]:
    """Each run ``repeat`` times, taking turns (a, b, c, a, b, c, ...), and the median
    of each: a machine that speeds up or slows down while it is measured (these are
    shared) moves both sides of a ratio alike, where one side measured after the
    other could read up to a third apart."""
    results: list[list[tuple[float, float]]] = [[] for _ in runs]
    for _ in range(repeat):
        for kept, run in zip(results, runs, strict=True):
            result = run()
            kept.append(result if isinstance(result, tuple) else (result, 0.0))
    return [
        Timing(statistics.median(s for s, _ in kept), max(p for _, p in kept), [s for s, _ in kept])
        for kept in results
    ]


def read_baseline(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        _ = NEEDLE in path.read_bytes()
    return time.perf_counter() - start


def cload_baseline(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        try:
            for _doc in yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader):
                pass
        except yaml.YAMLError:  # a Helm template: as far as it parses
            pass
    return time.perf_counter() - start


def schema_baseline(files: list[Path], reference: bool = True) -> float:
    """C-load each file and run the strict schema check on each document: with
    jsonschema (``reference``, what checking by hand or with check-jsonschema costs,
    the issue's baseline), or with the tool's compiled schema check."""
    sys.path.insert(0, str(ROOT))
    from dra_migrate.k8s import schemas

    validators: dict[str, Any] = {}

    def check(doc: dict[str, Any]) -> None:
        if not reference:
            schemas.validate_object(doc, None)
            return
        name = schemas._choose_object_file(doc["apiVersion"], doc["kind"], None)
        if name not in validators:
            validators[name] = schemas._validator(name)  # jsonschema's, as the tool builds it
        list(validators[name].iter_errors(doc))

    start = time.perf_counter()
    for path in files:
        try:
            docs = list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
        except yaml.YAMLError:  # the corpus keeps a few broken files on purpose
            continue
        for doc in docs:
            if isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str):
                with contextlib.suppress(schemas.SchemaNotFound, KeyError, TypeError):
                    check(doc)
    return time.perf_counter() - start


# Started by the benchmark, this launcher starts the command and reports the peak RSS
# of its children. The command's own peak cannot be read from the benchmark's wait4:
# a child forked from the benchmark (which holds generated repositories and streams)
# counts the benchmark's pages until it execs, and Linux keeps that peak across exec.
# It also times the command: from just before it starts to the moment it ends,
# without the launcher's own start-up and exit (about 60 ms of Python here, which
# timed with the command would be added to both sides of every whole-process ratio).
_LAUNCHER = """
import os, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.call(sys.argv[1:])
seconds = time.perf_counter() - start
with open(os.environ["BENCH_RSS_FILE"], "w") as out:
    out.write(f"{seconds} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
sys.exit(code)
"""


# read_baseline as a process: every file git lists, read and searched
_READ_PROCESS = """
import subprocess, sys
names = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
for name in names.split(b"\\0"):
    if name.endswith((b".yaml", b".yml", b".json")):
        with open(name, "rb") as f:
            _ = b"nvidia.com/gpu" in f.read()
"""


# cload_baseline as a process: every file git lists, loaded with the C loader
_CLOAD_PROCESS = """
import subprocess, yaml
names = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
for name in names.split(b"\\0"):
    if name.endswith((b".yaml", b".yml", b".json")):
        with open(name, "rb") as f:
            try:
                for _doc in yaml.load_all(f.read(), Loader=yaml.CSafeLoader):
                    pass
            except yaml.YAMLError:
                pass
"""


# schema_baseline (jsonschema) as a process: this module's loop on the files given (the
# folder of this module first), with the imports on both sides
_SCHEMA_PROCESS = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench import schema_baseline
schema_baseline([Path(p) for p in sys.argv[2:]])
"""


# The benchmark's own cache folder (``main`` sets it): every command's XDG_CACHE_HOME
# unless a row gives its own, so that what other runs of the machine keep (a user's
# folder may be full, and prune on every write) never steers a row.
CACHE: list[Path] = []


def run_process(
    args: list[str],
    cwd: Path,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    kept: bool = False,
) -> tuple[float, float]:
    """Wall seconds of a command, timed by the launcher around it, and the peak RSS
    (MB) of its largest process (``env``: variables set for it). The results scan keeps
    by content (``pipeline/kept.py``) are removed from the cache folder first unless
    ``kept``: only the rows that say "warm" reuse them."""
    if CACHE and not kept and args[: len(tool())] == tool():  # (a baseline keeps nothing)
        for old in (CACHE[0] / "dra-migrate").glob("scan-results-*.json"):
            old.unlink()
    with (
        tempfile.TemporaryFile() as feed,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as rss,
    ):
        folder = {"XDG_CACHE_HOME": str(CACHE[0])} if CACHE else {}
        env = {**os.environ, **folder, **(env or {})}
        env |= {"PYTHONPATH": str(ROOT), "BENCH_RSS_FILE": rss.name}
        if stdin is not None:
            feed.write(stdin)
            feed.seek(0)
        code = subprocess.call(
            [sys.executable, "-c", _LAUNCHER, *args],
            cwd=cwd,
            env=env,
            stdin=feed,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        if code not in (0, 1, 123):
            err.seek(0)
            message = err.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"{' '.join(args)} failed ({code}): {message}")
        seconds, peak_kb = (float(v) for v in rss.read().split())
    return seconds, peak_kb / 1024


def tool(*args: str) -> list[str]:
    return [sys.executable, "-m", "dra_migrate", *args]


@dataclass
class Row:
    what: str
    timing: Timing
    baseline: str = ""
    base: Timing | None = None
    target: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.base is None or self.base.seconds <= 0:
            return None
        return self.timing.seconds / self.base.seconds


class _Rows(list[Row]):
    """Rows, each also printed to stderr as soon as it is measured (a long run
    that is interrupted still shows what it measured)."""

    def append(self, row: Row) -> None:
        super().append(row)
        ratio = f"{row.ratio:.2f}" if row.ratio is not None else ""
        print(f"{row.what}: {row.timing.seconds:.2f} s {ratio}", file=sys.stderr, flush=True)


def measure(args: argparse.Namespace, work: Path) -> list[Row]:
    rows: list[Row] = _Rows()
    repeat = turns(args)  # every row here has a target, or is a baseline of one
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []

    compile_package()
    repo = work / "repo"
    generate(repo, args.files, 0, bundle_mb=args.bundle_mb)
    git_init(repo)
    files = yaml_files(repo)
    # the hook's staged files: one with a GPU request, one without
    staged = [
        str(next(p for p in files if ("nvidia.com/gpu" in p.read_text()) == gpu).relative_to(repo))
        for gpu in (True, False)
    ]
    if args.only:  # the named rows of ROWS alone
        bench = Bench(args, work, repo, files, staged, jobs)
        for row in ROWS:
            if row.__name__ in args.only:
                row(bench, rows)
        return rows
    read, cload, cload_process, convert = interleaved(
        repeat,
        lambda: read_baseline(files),
        lambda: cload_baseline(files),
        lambda: run_process([sys.executable, "-c", _CLOAD_PROCESS, "."], repo),
        lambda: run_process(tool("convert", "--check", *jobs, "."), repo),
    )
    rows.append(Row(f"read + byte search, {len(files):,} files", read))
    rows.append(Row(f"PyYAML C loader, {len(files):,} files", cload))
    rows.append(Row("the same C loader as a process (start-up on both sides)", cload_process))
    rows.append(Row("convert --check", convert, "C loader", cload, 0.5))
    rows.append(
        Row(
            "convert --check (against the C loader as a process)",
            convert,
            "C loader process",
            cload_process,
        )
    )

    quiet = work / "quiet"  # the same shapes, no GPU request anywhere
    generate(quiet, args.files, 0, bundle_mb=args.bundle_mb)
    for path in yaml_files(quiet):
        text = path.read_text()
        if "nvidia.com/gpu" in text:
            path.write_text(text.replace("nvidia.com/gpu", "example.com/fpga"))
    git_init(quiet)
    quiet_files = yaml_files(quiet)
    # the target is set against the same read and search as a process of its own:
    # start-up on both sides (against the in-process loop a process's start-up, 65 ms
    # of the tool's 100 on a quiet machine, is on one side only: that ratio is shown)
    quiet_read, scan, read_process = interleaved(
        repeat,
        lambda: read_baseline(quiet_files),
        lambda: run_process(tool("scan", *jobs, "."), quiet),
        lambda: run_process([sys.executable, "-c", _READ_PROCESS, "."], quiet),
    )
    rows.append(Row("read + byte search, no GPU requests, in process", quiet_read))
    rows.append(Row("the same read + byte search as a process", read_process))
    rows.append(Row("scan, no GPU requests", scan, "read as a process", read_process, 2.0))
    rows.append(Row("the same scan, against the in-process read", scan, "read", quiet_read))

    # the dra-migrate-check hook of .pre-commit-hooks.yaml, given one staged file, from the
    # top of the 5,000-file repository (--context . reads the rest for references)
    hook = HOOK
    startup, *hooks = interleaved(
        max(repeat, 11),  # whole processes of a tenth of a second: more turns, steadier medians
        lambda: run_process([sys.executable, "-c", "import yaml"], repo),
        *(lambda r=rel: run_process(tool(*hook, r), repo) for rel in staged),
    )
    # for scale: the hook's target is the other hooks' time (startup_against_peers:
    # at most black --check's), what a user waits for at commit time
    rows.append(Row('python -c "import yaml"', startup))
    for label, timing in zip(("with a GPU request", "without one"), hooks, strict=True):
        rows.append(
            Row(
                f"pre-commit hook on one file {label}",
                timing,
                'python -c "import yaml"',
                startup,
            )
        )

    if CORPUS.is_dir() and not args.no_corpus:
        corpus_files = yaml_files(CORPUS)
        listed = [str(p) for p in corpus_files]
        schema, schema_process, fast, validate = interleaved(
            repeat,
            lambda: schema_baseline(corpus_files),
            lambda: run_process([sys.executable, "-c", _SCHEMA_PROCESS, HERE, *listed], CORPUS),
            lambda: schema_baseline(corpus_files, reference=False),
            lambda: run_process(tool("validate", *jobs, "."), CORPUS),
        )
        rows.append(Row("C load + jsonschema strict check, corpus", schema))
        rows.append(
            Row("the same as a process (start-up and imports on both sides)", schema_process)
        )
        rows.append(Row("C load + the tool's compiled strict check, corpus", fast))
        rows.append(
            Row(
                f"validate ../shared/corpus/dra ({len(corpus_files)} files)",
                validate,
                "C load + schema check as a process",
                schema_process,
                2.0,
            )
        )
        rows.append(
            Row("the same validate, against the in-process check", validate, "in process", schema)
        )

    if args.bundles:
        kserve = work / "kserve"
        generate(kserve, max(args.files // 10, 10), args.bundles, bundle_mb=args.bundle_mb)
        for path in yaml_files(kserve):  # the bundles' neighbours ask for nothing either
            text = path.read_text()
            if "nvidia.com/gpu: " in text:
                path.write_text(text.replace("nvidia.com/gpu: ", "example.com/fpga: "))
        git_init(kserve)
        repository_rows("kserve-like", kserve, repeat, jobs, rows)

    if args.big_mb:
        big = work / "big"
        big.mkdir()
        docs, small = [], big / "small"
        small.mkdir()
        rng = random.Random(1)
        total, i = 0, 0
        while total < args.big_mb * 1_000_000:
            text = _manifest(rng, i, gpu=i % 10 == 0)
            (small / f"m{i:06d}.yaml").write_text(text)
            docs.append(text)
            total += len(text)
            i += 1
        (big / "one.yaml").write_text("---\n".join(docs))
        # one worker for both: a file is one job, and linear means the same work a byte
        many, single = interleaved(
            repeat,
            lambda: run_process(tool("scan", "-j", "1", "small"), big),
            lambda: run_process(tool("scan", "-j", "1", "one.yaml"), big),
        )
        rows.append(Row(f"scan -j 1, {args.big_mb} MB in {i:,} small files", many))
        rows.append(
            Row(
                f"scan -j 1, the same {args.big_mb} MB as one file",
                single,
                "small files",
                many,
                1.5,
            )
        )

    if args.stream_docs:
        for count in (args.stream_docs // 10, args.stream_docs):
            rng = random.Random(2)
            stream = "---\n".join(_manifest(rng, i, gpu=i % 10 == 0) for i in range(count))
            data = stream.encode()
            timing = median_of(1, lambda d=data: run_process(tool("convert", "-"), work, d))
            rows.append(Row(f"convert - (stdin), {count:,} documents", timing))

    bench = Bench(args, work, repo, files, staged, jobs)
    for row in ROWS:
        row(bench, rows)
    return rows


@dataclass
class Bench:
    """What the rows of ``ROWS`` are given: the options, a scratch folder, the
    5,000-file repository (with GPU requests) and its files, the hook's two staged
    files (one with a GPU request, one without), the tool's ``--jobs``."""

    args: argparse.Namespace
    work: Path
    repo: Path
    files: list[Path]
    staged: list[str]
    jobs: list[str]

    def turns(self, least: int) -> int:
        """Runs of a row: ``--repeat``, at least ``least`` (a row with a target gets a
        median of 5 or more), but one in a smoke run (``--repeat 1``, the test's)."""
        return turns(self.args, least)


HOOK = ("convert", "--check", "--diff", "--context", ".")  # dra-migrate-check


def repository_rows(label: str, root: Path, repeat: int, jobs: list[str], rows: list[Row]) -> None:
    """scan, convert --check and validate of a repository against loading every file
    with the C loader in process (a minute of loading: a process's start-up, a tenth
    of a second, would not show, and timing it as one too doubled the row's time)."""
    files = yaml_files(root)
    size = sum(p.stat().st_size for p in files) / 1e6
    commands = (["scan"], ["convert", "--check"], ["validate"])
    cload, *timings = interleaved(
        repeat,
        lambda: cload_baseline(files),
        *(lambda c=command: run_process(tool(*c, *jobs, "."), root) for command in commands),
    )
    rows.append(Row(f"C loader, {label} repository ({len(files):,} files, {size:.0f} MB)", cload))
    for command, timing in zip(commands, timings, strict=True):
        rows.append(Row(f"{' '.join(command)}, {label}", timing, "C loader", cload, 0.2))


def scan_with_gpus(bench: Bench, rows: list[Row]) -> None:
    """scan of the repository with GPU requests (10 percent of its files) against the
    read floor: reading and searching every file in process, and as a process. Twice:
    warm (the results of each file kept by a first run, ``pipeline/kept.py``: a
    repository scanned again with a few files changed) and parsing every file (no
    result kept: a first run, or every file changed)."""
    repeat = bench.turns(5)
    scan = tool("scan", *bench.jobs, ".")
    run_process(scan, bench.repo)  # the first run: what the warm rows reuse
    empty = bench.work / "empty"
    empty.mkdir(exist_ok=True)
    read, read_process, startup, warm, parsed = interleaved(
        repeat,
        lambda: read_baseline(bench.files),
        lambda: run_process([sys.executable, "-c", _READ_PROCESS, "."], bench.repo),
        lambda: run_process(tool("scan", "."), empty, kept=True),  # (keeps the warm row's)
        lambda: run_process(scan, bench.repo, kept=True),
        lambda: run_process(scan, bench.repo),
    )
    rows.append(Row("read + byte search, the repository with GPU requests", read))
    rows.append(Row("the same read + byte search as a process", read_process))
    # what every scan costs before it reads a file: Python, click and the CLI, the
    # configuration; with the read as a process it is the floor of the rows below
    rows.append(
        Row(
            "scan of an empty folder (the tool's start-up)",
            startup,
            "read as a process",
            read_process,
        )
    )
    rows.append(
        Row(
            "scan, with GPU requests, warm (results kept)",
            warm,
            "read as a process",
            read_process,
            2.0,
        )
    )
    rows.append(Row("the same, warm, against the in-process read", warm, "read", read))
    rows.append(
        Row(
            "scan, with GPU requests, every file parsed",
            parsed,
            "read as a process",
            read_process,
            2.0,
        )
    )
    rows.append(
        Row("the same, every file parsed, against the in-process read", parsed, "read", read)
    )


def cold_hooks(bench: Bench, rows: list[Row]) -> None:
    """The hook on one file with a GPU request, run with an empty cache folder (a CI
    runner's first run: nothing kept of the repository's templates, the mapping, the
    catalog, the kustomizations), paired with warm runs."""

    def cold() -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as empty:
            return run_process(
                tool(*HOOK, bench.staged[0]), bench.repo, env={"XDG_CACHE_HOME": empty}
            )

    warm, first = interleaved(
        bench.turns(11),
        lambda: run_process(tool(*HOOK, bench.staged[0]), bench.repo),
        cold,
    )
    rows.append(Row("the hook with a GPU request, warm (for the pair below)", warm))
    rows.append(
        Row("the same hook, empty cache folder (a first run, CI)", first, "warm", warm, 1.5)
    )


def _formatted_module(path: Path, size: int) -> Path:
    """A Python module of about ``size`` bytes that black leaves as it is (a staged file
    already formatted: what a pre-commit run of black sees most often)."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f'value_{i} = {{"key": [{i}, {i + 1}], "name": "item-{i}"}}\n'
        lines.append(line)
        total += len(line)
        i += 1
    path.write_text("".join(lines))
    return path


def startup_against_peers(bench: Bench, rows: list[Row]) -> None:
    """Start-up against the peers: the dra-migrate-check hook of ``.pre-commit-hooks.yaml``
    (``convert --check --diff --context .``, from the top of the git repository) on one
    staged file with a GPU request and on one without, against the hooks a repository
    runs beside it on a file of the same size: ``black --check`` on a formatted Python
    module (black reads Python only) and yamllint on the same YAML file. All six in
    turns, medians of 11 or more; target: the hook at most black --check's median.
    Skipped, with a message, where black or yamllint is not installed (both are in the
    package's ``test`` extra)."""
    import importlib.util

    missing = [m for m in ("black", "yamllint") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"bench: {' and '.join(missing)} not installed: the start-up against the peers "
            'rows are skipped (pip install -e ".[test]", or pip install black yamllint)',
            file=sys.stderr,
        )
        return
    cases = []
    for label, staged in zip(("with a GPU request", "without one"), bench.staged, strict=True):
        size = (bench.repo / staged).stat().st_size
        module = _formatted_module(bench.work / f"peer-{len(cases)}.py", size)
        cases.append((label, staged, size, module))
    runs: list[Run] = []
    for _label, staged, _size, module in cases:
        runs += [
            lambda s=staged: run_process(tool(*HOOK, s), bench.repo),
            lambda m=module: run_process(
                [sys.executable, "-m", "black", "--check", "-q", str(m)], bench.repo
            ),
            lambda s=staged: run_process([sys.executable, "-m", "yamllint", s], bench.repo),
        ]
    timings = interleaved(bench.turns(11), *runs)
    for index, (label, _staged, size, _module) in enumerate(cases):
        hook, black, yamllint = timings[3 * index : 3 * index + 3]
        rows.append(Row(f"black --check, a formatted module of {size:,} bytes", black))
        rows.append(Row(f"the hook on one file {label}", hook, "black --check", black, 1.0))
        rows.append(Row(f"yamllint on the same file ({size:,} bytes)", yamllint, "black", black))


def template_actions(bench: Bench, rows: list[Row]) -> None:
    """Linear in template actions per file: PrometheusRule bundles (four actions in the
    strings of each alert) beside a GPU Job, as one file and as eight files of an
    eighth each; ``scan -j 1`` of each (one worker: a file is one job)."""
    rules = bench.args.template_actions // 4
    if rules < 8:
        return
    folder = bench.work / "actions"
    (folder / "eighths").mkdir(parents=True)
    job = _JOB.format(name="train", team="ml", revision=1, replicas=1, count=1)
    (folder / "one.yaml").write_text(prometheus_rules(rules) + "---\n" + job)
    for part in range(8):
        text = prometheus_rules(rules // 8, part) + "---\n" + job
        (folder / "eighths" / f"rules-{part}.yaml").write_text(text)
    eighths, one = interleaved(
        bench.turns(5),
        lambda: run_process(tool("scan", "-j", "1", "eighths"), folder),
        lambda: run_process(tool("scan", "-j", "1", "one.yaml"), folder),
    )
    actions = rules // 8 * 8 * 4
    rows.append(Row(f"scan -j 1, {actions:,} template actions in 8 files", eighths))
    rows.append(
        Row(f"scan -j 1, the same {actions:,} actions in one file", one, "8 files", eighths, 1.5)
    )


def real_repository(bench: Bench, rows: list[Row]) -> None:
    """The repository rows on a real snapshot (``--real-repo DIR``: kserve's, say), for
    maintainers who have one."""
    if bench.args.real_repo is not None:
        name = bench.args.real_repo.name
        real = bench.args.real_repo
        repository_rows(f"{name} (real)", real, bench.turns(5), bench.jobs, rows)


_ONE_GPU_POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: worker-{i}
  namespace: ml
spec:
  containers:
    - name: worker
      image: registry.example.com/ml/worker:1.0
      resources:
        limits:
          nvidia.com/gpu: 1
"""


def pods_in_one_file(bench: Bench, rows: list[Row]) -> None:
    """``convert`` of N and of 4N one-GPU Pods in one file (``--pods`` N): linear in
    the GPU workloads of a file means a ratio near 4 (issue 22: 10,000 took 69 s).
    Each run starts with an empty cache folder, as a file converted once does: the
    schema verdicts kept of a file's generated templates (``k8s/schemas.py``, at most
    4,096 a file) would hold all of the smaller file's and part of the larger's, and
    the ratio would measure that bound instead of the conversion."""
    args = bench.args
    if not args.pods:
        return
    folder = bench.work / "pods-in-one-file"
    folder.mkdir(exist_ok=True)
    sizes = (args.pods, 4 * args.pods)
    for n in sizes:
        text = "".join(_ONE_GPU_POD.format(i=i) for i in range(n))
        (folder / f"pods-{n}.yaml").write_text(text, encoding="utf-8")

    def first_run(n: int) -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as empty:
            command = tool("convert", "-j", "1", f"pods-{n}.yaml")
            return run_process(command, folder, env={"XDG_CACHE_HOME": empty})

    small, large = interleaved(bench.turns(5), *(lambda n=n: first_run(n) for n in sizes))
    rows.append(Row(f"convert -j 1, {sizes[0]:,} one-GPU Pods in one file", small))
    rows.append(
        Row(f"convert -j 1, {sizes[1]:,} in one file", large, f"{sizes[0]:,} Pods", small, 4.6)
    )


# One entry a row (or a pair of rows): each function measures and appends its own.
ROWS: list[Callable[[Bench, list[Row]], None]] = [
    scan_with_gpus,
    cold_hooks,
    startup_against_peers,
    template_actions,
    pods_in_one_file,
    real_repository,
]


def report(rows: list[Row], args: argparse.Namespace) -> str:
    lines = [
        f"dra-migrate benchmark: {args.files:,} files, {args.bundles} bundles, "
        f"median of {args.repeat}",
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, PyYAML {yaml.__version__} "
        f"(libyaml: {yaml.__with_libyaml__}), load average {os.getloadavg()[0]:.1f}",
        "",
        f"{'what':58} {'seconds':>8} {'peak MB':>8} {'ratio':>7} {'target':>7}  verdict",
    ]
    for row in rows:
        ratio = row.ratio
        verdict = ""
        if ratio is not None and row.target is not None:
            verdict = f"{'met' if ratio <= row.target else 'MISSED'} (vs {row.baseline})"
        lines.append(
            f"{row.what:58} {row.timing.seconds:8.2f} "
            f"{(f'{row.timing.peak_mb:.0f}' if row.timing.peak_mb else ''):>8} "
            f"{(f'{ratio:.2f}' if ratio is not None else ''):>7} "
            f"{(f'<= {row.target:g}' if row.target is not None else ''):>7}  {verdict}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000, help="manifest files (default 5000)")
    parser.add_argument("--bundles", type=int, default=50, help="kserve-like bundles (50)")
    parser.add_argument("--bundle-mb", type=float, default=4, help="largest bundle, MB (4)")
    parser.add_argument("--big-mb", type=int, default=20, help="one big file vs small ones, MB")
    parser.add_argument("--stream-docs", type=int, default=100_000, help="stdin stream documents")
    parser.add_argument(
        "--template-actions", type=int, default=24_000, help="template actions in one file"
    )
    parser.add_argument("--real-repo", type=Path, help="also time a real repository snapshot")
    parser.add_argument("--pods", type=int, default=2500, help="one-GPU Pods in one file, N and 4N")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measurement (5)")
    parser.add_argument("--jobs", type=int, default=0, help="--jobs for the tool (default: all)")
    parser.add_argument("--no-corpus", action="store_true", help="skip ../shared/corpus/dra")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument(
        "--only",
        action="append",
        choices=[row.__name__ for row in ROWS],
        help="run only this row of ROWS on the generated repository (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.real_repo is not None and not args.real_repo.is_dir():
        parser.error(f"--real-repo {args.real_repo}: not a folder")

    work = args.keep or Path(tempfile.mkdtemp(prefix="dra-migrate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    CACHE[:] = [work / "cache"]
    try:
        rows = measure(args, work)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(report(rows, args))
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "what": r.what,
                        "seconds": r.timing.seconds,
                        "runs": r.timing.runs,
                        "peak_mb": r.timing.peak_mb,
                        "ratio": r.ratio,
                        "target": r.target,
                    }
                    for r in rows
                ],
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
