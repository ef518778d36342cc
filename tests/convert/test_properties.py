"""Property tests: random pod specs, GPU counts, containers, indentation, quoting, comments.

Properties: GPU conservation per container (and the pod total of the device
plugin), output schema-valid, idempotence, untouched bytes outside the edits,
line endings / BOM / final newline as in the input.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.k8s import schemas
from dra_migrate.pipeline.one_file import process
from dra_migrate.repo.roles import Role
from dra_migrate.report.model import Status
from tests.helpers.invariants import check_conversion, check_untouched, load_all, objects

CONFIG = load_config(None)
RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.10gb")


@dataclass
class Ctr:
    name: str
    gpus: dict[str, int]
    cpu: bool
    with_requests: bool
    sidecar: bool = False


@dataclass
class Case:
    text: str
    kind: str
    containers: list[Ctr]
    inits: list[Ctr]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    kind = draw(st.sampled_from(["Pod", "Deployment", "Job", "StatefulSet"]))
    indent = draw(st.sampled_from([2, 3, 4]))
    seq = draw(st.sampled_from(sorted({0, 2, indent})))
    quote = draw(st.sampled_from(["", '"', "'"]))
    comments = draw(st.booleans())
    namespace = draw(st.one_of(st.none(), st.sampled_from(["ml", "team-a"])))

    def container(prefix: str, i: int) -> Ctr:
        names = draw(st.lists(st.sampled_from(RESOURCES), max_size=2, unique=True))
        gpus = {n: draw(st.integers(0, 8)) for n in names}
        return Ctr(f"{prefix}{i}", gpus, draw(st.booleans()), draw(st.booleans()))

    apps = [container("app", i) for i in range(draw(st.integers(1, 3)))]
    inits = [container("init", i) for i in range(draw(st.integers(0, 2)))]
    for c in inits:
        c.sidecar = draw(st.booleans())

    lines: list[str] = []

    def put(level: int, text: str, comment: str = "") -> None:
        suffix = f"  # {comment}" if comments and comment else ""
        lines.append(" " * level + text + suffix)

    def q(value: int) -> str:
        return f"{quote}{value}{quote}"

    def emit_containers(level: int, key: str, ctrs: list[Ctr]) -> None:
        put(level, f"{key}:")
        dash = level + seq
        body = dash + 2
        for c in ctrs:
            put(dash, f"- name: {c.name}")
            put(body, "image: registry.example/app:1.0")
            if c.sidecar:
                put(body, "restartPolicy: Always")
            if comments:
                put(body, f"# resources of {c.name}")
            put(body, "resources:")
            sections = ["limits", "requests"] if c.with_requests else ["limits"]
            for section in sections:
                put(body + indent, f"{section}:")
                if c.cpu:
                    put(body + 2 * indent, "cpu: 500m")
                for name, count in c.gpus.items():
                    put(body + 2 * indent, f"{name}: {q(count)}", f"{section} {name} of {c.name}")
                if not c.cpu and not c.gpus:
                    put(body + 2 * indent, "memory: 1Gi")

    def emit_pod(level: int) -> None:
        if inits:
            emit_containers(level, "initContainers", inits)
        emit_containers(level, "containers", apps)
        put(
            level,
            "restartPolicy: Never"
            if kind in ("Pod", "Job")
            else "terminationGracePeriodSeconds: 30",
        )

    api = {"Pod": "v1", "Deployment": "apps/v1", "Job": "batch/v1", "StatefulSet": "apps/v1"}[kind]
    put(0, f"apiVersion: {api}")
    put(0, f"kind: {kind}")
    put(0, "metadata:")
    put(indent, "name: worker")
    if namespace:
        put(indent, f"namespace: {namespace}")
    put(0, "spec:")
    if kind == "Pod":
        emit_pod(indent)
    else:
        if kind in ("Deployment", "StatefulSet"):
            put(indent, "selector:")
            put(2 * indent, "matchLabels:")
            put(3 * indent, "app: worker")
        put(indent, "template:")
        put(2 * indent, "metadata:")
        put(3 * indent, "labels:")
        put(4 * indent, "app: worker")
        put(2 * indent, "spec:")
        emit_pod(3 * indent)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + (newline if draw(st.booleans()) else "")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return Case(text, kind, apps, inits)


def _settings(target: str) -> Settings:
    return Settings(target=target, config=CONFIG)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), target=st.sampled_from(["v1beta1", "v1beta2", "v1"]))
def test_conversion_properties(case: Case, target: str) -> None:
    raw = case.text.encode("utf-8")
    result = process("case.yaml", raw, Role(), _settings(target))
    wanted = any(n for c in case.containers + case.inits for n in c.gpus.values())
    blocking = [f.format() for f in result.findings if f.blocks]
    assert not blocking, blocking
    if not wanted:
        assert result.status is Status.UNCHANGED
        return
    assert result.status is Status.CHANGED, [f.format() for f in result.findings]
    assert result.converted is not None
    original = case.text.removeprefix("\ufeff")
    converted_with_bom = result.converted.decode("utf-8")
    # BOM, line endings and the final newline follow the input
    assert converted_with_bom.startswith("\ufeff") == case.text.startswith("\ufeff")
    converted = converted_with_bom.removeprefix("\ufeff")
    if "\r\n" in original:
        assert converted.count("\n") == converted.count("\r\n")
    else:
        assert "\r" not in converted
    assert converted.endswith("\n") == original.endswith("\n")

    check_conversion(original, converted, result.inventory)
    check_untouched(original, converted, RESOURCES)

    # the workload itself stays schema-valid for the target's Kubernetes versions
    workload = next(o for o in objects(load_all(converted)) if o["kind"] == case.kind)
    assert schemas.validate_object(workload) == []

    again = process("case.yaml", result.converted, Role(), _settings(target))
    assert again.status is Status.UNCHANGED


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300))
def test_arbitrary_text_never_crashes(text: str) -> None:
    """Whatever the bytes, the result is a finding, never an exception or DRA900."""
    data = ("nvidia.com/gpu: 1\n" + text).encode("utf-8", "surrogatepass")
    from dra_migrate.pipeline.one_file import Job, process_job

    result = process_job(Job("", "fuzz.yaml", Role(), data), _settings("v1beta1"))
    assert all(f.code != "DRA900" for f in result.findings), [f.format() for f in result.findings]


@given(st.text(alphabet=st.characters(exclude_categories=())))
def test_has_unsafe_answers_as_the_character_check(text: str) -> None:
    """The fast path (``str.isprintable``) never hides an unsafe character."""
    from dra_migrate.report.findings import has_unsafe, unsafe

    assert has_unsafe(text) == any(unsafe(c) for c in text)
