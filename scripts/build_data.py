#!/usr/bin/env python3
"""Write ``dra_migrate/built/``: data the package derives from its own sources, as JSON.

- ``cel-grammar.json``: the LALR tables of the CEL grammar (cel-python's, with
  cel-go's optional syntax) as Lark builds them, stamped with the grammar, the
  options and the Lark version (``cel.parse.grammar_source``). Building them takes about
  0.3 s a process; loading them about 0.02 s. A run whose cel-python or Lark gives
  another stamp builds the tables in memory instead.
- ``catalog.json``: the driver attribute catalog (``catalog/*.yaml``), stamped
  with the digest of each file, read in about 0.3 ms where its YAML takes 5.
- ``defaults.json``: the built-in mapping (``defaults.yaml``), stamped with the
  digest of the YAML, so a run that parses no file never imports the YAML library.

Lark numbers the parser's states and tokens in the order of sets (of objects
hashed by their address), so the tables are numbered again here in an order of
their own: states as a walk from the start state meets them, taking tokens by
name. Nothing here is a cache: the files are part of the package, written by this script
and held current by tests/hostile/test_hostile_cache_git.py. Output is JSON with sorted keys,
so two runs give identical bytes.

Usage::

    python scripts/build_data.py           # writes dra_migrate/built/
    python scripts/build_data.py --check   # exit 1 if a file is stale
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from dra_migrate import cache  # noqa: E402
from dra_migrate.cel import parse as cel_parse  # noqa: E402
from dra_migrate.convert import mapping  # noqa: E402
from dra_migrate.k8s import catalog  # noqa: E402


def built() -> dict[str, str]:
    """File path -> the text it must hold."""
    import lark

    grammar, stamp = cel_parse.grammar_source()
    parser = lark.Lark(grammar, **cel_parse._LARK_OPTIONS)
    tables = {"stamp": stamp, "tables": canonical(cel_parse.grammar_tables(parser))}
    with open(mapping._DEFAULTS, "rb") as handle:
        source = handle.read()
    defaults = mapping._read(mapping._DEFAULTS, mapping._DEFAULTS, check=False)[0]
    held = {"source": cache.digest(source), "mapping": defaults}
    files = sorted(
        os.path.join(catalog.CATALOG_DIR, n)
        for n in os.listdir(catalog.CATALOG_DIR)
        if n.endswith(".yaml")
    )
    sources = []
    for path in files:
        with open(path, "rb") as handle:
            sources.append([os.path.basename(path), cache.digest(handle.read())])
    documents = [[os.path.basename(p), catalog._load_yaml(p)] for p in files]
    for value in (documents, defaults):
        if json.loads(json.dumps(value)) != value:  # a date, an integer key
            raise SystemExit(f"not the same once JSON: {value!r:.200}")
    return {
        cel_parse.GRAMMAR_TABLES: _json(tables),
        catalog.CATALOG_JSON: _json({"sources": sources, "documents": documents}),
        mapping.DEFAULTS_JSON: _json(held),
    }


def canonical(tables: dict[str, Any]) -> dict[str, Any]:
    """The tables with tokens numbered by name and states in the order a walk from the
    start states meets them (each state's shifts taken by token name)."""
    table = tables["data"]["parser"]["parser"]
    names = table["tokens"]  # number -> name
    tokens = {name: number for number, name in enumerate(sorted(names.values()))}
    states = table["states"]
    order: dict[int, int] = {}
    queue = [table["start_states"][s] for s in sorted(table["start_states"])]
    queue += [table["end_states"][s] for s in sorted(table["end_states"])]
    while queue:
        state = queue.pop(0)
        if state in order:
            continue
        order[state] = len(order)
        for token in sorted(states[state], key=lambda t: names[t]):
            action, arg = states[state][token]
            if action == 0:  # a shift: to the state ``arg``
                queue.append(arg)
    if len(order) != len(states):
        raise RuntimeError("a state of the CEL grammar's tables cannot be reached")
    table["tokens"] = {number: name for name, number in tokens.items()}
    table["states"] = {
        order[state]: {
            tokens[names[token]]: (0, order[arg]) if action == 0 else (action, arg)
            for token, (action, arg) in states[state].items()
        }
        for state in states
    }
    table["start_states"] = {s: order[n] for s, n in table["start_states"].items()}
    table["end_states"] = {s: order[n] for s, n in table["end_states"].items()}
    return tables


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Lark numbers the parser's states in the order of sets of strings: the same
        # bytes every run only with one hash seed
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    args = parser.parse_args()
    stale = []
    for path, text in built().items():
        try:
            with open(path, encoding="utf-8") as handle:
                current = handle.read()
        except OSError:
            current = None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {os.path.relpath(path, REPO)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
