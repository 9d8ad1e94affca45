"""The suite has no escape hatches: nothing in tests/ can quietly turn a failure into a pass.

Read from the syntax tree of every test file (so text inside strings, such as the generated
modules in test_conftest_policy.py, does not count):
- no `pytest.xfail(...)` call inside a test (a failing path would report as "expected");
- no `importorskip` and no `except ImportError` (a missing project module or declared dependency
  is a broken install, not a skip; and no stand-in module may replace the project's own code);
- no `sys.modules[...] = ...` (that is how a stand-in replaces a real module);
- no skip whose condition asks whether a `generator` module exists.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _names(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def hatches(source: str) -> list[tuple[int, str]]:
    """(line, what) for every escape hatch in one test file's source."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if (
                name == "xfail"
                and isinstance(node.func, ast.Attribute)
                and _is_pytest(node.func.value)
            ):
                found.append((node.lineno, "pytest.xfail() inside a test"))
            elif name == "importorskip":
                found.append((node.lineno, "importorskip"))
            elif name == "skipif" and any(
                "find_spec" in _names(arg) or _mentions_generator(arg) for arg in node.args
            ):
                found.append((node.lineno, "a skip on whether a project module exists"))
        elif isinstance(node, ast.ExceptHandler) and _names(node.type) & IMPORT_ERRORS:
            found.append((node.lineno, "except ImportError"))
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Subscript) and "modules" in _names(t.value) for t in node.targets
        ):
            found.append((node.lineno, "sys.modules[...] = (a stand-in module)"))
    return sorted(found)


def _is_pytest(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "pytest"


def _mentions_generator(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("generator")
        for n in ast.walk(node)
    )


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("import pytest\ndef test_x():\n    pytest.xfail('bug')\n", "pytest.xfail() inside a test"),
        ("import pytest\nm = pytest.importorskip('generator.recipe')\n", "importorskip"),
        ("try:\n    import generator.x\nexcept ImportError:\n    pass\n", "except ImportError"),
        (
            "try:\n    import y\nexcept (OSError, ModuleNotFoundError):\n    pass\n",
            "except ImportError",
        ),
        (
            "import sys, types\nsys.modules['generator.x'] = types.ModuleType('x')\n",
            "sys.modules[...] = (a stand-in module)",
        ),
        (
            "import importlib.util, pytest\n"
            "@pytest.mark.skipif(importlib.util.find_spec('generator.x') is None, reason='later')\n"
            "def test_x():\n    pass\n",
            "a skip on whether a project module exists",
        ),
    ],
)
def test_each_hatch_is_found(source: str, what: str) -> None:
    assert [w for _, w in hatches(source)] == [what]


def test_strings_and_ordinary_skips_are_not_hatches() -> None:
    source = (
        "import pytest, shutil\n"
        "TEXT = 'pytest.xfail(1)\\nexcept ImportError: pytest.importorskip(\"x\")'\n"
        "@pytest.mark.xfail(reason='known', strict=True)\n"
        "def test_x():\n    assert False\n"
        "@pytest.mark.skipif(shutil.which('git') is None, reason='needs git')\n"
        "def test_y():\n    pass\n"
    )
    assert hatches(source) == []


def test_the_suite_has_no_escape_hatches() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 50
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}: {what}"
        for path in files
        for line, what in hatches(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "escape hatches in the suite:\n" + "\n".join(found)
