#!/usr/bin/env python3
"""Refresh the driver catalog (``dra_migrate/catalog/*.yaml``) from a driver checkout.

A maintainer checks out a DRA driver at a release (a tag, or main for the release
under way) and runs this script on it. For the drivers it knows (``DRIVERS``:
NVIDIA's, Intel's GPU driver, AMD's) it reads, from the driver's own source,

* the attributes its kubelet plugin publishes: the keys of the
  ``resourceapi.DeviceAttribute`` literals of the Go files named in its entry, with
  their kind (``StringValue`` -> string, ``IntValue`` -> int, ``BoolValue`` -> bool,
  ``VersionValue`` -> version); names the code builds at run time (``partition%d``)
  cannot be read and are listed in the entry's ``dynamic``;
* the DeviceClasses its chart installs: name, CEL selector, ``extendedResourceName``,
  and whether the chart sets it by default on resource.k8s.io/v1 only (``{{- if eq
  $resourceApiVersion "resource.k8s.io/v1" }}``) or only when its values ask
  (``{{- if .Values.… }}``);

and compares them with the catalog's facts for that release. ``--write`` then
updates the catalog file: the release's commit in its domain's ``releases`` (a new
release is added at the end), a published attribute the catalog lacks is added with
``since:`` the release, a catalogued attribute the release no longer publishes gets
``until:`` the release (the descriptions and comments people wrote stay as they are),
and the provenance table of ``dra_migrate/catalog/README.md`` names the driver commit
each file's facts were read at. Differences in the classes are reported, never
written: the chart's conditions need a person to read them.

Run ``python scripts/build_data.py`` afterwards (the built catalog JSON).

Usage::

    python scripts/refresh_catalog.py nvidia ~/src/dra-driver-nvidia-gpu --release 0.5
    python scripts/refresh_catalog.py nvidia CHECKOUT --release 0.5 --write
    python scripts/refresh_catalog.py intel CHECKOUT --release 0.11 --tag gpu-v0.11.0 --write
    python scripts/refresh_catalog.py nvidia CHECKOUT --release 0.5 --check  # exit 1 if stale

The commit is ``git -C CHECKOUT rev-parse HEAD`` unless ``--commit`` gives it (a tree
that is not a git work tree, such as an unpacked release archive).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOG = os.path.join(REPO, "dra_migrate", "catalog")

README_MARKER = (
    "<!-- Everything below this line is written by scripts/refresh_catalog.py; "
    "edit only above it. -->"
)


@dataclass(frozen=True)
class Driver:
    """Where one driver keeps the facts the catalog holds."""

    file: str  # the catalog file, in dra_migrate/catalog/
    domain: str  # the attribute domain (= driver name)
    repository: str  # owner/name upstream
    attribute_sources: tuple[str, ...]  # globs, relative to the checkout
    class_templates: tuple[str, ...]  # chart templates that render DeviceClasses
    dynamic: tuple[str, ...] = ()  # regexes: catalogued names the code builds at run time
    other_domains: tuple[str, ...] = ()  # attribute sources of these domains are not read


DRIVERS: dict[str, Driver] = {
    "nvidia": Driver(
        file="nvidia.yaml",
        domain="gpu.nvidia.com",
        repository="kubernetes-sigs/dra-driver-nvidia-gpu",
        attribute_sources=(
            "cmd/gpu-kubelet-plugin/deviceinfo.go",
            "cmd/gpu-kubelet-plugin/mig.go",
        ),
        class_templates=("deployments/helm/*/templates/deviceclass-*.yaml",),
        # addFabricManagerAttributes: fmt.Sprintf("partition%d", size)
        dynamic=(r"partition[0-9]+",),
    ),
    "intel": Driver(
        file="intel.yaml",
        domain="gpu.intel.com",
        repository="intel/intel-resource-drivers-for-kubernetes",
        attribute_sources=("cmd/kubelet-gpu-plugin/node_state.go",),
        class_templates=("charts/intel-gpu-resource-driver/templates/device-class.yaml",),
    ),
    "amd": Driver(
        file="amd.yaml",
        domain="gpu.amd.com",
        repository="ROCm/k8s-gpu-dra-driver",
        attribute_sources=("cmd/gpu-kubeletplugin/*.go",),
        class_templates=("helm-charts-k8s/templates/deviceclass*.yaml",),
    ),
}

_KINDS = {
    "StringValue": "string",
    "IntValue": "int",
    "BoolValue": "bool",
    "VersionValue": "version",
}
# "name": {  StringValue: …   (a map literal entry)   or   attrs["name"] = …{ StringValue
_ATTRIBUTE = re.compile(
    r'(?:"(?P<key>[A-Za-z][A-Za-z0-9]*)":\s*\{|\[\s*"(?P<index>[A-Za-z][A-Za-z0-9]*)"\s*\]\s*=\s*'
    r"\w+\.DeviceAttribute\{)\s*(?P<kind>StringValue|IntValue|BoolValue|VersionValue)\s*:"
)
_CLASS_NAME = re.compile(r"^kind:\s*DeviceClass\s*$", re.M)


@dataclass
class Found:
    """What a checkout publishes and installs."""

    attributes: dict[str, str] = field(default_factory=dict)  # name -> kind
    classes: list[dict[str, Any]] = field(default_factory=list)


def read_checkout(driver: Driver, checkout: str) -> Found:
    """The attributes and DeviceClasses of ``driver`` in the ``checkout``."""
    found = Found()
    for pattern in driver.attribute_sources:
        for path in sorted(glob.glob(os.path.join(checkout, pattern))):
            if path.endswith("_test.go"):
                continue
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            for match in _ATTRIBUTE.finditer(text):
                name = match["key"] or match["index"]
                found.attributes.setdefault(name, _KINDS[match["kind"]])
    for pattern in driver.class_templates:
        for path in sorted(glob.glob(os.path.join(checkout, pattern))):
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            values = _values(os.path.join(os.path.dirname(path), os.pardir, "values.yaml"))
            found.classes.extend(_classes(text, os.path.relpath(path, checkout), values))
    return found


def _values(path: str) -> dict[str, Any]:
    """The chart's values.yaml, or {} where there is none."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except OSError:
        return {}
    return data if isinstance(data, dict) else {}


