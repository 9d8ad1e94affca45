""".gitignore keeps build outputs, caches and the venv out of git, and nothing the project needs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GIT = shutil.which("git")

pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")


def _ignored(path: str) -> bool:
    done = subprocess.run(
        [str(GIT), "check-ignore", "--no-index", "-q", path],
        cwd=REPO,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode == 0


@pytest.mark.parametrize(
    "path",
    [
        ".venv/bin/python",
        "site/index.html",
        ".site.lock",
        "build/lock-venv/x",
        "evidence_dashboard.egg-info/PKG-INFO",
        "generator/__pycache__/cli.cpython-311.pyc",
        "tests/tree/__pycache__/x.pyc",
        ".coverage",
        ".coverage.host.123.456",
        "tests/artifacts/shot.png",
        ".pytest_cache/v",
        ".mypy_cache/3.11/x",
        ".ruff_cache/x",
    ],
)
def test_outputs_and_caches_are_ignored(path: str) -> None:
    assert _ignored(path)


@pytest.mark.parametrize(
    "path",
    [
        "constraints.txt",
        "Makefile",
        ".ci/run",
        "netlify.toml",
        "pyproject.toml",
        "generator/cli.py",
        "scripts/install-system-deps.sh",
        "tests/conftest.py",
        "tests/_support.py",
        "generator/site/__init__.py",
        "generator/build.py",
        "tests/site/test_x.py",
        "docs/build/x.md",
        "recipes/demo/scenario.yaml",
        "site_templates/pages/index.md",
        "docs/data-contract.md",
    ],
)
def test_sources_are_not_ignored(path: str) -> None:
    assert not _ignored(path)
