"""``convert --verify-helm``: what helm renders from a migrated chart is what the
conversion meant.

For every chart the run migrates (way ``recipe`` or ``template``, ``Report.charts``),
the chart folder is copied twice into a temporary folder, the run's bytes written
into the second copy, and both rendered with the real ``helm template`` (a fixed
release name and namespace; ``helm dependency build`` is never run: ``charts/`` is
as the repository has it): for the chart's default values, each other values file
of the chart folder and ``ci/`` (``helm/chart.py``'s order), and once per GPU count
key with the count raised by one. For each rendering, the conversion of the
rendering before (``convert -``: ``stream.run_stream`` with the run's settings)
must equal the rendering after with DRA on (``--set <switch>=true`` when the switch
is off by default, the ``set_keys``, ``-f`` the ``values-dra.yaml`` a recipe wrote):
object by object up to the names of generated ResourceClaimTemplates (as
``builds.py`` compares kustomize builds) when ``compare`` is ``exact``; what each
container is allocated (DeviceClass, count, selectors) and every field not about
GPUs when it is ``claims``. With the switch off (``--set <switch>=false``) the
rendering after must equal the rendering before byte for byte.

DRA244 (an error: nothing is written) names the chart, the values, the object and
the first field that differs with both values; DRA245 counts the renderings proven;
DRA248 says why a chart is not proven (helm cannot render it before the conversion,
or the conversion of its rendering stops). Helm runs as processes on a pool of the
run's ``--jobs`` threads; the conversions and comparisons run in this process.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dra_migrate.helm.model import RECIPE, TEMPLATE
from dra_migrate.pipeline import compare, processes, render_compare
from dra_migrate.pipeline.render_compare import (  # what the proof compares
    byte_difference,
    claims_difference,
    exact_difference,
)
from dra_migrate.report.findings import finding
from dra_migrate.report.model import ChartPlan, Report, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.pipeline.options import RunOptions

RELEASE = "release"  # the release name of every rendering
NAMESPACE = render_compare.NAMESPACE  # and its namespace (--namespace)
PROVEN = (RECIPE, TEMPLATE)  # the ways that change a chart: the others are left as they are
CHART_FILE = "Chart.yaml"
DEFAULT_VALUES = ("values.yaml", "values.yml")  # what helm reads without -f
AGAIN = "\0again"  # marks the second rendering of the same values (taken out of the command)


def helm() -> str | None:
    """The helm binary on PATH (absolute entries only: processes.which)."""
    return processes.which("helm")


class NotProven(Exception):
    """A chart the proof cannot be made for (DRA248), with the reason."""


class Refused(NotProven):
    """A chart whose copy is refused (DRA250): a link that leaves the repository."""


@dataclass(frozen=True, slots=True)
class Variant:
    """One set of values a chart is rendered with: a label for messages and the helm
    arguments (paths relative to the chart folder, the same in both copies)."""

    label: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Proof:
    """One chart to prove: its plan, the folder rendered (the chart, or its parent when
    the run changes the parent's values), the two copies, the values to render with."""

    plan: ChartPlan
    shown: str  # the folder rendered, as the run shows paths
    before: str  # the copy as the repository has it
    after: str  # the copy as the run would write it
    variants: tuple[Variant, ...]
    on: tuple[str, ...]  # the arguments that turn DRA on in the copy after
    applied: tuple[str, ...] = ()  # manifests in the copy after applied beside the release
    unraised: tuple[str, ...] = ()  # why a count key cannot be raised (DRA248), per key

    @property
    def where(self) -> str:
        return os.path.join(self.plan.root, CHART_FILE)

    def off(self) -> tuple[str, ...]:
        return ("--set", f"{self.plan.switch}=false") if self.plan.switch else ()

    def again(self) -> tuple[str, tuple[str, ...]]:
        """The default values rendered a second time: a chart that renders differently
        each time (randAlphaNum, now, uuidv4) cannot be proven."""
        return self.before, (*self.variants[0].args, AGAIN)

    def renders(self) -> Iterable[tuple[str, tuple[str, ...]]]:
        yield self.again()
        for variant in self.variants:
            yield self.before, variant.args
            yield self.after, (*variant.args, *self.on)
            if self.plan.switch:
                yield self.after, (*variant.args, *self.off())


Rendered = dict[tuple[str, tuple[str, ...]], tuple[bytes | None, str]]


def verify(
    report: Report,
    options: RunOptions,
    command: str,
    accept_unproven: bool = False,
    budget: processes.Budget | None = None,
) -> bool:
    """Add DRA244 (a rendering after that differs or fails), DRA245 (the renderings
    proven) and DRA248 (a chart not proven, and why) to the run-level findings; False
    when nothing of the run may be written (``verdict``)."""
    plans = [c for c in report.charts if c.way in PROVEN]
    if not plans:
        return True
    found: list[Any] = []
    changed = {
        os.path.realpath(r.path): r.converted
        for r in report.files
        if r.status is Status.CHANGED and r.converted is not None
    }
    with processes.workspace("dra-migrate-renders-") as tmp:
        proofs: list[Proof] = []
        for i, plan in enumerate(plans):
            try:
                proofs.append(_prepare(plan, os.path.join(tmp, str(i)), changed, options))
            except Refused as why:
                found.append(_refused(plan, str(why)))
            except NotProven as why:
                found.append(_not_proven(plan, str(why)))
            except Exception as exc:  # a bug: said, never a traceback, and nothing written
                found.append(_internal(plan, exc))
        wanted = sorted({key for proof in proofs for key in proof.renders()})
        run = _Runner(command, os.path.join(tmp, "home"), budget or processes.Budget(), options)
        rendered = _render_all(command, wanted, options.jobs, run)
        for proof in proofs:
            try:
                found.extend(_check(proof, rendered, options))
            except Exception as exc:
                found.append(_internal(proof.plan, exc))
    unproven = [f for f in found if f.code == "DRA248"]
    if unproven and not accept_unproven and verdict(found, True):
        found.append(_held_unproven(unproven))
    report.findings.extend(_with_binary(f, command) for f in found)
    return verdict(found, accept_unproven)


def _held_unproven(unproven: list[Any]) -> Any:
    """DRA291: the run writes nothing because charts are not proven (DRA248)."""
    charts = ", ".join(sorted({os.path.dirname(f.path) or "." for f in unproven}))
    return finding(
        "DRA291",
        "",
        0,
        0,
        f"nothing is written: {len(unproven)} chart(s) of the run not proven by rendering "
        f"({charts}; DRA248 says why)",
        "fix what stops the proof, or write the migration unchecked with convert --write "
        "--verify-helm --accept-unproven",
    )


def verdict(found: Iterable[Any], accept_unproven: bool) -> bool:
    """Whether the run may write: not after DRA244 (a rendering after differs),
    DRA250 (a link out of the repository refused the proof) or DRA900 (the proof
    itself failed), nor after DRA248 (a chart the proof could not
    render: not a proof) unless the user accepts unproven charts (--accept-unproven)."""
    blocking = ("DRA244", "DRA250", "DRA900") + (() if accept_unproven else ("DRA248",))
    return not any(f.code in blocking for f in found)


def _with_binary(found: Any, command: str) -> Any:
    """A proof's finding names the helm binary that made it."""
    if found.code not in ("DRA244", "DRA245", "DRA248"):
        return found
    return dataclasses.replace(found, message=f"{found.message} (helm: {command})")


def _refused(plan: ChartPlan, why: str) -> Any:
    return finding(
        "DRA250",
        os.path.join(plan.root, CHART_FILE),
        1,
        1,
        f"chart {plan.name} {plan.version} is not rendered: {why}; helm reads every file "
        "of a chart, and nothing outside the repository is copied for the proof; nothing "
        "is written",
        "make the file a regular file of the repository (or a link to one)",
    )


def _internal(plan: ChartPlan, exc: Exception) -> Any:
    return finding(
        "DRA900",
        os.path.join(plan.root, CHART_FILE),
        1,
        1,
        f"internal error while proving chart {plan.name} ({type(exc).__name__}: {exc}); "
        "nothing is written",
        "please report this with the chart",
    )


def _not_proven(plan: ChartPlan, why: str) -> Any:
    return finding(
        "DRA248",
        os.path.join(plan.root, CHART_FILE),
        1,
        1,
        f"chart {plan.name} {plan.version} is not proven by rendering: {why}",
        "nothing is written: a proof that cannot render is not a proof; fix what stops "
        "it, or write the migration unchecked with --write --accept-unproven",
    )


def _prepare(plan: ChartPlan, tmp: str, changed: dict[str, bytes], options: RunOptions) -> Proof:
    """Copy the chart twice, the run's bytes into the second copy; its variants."""
    root = os.path.realpath(plan.root)
    if not os.path.isfile(os.path.join(root, CHART_FILE)):
        raise NotProven(f"{plan.root} has no {CHART_FILE}")
    folder = _rendered_folder(root, [os.path.realpath(f) for f in plan.files])
    shown = plan.root if folder == root else _shown(folder, plan.root)
    before, after = _copy(folder, shown, tmp, changed, processes.repository(options.paths))
    overlay = os.path.realpath(plan.values_overlay) if plan.values_overlay else ""
    if overlay and not _inside(overlay, folder):
        raise NotProven(f"its values overlay {plan.values_overlay} is outside {shown}")
    variants = [Variant("default values")]
    for path in _values_files(folder, options):
        if path != overlay and os.path.relpath(path, folder) not in DEFAULT_VALUES:
            relative = os.path.relpath(path, folder)
            variants.append(Variant(f"-f {relative}", ("-f", relative)))
    defaults = _defaults(before)
    unraised: list[str] = []
    enable = ",".join(f"{k}=true" for k in plan.enable_keys)  # GPUs off by default
    if enable:
        variants.append(Variant(f"--set {enable}", ("--set", enable)))
    for key in plan.count_keys:
        raised = _raise(defaults, key)
        if raised.startswith("--set "):
            assignments = ",".join(x for x in (enable, raised.removeprefix("--set ")) if x)
            variants.append(Variant(f"--set {assignments}", ("--set", assignments)))
        else:
            unraised.append(raised)
    on: list[str] = []
    if overlay:
        on += ["-f", os.path.relpath(overlay, folder)]
    for key, value in plan.set_keys:
        on += ["--set-json", f"{key}={_json(value)}"]
    if plan.switch and not plan.switch_on and plan.switch not in dict(plan.set_keys):
        on += ["--set", f"{plan.switch}=true"]
    # a count variant's --set comes last: it wins over the keys that turn DRA on
    applied = _applied(plan, folder, after)
    return Proof(plan, shown, before, after, tuple(variants), tuple(on), applied, tuple(unraised))


def _applied(plan: ChartPlan, folder: str, after: str) -> tuple[str, ...]:
    """The copies of the manifests the way applies beside the release (inside the
    chart folder, as a recipe writes them beside the values)."""
    out = []
    for path in plan.applied:
        real = os.path.realpath(path)
        if not _inside(real, folder):
            raise NotProven(f"the manifest it applies beside the release, {path}, is outside")
        out.append(os.path.join(after, os.path.relpath(real, folder)))
    return tuple(out)


def _with_applied(proof: Proof, rendered: bytes) -> bytes:
    """The rendering after with the objects of the manifests applied beside it that
    it uses: one manifest serves every values file of the chart, and a release uses
    the ResourceClaimTemplates its pods name (the others are not its objects)."""
    if not proof.applied:
        return rendered
    import yaml

    named: set[str] = set()
    for obj in compare.loaded(rendered):
        named.update(_template_names(obj))
    kept = []
    for path in proof.applied:
        with open(path, "rb") as handle:
            for obj in compare.loaded(handle.read()):
                name = (obj.get("metadata") or {}).get("name")
                if obj.get("kind") != "ResourceClaimTemplate" or name in named:
                    kept.append(obj)
    extra = yaml.safe_dump_all(kept, sort_keys=False).encode() if kept else b""
    return rendered + b"\n---\n" + extra


def _template_names(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        name = value.get("resourceClaimTemplateName")
        if isinstance(name, str):
            yield name
        for item in value.values():
            yield from _template_names(item)
    elif isinstance(value, list):
        for item in value:
            yield from _template_names(item)


def _copy(
    folder: str, shown: str, tmp: str, changed: dict[str, bytes], repository: str
) -> tuple[str, str]:
    """The chart folder copied twice (the repository's own files only, links kept as
    links: processes.copy_tree), the run's bytes written into the second copy; the two
    chart folders. A link that leaves the repository refuses the proof (``Refused``):
    helm would read what it points at (``.Files.Get``, a template), and its error
    would carry it."""
    try:
        copied = processes.copy_tree(folder, os.path.join(tmp, "before"), repository)
        if copied.links_out:
            link, target = copied.links_out[0]
            more = len(copied.links_out) - 1
            raise Refused(
                f"{os.path.join(shown, link)} is a symbolic link to {target!r}, outside the "
                f"repository{f' (and {more} other link(s))' if more else ''}"
            )
        if copied.dangling:
            raise NotProven(
                f"the chart cannot be copied: {os.path.join(shown, copied.dangling[0])} is a "
                "link to nothing"
            )
        after = processes.copy_tree(folder, os.path.join(tmp, "after"), repository).root
        for real, data in changed.items():
            if _inside(real, folder):
                target = os.path.join(after, os.path.relpath(real, folder))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                if os.path.islink(target):  # a link inside the copy: its file is written
                    target = os.path.realpath(target)
                with open(target, "wb") as handle:
                    handle.write(data)
    except processes.Outside:
        raise Refused(f"{shown} is a symbolic link (or below one) outside the repository") from None
    except processes.TooLarge as exc:
        raise NotProven(f"the chart is too large to copy for the proof ({exc})") from None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise NotProven(f"the chart cannot be copied: {why}") from None
    return copied.root, after


def _rendered_folder(root: str, files: Sequence[str]) -> str:
    """The chart folder that holds every file the way changes: the chart's, or the
    parent chart's when a vendored chart's values are the parent's."""
    folder = root
    while any(not _inside(f, folder) for f in files) or not os.path.isfile(
        os.path.join(folder, CHART_FILE)
    ):
        up = os.path.dirname(folder)
        if up == folder:
            raise NotProven("the files the run changes are not inside one chart folder")
        folder = up
    return folder


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _shown(folder: str, like: str) -> str:
    """A real path as the run shows paths (relative when ``like`` is)."""
    return folder if os.path.isabs(like) else os.path.relpath(folder)


def _values_files(folder: str, options: RunOptions) -> tuple[str, ...]:
    from dra_migrate.helm import chart
    from dra_migrate.repo import discover
    from dra_migrate.report.findings import InputProblem

    def read(path: str) -> bytes:  # (regular files only, never blocking, bounded)
        return discover.read_file(path, options.max_file_size)

    try:
        return chart.read(folder, folder, read, options.settings.config.helm).values_files
    except InputProblem as problem:
        raise NotProven(problem.finding.message) from None
    except discover.Unreadable as problem:
        raise NotProven(f"a file of the chart cannot be read: {problem}") from None


def _defaults(folder: str) -> Any:
    """The chart's values.yaml as data ({} when it has none or it does not load)."""
    from dra_migrate.manifests.compose import load_data
    from dra_migrate.repo import discover
    from dra_migrate.report.findings import InputProblem

    try:  # (a regular file of the copy, read as any file: bounded, then the bounded loader)
        docs = load_data(discover.read_file(os.path.join(folder, "values.yaml")), "values.yaml")
    except (discover.Unreadable, InputProblem):
        return {}
    return (docs[0] if docs else None) or {}


def _raise(values: Any, key: str) -> str:
    """The ``--set`` that raises a GPU count by one (``--set k=N``; several keys that
    hold one count, joined by commas as helm's --set joins them, all set to it), or why
    it cannot be raised: a key whose value is a map or a list is replaced whole by
    ``--set``, so the chart would render something else than a raised count."""
    keys = key.split(",")
    found = [_value(values, k) for k in keys]
    for k, value in zip(keys, found, strict=True):
        if isinstance(value, (dict, list)):
            what = "a map" if isinstance(value, dict) else "a list"
            return (
                f"its GPU count key {k} holds {what} in values.yaml: --set {k}=N would "
                "replace it whole, so the count cannot be raised through it"
            )
    count = max(_count(v) for v in found) + 1
    return "--set " + ",".join(f"{k}={count}" for k in keys)


def _value(values: Any, key: str) -> Any:
    """The value a values key holds (None where the values do not say)."""
    import re

    value = values
    for part in re.split(r"(?<!\\)\.", key):  # helm's --set path: \. is a dot in a name
        if not isinstance(value, dict):
            return None
        value = value.get(part.replace("\\.", "."))
    return value


def _count(value: Any) -> int:
    """The GPU count a values key holds by default (1 where the values do not say)."""
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return 1


def _json(value: str) -> str:
    """A set_keys value (YAML) as the JSON --set-json takes."""
    import json

    from dra_migrate.manifests.compose import load_data
    from dra_migrate.report.findings import InputProblem

    try:
        docs = load_data(value, "(value)")
        data = docs[0] if docs else None
    except InputProblem:
        data = value
    return json.dumps(data, separators=(",", ":"), default=str)


@dataclass(frozen=True, slots=True)
class _Runner:
    """How every helm process of a run is started: the binary, the environment (a home
    in the proofs' folder, offline: processes.environment), the run's time budget, the
    file stage's size limit for what it prints."""

    command: str
    home: str
    budget: processes.Budget
    options: RunOptions


def _render_all(
    command: str,
    wanted: Sequence[tuple[str, tuple[str, ...]]],
    jobs: int | None,
    runner: _Runner,
) -> Rendered:
    """Every rendering, on a pool of ``jobs`` threads (a helm process each); on an
    interrupt the processes are stopped before the pool is waited for."""
    if not wanted:
        return {}
    from concurrent.futures import ThreadPoolExecutor

    env = processes.environment(runner.home)
    workers = max(1, min(jobs or os.cpu_count() or 1, len(wanted)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            done = pool.map(lambda key: _render(runner, env, *key), wanted)
            return dict(zip(wanted, done, strict=True))
        except BaseException:
            processes.stop_all()
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _render(
    run: _Runner, env: dict[str, str], folder: str, args: tuple[str, ...]
) -> tuple[bytes | None, str]:
    """One rendering: its stdout, or None and why in the tool's words (helm's stderr
    holds what the chart read: processes.helm_failure says only what failed, where)."""
    values = [a for a in args if a != AGAIN]
    argv = [run.command, "template", RELEASE, ".", "--namespace", NAMESPACE, *values]
    share = run.budget.next_share()
    if share <= 0:
        return None, run.budget.spent()
    done = processes.run(argv, folder, env, share, run.options.max_file_size)
    if done.stdout is None:
        return None, processes.helm_failure(done, folder)
    return done.stdout, ""


def _check(proof: Proof, rendered: Rendered, options: RunOptions) -> list[Any]:
    """The findings of one chart: DRA248 per rendering that cannot be made before, one
    DRA244 for the first rendering after that differs (the others counted), DRA245."""
    import yaml

    plan = proof.plan
    out: list[Any] = []
    unproven: list[str] = []  # why, per rendering that cannot be made before
    wrong: list[tuple[str, str]] = []  # (variant, what differs)
    uncovered: set[str] = set()  # variants with objects the chart's switch leaves
    proven: list[str] = []
    first, _ = rendered[(proof.before, proof.variants[0].args)]
    again, _ = rendered[proof.again()]
    if first is not None and again is not None and first != again:
        return [
            _not_proven(
                plan,
                f"helm template renders it differently each time with "
                f"{proof.variants[0].label} ({byte_difference(first, again, ('first', 'then'))}; a function "
                "such as randAlphaNum, now or uuidv4)",
            )
        ]
    unproven.extend(proof.unraised)
    for variant in proof.variants:
        before, error = rendered[(proof.before, variant.args)]
        if before is None:
            unproven.append(f"helm template fails with {variant.label}: {error}")
            continue
        expected, why = _converted(before, f"helm template of {proof.shown}", options)
        if expected is None:
            unproven.append(f"the conversion of its rendering with {variant.label} stops: {why}")
            continue
        after, error = rendered[(proof.after, (*variant.args, *proof.on))]
        if after is None:
            wrong.append((variant.label, f"helm template fails after the migration: {error}"))
            continue
        compare = claims_difference if plan.compare == "claims" else exact_difference
        try:
            differs = compare(expected, _with_applied(proof, after), _gpu(options))
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            at = f" at line {where.line + 1}" if where is not None else ""
            differs = f"the rendering after does not load as YAML{at} ({_problem(exc)})"
        left = render_compare.still_asking(expected, after, _gpu(options)) if differs else []
        if left:  # objects the chart's switch does not cover: named, not blamed on the tool
            uncovered.add(variant.label)
            wrong.append(
                (
                    variant.label,
                    f"{'; '.join(left)} after the migration, which the conversion of the "
                    "rendering before migrates: the chart's DRA switch does not cover it "
                    f"(compare: {plan.compare})",
                )
            )
            continue
        if differs:
            wrong.append(
                (
                    variant.label,
                    "the rendering after the migration is not the conversion of the "
                    f"rendering before: {differs} (compare: {plan.compare})",
                )
            )
            continue
        if plan.switch:
            off, error = rendered[(proof.after, (*variant.args, *proof.off()))]
            if off is None:
                wrong.append(
                    (variant.label, f"helm template fails with {plan.switch}=false: {error}")
                )
                continue
            differs = byte_difference(before, off)
            if differs:
                wrong.append(
                    (
                        variant.label,
                        f"with {plan.switch}=false the rendering after is not the "
                        f"rendering before byte for byte: {differs}",
                    )
                )
                continue
        proven.append(variant.label)
    if unproven:
        more = f"; {len(unproven) - 1} other rendering(s) not made" if len(unproven) > 1 else ""
        out.append(_not_proven(plan, unproven[0] + more))
    if wrong:
        label, what = wrong[0]
        more = f"; {len(wrong) - 1} other rendering(s) differ too" if len(wrong) > 1 else ""
        out.append(
            finding(
                "DRA244",
                proof.where,
                1,
                1,
                f"chart {plan.name} {plan.version} ({plan.way}), rendered from {proof.shown} "
                f"with {label}: {what}{more}",
                "nothing is written; with these values the chart's own switch leaves that "
                "object on the device plugin: migrate it by hand, leave the values that "
                "turn it on out of the run (--exclude), or keep the chart on the bridge "
                "(strategy: bridge)"
                if label in uncovered
                else "nothing is written; the chart's migration is wrong: please report this "
                "with the chart",
            )
        )
    elif proven:
        switch = f"; with {plan.switch}=false byte for byte" if plan.switch else ""
        out.append(
            finding(
                "DRA245",
                proof.where,
                1,
                1,
                f"chart {plan.name} {plan.version} ({plan.way}): {len(proven)} rendering(s) "
                f"proven ({', '.join(proven)}; compare: {plan.compare}{switch})",
            )
        )
    return out


def _problem(exc: Exception) -> str:
    return str(getattr(exc, "problem", None) or exc).strip().splitlines()[0]


def _converted(rendered: bytes, label: str, options: RunOptions) -> tuple[bytes | None, str]:
    """A rendering converted as ``convert -`` converts it; (None, why) when it stops."""
    import io

    from dra_migrate.pipeline.stream import run_stream

    parts: list[bytes] = []

    def sink(part: Any) -> None:
        new = part.converted if part.status is Status.CHANGED else part.original
        if new is not None:
            parts.append(new)

    here = dataclasses.replace(
        options, paths=("-",), stdin_filename=label, only=None, changed_since=None, progress=None
    )
    result = run_stream(io.BytesIO(rendered), here, sink).files[0]
    stops = [f for f in result.findings if f.blocks]
    if result.status is Status.FAILED or stops:
        return None, (stops or result.findings)[0].format() if result.findings else "failed"
    return b"".join(parts) if parts else rendered, ""


def _gpu(options: RunOptions) -> Callable[[str], bool]:
    """Whether a resource name is one the mapping converts (a GPU field)."""
    return options.settings.config.maps
