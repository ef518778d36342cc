"""A Helm chart folder read: Chart.yaml, its values files, templates and schema, and
whether it is a vendored upstream chart (never forked by a template edit).

A chart is upstream when the configuration says so (``helm.upstream``), when it sits
in another chart's ``charts/`` folder and that chart's Chart.yaml fetches it from a
repository (``https://``, ``oci://``: a ``file://`` dependency is the team's own),
or when its name is one of the upstream charts the recipes or ``KNOWN_UPSTREAM``
name; ``helm.own`` overrides the last two.
"""

from __future__ import annotations

import os

from dra_migrate.convert.mapping import HelmConfig
from dra_migrate.helm.model import Chart, Dependency, Read
from dra_migrate.manifests import compose, sources
from dra_migrate.manifests.trees import position, to_data
from dra_migrate.report.findings import InputProblem, finding

# Charts published upstream that ask for GPUs and that a team vendors rather than
# writes (a recipe's chart names are added to these): edited only through values.
KNOWN_UPSTREAM = frozenset(
    {
        "gpu-operator",  # NVIDIA/gpu-operator deployments/gpu-operator
        "nvidia-device-plugin",  # NVIDIA/k8s-device-plugin deployments/helm
        "nvidia-dra-driver-gpu",  # NVIDIA/k8s-dra-driver-gpu deployments/helm
        "vllm-stack",  # vllm-project/production-stack helm
        "ray-cluster",  # ray-project/kuberay helm-chart/ray-cluster
        "kuberay-operator",
        "ollama",  # otwld/ollama-helm
        "llm-d-modelservice",  # llm-d-incubation/llm-d-modelservice
        "kubeai",  # substratusai/kubeai charts/kubeai
        "nim-llm",  # NVIDIA/nim-deploy helm/nim-llm
        "triton-inference-server",
        "kserve",
        "aibrix",
    }
)
CHART_FILE = "Chart.yaml"
SCHEMA_FILE = "values.schema.json"
_TEMPLATE_ENDS = (".yaml", ".yml", ".tpl", ".txt", ".json")


def read(
    root: str,
    display: str,
    read_bytes: Read,
    config: HelmConfig,
    known: frozenset[str] = KNOWN_UPSTREAM,
) -> Chart:
    """The chart in the folder ``root`` (a real path), or ``InputProblem`` (DRA004 at
    Chart.yaml's line:col) when Chart.yaml cannot be read as a chart's."""
    meta = _chart_yaml(root, display, read_bytes)
    name, version = str(meta.get("name") or ""), str(meta.get("version") or "")
    parent, values_key, dependency = _parent(root, name, read_bytes)
    values = _values_files(root)
    templates = _templates(root)
    schema = os.path.join(root, SCHEMA_FILE)
    upstream, why = _upstream(root, name, parent, dependency, config, known)
    return Chart(
        root=root,
        display=display,
        name=name,
        version=version,
        api_version=str(meta.get("apiVersion") or "v2"),
        type=str(meta.get("type") or "application"),
        app_version=str(meta.get("appVersion") or ""),
        dependencies=_dependencies(meta.get("dependencies")),
        parent=parent,
        values_key=values_key,
        values_files=tuple(values),
        templates=tuple(templates),
        schema=schema if os.path.isfile(schema) else None,
        upstream=upstream,
        why_upstream=why,
    )


def _chart_yaml(root: str, display: str, read_bytes: Read) -> dict[str, object]:
    path = os.path.join(root, CHART_FILE)
    shown = os.path.join(display, CHART_FILE)
    try:
        source = sources.decode(shown, read_bytes(path))
        roots = [doc.root for doc in compose.parse(source)]  # (the bounded loader)
    except InputProblem:
        raise
    except Exception as exc:  # an unreadable or malformed Chart.yaml holds the chart
        raise InputProblem(
            finding("DRA004", shown, 1, 1, f"Chart.yaml cannot be read: {exc}")
        ) from None
    root_node = roots[0] if roots else None
    data = to_data(root_node) if root_node is not None else None
    if not isinstance(data, dict):
        line, col = position(root_node) if root_node is not None else (1, 1)
        raise InputProblem(
            finding("DRA004", shown, line, col, "Chart.yaml is not a mapping of chart fields")
        )
    return data


