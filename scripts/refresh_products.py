#!/usr/bin/env python3
"""Write ``dra_migrate/catalog/nvidia-products.tsv``: the product names NVIDIA's driver
gives its GPUs, from NVIDIA's own lists.

Both names a configuration can hold come from NVML's device name
(``nvmlDeviceGetName``): the ``productName`` attribute NVIDIA's DRA driver publishes
(kubernetes-sigs/dra-driver-nvidia-gpu, cmd/gpu-kubelet-plugin/nvlib.go,
``device.GetName()``) and the ``nvidia.com/gpu.product`` label of GPU feature discovery
(NVIDIA/k8s-device-plugin, internal/lm/resource.go, ``sanitise``). The lists read:

* the "Compatible GPUs" table of the README of NVIDIA/open-gpu-kernel-modules (every
  Turing or later GPU, by PCI device id; MIT licence): ``--readme``;
* ``supported-gpus.json`` of NVIDIA's Linux driver package (the proprietary driver's
  list, which also names the Maxwell, Pascal and Volta GPUs the open modules do not
  drive, such as ``Tesla V100-SXM2-16GB``): ``--supported-gpus``. Chips whose
  ``legacybranch`` is older than 470.xx are left out: no driver that runs the device
  plugin or a DRA driver supports them (470.xx, Kepler's last branch, is kept).

Each name is written once, with the PCI device ids it was listed under, in the order
of the names (sorted by their code points), so two runs on the same sources give the
same bytes. The sources are read from files the maintainer fetched (this script never
fetches anything); their repository, path and commit are given on the command line
and written in the file's header.

Usage::

    git -C ~/src/open-gpu-kernel-modules show HEAD:README.md > /tmp/README.md
    python scripts/refresh_products.py \\
        --readme /tmp/README.md \\
        --readme-source NVIDIA/open-gpu-kernel-modules:README.md@<commit> --readme-date 2026-03-05 \\
        --supported-gpus /tmp/supported-gpus.json \\
        --supported-source OWNER/REPO:PATH@<commit> --supported-date 2023-03-22
    python scripts/refresh_products.py ... --check   # exit 1 if the file differs
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "dra_migrate", "catalog", "nvidia-products.tsv")
HEADING = "## Compatible GPUs"
OLDEST_BRANCH = (470,)  # legacy branches older than this are left out


def readme_rows(text: str) -> list[tuple[str, str]]:
    """(name, PCI device id) of each row of the README's "Compatible GPUs" table."""
    _before, found, after = text.partition(HEADING)
    if not found:
        raise ValueError(f"the README has no {HEADING!r} section")
    rows = []
    for line in after.splitlines():
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[1] or set(cells[1]) <= set("-: "):
            continue
        if cells[0] == "Product Name":
            continue
        device = cells[1].split()[0].upper()
        rows.append((cells[0], device))
    if not rows:
        raise ValueError(f"the README's {HEADING!r} section has no table rows")
    return rows


def _branch(legacy: str) -> tuple[int, ...]:
    return tuple(int(p) for p in legacy.split(".") if p.isdigit())


def supported_rows(data: object) -> list[tuple[str, str]]:
    """(name, PCI device id) of each chip of ``supported-gpus.json`` a current or 470.xx
    driver supports."""
    if not isinstance(data, dict) or not isinstance(data.get("chips"), list):
        raise ValueError("supported-gpus.json has no 'chips' list")
    rows = []
    for chip in data["chips"]:
        legacy = chip.get("legacybranch")
        if legacy and _branch(legacy) < OLDEST_BRANCH:
            continue
        device = str(chip["devid"]).upper().removeprefix("0X")
        rows.append((str(chip["name"]).strip(), device))
    return rows


def render(rows: Iterable[tuple[str, str, str]], sources: list[str]) -> str:
    """The file: ``#`` header lines (the sources), then ``name<TAB>ids<TAB>lists``."""
    ids: dict[str, set[str]] = {}
    lists: dict[str, set[str]] = {}
    for name, device, origin in rows:
        if not name or "\t" in name:
            raise ValueError(f"unusable product name {name!r}")
        ids.setdefault(name, set()).add(device)
        lists.setdefault(name, set()).add(origin)
    out = [
        "# NVIDIA GPU product names as NVML gives them (nvmlDeviceGetName): the productName",
        "# attribute of gpu.nvidia.com devices; GPU feature discovery's nvidia.com/gpu.product",
        "# label is the name with its spaces as dashes. Written by scripts/refresh_products.py;",
        "# do not edit. Columns: name, PCI device ids, lists (open = the open kernel modules'",
        "# README table, supported = supported-gpus.json of the driver package).",
        *(f"# source: {s}" for s in sources),
    ]
    out += [
        f"{name}\t{','.join(sorted(ids[name]))}\t{','.join(sorted(lists[name]))}"
        for name in sorted(ids)
    ]
    return "\n".join(out) + "\n"


def build(readme: str, supported: object, readme_source: str, supported_source: str) -> str:
    rows = [(n, d, "open") for n, d in readme_rows(readme)]
    rows += [(n, d, "supported") for n, d in supported_rows(supported)]
    return render(rows, [readme_source, supported_source])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", required=True, help="open-gpu-kernel-modules README.md")
    parser.add_argument("--readme-source", required=True, help="OWNER/REPO:PATH@COMMIT")
    parser.add_argument("--readme-date", required=True, help="the commit's date")
    parser.add_argument("--supported-gpus", required=True, help="supported-gpus.json")
    parser.add_argument("--supported-source", required=True, help="OWNER/REPO:PATH@COMMIT")
    parser.add_argument("--supported-date", required=True, help="the commit's date")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs")
    args = parser.parse_args(argv)
    with open(args.readme, encoding="utf-8") as handle:
        readme = handle.read()
    with open(args.supported_gpus, encoding="utf-8") as handle:
        supported = json.load(handle)
    text = build(
        readme,
        supported,
        f"{args.readme_source} ({args.readme_date}; MIT licence)",
        f"{args.supported_source} ({args.supported_date}; NVIDIA driver licence, names only)",
    )
    if args.check:
        with open(OUT, encoding="utf-8") as handle:
            same = handle.read() == text
        print("up to date" if same else f"{OUT} differs from its sources", file=sys.stderr)
        return 0 if same else 1
    tmp = OUT + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    os.replace(tmp, OUT)
    print(f"wrote {OUT}: {text.count(chr(10)) - 7} names", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
