"""The mapping: which extended resource becomes which DeviceClass request.

Built-in defaults live in ``defaults.yaml`` beside this module; a project adds
to them with ``.dra-migrate.yaml`` (found upward from the first path) or
``--config FILE``. The file is checked against ``schemas/config.schema.json`` by
jsonschema (a valid file's verdict is kept in the user's cache folder) and errors
point at the line of the offending value.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from dra_migrate.k8s.names import DNS_SUBDOMAIN
from dra_migrate.package_data import package_file
from dra_migrate.repo import discover
from dra_migrate.repo.sharing_lookup import configured_fleet
from dra_migrate.report.findings import ConfigError, Finding, InputProblem, finding

# A GPU ask that names no resource: a KubeAI Model's resource profile (the profile's
# resources are the ask: convert/profile_asks.py). Files that hold it are parsed too.
PROFILE_NEEDLE = b"resourceProfile:"
TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any

    StrPath = str | PathLike[str]

if TYPE_CHECKING:  # the parser is imported where a file is parsed
    from yaml.nodes import Node

    from dra_migrate.repo.node_pools import NodePool
    from dra_migrate.repo.sharing import Fleet
    from dra_migrate.report.model import BridgeClass

CONFIG_NAMES = (".dra-migrate.yaml", ".dra-migrate.yml")
_DEFAULTS = package_file("defaults.yaml")
# defaults.yaml as JSON, in the package (scripts/build_data.py): a run that parses no
# file never imports the YAML library (about 15 ms) for the built-in mapping. It holds
# the digest of the YAML it was made from: an edited defaults.yaml is read itself.
DEFAULTS_JSON = package_file("built", "defaults.json")
_PLACEHOLDER = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}")
_ADJACENT = re.compile(r"(\{[a-zA-Z_][a-zA-Z0-9_]*\})(\{[a-zA-Z_][a-zA-Z0-9_]*\})")


_NOTHING: Mapping[str, Any] = MappingProxyType({})  # an empty mapping no one can change


@dataclass(frozen=True, slots=True)
class Context:
    """What a rule can look at: the workload around the pod spec."""

    namespace: str | None = None
    # (a field's default must be hashable: the one shared empty mapping, from a factory)
    labels: Mapping[str, str] = field(default_factory=lambda: _NOTHING)
    # label key -> the set of values the pod may be scheduled on
    node_selector: Mapping[str, frozenset[str]] = field(default_factory=lambda: _NOTHING)

    @property
    def gpu_labels(self) -> bool:
        """Whether the pod selects nodes by a label GPU feature discovery writes (its
        sharing model may say how: convert/sharing.py)."""
        return any(k.startswith(("nvidia.com/gpu.", "nvidia.com/mig.")) for k in self.node_selector)


@dataclass(frozen=True, slots=True)
class Rule:
    namespaces: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    node_selector: tuple[tuple[str, frozenset[str]], ...] = ()
    device_class: str | None = None
    selectors: tuple[str, ...] | None = None
    config: tuple[Mapping[str, Any], ...] | None = None

    def matches(self, ctx: Context) -> bool:
        if self.namespaces and (ctx.namespace or "") not in self.namespaces:
            return False
        if any(ctx.labels.get(k) != v for k, v in self.labels):
            return False
        for key, allowed in self.node_selector:
            values = ctx.node_selector.get(key)
            if not values or not values <= allowed:
                return False
        return True


@dataclass(frozen=True, slots=True)
class Choice:
    """The outcome for one extended resource in one pod."""

    resource: str
    device_class: str
    selectors: tuple[str, ...]
    config: tuple[Mapping[str, Any], ...]
    shared: bool
    rule: int | None  # index of the matching rule, None for the resource's default
    # capacity.requests of the device request: (capacity name, quantity), in order
    capacity: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceMapping:
    name: str
    device_class: str
    selectors: tuple[str, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()
    shared: bool = False
    rules: tuple[Rule, ...] = ()
    capacity: tuple[tuple[str, str], ...] = ()  # capacity.requests, placeholders allowed

    def match(self, resource: str) -> dict[str, str] | None:
        """The placeholders' values when ``resource`` matches the name, else None."""
        return match_name(self.name, resource)

    def choose(self, resource: str, ctx: Context) -> Choice | None:
        captured = self.match(resource)
        if captured is None:
            return None
        device_class, selectors, config, index = (
            self.device_class,
            self.selectors,
            self.config,
            None,
        )
        for i, rule in enumerate(self.rules):
            if rule.matches(ctx):
                index = i
                device_class = rule.device_class or device_class
                selectors = rule.selectors if rule.selectors is not None else selectors
                config = rule.config if rule.config is not None else config
                break
        selectors = tuple(_fill(s, captured) for s in selectors)
        return Choice(
            resource,
            _fill(device_class, captured),
            selectors,
            config,
            self.shared,
            index,
            tuple((_fill(k, captured), v) for k, v in self.capacity),
        )


