"""One module owns the user's cache folder: ``dra_migrate/cache.py`` (its location,
modes, the checks on read, the bounds, eviction). Every other module keeps what it
keeps between runs through ``cache.read`` and ``cache.write``, each under a kind of
its own, and never names the folder, its files or the module's internals."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dra_migrate"
OWNER = PACKAGE / "cache.py"
# what only the owner may name: where the folder is, and what its files are called
FOLDER_WORDS = ("XDG_CACHE_HOME", ".cache")


def _uses() -> tuple[list[str], dict[str, list[str]]]:
    """Places outside cache.py that name the folder or cache.py's internals, and the
    modules that read or write each kind."""
    trespass: list[str] = []
    kinds: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == OWNER:
            continue
        where = str(path.relative_to(PACKAGE.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                trespass += [f"{where}:{node.lineno}" for w in FOLDER_WORDS if w in node.value]
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "cache"
                and node.attr.startswith("_")
            ):
                trespass.append(f"{where}:{node.lineno}: cache.{node.attr}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "cache"
                and node.func.attr in ("read", "write")
            ):
                kind = node.args[0]
                assert isinstance(kind, ast.Constant), f"{where}:{node.lineno}: a literal kind"
                kinds.setdefault(kind.value, []).append(where)
    return trespass, kinds


def test_only_cache_py_names_the_cache_folder() -> None:
    trespass, _kinds = _uses()
    assert trespass == []


def test_each_kind_of_kept_file_belongs_to_one_module() -> None:
    _trespass, kinds = _uses()
    # the repository's kustomization facts, its context's templates, CEL answers
    assert {"layout", "context", "cel-check"} <= kinds.keys()
    assert {kind: sorted(set(users)) for kind, users in kinds.items() if len(set(users)) > 1} == {}
