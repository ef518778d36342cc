"""``dra-migrate deviceclasses``: render the DeviceClasses the mapping needs (for what a
repository asks for, when paths are given), as YAML or as a JSON ``List``."""

from __future__ import annotations

import dataclasses
import sys

import click

from dra_migrate.cli import run
from dra_migrate.cli.options import (
    Command,
    common_options,
    format_option,
    output_option,
    resolve,
    strategy_option,
)
from dra_migrate.report.findings import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@click.command("deviceclasses", cls=Command)
@common_options
@strategy_option
@output_option()
@format_option(("yaml", "json"), "yaml (the default), or json: one List of the classes.")
@click.option(
    "--whole-mapping",
    is_flag=True,
    help="The classes of every resource the mapping names (the built-in mapping: every "
    "vendor's), without reading a repository: no PATHS.",
)
def deviceclasses(whole_mapping: bool, **params: Any) -> None:
    """Render the DeviceClasses the mapping needs (deviceClasses in the configuration, and
    with --strategy bridge or auto one class with extendedResourceName per bridged resource).

    As every command, it reads PATHS (. for the current folder): the classes follow what
    they ask for. --whole-mapping renders those of the whole mapping instead."""
    from dra_migrate.migration import stages
    from dra_migrate.migration.deviceclasses import classes_for_mapping as deviceclasses_of_mapping

    scan_repo = not whole_mapping
    try:
        if whole_mapping and params["paths"]:
            raise ConfigError("--whole-mapping reads no repository: drop the paths")
        if not whole_mapping and not params["paths"]:
            raise ConfigError(
                "no path given (use . for the current folder; --whole-mapping for the "
                "classes of the whole mapping, without reading a repository)"
            )
        if whole_mapping:  # the configuration is still found from the current folder
            params["paths"] = (".",)
        options = resolve(params, edit=False)
        settings = stages.PlanSettings(
            options.settings.strategy, options.settings.kube_version, options.settings.target
        )
        if scan_repo:
            report = run.execute(options)
            config = options.settings.config
            if report.sharing is not None:  # the pools the repository's configurations define
                config = dataclasses.replace(config, sharing=report.sharing)
            plan, found = stages.build(report, config, settings)
            yaml_text = plan.classes_yaml
            installed = [(c["name"], c["driver"]) for c in plan.installed_classes]
        else:
            classes = deviceclasses_of_mapping(
                options.settings.config, settings.strategy, settings.target, settings.kube_version
            )
            yaml_text, found = classes.yaml, classes.findings
            installed = [(c.name, c.driver) for c in classes.installed]
    except ConfigError as error:
        run.fail_usage(error)
    findings = [f for f in found if f.code.startswith("DRA5")]
    errors = any(f.severity.value == "error" for f in findings)
    run.print_findings([f for f in findings if not options.quiet or f.severity.value == "error"])
    if not yaml_text and not errors and not options.quiet:
        run.err(nothing_to_create(installed, scan_repo))
    text = as_json(yaml_text) if options.fmt == "json" else yaml_text
    if options.output is None:
        run.out(text)
    elif not errors:  # a file is written only when complete
        run.write_output(text, options.output)
    sys.exit(1 if errors else 0)


def nothing_to_create(installed: list[tuple[str, str]], scan_repo: bool) -> str:
    """What an empty output means (on stderr; stdout keeps the empty YAML): the mapping
    needs no class the drivers do not install, and the installed classes it uses."""
    what = "what the paths ask for" if scan_repo else "the mapping"
    if not installed:
        return f"dra-migrate: no DeviceClass to create: {what} uses no DeviceClass."
    names = ", ".join(f"{name} (driver {driver})" for name, driver in installed)
    return (
        f"dra-migrate: no DeviceClass to create: {what} needs no class the drivers do not "
        f"install; it uses the classes their drivers install: {names}."
    )


def as_json(yaml_text: str) -> str:
    """The classes of ``yaml_text`` as one ``kind: List``, as ``kubectl get -o json``
    prints several objects."""
    import json

    import yaml

    items = [doc for doc in yaml.safe_load_all(yaml_text) if doc is not None]
    listed = {"apiVersion": "v1", "kind": "List", "items": items}
    return json.dumps(listed, indent=2, ensure_ascii=False) + "\n"
