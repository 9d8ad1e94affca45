"""Every test module under tests/ is collected: no folder of tests matches a pattern pytest
skips folders by (its default `norecursedirs` names `build`, which once left tests/build out
of every run)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _skipped_by() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    options = config["tool"]["pytest"]["ini_options"]
    assert "norecursedirs" in options, (
        "pyproject.toml must set norecursedirs: pytest's default skips any folder named build"
    )
    return list(options["norecursedirs"])


def test_no_folder_of_tests_is_one_pytest_skips() -> None:
    patterns = _skipped_by()
    folders = {p.parent for p in (ROOT / "tests").rglob("test_*.py")}
    assert folders, "no test modules found"
    skipped = sorted(
        str(folder.relative_to(ROOT))
        for folder in folders
        for part in folder.relative_to(ROOT).parts
        if any(fnmatch.fnmatch(part, pattern) for pattern in patterns)
    )
    assert skipped == []


def test_the_build_tests_are_among_the_folders_checked() -> None:
    """The folder that was left out is one the check above sees, under the name pytest skips
    by default."""
    assert any((ROOT / "tests" / "build").glob("test_*.py"))
    assert not any(fnmatch.fnmatch("build", pattern) for pattern in _skipped_by())
