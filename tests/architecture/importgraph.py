"""Read a package's import graph from its source (no import is executed).

`module_imports` gives, per module, the package's modules it imports: `runtime=True` keeps
only what runs when the module is imported (module level, class bodies, `if`/`try`/`with`
blocks; not function bodies, not `if TYPE_CHECKING:`), which is what can form an import
cycle; `runtime=False` adds function-local imports (what a module depends on at all).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

__all__ = ["cycles", "module_imports", "modules_of"]


def modules_of(package: Path) -> dict[str, Path]:
    """Every module of the package folder `package`, by dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _statements(body: Iterable[ast.stmt], runtime: bool) -> Iterator[ast.stmt]:
    """The statements of `body` and their nested blocks, as `module_imports` describes."""
    for node in body:
        if isinstance(node, ast.If) and _type_checking(node):
            yield from _statements(node.orelse, runtime)
            continue
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and runtime:
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(node, name, None) or (), runtime)
        for handler in getattr(node, "handlers", None) or ():
            yield from _statements(handler.body, runtime)


def _named(node: ast.stmt, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        yield source
        for alias in node.names:
            yield f"{source}.{alias.name}"


def module_imports(modules: Mapping[str, Path], *, runtime: bool) -> dict[str, set[str]]:
    """Per module, the modules of `modules` it imports (see the module doc)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        named = {
            target
            for node in _statements(tree.body, runtime)
            for target in _named(node, name, is_package)
        }
        graph[name] = {target for target in named if target in modules and target != name}
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import cycles of `graph`: its strongly connected parts of more than one module
    (Tarjan's algorithm, iterative), each sorted, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return sorted(found)
