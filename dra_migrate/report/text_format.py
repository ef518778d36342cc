"""Text: a table of GPU requests for people, findings as ``path:line:col: CODE`` lines;
``show`` says what the view holds, and terminal.py lays the same out with rich."""

from __future__ import annotations

import unicodedata
from collections import Counter

from dra_migrate.report.findings import CODES, Finding, escape, inert, quote_path
from dra_migrate.report.model import Report, Status
from dra_migrate.report.summary import summary_line

TYPE_CHECKING = False  # typing is not imported at run time (start-up)

if TYPE_CHECKING:  # the cluster and plan views only: the scan and convert views never load them
    from typing import Any

    from dra_migrate.report.deployed import Deployed
    from dra_migrate.report.inventory import ClusterInventory
    from dra_migrate.report.migration import MigrationPlan, Total
    from dra_migrate.report.simulation import Placement, Simulation

MANUAL_SHOWN = 20  # files named in the summary before "and N more"
NOTHING_TO_DO = "nothing to do: no GPU extended resource is left to convert."


class Console:
    """Lines of plain text: no markup, no emoji codes, no colour (names are untrusted,
    and this view is also read in CI logs). Kept free of rich, whose import alone
    costs a one-file pre-commit run more than its whole work.

    The views below say what to show only through these methods; the terminal view
    (``terminal.py``) subclasses this class and lays the same calls out with rich, so
    both views show the same rows, findings and counts. A ``style`` (``title``,
    ``dim``, or a severity: ``error``, ``warning``, ``info``) is for a view with
    colour; this one ignores it."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, text: str = "", style: str = "") -> None:
        """A line (or lines, at ``\\n``) of text the caller escaped."""
        self.lines.append(text)

    def spans(self, *parts: tuple[str, str]) -> None:
        """One line in parts, each ``(text, style)``."""
        self.print("".join(text for text, _ in parts))

    def finding(self, f: Finding, suffix: str = "") -> None:
        """``f.format()``, its code and severity styled by the severity."""
        text = f.format()
        # the first ": CODE ": a quoted path holds no ": " (quote_path)
        at = text.index(f": {f.code} ") + 2
        end = at + len(f.code) + 1 + len(f.severity.value)
        self.spans(
            (text[:at], ""), (text[at:end], f.severity.value), (text[end:], ""), (suffix, "dim")
        )

    def table(self, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
        """A table of the columns' titles and the rows' cells (escaped here)."""
        self.layout(columns, [tuple(escape(c) for c in row) for row in rows])

    def layout(self, columns: tuple[str, ...], cells: list[tuple[str, ...]]) -> None:
        """Columns two spaces apart, each as wide as its widest cell (in terminal cells:
        an East Asian wide character takes two)."""
        widths = [max(_width(row[i]) for row in [columns, *cells]) for i in range(len(columns))]
        for row in [columns, *cells]:
            self.lines.append(
                "  ".join(c + " " * (w - _width(c)) for c, w in zip(row, widths, strict=True))
            )

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def severity_of(code: str) -> str:
    """The style of a code: its severity's name ("" for a text that is not a code)."""
    spec = CODES.get(code)
    return spec.severity.value if spec is not None else ""


