#!/usr/bin/env python3
"""Write ``dra_migrate/catalog/intel-products.tsv``: the ``model`` and ``family`` names
Intel's GPU DRA driver publishes, from the driver's own table.

intel/intel-resource-drivers-for-kubernetes looks a GPU's PCI device id up in the
``ModelDetails`` map of ``pkg/gpu/device/models.go`` (``SetModelInfo``,
pkg/gpu/device/device.go) and publishes its ``model`` and ``family`` as the
``gpu.intel.com`` attributes of those names (cmd/kubelet-gpu-plugin/node_state.go); a
device the map lacks is ``Unknown`` in both. xpumd's model name is never published
(cmd/kubelet-gpu-plugin/xpumd.go, ``applyDeviceUpdates`` takes memory and health only),
so the map is every name a release of the driver can publish.

Each model is written once, with its family and the PCI device ids it is listed under,
sorted by model, so two runs on the same source give the same bytes. The source is read
from a file the maintainer fetched (this script never fetches anything); its repository,
path and commit are given on the command line and written in the file's header.

Usage::

    git -C ~/src/intel-resource-drivers-for-kubernetes show HEAD:pkg/gpu/device/models.go \\
        > /tmp/models.go
    python scripts/refresh_intel_products.py --models /tmp/models.go \\
        --source intel/intel-resource-drivers-for-kubernetes:pkg/gpu/device/models.go@<commit> \\
        --date 2026-06-10
    python scripts/refresh_intel_products.py ... --check   # exit 1 if the file differs
"""

from __future__ import annotations

import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "dra_migrate", "catalog", "intel-products.tsv")
# one entry of the map: "0x56a0": { "model": "A770", "family": "Arc A-Series", ... },
_ENTRY = re.compile(r'"(?P<id>0x[0-9A-Fa-f]{4})"\s*:\s*\{(?P<body>[^{}]*)\}')
_FIELD = re.compile(r'"(?P<key>[a-z]+)"\s*:\s*"(?P<value>[^"\\]*)"')


def model_rows(text: str) -> list[tuple[str, str, str]]:
    """(model, family, PCI device id) of each entry of ``ModelDetails``."""
    _before, found, after = text.partition("ModelDetails")
    if not found:
        raise ValueError("models.go has no ModelDetails map")
    rows = []
    for entry in _ENTRY.finditer(after):
        fields = {f["key"]: f["value"].strip() for f in _FIELD.finditer(entry["body"])}
        if not fields.get("model") or not fields.get("family"):
            raise ValueError(f"entry {entry['id']} has no model or family")
        rows.append((fields["model"], fields["family"], entry["id"].upper().removeprefix("0X")))
    if not rows:
        raise ValueError("models.go's ModelDetails map has no entries")
    return rows


def render(rows: list[tuple[str, str, str]], source: str) -> str:
    """The file: ``#`` header lines (the source), then ``model<TAB>family<TAB>ids``."""
    families: dict[str, set[str]] = {}
    ids: dict[str, set[str]] = {}
    for model, family, device in rows:
        if "\t" in model + family:
            raise ValueError(f"unusable name {model!r} / {family!r}")
        families.setdefault(model, set()).add(family)
        ids.setdefault(model, set()).add(device)
    twice = sorted(m for m, f in families.items() if len(f) > 1)
    if twice:
        raise ValueError(f"models listed under two families: {', '.join(twice)}")
    out = [
        "# Intel GPU model and family names as Intel's GPU DRA driver publishes them: the",
        "# model and family attributes of gpu.intel.com devices (Unknown, for a device not",
        "# listed, is not written here). Written by scripts/refresh_intel_products.py;",
        "# do not edit. Columns: model, family, PCI device ids.",
        f"# source: {source}",
    ]
    out += [
        f"{model}\t{next(iter(families[model]))}\t{','.join(sorted(ids[model]))}"
        for model in sorted(families)
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, help="pkg/gpu/device/models.go")
    parser.add_argument("--source", required=True, help="OWNER/REPO:PATH@COMMIT")
    parser.add_argument("--date", required=True, help="the commit's date")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs")
    args = parser.parse_args(argv)
    with open(args.models, encoding="utf-8") as handle:
        rows = model_rows(handle.read())
    text = render(rows, f"{args.source} ({args.date}; Apache-2.0 licence)")
    if args.check:
        with open(OUT, encoding="utf-8") as handle:
            same = handle.read() == text
        print("up to date" if same else f"{OUT} differs from its source", file=sys.stderr)
        return 0 if same else 1
    tmp = OUT + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    os.replace(tmp, OUT)
    print(f"wrote {OUT}: {len(rows)} devices", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
