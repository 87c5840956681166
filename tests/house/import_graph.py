"""The module-level import graph of the installed ``semcache`` namespace, read from the AST.

Every ``import`` / ``from … import`` statement that runs when a module is imported counts,
including those under ``if TYPE_CHECKING:`` (a type-only cycle is still a layering cycle);
imports inside functions are deliberate late bindings and do not.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import semcache

#: The top-level folders that pyproject.toml maps into ``semcache.*``.
MAPPED_PACKAGES = (
    "semcache.stores",
    "semcache.embedders",
    "semcache.eval",
    "semcache.guard",
)


def module_files() -> dict[str, Path]:
    """Every module of the ``semcache`` namespace (its mapped folders included) and its file."""
    files: dict[str, Path] = {"semcache": Path(semcache.__file__)}
    # Folders mapped into the namespace by package-dir (stores/, embedders/, eval/, ...) are
    # not below semcache/ on disk, so walk_packages has to start from each of them too.
    for name in ("semcache", *MAPPED_PACKAGES):
        package = importlib.import_module(name)
        files[name] = Path(package.__file__ or "")
        for info in pkgutil.walk_packages(package.__path__, f"{name}."):
            spec = importlib.util.find_spec(info.name)
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                files[info.name] = Path(spec.origin)
    return files


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def import_graph(*, local: bool = False) -> dict[str, set[str]]:
    """Module -> the semcache modules it imports at module level (``local``: inside
    functions too)."""
    files = module_files()
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        edges: set[str] = set()
        tree = ast.parse(path.read_text(), str(path))
        nodes = (
            [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
            if local
            else _top_level_imports(tree)
        )
        for node in nodes:
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    anchor = ".".join(parts[: len(parts) - node.level + 1])
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{alias.name}" for alias in node.names]
                targets = [t if t in files else base for t in targets]
            edges.update(t for t in targets if t in files and t != name)
        graph[name] = edges
    return graph
