"""The package's layout, as docs/architecture.md draws it: packages in layers, each
importing only those below it (or itself), no import cycle between modules, and no
module much over 800 lines without the reason written at its top.

Every import counts: at module level, inside functions, and those made for type
checkers only (a cycle that only type checkers see is still one a reader must follow).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dra_migrate"

# lowest first; a module may import its own layer and those before it
LAYERS: list[tuple[str, ...]] = [
    ("dra_migrate", "dra_migrate.git", "dra_migrate.cache", "dra_migrate.package_data"),
    ("dra_migrate.record",),  # goes once every record is a dataclass
    ("dra_migrate.report",),
    ("dra_migrate.k8s",),
    ("dra_migrate.cel",),
    ("dra_migrate.manifests",),
    ("dra_migrate.repo",),
    ("dra_migrate.convert",),
    ("dra_migrate.validate",),
    ("dra_migrate.helm",),
    ("dra_migrate.migration",),
    ("dra_migrate.cluster",),
    ("dra_migrate.pipeline",),
    ("dra_migrate.simulate",),
    ("dra_migrate.cli", "dra_migrate.__main__"),
]
PACKAGES = {name for layer in LAYERS for name in layer if name.count(".") == 1}
LONG = 800  # lines; a longer module says why in its docstring ("Over 800 lines: ...")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that ``name`` imports (a package's ``__init__`` only
    where a name of it is imported, not where only its submodules are)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            submodules = {f"{source}.{a.name}" for a in node.names} & modules.keys()
            found |= submodules
            if source in modules and len(submodules) < len(node.names):
                found.add(source)
    found.discard(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> int:
    for index, layer in enumerate(LAYERS):
        for name in layer:
            if module == name or (name in PACKAGES and module.startswith(name + ".")):
                return index
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS and the docs")


def test_every_module_is_in_a_layer_and_imports_only_downwards() -> None:
    upward = [
        f"{source} -> {target}"
        for source, targets in _graph().items()
        for target in sorted(targets)
        if _layer(target) > _layer(source)
    ]
    assert upward == []


def test_no_import_cycle() -> None:
    graph = _graph()
    done: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []


def test_no_module_is_long_without_saying_why() -> None:
    long = [
        f"{name}: {lines} lines"
        for name, path in _modules().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > LONG
        and "Over 800 lines:" not in (ast.get_docstring(ast.parse(path.read_text())) or "")
    ]
    assert long == []


def test_every_package_says_what_it_holds() -> None:
    silent = [
        name
        for name, path in _modules().items()
        if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert silent == []


def test_the_layer_check_sees_an_upward_arrow_and_a_cycle(tmp_path: Path) -> None:
    """The checks above can fail: an import of the CLI from the report model is seen."""
    modules = {"dra_migrate.report.model": tmp_path / "model.py", "dra_migrate.cli.app": tmp_path}
    (tmp_path / "model.py").write_text("def f():\n    from dra_migrate.cli import app\n")
    found = _imports("dra_migrate.report.model", modules["dra_migrate.report.model"], modules)
    assert found == {"dra_migrate.cli.app"}
    assert _layer("dra_migrate.cli.app") > _layer("dra_migrate.report.model")
