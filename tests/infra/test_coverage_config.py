"""Coverage that means something: branch coverage of all of generator/, one floor in two places."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _coverage() -> dict[str, dict[str, object]]:
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return options["tool"]["coverage"]


def test_branch_coverage_of_the_whole_package() -> None:
    run = _coverage()["run"]
    assert run["branch"] is True
    assert run["source"] == ["generator"]
    assert not run.get("omit"), f"nothing in generator/ may be left out of coverage: {run['omit']}"


def test_the_floor_is_the_same_in_the_makefile_and_pyproject_and_not_lowered() -> None:
    found = re.search(
        r"^COV_MIN \?= (\d+)$", (REPO / "Makefile").read_text(encoding="utf-8"), re.MULTILINE
    )
    assert found, "Makefile has no `COV_MIN ?= N` line"
    floor = int(found.group(1))
    assert floor == _coverage()["report"]["fail_under"]
    assert floor >= 92  # measured 92.8% branch coverage; raise it as coverage grows