def _classes(text: str, source: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The DeviceClasses a chart template renders, read line by line."""
    out: list[dict[str, Any]] = []
    for part in re.split(r"^---\s*$", text, flags=re.M):
        if not _CLASS_NAME.search(part):
            continue
        name = re.search(r"^\s*name:\s*(\S+)\s*$", part, re.M)
        selector = re.search(r'expression:\s*(?P<q>["\']?)(?P<e>.*?)(?P=q)\s*$', part, re.M)
        entry: dict[str, Any] = {
            "name": name[1] if name else "",
            "selector": selector["e"] if selector else "",
            "source": source,
        }
        lines = part.splitlines()
        for i, line in enumerate(lines):
            ext = re.match(r"\s*extendedResourceName:\s*(.+?)\s*$", line)
            if not ext:
                continue
            value = ext[1]
            key = re.fullmatch(r"\{\{-?\s*\.Values\.(\w+)\s*-?\}\}", value)
            if key:  # the name the chart's values give by default
                value = str(values.get(key[1]) or "")
            entry["extended_resource_name"] = value
            condition = next(
                (lines[j] for j in range(i - 1, -1, -1) if "{{" in lines[j] and "if" in lines[j]),
                "",
            )
            if '"resource.k8s.io/v1"' in condition:
                entry["bridges_by_default_on"] = ["v1"]
            elif ".Values." in condition:
                entry["only_when_asked"] = True
            else:
                entry["bridges_by_default_on"] = ["v1", "v1beta2", "v1beta1"]
        out.append(entry)
    return out


# --- the comparison --------------------------------------------------------------


@dataclass
class Changes:
    added: dict[str, str] = field(default_factory=dict)  # published, not catalogued
    dropped: list[str] = field(default_factory=list)  # catalogued for the release, gone
    new_release: bool = False
    commit_changed: bool = False
    class_notes: list[str] = field(default_factory=list)

    def any(self) -> bool:
        return bool(self.added or self.dropped or self.new_release or self.commit_changed)


def compare(driver: Driver, found: Found, release: str, commit: str, catalog_dir: str) -> Changes:
    sys.path.insert(0, REPO)
    from dra_migrate.k8s.catalog import parse_catalog

    path = os.path.join(catalog_dir, driver.file)
    import yaml

    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    info = parse_catalog([(driver.file, data)]).domains[driver.domain]
    changes = Changes()
    known = info.release(release)
    changes.new_release = known is None
    changes.commit_changed = known is not None and known.commit != commit
    order = [r.release for r in info.releases]
    for name, kind in sorted(found.attributes.items()):
        if name not in info.attributes:
            changes.added[name] = kind
        elif known is not None and not info.published_on(name, release):
            changes.added[name] = kind  # published again, or earlier than the catalog says
    for name in sorted(info.attributes):
        if name in found.attributes or any(re.fullmatch(p, name) for p in driver.dynamic):
            continue
        life = info.lifetime(name)
        if life is not None and life.until:
            continue  # already gone in the catalog
        if known is None or info.published_on(name, release) or release not in order:
            changes.dropped.append(name)
    if known is not None and order and release != order[-1] and (changes.added or changes.dropped):
        # an older release: a name's bounds then need a person (since or until?)
        for name in changes.added:
            changes.class_notes.append(f"{release} publishes {name}: fix its since/until")
        for name in changes.dropped:
            changes.class_notes.append(f"{release} lacks {name}: fix its since/until")
        changes.added, changes.dropped = {}, []
    catalogued = {c.name: c for c in parse_catalog([(driver.file, data)]).device_classes}
    for entry in found.classes:
        have = catalogued.get(entry["name"])
        if have is None:
            changes.class_notes.append(
                f"class {entry['name']} ({entry['source']}) is not catalogued"
            )
            continue
        ext = entry.get("extended_resource_name", "")
        if ext != have.extended_resource_name:
            changes.class_notes.append(
                f"class {entry['name']}: extendedResourceName {ext!r} in the chart, "
                f"{have.extended_resource_name!r} in the catalog"
            )
        default = entry.get("bridges_by_default_on", [])
        if ext and sorted(default) != sorted(have.bridges_by_default_on):
            changes.class_notes.append(
                f"class {entry['name']}: the chart maps {ext} by default on {default or 'no version'}, "
                f"the catalog says {list(have.bridges_by_default_on) or 'none'}"
            )
    return changes


# --- writing ---------------------------------------------------------------------


def write(
    driver: Driver, changes: Changes, release: str, tag: str, commit: str, catalog_dir: str
) -> None:
    path = os.path.join(catalog_dir, driver.file)
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    domain_at = _line_index(lines, rf"^  {re.escape(driver.domain)}:\s*$")
    entry = f'      - {{release: "{release}", tag: {_tag(tag)}, commit: {commit}}}'
    releases_at = _child(lines, domain_at, 4, "releases")
    if releases_at is None:
        raise SystemExit(f"{driver.file}: {driver.domain} has no releases: add them by hand first")
    last, replaced = releases_at, False
    for i in range(releases_at + 1, len(lines)):
        if not lines[i].startswith("      - "):
            break
        last = i
        if f'release: "{release}"' in lines[i]:
            lines[i], replaced = entry, True
    if not replaced:
        lines.insert(last + 1, entry)
    attributes_at = _child(lines, domain_at, 4, "attributes")
    if attributes_at is None:
        raise SystemExit(f"{driver.file}: {driver.domain} has no attributes")
    end = _block_end(lines, attributes_at, 4)
    for name in changes.dropped:
        at = _child(lines, attributes_at, 6, name, end)
        if at is not None:
            stop = _block_end(lines, at, 6)
            lines.insert(stop, f'        until: "{release}"')
            end += 1
    added = []
    for name, kind in changes.added.items():
        at = _child(lines, attributes_at, 6, name, end)
        if at is not None:  # catalogued but bounded: the release publishes it after all
            stop = _block_end(lines, at, 6)
            lines[at:stop] = [ln for ln in lines[at:stop] if not re.match(r"\s+(since|until):", ln)]
            end = _block_end(lines, attributes_at, 4)
            continue
        added += [f"      {name}:", f"        type: {kind}", f'        since: "{release}"']
    lines[end:end] = added
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))


def _tag(tag: str) -> str:
    return tag if tag else '""'


def _line_index(lines: list[str], pattern: str) -> int:
    for i, line in enumerate(lines):
        if re.match(pattern, line):
            return i
    raise SystemExit(f"no line matches {pattern!r}")


def _child(
    lines: list[str], parent: int, indent: int, key: str, end: int | None = None
) -> int | None:
    """The line of ``key:`` at ``indent`` inside the block that starts at ``parent``."""
    stop = end if end is not None else _block_end(lines, parent, indent - 2)
    prefix = " " * indent + key + ":"
    for i in range(parent + 1, stop):
        if lines[i].startswith(prefix):
            return i
    return None


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The line after the block of the key at ``start`` (indented ``indent``)."""
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.strip() and not line.startswith("#") and len(line) - len(line.lstrip()) <= indent:
            return i
    return len(lines)


def provenance(catalog_dir: str) -> str:
    """The generated table: each catalog file's driver releases and commits."""
    import yaml

    rows = ["| file | domain | release | tag | driver commit |", "|---|---|---|---|---|"]
    for name in sorted(os.listdir(catalog_dir)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(catalog_dir, name), encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
        for domain, spec in sorted((data.get("domains") or {}).items()):
            for r in (spec or {}).get("releases") or []:
                tag = r.get("tag") or "(not tagged: main)"
                rows.append(f"| {name} | {domain} | {r['release']} | {tag} | {r['commit']} |")
    return "\n".join(rows) + "\n"


def write_readme(catalog_dir: str) -> bool:
    """Rewrite the generated part of the catalog README; True when it changed."""
    path = os.path.join(catalog_dir, "README.md")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    head = text.split(README_MARKER)[0].rstrip("\n")
    new = f"{head}\n\n{README_MARKER}\n\n{provenance(catalog_dir)}"
    if new != text:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(new)
        return True
    return False


def readme_current(catalog_dir: str) -> bool:
    with open(os.path.join(catalog_dir, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    return text.endswith(f"{README_MARKER}\n\n{provenance(catalog_dir)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("driver", choices=sorted(DRIVERS))
    parser.add_argument("checkout", help="the driver's source tree at the release")
    parser.add_argument(
        "--release", required=True, help='major.minor, as the driver numbers it ("0.5")'
    )
    parser.add_argument("--tag", default="", help="the release's tag ('' for main)")
    parser.add_argument("--commit", help="the checkout's commit (default: git rev-parse HEAD)")
    parser.add_argument(
        "--catalog", default=CATALOG, help="the catalog folder (default: the package's)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="update the catalog file and README")
    mode.add_argument("--check", action="store_true", help="exit 1 if the catalog is stale")
    args = parser.parse_args(argv)
    driver = DRIVERS[args.driver]
    commit = (
        args.commit
        or subprocess.run(
            ["git", "-C", args.checkout, "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    found = read_checkout(driver, args.checkout)
    if not found.attributes:
        print(f"{args.checkout}: no attributes found in {', '.join(driver.attribute_sources)}")
        return 2
    changes = compare(driver, found, args.release, commit, args.catalog)
    for name, kind in changes.added.items():
        print(f"{driver.domain} {args.release}: publishes {name} ({kind}), not in the catalog")
    for name in changes.dropped:
        print(f"{driver.domain} {args.release}: no longer publishes {name}")
    if changes.new_release:
        print(f"{driver.domain}: release {args.release} is new to the catalog")
    elif changes.commit_changed:
        print(f"{driver.domain} {args.release}: read at {commit} now")
    for note in changes.class_notes:
        print(f"{driver.domain}: {note} (edit by hand)")
    if args.write:
        if changes.any():
            write(driver, changes, args.release, args.tag, commit, args.catalog)
        write_readme(args.catalog)
        return 0
    if args.check:
        return 1 if changes.any() or not readme_current(args.catalog) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
