"""``dra-migrate validate``: check DRA objects and the pods that use them (schemas,
references, CEL), and with ResourceSlices (a file, or the live cluster) the devices."""

from __future__ import annotations

import dataclasses
import sys

import click

from dra_migrate.cli import run
from dra_migrate.cli.options import (
    Command,
    PathType,
    cluster,
    cluster_options,
    common_options,
    fail_on_option,
    resolve,
    workflow_options,
)
from dra_migrate.k8s.versions import gate_state, parse_feature_gates
from dra_migrate.repo.discover import Unreadable
from dra_migrate.report.findings import ConfigError, Finding, finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.pipeline.options import RunOptions


@click.command("validate", cls=Command)
@common_options
@workflow_options
@click.option(
    "--external-templates",
    is_flag=True,
    help="ResourceClaimTemplates and ResourceClaims may be defined outside the input.",
)
@click.option(
    "--resource-slices",
    "slices",
    metavar="FILE",
    type=PathType(dir_okay=False),
    help="kubectl get resourceslices -o yaml|json: evaluate classes and requests on those devices.",
)
@click.option(
    "--cluster",
    "live",
    is_flag=True,
    help="Evaluate classes and requests on the live cluster's ResourceSlices (read-only).",
)
@click.option(
    "--feature-gates",
    metavar="NAME=BOOL,...",
    help="DRA feature gates the cluster turns on or off, as kube-apiserver takes them "
    "(DRADeviceTaints=true,DRAConsumableCapacity=true); the rest follow --kube-version's "
    "defaults. Also featureGates: in the config.",
)
@cluster_options
@fail_on_option
def validate(
    external_templates: bool,
    slices: str | None,
    feature_gates: str | None,
    live: bool,
    fail_on: str,
    **params: Any,
) -> None:
    """Check DRA objects and the pods that use them: schemas, references, CEL, devices."""
    from dra_migrate.pipeline import many_files
    from dra_migrate.validate import ValidateSettings

    explicit_target = params["target"]
    try:
        options = resolve(params, cluster=cluster(params))
        reach = options.cluster
        if live and slices:
            raise ConfigError("--cluster reads the live ResourceSlices: drop --resource-slices")
        if not live and (reach.kubeconfig or reach.kube_context):
            raise ConfigError("--kubeconfig and --kube-context need --cluster")
        devices = many_files.load_slices(slices, options.max_file_size) if slices else None
        gates = dict(options.settings.config.feature_gates)
        if feature_gates is not None:
            gates.update(parse_feature_gates(feature_gates))
        gate_state(options.settings.kube_version, tuple(gates.items()))  # locked gates
    except ConfigError as error:
        run.fail_usage(error)
    notes: list[Finding] = list(options.settings.config.notes)  # loading its configuration
    installed: tuple[tuple[str, tuple[str, ...]], ...] = ()
    if live:
        from dra_migrate.cluster import ClusterError, cluster_classes, slice_devices

        reader = run.connect(reach)
        try:
            devices = slice_devices(reader)
            installed = cluster_classes(reader)
        except ClusterError as error:
            run.fail_cluster(error)
        finally:
            reader.close()
        if reader.dra_version is None:
            run.fail_usage(
                ConfigError(f"{reader.dra_note}: no ResourceSlices to evaluate claims on")
            )
        notes.append(
            finding(
                "DRA610",
                "",
                0,
                0,
                f"{len(devices)} device(s) in the ResourceSlices of {reader.source}, "
                f"read as {'resource.k8s.io/' + reader.dra_version}",
            )
        )
    settings = ValidateSettings(
        kube_version=options.settings.kube_version,
        target=explicit_target or options.settings.config.target,
        external_templates=external_templates,
        feature_gates=tuple(gates.items()),
        installed_classes=installed,
    )
    stdin = None
    if options.stdin:
        try:
            stdin = (options.stdin_filename, run.read_stdin(options.max_file_size))
        except Unreadable as exc:
            unread = run.unread(options, exc)
            run.emit_report(unread, "validate", options)
            sys.exit(unread.exit_code())

    def every_file(scoped: RunOptions) -> Any:
        # validate reads every file: its cross-file checks need the references
        paths = tuple(dict.fromkeys(scoped.paths + scoped.context))
        whole = dataclasses.replace(scoped, paths=paths, context=())
        return many_files.run_validate(whole, settings, devices, stdin)

    try:
        with run.progress_bar(options.fmt) as progress:
            report = run.focused(dataclasses.replace(options, progress=progress), every_file)
    except ConfigError as error:
        run.fail_usage(error)
    report.findings[:0] = notes
    run.suppress(report, options, "validate")
    status = report.exit_code(fail_on=fail_on)
    # a hook that passes prints nothing (a --format report on stdout is what was asked)
    quiet = run.hook_mode() and status == 0 and (options.fmt == "text" or bool(options.output))
    run.emit_report(report, "validate", options, terminal=not quiet)
    if options.fmt == "text" and not options.quiet and not quiet:
        run.err(run.config_used(options.settings.config))
    sys.exit(status)
