"""The import contract: the pure core imports nothing from the outer packages, and no module
or package of generator imports itself back (read from the source, nothing is executed).

`make lint` runs this file too. The checker is tried on tiny planted packages first, so a
green run means the contract holds, not that the checker sees nothing."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

import pytest

from tests.architecture.importgraph import cycles, module_imports, modules_of

GENERATOR = Path(__file__).resolve().parents[2] / "generator"

CORE = ("model", "recipe", "corroborate", "facts", "ctrf")
"""The pure core: data and rules, no I/O of the build, no verification, no pages."""
FOUNDATION = ("generator", "generator.errors", "generator.limits", "generator.strictjson")
"""Leaf modules anything may import (the version, the error tree, parse limits)."""

KNOWN_CYCLES: list[list[str]] = []
"""Cycles that exist today, function-local imports included: none, and a new one fails the
test (and so `make lint`)."""


@cache
def _generator(runtime: bool) -> dict[str, set[str]]:
    """generator's own import graph (read once per run)."""
    return module_imports(modules_of(GENERATOR), runtime=runtime)


def _package(top: str) -> str:
    return ".".join(top.split(".")[:2])


def _packages(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded onto generator's top-level packages and modules."""
    folded: dict[str, set[str]] = {}
    for module, targets in graph.items():
        folded.setdefault(_package(module), set()).update(
            _package(t) for t in targets if _package(t) != _package(module) and t != "generator"
        )
    return folded


def core_violations(graph: Mapping[str, set[str]], root: str = "generator") -> list[str]:
    """`module -> target` for each import of a core module outside the core and foundation."""
    core = {f"{root}.{name}" for name in CORE}
    allowed = {f"{root}{name[len('generator') :]}" for name in FOUNDATION}
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if _package(module) in core
        for target in targets
        if _package(target) not in core and target not in allowed
    )


def _plant(root: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = root / "generator" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return modules_of(root / "generator")


def test_the_checker_finds_a_planted_cycle(tmp_path: Path) -> None:
    modules = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from generator.b import thing\n",
            "b.py": "def thing():\n    from generator import a\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import generator.a\n",
            "d/__init__.py": "from .e import x\n",
            "d/e.py": "from generator.d import y\n",
        },
    )
    graph = module_imports(modules, runtime=False)
    assert cycles(graph) == [["generator.a", "generator.b"], ["generator.d", "generator.d.e"]]
    # at import time only the package's own cycle runs; TYPE_CHECKING never counts
    assert cycles(module_imports(modules, runtime=True)) == [["generator.d", "generator.d.e"]]
    assert graph["generator.c"] == set()


def test_the_checker_finds_a_core_module_reaching_out(tmp_path: Path) -> None:
    modules = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "",
            "model/__init__.py": "from generator.errors import E\n",
            "facts/__init__.py": "def f():\n    from generator.verify import pipeline\n",
            "verify/__init__.py": "",
            "verify/pipeline.py": "",
        },
    )
    assert core_violations(module_imports(modules, runtime=False)) == [
        "generator.facts -> generator.verify",
        "generator.facts -> generator.verify.pipeline",
    ]


def test_the_pure_core_imports_nothing_from_the_outer_packages() -> None:
    graph = _generator(False)
    assert core_violations(graph) == []


def test_no_module_imports_itself_back_at_import_time() -> None:
    assert cycles(_generator(True)) == []


def test_no_package_imports_itself_back_at_import_time() -> None:
    assert cycles(_packages(_generator(True))) == []


def test_no_new_cycle_through_function_local_imports() -> None:
    found = cycles(_generator(False))
    new = [cycle for cycle in found if cycle not in KNOWN_CYCLES]
    assert new == [], "a new import cycle (move the shared code below both modules)"


@pytest.mark.parametrize("name", FOUNDATION)
def test_the_foundation_imports_only_the_foundation(name: str) -> None:
    graph = _generator(False)
    assert graph[name] <= set(FOUNDATION), graph[name]


def test_the_data_helper_loads_the_json_writer_alone() -> None:
    """`python -m generator.data.spool` starts on every big build: the data package's face is
    lazy, so the helper never imports the board or the pointer documents."""
    import subprocess
    import sys

    probe = (
        "import sys, generator.data.spool; "
        "print(sorted(m for m in sys.modules if m.startswith(('generator.corroborate', "
        "'generator.data.writers', 'generator.data._'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"
    import generator.data as data

    assert all(getattr(data, name) is not None for name in data.__all__)
