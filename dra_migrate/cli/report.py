"""``dra-migrate report``: the staged migration plan of a repository, with the capacity
check on ResourceSlices and Nodes (dump files, or the live cluster)."""

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
    format_option,
    output_option,
    resolve,
    strategy_option,
    text_view_options,
)
from dra_migrate.report.findings import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.pipeline.options import RunOptions
    from dra_migrate.report.deployed import Deployed
    from dra_migrate.report.migration import LiveInventory

FORMATS = ("text", "markdown", "html", "json")


@click.command("report", cls=Command)
@common_options
@format_option(FORMATS, "Report format (json: schemas/report.schema.json). Default: text.")
@output_option()
@text_view_options
@strategy_option
@click.option(
    "--resource-slices",
    "slices",
    metavar="FILE",
    type=PathType(dir_okay=False),
    help="kubectl get resourceslices -o yaml|json: check that the GPUs asked for fit, "
    "node by node.",
)
@click.option(
    "--nodes",
    metavar="FILE",
    type=PathType(dir_okay=False),
    help="kubectl get nodes -o yaml|json: flag nodes that still advertise a bridged resource.",
)
@click.option(
    "--cluster",
    "from_cluster",
    is_flag=True,
    help="Read the ResourceSlices and Nodes from the live cluster (read-only), in place of "
    "--resource-slices and --nodes.",
)
@click.option(
    "--deploys",
    is_flag=True,
    help="Count what deploys: build every kustomization no other uses with kubectl "
    "kustomize and render every chart with helm template (values.yaml, each values "
    "overlay), and total their replicas x GPUs by namespace, wave and stage. Without it "
    "the plan names the overlays and charts it does not count.",
)
@cluster_options
def report(
    slices: str | None,
    nodes: str | None,
    from_cluster: bool,
    deploys: bool,
    **params: Any,
) -> None:
    """The staged migration plan of a repository: inventory, prerequisites, DeviceClasses,
    pilot wave, full conversion with rollback, and the risks."""
    from dra_migrate.migration import stages
    from dra_migrate.pipeline import many_files
    from dra_migrate.report.migration import LiveInventory

    try:
        options = resolve(params, edit=False, cluster=cluster(params))
        if options.stdin:
            raise ConfigError("report reads a repository: give paths, not - (stdin)")
        if from_cluster and (slices or nodes):
            raise ConfigError(
                "--cluster reads the live cluster: drop --resource-slices and --nodes"
            )
        if not from_cluster and (options.cluster.kubeconfig or options.cluster.kube_context):
            raise ConfigError("--kubeconfig and --kube-context need --cluster")
        live = None
        if from_cluster:
            live = _live_inventory(options)
        elif slices or nodes:
            live = LiveInventory(
                source=", ".join(p for p in (slices, nodes) if p),
                kube_version=options.settings.kube_version,
                devices=many_files.load_slices(slices) if slices else [],
                nodes=many_files.load_nodes(nodes) if nodes else [],
            )
        settings = stages.PlanSettings(
            options.settings.strategy, options.settings.kube_version, options.settings.target
        )
        found_report = run.execute(options)
        config = options.settings.config
        if found_report.sharing is not None:  # the pools the repository's configurations define
            config = dataclasses.replace(config, sharing=found_report.sharing)
        found_report.plan, found = stages.build(
            found_report, config, settings, live, _deployed(options, deploys)
        )
    except ConfigError as error:
        run.fail_usage(error)
    found_report.findings.extend(found)
    run.emit(found_report, "report", options)
    sys.exit(found_report.exit_code())


def _deployed(options: RunOptions, deploys: bool) -> Deployed:
    """What the builds and renderings deploy (``--deploys``), else the units left out."""
    from dra_migrate.simulate import counts

    # a unit whose tool is not on PATH is listed as not counted, with that reason
    return counts.count(options) if deploys else counts.uncounted(options)


def _live_inventory(options: RunOptions) -> LiveInventory:
    """Stage 1 and 2's view of the running cluster: its ResourceSlices and Nodes, read
    through the same read-only client as ``inventory --cluster``."""
    from dra_migrate.cluster import ClusterError, slice_devices
    from dra_migrate.pipeline import many_files
    from dra_migrate.report.migration import LiveInventory

    reader = run.connect(options.cluster)
    try:
        devices = slice_devices(reader) if reader.dra_version is not None else []
        nodes = many_files.nodes_from_objects(reader.list("nodes", None))
    except ClusterError as error:
        run.fail_cluster(error)
    finally:
        reader.close()
    return LiveInventory(
        source=reader.source,
        kube_version=options.settings.kube_version,
        devices=devices,
        nodes=nodes,
    )
