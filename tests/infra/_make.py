"""Running GNU make from a test without inheriting an outer make's flags or variable overrides."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAKEFILE = REPO / "Makefile"
MAKE = shutil.which("make")


def makefile_defaults() -> set[str]:
    """Names the Makefile assigns with `?=` (an environment value would override them)."""
    text = MAKEFILE.read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\?=", text, flags=re.MULTILINE))


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment minus an outer make's jobserver/level and `?=` overrides.

    `make test PYTEST_ARGS=...` exports PYTEST_ARGS to pytest and so to these tests; without this
    the make runs below would check the caller's values instead of the Makefile's defaults.
    """
    drop = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"} | makefile_defaults()
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def run_make(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`make --no-print-directory ARGS` in `cwd`, never reading stdin, output captured."""
    assert MAKE is not None, "GNU make is not installed"
    return subprocess.run(
        [MAKE, "--no-print-directory", *args],
        cwd=cwd,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def flat(output: str) -> str:
    """`make -n` output with line continuations joined and whitespace collapsed."""
    return " ".join(output.replace("\\\n", " ").split())
