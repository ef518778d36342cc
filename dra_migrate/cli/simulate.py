"""``dra-migrate simulate``: the repository's GPU workloads placed by a real control plane
on a model of the fleet, before and after the conversion, and compared
(docs/simulate.md)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from dra_migrate.cli import run
from dra_migrate.cli.options import (
    AtLeast,
    Command,
    PathType,
    common_options,
    format_option,
    must_exist,
    output_option,
    resolve,
    strategy_option,
)
from dra_migrate.report.findings import ConfigError
from dra_migrate.report.model import EXIT_USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMATS = ("text", "json", "markdown", "sarif", "junit", "github")


@click.command("simulate", cls=Command)
@common_options
@click.option(
    "--fleet",
    "fleet_paths",
    multiple=True,
    metavar="FILE",
    type=PathType(dir_okay=False),
    help="The fleet: a kind: Fleet description of node pools, or kubectl get "
    "nodes,resourceslices,deviceclasses -o yaml (repeatable; docs/simulate.md).",
)
@click.option(
    "--after",
    multiple=True,
    metavar="PATH",
    type=PathType(exists=True),
    help="Compare with this tree, converted some other way, instead of converting PATHS "
    "(repeatable).",
)
@click.option(
    "--control-plane",
    "control_plane",
    metavar="DIR",
    type=PathType(file_okay=False),
    help="Folder of the etcd, kube-apiserver, kube-scheduler and kube-controller-manager "
    "binaries (default: scripts/build-control-plane.sh's cache).",
)
@click.option(
    "--kubeconfig",
    metavar="FILE",
    type=PathType(dir_okay=False),
    help="Place on this cluster instead (an empty kind or KWOK cluster): namespaces, "
    "nodes and slices of the run's own, removed afterwards.",
)
@click.option("--kube-context", metavar="NAME", help="kubeconfig context (with --kubeconfig).")
@click.option(
    "--allow-real-nodes",
    is_flag=True,
    help="With --kubeconfig, place beside nodes simulate did not make (refused by default).",
)
@click.option(
    "--timeout",
    type=AtLeast(float, 1.0),
    default=180.0,
    metavar="SECONDS",
    help="Seconds for the scheduler to settle (default: 180).",
)
@format_option(FORMATS, "Report format (json: schemas/report.schema.json). Default: text.")
@output_option()
@strategy_option
def simulate(
    fleet_paths: tuple[str, ...],
    after: tuple[str, ...],
    control_plane: str | None,
    kubeconfig: str | None,
    kube_context: str | None,
    allow_real_nodes: bool,
    timeout: float,
    **params: Any,
) -> None:
    """Place the GPU workloads before and after the conversion on a fleet, and compare."""
    from dra_migrate.simulate import session

    try:
        options = resolve(params, edit=not after)
        if options.stdin:
            raise ConfigError("simulate needs paths, not - (stdin)")
        if not fleet_paths:
            raise ConfigError("--fleet FILE is required: the nodes to place the workloads on")
        must_exist(fleet_paths)
        if kubeconfig and control_plane:
            raise ConfigError("--kubeconfig and --control-plane cannot be combined")
        if kube_context and not kubeconfig:
            raise ConfigError("--kube-context needs --kubeconfig")
        if allow_real_nodes and not kubeconfig:
            raise ConfigError("--allow-real-nodes needs --kubeconfig")
        the_fleet = session.read_fleet(fleet_paths, options.max_file_size)
    except ConfigError as error:
        run.fail_usage(error)
    try:
        import kubernetes  # noqa: F401  (the cluster extra)
    except ImportError:
        from dra_migrate.cluster.live import INSTALL

        run.err(
            "dra-migrate: error: simulate needs the kubernetes Python client, which is not "
            f"installed; {INSTALL} installs it (the cluster extra)"
        )
        sys.exit(EXIT_USAGE)
    request = session.Request(
        options.paths, fleet_paths, after, options.excludes, timeout, allow_real_nodes
    )
    root = session.root_of([*options.paths, *after])
    relative = [_relative(p, root) for p in options.paths]
    before = session.deploys.read_tree(root, relative, options.excludes)
    classes: list[dict[str, Any]] = []
    scratch = None
    if after:
        later = session.deploys.read_tree(root, [_relative(p, root) for p in after], ())
        the_fleet = session.planned_fleet(
            the_fleet, options.settings.config, None, options.paths, options.excludes
        )
    else:
        converted = run.execute(options)
        the_fleet = session.planned_fleet(
            the_fleet, options.settings.config, converted.sharing, (), ()
        )
        classes = session.planned_classes(converted, options.settings)
        scratch = session.tempdir()
        session.converted_tree(converted, options.paths, root, scratch)
        later = session.deploys.read_tree(scratch, relative, options.excludes)
    try:
        report = _place(
            request, the_fleet, before, later, classes, control_plane, kubeconfig, kube_context
        )
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    run.emit(report, "simulate", options)
    sys.exit(report.exit_code())


def _relative(path: str, root: str) -> str:
    import os

    return os.path.relpath(os.path.abspath(path), root)


def _place(
    request: Any,
    the_fleet: Any,
    before: Any,
    after: Any,
    classes: list[Any],
    control_plane: str | None,
    kubeconfig: str | None,
    kube_context: str | None,
) -> Any:
    from dra_migrate.cluster.resources import ClusterError
    from dra_migrate.simulate import session
    from dra_migrate.simulate.api import Api, ApiError

    if kubeconfig:
        try:
            api = Api(kubeconfig, kube_context)
            if not request.allow_real_nodes:
                session.refuse_real_nodes(api)
            return session.simulate(api, api.source, request, the_fleet, before, after, classes)
        except ClusterError as error:
            run.fail_cluster(error)
        except (session.RealNodes, ApiError) as error:
            run.err(f"dra-migrate: error: {error}")
            sys.exit(EXIT_USAGE)
    from dra_migrate.simulate import control_plane as cp

    try:
        binaries = cp.find_binaries(Path(control_plane) if control_plane else None)
    except cp.MissingControlPlane as error:
        run.err(f"dra-migrate: error: {error}")
        sys.exit(EXIT_USAGE)
    workdir = session.tempdir()
    try:
        with cp.start(binaries, Path(workdir)) as plane:
            api = Api(str(plane.kubeconfig))
            try:
                return session.simulate(api, "local", request, the_fleet, before, after, classes)
            finally:
                api.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