# The longest extended resource name Kubernetes accepts: a DNS subdomain, "/", a name
MAX_RESOURCE_NAME = 253 + 1 + 63
# What a placeholder captures: an alphanumeric, then alphanumerics and . _ + -
_CAPTURE_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_CAPTURE = _CAPTURE_FIRST | frozenset("._+-")


@functools.lru_cache(maxsize=256)
def _name_parts(name: str) -> tuple[tuple[bool, str], ...]:
    """A name pattern as (is a placeholder, literal text or placeholder name) parts."""
    parts: list[tuple[bool, str]] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(name):
        if m.start() > pos:
            parts.append((False, name[pos : m.start()]))
        parts.append((True, m.group(1)))
        pos = m.end()
    if pos < len(name):
        parts.append((False, name[pos:]))
    return tuple(parts)


def match_name(name: str, resource: str) -> dict[str, str] | None:
    """Whether ``resource`` is an instance of the pattern ``name``, and what each
    placeholder captured: the captures a backtracking regular expression would give
    (each placeholder as long as the rest still matches), found in time linear in the
    length of ``resource`` for each part of the pattern, whatever the two hold. A name
    longer than Kubernetes accepts (``MAX_RESOURCE_NAME``) matches no pattern.

    From the last part to the first, ``ends[i][p]`` says whether parts ``i:`` match
    ``resource[p:]``; a placeholder at ``p`` may end anywhere in the run of capture
    characters from ``p``, and takes the last end where the next part matches."""
    if len(resource) > MAX_RESOURCE_NAME:
        return None
    parts = _name_parts(name)
    first, last_part = parts[0], parts[-1]
    if (not first[0] and not resource.startswith(first[1])) or (
        not last_part[0] and not resource.endswith(last_part[1])
    ):
        return None  # the usual answer, at once
    n = len(resource)
    run = [0] * (n + 1)  # run[p]: the end of the run of capture characters from p
    run[n] = n
    for p in range(n - 1, -1, -1):
        run[p] = run[p + 1] if resource[p] in _CAPTURE else p
    after = [False] * n + [True]  # parts after the current one match resource[p:]
    ends: list[list[int]] = []  # per placeholder part: the end it takes at each p (-1: none)
    for placeholder, text in reversed(parts):
        here = [False] * (n + 1)
        if placeholder:
            last = [-1] * (n + 1)  # last[q]: the largest end e <= q where the rest matches
            for q in range(n + 1):
                last[q] = q if after[q] else (last[q - 1] if q else -1)
            end = [-1] * (n + 1)
            for p in range(n):
                if resource[p] in _CAPTURE_FIRST and last[run[p]] > p:
                    end[p] = last[run[p]]
                    here[p] = True
            ends.append(end)
        else:
            size = len(text)
            for p in range(n - size + 1):
                here[p] = after[p + size] and resource.startswith(text, p)
        after = here
    if not after[0]:
        return None
    captured: dict[str, str] = {}
    ends.reverse()
    pos, k = 0, 0
    for placeholder, text in parts:
        if placeholder:
            stop = ends[k][pos]
            captured[text] = resource[pos:stop]
            pos, k = stop, k + 1
        else:
            pos += len(text)
    return captured


