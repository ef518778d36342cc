"""``dra-migrate inventory``: what runs today (GPU workloads, nodes, DeviceClasses, devices,
pending claims), read from the live cluster or from ``kubectl get -o yaml`` dumps."""

from __future__ import annotations

import sys

import click

from dra_migrate.cli import run
from dra_migrate.cli.options import (
    Command,
    PathType,
    cluster,
    cluster_options,
    color,
    color_option,
    config_option,
    format_option,
    max_file_size_option,
    must_exist,
    output_option,
    quiet_option,
    with_file_size,
)
from dra_migrate.convert.mapping import Settings, find_config, load_config
from dra_migrate.k8s.versions import DEFAULT_TARGET
from dra_migrate.pipeline.options import RunOptions
from dra_migrate.report.findings import ConfigError
from dra_migrate.report.model import EXIT_UNPROCESSED, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


@click.command("inventory", cls=Command)
@click.argument("dumps", nargs=-1, metavar="[DUMPS]...", type=PathType(dir_okay=False))
@click.option(
    "--cluster",
    "live",
    is_flag=True,
    help="Read the live cluster (read-only); without it, read kubectl get -o yaml dumps.",
)
@cluster_options
@click.option(
    "--context",
    "repository_context",
    multiple=True,
    hidden=True,  # the repository context of the other commands; refused here
)
@click.option(
    "--namespace", "-n", help="Pods and claims of this namespace (default: the context's)."
)
@click.option("--all-namespaces", "-A", is_flag=True, help="Pods and claims of every namespace.")
@click.option(
    "--pending-after",
    default="5m",
    metavar="DURATION",
    help="Report ResourceClaims without an allocation older than this (90s, 5m, 1h; default: 5m).",
)
@config_option("Mapping file (default: .dra-migrate.yaml found upward from here).")
@max_file_size_option(
    "Refuse dump files larger than this (bytes, or 64Mi; default 64Mi, or maxFileSize in the "
    "config)."
)
@format_option()
@output_option()
@quiet_option
@color_option
def inventory(
    dumps: tuple[str, ...],
    live: bool,
    repository_context: tuple[str, ...],
    namespace: str | None,
    all_namespaces: bool,
    pending_after: str,
    config_path: Path | None,
    max_file_size: str | None,
    **params: Any,
) -> None:
    """What runs today: GPU workloads, nodes, DeviceClasses, devices, pending claims."""
    from dra_migrate.cluster import ClusterError, DumpReader, inventory_report, parse_duration

    reach = cluster(params)
    try:
        if repository_context:
            raise ConfigError(
                "inventory takes no --context: the kubeconfig context is --kube-context NAME "
                "(--context is the repository context of the commands that read manifests)"
            )
        if live and dumps:
            raise ConfigError("give --cluster, or kubectl get -o yaml dump files, not both")
        if not live and not dumps:
            raise ConfigError(
                "nothing to read: give --cluster (the live cluster of the kubeconfig), or "
                "dump files of kubectl get pods,nodes,deviceclasses,resourceslices,"
                "resourceclaims -A -o yaml (docs/cluster.md has the whole list)"
            )
        must_exist(dumps)
        if namespace is not None and all_namespaces:
            raise ConfigError("--namespace and --all-namespaces cannot be combined")
        if not live and (reach.kubeconfig or reach.kube_context):
            raise ConfigError("--kubeconfig and --kube-context need --cluster")
        try:
            threshold = parse_duration(pending_after)
        except ValueError as exc:
            raise ConfigError(f"--pending-after: {exc}") from None
        if config_path is not None and not config_path.is_file():
            raise ConfigError(f"--config {config_path}: no such file")
        config = with_file_size(load_config(config_path or find_config(".")), max_file_size)
    except ConfigError as error:
        run.fail_usage(error)
    options = RunOptions(
        paths=dumps,
        settings=Settings(target=DEFAULT_TARGET, config=config),
        fmt=params.pop("fmt"),
        output=params.pop("output"),
        quiet=params.pop("quiet"),
        color=color(params.pop("color")),
        cluster=reach,
    )
    if live:
        reader = run.connect(reach)
        scope = None if all_namespaces else (namespace or reader.default_namespace)
    else:
        reader = DumpReader(dumps, options.max_file_size)
        scope = namespace
    try:
        report = inventory_report(reader, config, scope, threshold)
    except ClusterError as error:
        run.fail_cluster(error)
    finally:
        if live:
            reader.close()
    report.findings[:0] = config.notes  # what loading the configuration found (DRA533)
    run.emit(report, "inventory", options)
    sys.exit(EXIT_UNPROCESSED if report.count(Status.FAILED) else 0)
