"""ruff's excludes skip the build outputs at the repo root only, never a package named `site`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


def test_only_root_outputs_are_excluded(tmp_path: Path) -> None:
    assert RUFF is not None, "ruff (the `lint` extra) is not installed; run `make venv`"
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    files = [
        "site/assets/a.py",
        "build/lib/b.py",
        "generator/site/c.py",
        "tests/site/d.py",
        "generator/build.py",
    ]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("X = 1\n", encoding="utf-8")
    shown = subprocess.run(
        [str(RUFF), "check", "--show-files", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    listed = {
        Path(line.strip()).resolve().relative_to(tmp_path).as_posix()
        for line in shown.splitlines()
        if line.strip().endswith(".py")
    }
    assert listed == {"generator/site/c.py", "tests/site/d.py", "generator/build.py"}