def _width(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(
        0
        if unicodedata.combining(ch)
        else 2
        if unicodedata.east_asian_width(ch) in ("W", "F")
        else 1
        for ch in text
    )


def _titled_table(console: Console, title: str, columns: list[str], rows: list[list[str]]) -> None:
    console.print()
    console.print(title, "title")
    if not rows:
        console.print("  (none)", "dim")
        return
    console.table(tuple(columns), [tuple(row) for row in rows])


def _cluster(console: Console, report: Report, inv: ClusterInventory) -> None:
    from dra_migrate.report.inventory import age_text

    scope = f"namespace {inv.namespace}" if inv.namespace else "all namespaces"
    console.print(
        f"Cluster inventory of {escape(inv.source)}; {scope}; "
        f"DRA API: {inv.dra_version or 'not served'}",
        "title",
    )
    _titled_table(
        console,
        "GPU workloads (extended resources):",
        ["NAMESPACE", "WORKLOAD", "PODS", "CONTAINER", "ROLE", "RESOURCE", "COUNT", "DEVICE CLASS"],
        [
            [
                w.namespace,
                f"{w.kind}/{w.name}",
                f"{w.pods} ({', '.join(f'{n} {p}' for p, n in sorted(w.phases.items()))})",
                r.container,
                r.role,
                r.resource,
                str(r.count) if r.count is not None else f"{r.value!r}?",
                r.device_class or "(not mapped)",
            ]
            for w in inv.workloads
            for r in w.requests
        ],
    )
    shared = any(n.sharing for n in inv.nodes)  # the column only where a node shares
    _titled_table(
        console,
        "Nodes:",
        [
            "NODE",
            "PRODUCT",
            "CAPACITY",
            "ALLOCATABLE",
            "DEVICE PLUGIN",
            "DRA DRIVERS",
            "DRA DEVICES",
        ]
        + (["SHARING"] if shared else []),
        [
            [
                n.name,
                n.product or "-",
                ", ".join(f"{k}={v}" for k, v in sorted(n.capacity.items())) or "-",
                ", ".join(f"{k}={v}" for k, v in sorted(n.allocatable.items())) or "-",
                "yes" if n.device_plugin else "no",
                ", ".join(n.dra_drivers) or "-",
                str(n.dra_devices),
            ]
            + ([n.sharing or "-"] if shared else [])
            for n in inv.nodes
        ],
    )
    if inv.dra_version is not None:
        _titled_table(
            console,
            "DeviceClasses:",
            ["NAME", "DRIVER", "EXTENDED RESOURCE", "SELECTORS"],
            [
                [c.name, c.driver or "-", c.extended_resource_name or "-", str(len(c.selectors))]
                for c in inv.device_classes
            ],
        )
        _titled_table(
            console,
            "Devices in ResourceSlices:",
            ["DRIVER", "PRODUCT", "DEVICES", "NODES", "NOT NODE-LOCAL"],
            [
                [g.driver, g.product, str(g.devices), str(g.nodes), str(g.shared)]
                for g in inv.devices
            ],
        )
        _titled_table(
            console,
            f"ResourceClaims pending longer than {age_text(inv.pending_after)}:",
            ["NAMESPACE", "CLAIM", "AGE", "DEVICE CLASSES", "FOR"],
            [
                [
                    c.namespace,
                    c.name,
                    age_text(c.age_seconds),
                    ", ".join(c.device_classes) or "-",
                    ", ".join(c.reserved_for) or "-",
                ]
                for c in inv.pending_claims
            ],
        )
    findings = report.all_findings
    if findings:
        console.print()
        for f in findings:
            console.finding(f)
    s = inv.summary()
    console.print()
    console.print(
        f"{s['gpuPods']} GPU pod(s) in {s['workloads']} workload(s), {s['gpusInUse']} GPU(s) "
        f"held; {s['gpuNodes']} GPU node(s) of {s['nodesRead']} ({s['devicePluginNodes']} "
        f"device plugin, {s['draNodes']} DRA, {s['nodesServedTwice']} both); "
        f"{s['draDevices']} DRA device(s); {s['pendingClaims']} pending claim(s)"
    )


def _simulation(console: Console, report: Report, sim: Simulation) -> None:
    pools = ", ".join(f"{name}: {count}" for name, count in sorted(sim.pools.items()))
    console.print(
        f"Simulated on {escape(sim.control_plane)}: fleet {escape(sim.fleet)}, {sim.nodes} "
        f"node(s) ({escape(pools)}), {sim.gpus} GPU(s); after: {escape(sim.after_source)}",
        "title",
    )
    if sim.workloads:
        console.table(
            ("LOCATION", "WORKLOAD", "POD SPEC", "BEFORE", "AFTER", "HOLDS"),
            [
                (
                    f"{quote_path(w.path)}:{w.line}:{w.col}",
                    w.display,
                    w.site,
                    _placed(w.before),
                    _placed(w.after),
                    "yes" if w.holds else "NO",
                )
                for w in sim.workloads
            ],
        )
    else:
        console.print("No workload to place.", "dim")
    findings = report.all_findings
    if findings:
        console.print()
        for f in findings:
            console.finding(f)
    console.print()
    took = sum(sim.seconds.values())
    settled = "settled" if sim.quiet else "did NOT settle"
    console.print(
        f"{sum(1 for w in sim.workloads if w.holds)} workload(s) hold, {len(sim.differ())} "
        f"differ; the scheduler {settled}; {took:.1f} s on the API server"
    )


def _placed(p: Placement | None) -> str:
    if p is None:
        return "(not in the tree)"
    if p.refused:
        return "refused"
    devices = ",".join(f"{c}={n}" for c, n in p.devices)
    where = "+".join(p.pools) if p.pools else "-"
    return f"{p.bound}/{p.created} bound on {where}" + (f" [{devices}]" if devices else "")


def render(report: Report, command: str) -> str:
    """The text view; no line of it is a workflow command of a CI runner (``inert``)."""
    console = Console()
    show(report, command, console)
    return inert(console.text())


def show(report: Report, command: str, console: Console) -> None:
    """What the text view of ``report`` holds, said to ``console`` (this module's, or
    the terminal view's)."""
    if report.cluster is not None:
        _cluster(console, report, report.cluster)
        return
    if report.simulation is not None:
        _simulation(console, report, report.simulation)
        return
    if report.plan is not None:
        _plan(report, report.plan, console)
        return
    rows = report.inventory
    if command != "scan":
        for f in _listed(report):
            console.finding(f)
        _suppressed(console, report)
        console.print(summary_line(report, command))
        for line in _manual_lines(report):
            console.print(line)
        return
    if rows:
        console.table(
            (
                "LOCATION",
                "WORKLOAD",
                "POD SPEC",
                "CONTAINER",
                "ROLE",
                "RESOURCE",
                "COUNT",
                "DEVICE CLASS",
                "STATE",
            ),
            [
                (
                    f"{quote_path(item.path)}:{item.line}:{item.col}",
                    f"{item.kind}/{f'{item.namespace}/' if item.namespace else ''}{item.name}"
                    if item.kind or item.name
                    else "(no kind)",  # a chart's values, an operator's configuration
                    item.pod_path,
                    item.container,
                    item.role,
                    item.resource,
                    str(item.count) if item.count is not None else f"{item.value!r}?",
                    item.device_class or "(not mapped)",
                    item.state,  # (the findings say which code keeps it)
                )
                for item in rows
            ],
        )
    else:
        console.print("No extended GPU requests found.", "dim")
    findings = _listed(report)
    if findings:
        console.print()
        for f in findings:
            console.finding(f)
    _suppressed(console, report)
    s = report.summary()
    gpu_files = {i.path for i in rows if i.gpu}
    console.print()
    others = ""
    if s["other_requests"]:
        names = sorted({i.resource for i in rows if not i.gpu})
        others = (
            f" (and {s['other_requests']} request(s) of other resources, "
            f"{', '.join(names)}, not counted)"
        )
    suppressed = f", {s['suppressed']} suppressed" if s["suppressed"] else ""
    console.print(
        f"{s['requests']} GPU request(s) in {len(gpu_files)} file(s){others}; "
        f"{s['files']} file(s) looked at; {s['error']} error(s), {s['warning']} warning(s), "
        f"{s['info']} note(s){suppressed}"
    )
    if report.api_version:
        console.print(_api_line(report, "convert would write"))
    for line in _manual_lines(report):
        console.print(line)


def _api_line(report: Report, verb: str) -> str:
    mapping = (
        f"mapping {quote_path(report.config_path)}"
        if report.config_path
        else "the built-in mapping"
    )
    return (
        f"dra-migrate: {verb} resource.k8s.io/{report.api_version} "
        f"ResourceClaimTemplates, with {mapping}."
    )


def _manual_lines(report: Report) -> list[str]:
    """The files a person must edit, each with its codes, then the workloads an ignore
    holds on the device plugin."""
    manual = report.manual()
    lines = _held_lines(report)
    if not manual:
        return lines
    shown = [
        f"dra-migrate: manual action: {quote_path(path)}"
        + (f" ({', '.join(codes)})" if codes else "")
        for path, codes in manual[:MANUAL_SHOWN]
    ]
    if len(manual) > MANUAL_SHOWN:
        shown.append(f"dra-migrate: manual action: ... and {len(manual) - MANUAL_SHOWN} more")
    return [f"dra-migrate: {len(manual)} file(s) need manual action:", *shown, *lines]


def _held_lines(report: Report) -> list[str]:
    """``held on the device plugin by an ignore: path: Kind ns/name (codes)``, a line a
    workload: what the ignores keep as it is, which is never "nothing to do"."""
    workloads: dict[tuple[str, str], set[str]] = {}
    for item in report.held():
        ns = f"{item.namespace}/" if item.namespace else ""
        workloads.setdefault((item.path, f"{item.kind} {ns}{item.name}"), set()).add(item.kept)
    if not workloads:
        return []
    shown = [
        f"dra-migrate: held: {quote_path(path)}: {escape(name)} ({', '.join(sorted(codes))})"
        for (path, name), codes in list(workloads.items())[:MANUAL_SHOWN]
    ]
    if len(workloads) > MANUAL_SHOWN:
        shown.append(f"dra-migrate: held: ... and {len(workloads) - MANUAL_SHOWN} more")
    return [
        f"dra-migrate: {len(workloads)} workload(s) held on the device plugin by an ignore:",
        *shown,
    ]


def convert_summary(report: Report, done: bool, check: bool, output_dir: str | None) -> str:
    """The lines ``convert`` ends with (on standard error): counts, the API version
    and mapping used, the files a person must edit, and what to do next; one line
    when there is nothing to do (docs/ci.md: quiet when all is well)."""
    s = report.summary()
    verb = "converted" if done else "would be converted"
    parts = [f"{s['changed']} file(s) {verb}", f"{s['unchanged']} unchanged"]
    listed = {path for path, _codes in report.manual()}
    reported = sum(1 for f in report.files if f.status is Status.REPORTED and f.path in listed)
    if reported:
        parts.append(f"{reported} reported for manual action")
    if s["reported"] > reported:  # left as they are for findings an ignore silenced
        parts.append(f"{s['reported'] - reported} held by an ignore")
    if s["failed"]:
        parts.append(f"{s['failed']} could not be processed")
    if output_dir is not None:
        parts.append(f"written under {quote_path(output_dir)}")
    if s["suppressed"]:
        parts.append(f"{s['suppressed']} finding(s) suppressed")
    step = _next_step(report, done, check, bool(listed))
    if step == NOTHING_TO_DO and not s["failed"]:  # quiet when all is well: one line
        return "dra-migrate: " + ", ".join(parts) + ": " + NOTHING_TO_DO
    lines = ["dra-migrate: " + ", ".join(parts) + "."]
    if report.api_version:
        lines.append(_api_line(report, "wrote" if done else "writes"))
    besides = _besides(report)
    if besides:
        lines.append(f"dra-migrate: besides the claims, {'wrote' if done else 'writes'} {besides}.")
    bridged = sum(1 for f in report.all_findings if f.code == "DRA514")
    if bridged:
        lines.append(
            f"dra-migrate: {bridged} workload(s) bridged: left on their extended resource, "
            "served through a DeviceClass with extendedResourceName (DRA514)."
        )
    lines.extend(_manual_lines(report))
    lines.append("dra-migrate: next: " + step)
    return "\n".join(lines)


def _besides(report: Report) -> str:
    """What the conversion writes beside the claims (the codes whose ``writes`` says what),
    counted: "3 toleration(s) that ExtendedResourceToleration added (DRA224)"."""
    counts: dict[str, int] = {}
    for f in report.all_findings:
        if f.spec.writes:
            counts[f.code] = counts.get(f.code, 0) + 1
    return ", ".join(f"{n} {CODES[code].writes} ({code})" for code, n in sorted(counts.items()))


def _next_step(report: Report, done: bool, check: bool, manual: bool) -> str:
    changed = report.count(Status.CHANGED)
    steps = []
    if report.count(Status.FAILED):
        steps.append("fix the input that could not be processed (see the findings)")
    if manual:
        steps.append("make the edits the findings above ask for in the files listed")
    if changed and report.stream:  # - (stdin): no file here to write
        steps.append(
            "run dra-migrate convert - without --check: the converted stream goes to stdout"
            if check
            else "review the converted stream on stdout, then keep it where the input came from"
        )
    elif changed and not done:
        steps.append(
            "apply the conversion with dra-migrate convert --write"
            if check
            else "review the diff, then apply it with dra-migrate convert --write"
        )
    if changed and done:
        steps.append("review the changes, then check them with dra-migrate validate")
    if not steps:
        bridged = any(f.code == "DRA514" for f in report.all_findings)
        held = {id(i) for i in report.held()}
        kept = sum(
            1 for i in report.inventory if i.kept and i.gpu and i.device_class and id(i) not in held
        )
        if held and not kept:
            return (
                f"nothing to convert: the {len(held)} GPU request(s) left are held on the device "
                "plugin by the ignores listed (remove an ignore to migrate its workload)."
            )
        if kept:
            return (
                f"{kept} GPU request(s) stay on the device plugin for the reasons the findings "
                "give: fix the cause and run again, or serve them with the bridge strategy."
            )
        if bridged:
            return "nothing to do: every GPU request left is served through the bridge."
        return NOTHING_TO_DO
    if manual or report.count(Status.FAILED):
        steps.append("run dra-migrate convert --check again")
    return "; ".join(steps) + "."


def _totals(console: Console, title: str, totals: list[Total]) -> None:
    """A table of totals; the PER-NODE WORKLOADS column (DaemonSets: one pod on every
    node, whose GPUs no fixed count holds) only when a row has such workloads."""
    if any(t.per_node for t in totals):
        console.table(
            (title, "WORKLOADS", "GPUS", "PER-NODE WORKLOADS"),
            [(t.key, str(t.workloads), str(t.gpus), str(t.per_node)) for t in totals],
        )
    else:
        console.table(
            (title, "WORKLOADS", "GPUS"),
            [(t.key, str(t.workloads), str(t.gpus)) for t in totals],
        )
    console.print()


def _deployed(console: Console, deployed: Deployed, say: Any) -> None:
    """What the overlays and charts deploy (``report --deploys``), or those not counted."""

    def shown(value: int | None) -> str:
        return "unknown" if value is None else str(value)

    if deployed.counted:
        say("What deploys (kubectl kustomize of each overlay, helm template of each chart):")
        console.table(
            (
                "UNIT",
                "WORKLOAD",
                "POD SPEC",
                "SOURCE",
                "GPUS/POD",
                "PODS",
                "GPUS",
                "WAVE",
                "UNKNOWN",
            ),
            [
                (
                    d.unit or "(file)",
                    d.display,
                    d.pod_path,
                    d.source,
                    shown(d.gpus_per_pod),
                    shown(d.pods),
                    shown(d.gpus),
                    str(d.wave or "-"),
                    d.unknown,
                )
                for d in deployed.workloads
            ],
        )
        say()
        for title, totals in (
            ("DEPLOYED NAMESPACE", deployed.namespaces),
            ("DEPLOYED WAVE", deployed.waves),
            ("DEPLOYED STAGE", deployed.stages),
        ):
            console.table(
                (title, "WORKLOADS", "GPUS", "UNKNOWN"),
                [(t.key, str(t.workloads), str(t.gpus), str(t.unknown)) for t in totals],
            )
            say()
    if deployed.uncounted:
        say(
            "Not counted:"
            if deployed.counted
            else "Not counted (give --deploys): the totals above read each file once, so "
            "these overlays and chart renderings are left out:",
            "title",
        )
        for u in deployed.uncounted:
            say(f"  {u.unit} ({u.tool}): {u.reason}")
        say()


def _plan(report: Report, plan: MigrationPlan, console: Console) -> None:
    """The five stages and the risks, for a terminal (no markup: names are untrusted)."""

    def lines(text: str) -> str:
        return "\n".join(escape(line) for line in text.split("\n"))

    def say(text: str = "", style: str = "") -> None:
        console.print(lines(text), style)

    say(
        f"dra-migrate migration plan: strategy {plan.strategy}, target resource.k8s.io/"
        f"{plan.target}, Kubernetes {plan.kube_version or '(version not given)'}"
    )
    say()
    say("== Stage 1: inventory", "title")
    console.table(
        ("WORKLOAD", "POD SPEC", "LOCATION", "GPUS/POD", "PODS", "STRATEGY", "REASON"),
        [
            (
                w.display,
                w.pod_path,
                f"{w.path}:{w.line}:{w.col}",
                str(w.gpus_per_pod),
                w.pods,
                w.strategy,
                "; ".join(w.reasons),
            )
            for w in plan.workloads
        ],
    )
    say()
    _totals(console, "NAMESPACE", plan.namespaces)
    _totals(console, "RESOURCE", plan.resources)
    _totals(console, "PRODUCT", plan.products)
    if plan.unanalysed:
        say("Not analysed:", "title")
        for u in plan.unanalysed:
            console.spans(
                (lines(f"  {u.path}:{u.line}:{u.col}: "), ""),
                (lines(u.code), severity_of(u.code)),
                (lines(f" {u.reason}"), ""),
            )
        say()
    if plan.charts:
        say("Helm charts:", "title")
        console.table(
            ("CHART", "VERSION", "WAY", "VALUES TO SET", "WHY"),
            [
                (c.root, c.version, c.shown_way, c.to_set or "-", " ".join(c.codes))
                for c in plan.charts
            ],
        )
        say()
    if plan.deployed is not None:
        _deployed(console, plan.deployed, say)
    say("== Stage 2: prerequisites", "title")
    console.table(
        ("TOPIC", "REQUIREMENT", "DETAIL"),
        [(p.topic, p.requirement, p.detail) for p in plan.prerequisites],
    )
    say()
    if plan.capacity is None:
        say("Capacity: not checked (give --resource-slices FILE from the target cluster).")
    else:
        cap = plan.capacity
        say(f"Capacity against {cap.source}: {cap.devices} device(s) on {cap.nodes} node(s)")
        console.table(
            ("DEVICE CLASS", "SELECTORS", "ASKED", "PUBLISHED", "PER NODE", "PENDING"),
            [
                (
                    r.device_class,
                    " && ".join(r.selectors),
                    str(r.gpus),
                    str(r.devices),
                    ", ".join(f"{n} {c}" for n, c in r.nodes),
                    ", ".join(r.pending) or "-",
                )
                for r in cap.rows
            ],
        )
    say()
    say("== Stage 3: DeviceClasses", "title")
    for c in plan.installed_classes:
        say(f"installed by the driver: {c['name']} ({c['note'] or c['driver']})")
    if plan.classes_yaml:
        say(plan.classes_yaml.rstrip("\n"))
    elif not plan.classes:
        say("nothing to create", "dim")
    say()
    say("== Stage 4: pilot wave", "title")
    names = Counter(f"{w.display} ({w.pod_path})" for w in plan.workloads)
    for wave in plan.waves:
        if wave.number == 2:
            say()
            say("== Stage 5: full conversion and rollback", "title")
        say(
            f"Wave {wave.number}: {wave.title} ({len(wave.workloads)} workload(s), {wave.gpus} GPU(s))",
            "title",
        )
        for w in plan.members(wave):
            name = f"{w.display} ({w.pod_path})"
            if names[name] > 1:  # one name, several files: which one
                name += f" in {w.path}:{w.line}"
            factors = ", ".join(w.risk_factors) or "no risk factor"
            say(f"  - {name} [{w.strategy}] risk {w.risk}: {factors}")
        if wave.prerequisites:
            say("  Needs first:")
            for need in wave.prerequisites:
                say(f"    {need}")
        if wave.commands:
            say("  Run:")
            for command in wave.commands:
                say(f"    {command}")
        say("  Rollback:")
        for step in wave.rollback:
            say(f"    {step}")
    if not plan.waves:
        say("no workload to migrate", "dim")
    if len(plan.waves) < 2:  # the stage is there, and says why it is empty
        say()
        say("== Stage 5: full conversion and rollback", "title")
        say("the pilot wave holds every workload" if plan.waves else "nothing to convert", "dim")
    if plan.kustomize_config:
        say()
        say(plan.kustomize_config.rstrip("\n"))
    say()
    say("== Risks", "title")
    for risk in plan.risks:
        console.spans(
            (lines(risk.code), severity_of(risk.code)),
            (lines(f" {risk.title}: {risk.detail}"), ""),
        )
        for spot in risk.where:
            say(f"  {spot}")
    if not plan.risks:
        say("none found", "dim")
    # the findings the risks do not already say, once (the risks name their places)
    risked = {risk.code for risk in plan.risks}
    findings = [f for f in _listed(report) if f.code not in risked]
    if findings:
        say()
        for f in findings:
            console.finding(f)
    s = report.summary()
    say()
    say(
        f"{len(plan.workloads)} workload(s), {sum(t.gpus for t in plan.namespaces)} GPU(s)"
        + (f" ({plan.deployed.summary})" if plan.deployed and plan.deployed.summary else "")
        + f"; {s['error']} error(s), {s['warning']} warning(s), {s['info']} note(s)"
    )


def _listed(report: Report) -> list[Finding]:
    """The findings the text view lists: --severity's and worse, repeated notes once
    unless --every-note (``noise.shown``)."""
    from dra_migrate.report import noise

    return noise.shown(report.all_findings, report.severity, report.every_note)


def _suppressed(console: Console, report: Report) -> None:
    """With --show-suppressed: each silenced finding, and the ignore that silenced it."""
    if not report.show_suppressed:
        return
    for s in report.suppressed:
        console.finding(s.finding, f" [suppressed by {escape(s.source)}]")