def _fill(text: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


@dataclass(frozen=True, slots=True)
class IgnoreEntry:
    """An ``ignore`` entry that silences findings: a path pattern and codes (all when empty)."""

    path: str
    codes: tuple[str, ...]
    place: int  # its index in the ``ignore`` list, for messages about it


@dataclass(frozen=True, slots=True)
class ClassDefinition:
    """A DeviceClass the project defines (``deviceClasses``), rendered by ``deviceclasses``."""

    name: str
    driver: str
    selectors: tuple[str, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()
    extended_resource_name: str | None = None
    description: str = ""
    line: int = 0  # where it is defined in the configuration file
    col: int = 0


STRATEGIES = ("rewrite", "bridge", "auto")


@dataclass(frozen=True, slots=True)
class StrategyConfig:
    """``strategy:`` of the configuration: a default and overrides, each (pattern,
    strategy) in the file's order (migration/strategy.py resolves them)."""

    default: str | None = None  # None: not set (--strategy, else rewrite)
    resources: tuple[tuple[str, str], ...] = ()  # extended resource name (glob)
    paths: tuple[tuple[str, str], ...] = ()  # gitignore-style, from ``folder``
    workloads: tuple[tuple[str, str], ...] = ()  # Kind/namespace/name or Kind/name (globs)
    folder: str = ""  # the configuration file's folder (real path), for ``paths``
    device_classes: str | None = None  # the deviceclasses --strategy bridge output file

    @property
    def overrides(self) -> bool:
        return bool(self.resources or self.paths or self.workloads)

    def may_bridge(self, flag: str | None) -> bool:
        """Whether a pod spec of a run with --strategy ``flag`` can be bridged (else
        nothing about bridges is read, and the strategy module is never imported)."""
        every = (*self.resources, *self.paths, *self.workloads)
        return {flag or self.default or "rewrite", *(s for _p, s in every)} != {"rewrite"}


@dataclass(frozen=True, slots=True)
class HelmConfig:
    """``helm:`` of the configuration: how chart sources are migrated (dra_migrate/helm/).
    Paths are gitignore-style patterns from ``folder``; a chart matches by its folder."""

    values: str = "edit"  # a values recipe: "edit" the values files, or write a "file" beside
    switch: str = "off"  # template edits: the switch the tool adds is "off" or "on" by default
    switch_key: str = "dra.enabled"  # the values key of that switch
    upstream: tuple[str, ...] = ()  # chart folders treated as vendored upstream charts
    own: tuple[str, ...] = ()  # chart folders treated as the team's own (template edits)
    folder: str = ""  # the configuration file's folder (real path), for the patterns


@dataclass(frozen=True, slots=True)
class Config:
    """The mapping and settings of a project (``.dra-migrate.yaml``), or the built-in ones."""

    resources: tuple[ResourceMapping, ...]
    detect: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()  # resource names (glob) that detect must not report
    exclude: tuple[str, ...] = ()
    target: str | None = None
    kube_version: str | None = None
    path: str | None = None  # the file it came from, None for built-ins only
    device_classes: tuple[ClassDefinition, ...] = ()
    suppressions: tuple[IgnoreEntry, ...] = ()  # ignore entries with a path and codes
    max_file_size: int = discover.DEFAULT_MAX_FILE_SIZE  # larger files are refused
    # drivers the catalog does not list: domain -> the attribute and capacity names
    drivers: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # catalogued drivers' releases the cluster runs (drivers: {gpu.nvidia.com: "0.5"})
    driver_releases: tuple[tuple[str, str], ...] = ()
    # featureGates: DRA feature gates of the cluster (name, on), under --feature-gates
    feature_gates: tuple[tuple[str, bool], ...] = ()
    # write the toleration ExtendedResourceToleration added (controllers.py)
    extended_resource_toleration: bool = True
    # schedulerName values known to allocate ResourceClaims besides the default
    dra_schedulers: frozenset[str] = frozenset()
    dra_node_pools: frozenset[str] = frozenset()  # Karpenter NodePools that serve claims
    # namespaces KServe's controller runs in besides its installs' own (kserve, kubeflow)
    kserve_namespaces: frozenset[str] = frozenset()
    strategy: StrategyConfig = StrategyConfig()  # strategy: rewrite, bridge or auto
    helm: HelmConfig = HelmConfig()  # helm: how chart sources are migrated
    # the fleet's GPU sharing model (repo/sharing.py; None: nothing describes it), with what
    # the repository's device plugin configurations say unless read_sharing is off
    sharing: Fleet | None = None
    read_sharing: bool = True
    notes: tuple[Finding, ...] = ()  # warnings of its loading (DRA533), said by each run
    # is_gpu's answers: every container of every file asks about the same few names
    # (kept out of comparisons, and new in a copy made by dataclasses.replace)
    _gpu: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)
    _needles: list[tuple[bytes, ...]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )

    def published(self) -> frozenset[str]:
        """The domains and domain/name of the declared drivers, as validate knows them."""
        names = set(self.drivers)
        for domain, published in self.drivers.items():
            names.update(f"{domain}/{name}" for name in published)
        return frozenset(names)

    def choose(self, resource: str, ctx: Context) -> Choice | None:
        for mapping in self.resources:
            choice = mapping.choose(resource, ctx)
            if choice is not None:
                return choice
        return None

    def maps(self, resource: str) -> bool:
        return any(m.match(resource) is not None for m in self.resources)

    def detects(self, resource: str) -> bool:
        """Looks like an accelerator resource (and is not a known label name)."""
        return any(fnmatch.fnmatchcase(resource, p) for p in self.detect) and not any(
            fnmatch.fnmatchcase(resource, p) for p in self.ignore
        )

    def is_gpu(self, resource: str) -> bool:
        known = self._gpu.get(resource)
        if known is None:
            known = self._gpu[resource] = self.maps(resource) or self.detects(resource)
        return known

    def needles(self) -> tuple[bytes, ...]:
        """Byte strings one of which every file that needs parsing contains."""
        if self._needles:
            return self._needles[0]
        self._needles.append(self._find_needles())
        return self._needles[0]

    def _find_needles(self) -> tuple[bytes, ...]:
        found: set[bytes] = set()
        for pattern in [m.name for m in self.resources] + list(self.detect):
            literal = re.split(r"[{*?\[]", pattern, maxsplit=1)[0]
            if "/" not in literal:  # e.g. "*/gpu": the fixed part comes after the wildcard
                tail = re.split(r"[{*?\[]", pattern)[-1]
                literal = tail if len(tail) > len(literal) else literal
            if literal:
                found.add(literal.encode())
        # JSON patches write "/" inside a key as "~1" (nvidia.com~1gpu): search for the
        # longest part without the separator, which both spellings contain. Fewer,
        # broader needles: each is a pass over the bytes of every file of the run. But
        # where the domain is open ("*/gpu") the name after the separator is all that
        # is fixed, and a short name alone ("gpu") is in file names, images, labels
        # and prose: the separator stays, in both spellings ("/gpu", "~1gpu").
        found = {
            spelling
            for n in found
            for spelling in (
                (n, b"~1" + n[1:]) if n.startswith(b"/") else (max(n.split(b"/"), key=len),)
            )
        }
        found.discard(b"")
        # a narrower needle is subsumed by a broader one it contains
        minimal = {n for n in found if not any(o != n and o in n for o in found)}
        return tuple(sorted(minimal))


@dataclass(frozen=True, slots=True)
class Settings:
    """The options of a run, as one frozen value (a worker process gets a copy)."""

    target: str  # v1beta1, v1beta2 or v1
    config: Config
    kube_version: str | None = None  # validates generated objects for this release
    # (namespace, name) of ResourceClaimTemplates defined anywhere in the input
    reserved: frozenset[tuple[str, str]] = frozenset()
    # the same, taken in other parts of the stream being processed (stdin, part by part):
    # names of this very file, as if it were processed whole
    file_taken: frozenset[tuple[str, str]] = frozenset()
    strategy: str | None = None  # --strategy (None: the configuration's default, else rewrite)
    # the DeviceClasses with extendedResourceName of the repository, --context and the
    # configuration's deviceclasses file, read when a workload may be bridged
    bridges: tuple[BridgeClass, ...] = ()
    node_pools: tuple[NodePool, ...] = ()  # the repository's Karpenter NodePools


def find_config(start: StrPath, home: StrPath | None = None) -> str | None:
    """The nearest ``.dra-migrate.yaml`` at or above ``start``, up to the root of its git
    repository, else up to the home folder, else in ``start``'s folder only: a file in
    ``/tmp`` or ``/`` never steers runs below it unnoticed."""
    here = discover.real_name(os.fspath(start))
    if os.path.isfile(here):
        here = os.path.dirname(here)
    home = discover.real_name(os.fspath(home) if home is not None else _home())
    chain = [here]
    while os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    boundary = next((f for f in chain if os.path.exists(os.path.join(f, ".git"))), None)
    if boundary is None:
        boundary = home if home in chain else here
    for folder in chain:
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return _shown(candidate)
        if folder == boundary:
            break
    return None


def _shown(path: str) -> str:
    """A found configuration as messages show it: relative to the working folder when it
    is inside it (``.dra-migrate.yaml``, ``../.dra-migrate.yaml`` is shown whole)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def _home() -> str:
    home = os.path.expanduser("~")
    return home if home != "~" else "/nonexistent"  # no HOME and no passwd entry


def load_config(path: StrPath | None) -> Config:
    """Built-ins, plus the project file at ``path`` when given."""
    base = _build(builtin_mapping())
    if path is None:
        return base
    notes: list[Finding] = []
    data, root = _read(path, str(path), notes=notes)
    user = _build(data)
    resources = list(user.resources)
    if data.get("builtins", True):
        names = {m.name for m in resources}
        resources += [m for m in base.resources if m.name not in names]
    detect = tuple(dict.fromkeys(base.detect + user.detect))
    ignore = tuple(dict.fromkeys(base.ignore + user.ignore))
    return Config(
        resources=tuple(resources),
        detect=detect,
        ignore=ignore,
        exclude=user.exclude,
        target=data.get("target"),
        kube_version=data.get("kubeVersion"),
        path=str(path),
        suppressions=user.suppressions,
        drivers={
            domain: frozenset([*(spec.get("attributes") or ()), *(spec.get("capacity") or ())])
            for domain, spec in (data.get("drivers") or {}).items()
            if isinstance(spec, dict)
        },
        driver_releases=tuple(
            (domain, spec)
            for domain, spec in sorted((data.get("drivers") or {}).items())
            if isinstance(spec, str)
        ),
        device_classes=tuple(
            _class_definition(entry, root, i)
            for i, entry in enumerate(data.get("deviceClasses") or ())
        ),
        max_file_size=parse_size(data.get("maxFileSize", discover.DEFAULT_MAX_FILE_SIZE)),
        feature_gates=tuple((data.get("featureGates") or {}).items()),
        extended_resource_toleration=data.get("extendedResourceToleration", True),
        dra_schedulers=frozenset(data.get("draSchedulers") or ()),
        dra_node_pools=frozenset(data.get("draNodePools") or ()),
        kserve_namespaces=frozenset(data.get("kserveNamespaces") or ()),
        strategy=_strategy(data.get("strategy"), str(path)),
        helm=_helm(data.get("helm"), str(path)),
        sharing=configured_fleet(data.get("sharing"), str(path)),
        read_sharing=(data.get("sharing") or {}).get("readRepository", True),
        notes=tuple(notes),
    )


def _strategy(data: Any, path: str) -> StrategyConfig:
    """``strategy:`` as read (the schema and ``_check_meaning`` have checked it)."""
    if data is None:
        return StrategyConfig()
    if isinstance(data, str):
        return StrategyConfig(default=data)
    folder = os.path.dirname(discover.real_name(path))
    classes = data.get("deviceClasses")
    return StrategyConfig(
        default=data.get("default"),
        resources=tuple((data.get("resources") or {}).items()),
        paths=tuple((data.get("paths") or {}).items()),
        workloads=tuple((data.get("workloads") or {}).items()),
        folder=folder,
        device_classes=os.path.join(folder, classes) if classes else None,
    )


def _helm(data: Any, path: str) -> HelmConfig:
    """``helm:`` as read (the schema has checked it)."""
    if not data:
        return HelmConfig()
    return HelmConfig(
        values=data.get("values", "edit"),
        switch={True: "on", False: "off"}.get(data.get("switch", "off"), data.get("switch")),
        switch_key=data.get("switchKey", "dra.enabled"),
        upstream=tuple(data.get("upstream") or ()),
        own=tuple(data.get("own") or ()),
        folder=os.path.dirname(discover.real_name(path)),
    )


def parse_size(value: int | str) -> int:
    """A file size: bytes, or a quantity (``64Mi``, ``10M``); ConfigError when not one."""
    from dra_migrate.k8s.quantity import parse_quantity

    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        quantity = parse_quantity(str(value).strip())
        if quantity is None or quantity.denominator != 1:
            raise ConfigError(f"file size {value!r} is not a whole number of bytes (e.g. 64Mi)")
        size = int(quantity)
    if size < 1:
        raise ConfigError(f"file size {value!r} must be at least 1 byte")
    return size


def rule_positions(path: StrPath) -> dict[tuple[int, int], tuple[int, int]]:
    """(resource index, rule index) -> (line, column) of each rule of the configuration
    at ``path`` (loaded before: read again only to say where a rule is)."""
    from dra_migrate.manifests import trees

    data, root = _read(path, str(path), check=False)
    out = {}
    for i, resource in enumerate(data.get("resources") or ()):
        for j in range(len(resource.get("rules") or ())):
            out[(i, j)] = trees.position(trees.node_at(root, ("resources", i, "rules", j)))
    return out


def _class_definition(data: Mapping[str, Any], root: Node | None, index: int) -> ClassDefinition:
    from dra_migrate.manifests import trees

    line, col = trees.position(trees.node_at(root, ("deviceClasses", index))) if root else (0, 0)
    return ClassDefinition(
        name=data["name"],
        driver=data["driver"],
        selectors=tuple(data.get("selectors") or ()),
        config=tuple(data.get("config") or ()),
        extended_resource_name=data.get("extendedResourceName"),
        description=data.get("description") or "",
        line=line,
        col=col,
    )


def builtin_mapping() -> dict[str, Any]:
    """``defaults.yaml`` (ours, tested), from its JSON copy in the package while that
    was made from the YAML as it is."""
    from dra_migrate import cache

    yaml_bytes = discover.read_file(_DEFAULTS)
    try:
        with open(DEFAULTS_JSON, encoding="utf-8") as handle:
            built = json.load(handle)
        if built["source"] == cache.digest(yaml_bytes) and isinstance(built["mapping"], dict):
            return dict(built["mapping"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # a checkout whose defaults.yaml changed since: the YAML is read
    return _read(_DEFAULTS, _DEFAULTS, check=False)[0]


def _read(
    path: StrPath, display: str, check: bool = True, notes: list[Finding] | None = None
) -> tuple[dict[str, Any], Node | None]:
    from dra_migrate.manifests import compose, sources, trees

    try:
        raw = discover.read_file(path)
    except discover.Unreadable as exc:
        raise ConfigError(f"cannot read configuration: {exc.message}", display, 1, 1) from None
    try:
        source = sources.decode(display, raw)
        docs = compose.parse(source)
    except InputProblem as problem:
        f = problem.finding
        raise ConfigError(f"invalid configuration: {f.message}", display, f.line, f.col) from None
    roots = [d.root for d in docs if d.root is not None]
    if len(roots) > 1:
        raise ConfigError("configuration must be a single YAML document", display, 1, 1)
    if not roots:
        return {}, None
    root = roots[0]
    data = trees.to_data(root)
    if not isinstance(data, dict):
        line, col = trees.position(root)
        raise ConfigError("configuration must be a mapping", display, line, col)
    if check:  # jsonschema is imported only for a project's own file
        from dra_migrate.convert.config_schema import check_schema

        check_schema(data, root, display, raw)
        said = _check_meaning(data, root, display)
        if notes is not None:
            notes.extend(said)
    return data, root


_SAMPLE = "x1"  # stands for a captured placeholder value while checking


def _check_meaning(data: dict[str, Any], root: Node, display: str) -> list[Finding]:
    """What the schema cannot say, checked before any file is read: every name pattern
    compiles, every placeholder used is captured by the name, every device class is a
    DNS subdomain once filled, every selector is CEL, every GPU product name is one
    the catalog knows. An error points at its line; the warnings are returned."""
    from dra_migrate.convert.config_meaning import (
        ProductProblem,
        declared_names,
        point_at,
        release_problem,
        rule_label_problems,
        selector_problem,
        selector_products,
    )
    from dra_migrate.manifests import trees

    warnings: list[Finding] = []

    def fail(path: tuple[Any, ...], message: str | ProductProblem, offset: int = -1) -> None:
        line, col = point_at(trees.node_at(root, path), offset)
        where = ".".join(map(str, path))
        if isinstance(message, ProductProblem) and not message.error:
            warnings.append(
                finding("DRA533", display, line, col, f"{where}: {message.message}", message.hint)
            )
            return
        said = message.message if isinstance(message, ProductProblem) else message
        raise ConfigError(f"invalid configuration at {where}: {said}", display, line, col)

    published = declared_names(data.get("drivers"))
    strategy = data.get("strategy")
    for key in (strategy.get("workloads") or {}) if isinstance(strategy, dict) else ():
        if not 1 <= key.count("/") <= 2 or not all(key.split("/")):
            fail(
                ("strategy", "workloads", key),
                f"{key!r} is not Kind/namespace/name or Kind/name (globs allowed, e.g. "
                "Deployment/ml-*/chat-*)",
            )
    for i, resource in enumerate(data.get("resources") or ()):
        name = resource["name"]
        names = _PLACEHOLDER.findall(name)
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            fail(("resources", i, "name"), f"placeholder {{{twice[0]}}} appears twice in {name!r}")
        adjacent = _ADJACENT.search(name)
        if adjacent:
            fail(
                ("resources", i, "name"),
                f"placeholders {adjacent[1]} and {adjacent[2]} are adjacent in {name!r}: "
                "nothing says where one ends; put a literal character between them",
            )
        sample = dict.fromkeys(names, _SAMPLE)
        choices = [(("resources", i), resource)] + [
            (("resources", i, "rules", j), rule)
            for j, rule in enumerate(resource.get("rules") or ())
        ]
        for where, wrong in rule_label_problems(resource.get("rules") or ()):
            fail(("resources", i, "rules", *where), wrong)
        for where, choice in choices:
            texts = [((*where, "deviceClass"), choice.get("deviceClass"))] + [
                ((*where, "selectors", k), s) for k, s in enumerate(choice.get("selectors") or ())
            ]
            for path, text in texts:
                if not isinstance(text, str):
                    continue
                unknown = sorted(set(_PLACEHOLDER.findall(text)) - set(names))
                if unknown:
                    fail(path, f"placeholder {{{unknown[0]}}} is not in the resource name {name!r}")
                filled = _fill(text, sample)
                if path[-1] == "deviceClass":
                    if len(filled) > 253 or not DNS_SUBDOMAIN.fullmatch(filled):
                        fail(path, f"{text!r} is not a lower-case DNS subdomain")
                    continue
                problem, compared = selector_problem(filled, published)
                if problem:
                    fail(path, problem)
                for product in selector_products(compared) if filled == text else ():
                    fail(path, product, product.offset)  # no placeholder moves the offsets
    for k, defined in enumerate(data.get("deviceClasses") or ()):
        for m, text in enumerate(defined.get("selectors") or ()):
            if isinstance(text, str):  # checked as CEL where rendered (DRA502)
                for product in selector_products(selector_problem(text, published)[1]):
                    fail(("deviceClasses", k, "selectors", m), product, product.offset)
    for domain, spec in (data.get("drivers") or {}).items():
        if isinstance(spec, str):
            problem = release_problem(domain, spec)
            if problem:
                fail(("drivers", domain), problem)
    return warnings


def _build(data: Mapping[str, Any]) -> Config:
    resources = tuple(_resource(r) for r in data.get("resources") or ())
    ignore = list(data.get("ignore") or ())
    return Config(
        resources=resources,
        detect=tuple(data.get("detect") or ()),
        ignore=tuple(i for i in ignore if isinstance(i, str)),
        exclude=tuple(data.get("exclude") or ()),
        suppressions=tuple(
            IgnoreEntry(i["path"], tuple(i.get("codes") or ()), index)
            for index, i in enumerate(ignore)
            if isinstance(i, dict)
        ),
    )


def _resource(data: Mapping[str, Any]) -> ResourceMapping:
    rules = []
    for r in data.get("rules") or ():
        when = r.get("when") or {}
        node_selector = tuple(
            (k, frozenset([v] if isinstance(v, str) else v))
            for k, v in sorted((when.get("nodeSelector") or {}).items())
        )
        rules.append(
            Rule(
                namespaces=tuple(when.get("namespaces") or ()),
                labels=tuple(sorted((when.get("labels") or {}).items())),
                node_selector=node_selector,
                device_class=r.get("deviceClass"),
                selectors=tuple(r["selectors"]) if "selectors" in r else None,
                config=tuple(r["config"]) if "config" in r else None,
            )
        )
    return ResourceMapping(
        name=data["name"],
        device_class=data["deviceClass"],
        selectors=tuple(data.get("selectors") or ()),
        config=tuple(data.get("config") or ()),
        shared=bool(data.get("shared", False)),
        rules=tuple(rules),
        capacity=tuple((str(k), str(v)) for k, v in (data.get("capacity") or {}).items()),
    )