def _dependencies(raw: object) -> tuple[Dependency, ...]:
    out: list[Dependency] = []
    for entry in raw if isinstance(raw, list) else ():
        if isinstance(entry, dict) and entry.get("name"):
            out.append(
                Dependency(
                    name=str(entry["name"]),
                    version=str(entry.get("version") or ""),
                    repository=str(entry.get("repository") or ""),
                    alias=str(entry.get("alias") or ""),
                    condition=str(entry.get("condition") or ""),
                )
            )
    return tuple(out)


def _parent(root: str, name: str, read_bytes: Read) -> tuple[str | None, str, Dependency | None]:
    """(the parent chart's folder, the key of its values for this chart, its entry in
    the parent's dependencies) when ``root`` is ``<parent>/charts/<folder>``."""
    charts = os.path.dirname(root)
    if os.path.basename(charts) != "charts":
        return None, "", None
    parent = os.path.dirname(charts)
    if not os.path.isfile(os.path.join(parent, CHART_FILE)):
        return None, "", None
    try:
        meta = _chart_yaml(parent, parent, read_bytes)
    except InputProblem:
        return parent, name, None
    for dep in _dependencies(meta.get("dependencies")):
        if dep.name == name:
            return parent, dep.key, dep
    return parent, name, None


def _upstream(
    root: str,
    name: str,
    parent: str | None,
    dependency: Dependency | None,
    config: HelmConfig,
    known: frozenset[str],
) -> tuple[bool, str]:
    if _matches(root, config.upstream, config.folder):
        return True, "the configuration's helm.upstream"
    if parent is not None and dependency is not None:
        repository = dependency.repository
        if repository and not repository.startswith("file://"):
            return True, f"a dependency of {os.path.basename(parent)} from {repository}"
    if _matches(root, config.own, config.folder):
        return False, ""
    if name in known and parent is None:
        return True, f"the name of the upstream chart {name}"
    return False, ""


def _matches(root: str, patterns: tuple[str, ...], folder: str) -> bool:
    if not patterns:
        return False
    import pathspec

    relative = os.path.relpath(root, folder or os.getcwd()).replace(os.sep, "/")
    if relative.startswith(".."):  # outside the configuration's folder
        return False
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    return bool(spec.match_file(relative) or spec.match_file(relative + "/"))


def values_files(root: str) -> list[str]:
    """The values files of the chart in ``root`` as the chart pass pairs them."""
    return _values_files(root)


def _values_files(root: str) -> list[str]:
    """values.yaml, then the chart folder's other values*.yaml, then ci/*.yaml (the
    files a chart's CI renders it with), each sorted."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    own = [
        os.path.join(root, n)
        for n in names
        if n.startswith("values")
        and n.endswith((".yaml", ".yml"))
        and os.path.isfile(os.path.join(root, n))
    ]
    own.sort(key=lambda p: os.path.basename(p) not in ("values.yaml", "values.yml"))
    ci = os.path.join(root, "ci")
    extra = []
    if os.path.isdir(ci):
        extra = [
            os.path.join(ci, n)
            for n in sorted(os.listdir(ci))
            if n.endswith((".yaml", ".yml")) and os.path.isfile(os.path.join(ci, n))
        ]
    return own + extra


def _templates(root: str) -> list[str]:
    out: list[str] = []
    for folder, subfolders, files in os.walk(os.path.join(root, "templates")):
        subfolders.sort()
        out.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(_TEMPLATE_ENDS))
    return out


def subcharts(chart: Chart) -> list[str]:
    """The folders of the charts vendored in ``chart``'s charts/ folder (unpacked)."""
    folder = os.path.join(chart.root, "charts")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        os.path.join(folder, n)
        for n in names
        if os.path.isfile(os.path.join(folder, n, CHART_FILE))
    ]
