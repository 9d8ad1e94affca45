"""Builds of the demo tree for the determinism tests, each in its own process via the CLI.

Each build runs the installed `evidence-dashboard` console script from the repository root (as
CI does; no mkdocs.yml is read without --config) with a controlled environment: the hash
seed, time zone, locale and SOURCE_DATE_EPOCH are set explicitly and SITE_URL is removed.
Builds are session-scoped and shared between the tests to keep the module fast.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "recipes"
#: A fixed build time (2027-01-15T00:00:00Z), later than every attestation of the demo tree.
EPOCH = 1800000000 - 1800000000 % 86400


def cli() -> list[str]:
    """The console script next to this interpreter, else the click group through `-c`."""
    script = Path(sys.executable).with_name("evidence-dashboard")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from generator.cli import main; main()"]


@dataclass(frozen=True)
class Env:
    """The process environment that must not matter."""

    seed: str
    tz: str
    locale: str


def build(
    out: Path,
    *,
    recipes: Path = RECIPES,
    cache: Path,
    env: Env,
    epoch: int = EPOCH,
    layout: bool = True,
    extra: Sequence[str] = (),
) -> Path:
    """Run one offline build of `recipes` into `out` in a new process; fail with its output."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SOURCE_DATE_EPOCH", "SITE_URL", "PYTHONHASHSEED", "TZ", "LANG", "LANGUAGE"}
        and not k.startswith("LC_")
    }
    base.update(
        PYTHONHASHSEED=env.seed,
        TZ=env.tz,
        LC_ALL=env.locale,
        SOURCE_DATE_EPOCH=str(epoch),
        NO_MKDOCS_2_WARNING="1",
        DISABLE_MKDOCS_2_WARNING="true",
    )
    argv = [
        *cli(),
        "build",
        "--recipes",
        str(recipes),
        "--out",
        str(out),
        "--offline",
        "--trust-root",
        str(RECIPES / "trust" / "trusted_root.json"),
        "--cache",
        str(cache),
        "--quiet",
        *extra,
    ]
    if layout:
        argv += ["--oci-layout", str(RECIPES / "bundles")]
    done = subprocess.run(
        argv, cwd=REPO, env=base, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, f"build failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return out


ENV_A = Env(seed="1", tz="UTC", locale="C.UTF-8")
ENV_B = Env(seed="4242", tz="America/Los_Angeles", locale="C")
ENV_C = Env(seed="7", tz="Asia/Kolkata", locale="C.UTF-8")


def _require_demo() -> None:
    if not (RECIPES / "evidence").is_dir() or not (RECIPES / "bundles").is_dir():
        pytest.fail(
            "the demo tree recipes/ (committed in this repo) is absent or incomplete: "
            "restore it with git checkout, or regenerate it with `make demo`"
        )


@pytest.fixture(scope="session")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Named builds, made on first use: a (cold, --jobs 1), b (warm, offline from a's cache
    alone, default jobs), c (cold in its own cache, --jobs 4) and day9 (nine days later)."""
    _require_demo()
    root = tmp_path_factory.mktemp("determinism")
    made: dict[str, Path] = {}
    recipes: dict[str, Callable[[], Path]] = {
        "a": lambda: build(root / "a", cache=root / "cache-a", env=ENV_A, extra=["--jobs", "1"]),
        "b": lambda: (
            made.setdefault("a", recipes["a"]()),
            build(root / "b", cache=root / "cache-a", env=ENV_B, layout=False),
        )[1],
        "c": lambda: build(root / "c", cache=root / "cache-c", env=ENV_C, extra=["--jobs", "4"]),
        "day9": lambda: build(
            root / "day9", cache=root / "cache-d", env=ENV_B, epoch=EPOCH + 9 * 86400
        ),
    }

    def get(name: str) -> Path:
        if name not in made:
            made[name] = recipes[name]()
        return made[name]

    return get


def copy_demo(target: Path) -> Path:
    """A private copy of the demo recipes tree (without the bundles, which stay shared)."""
    _require_demo()
    shutil.copytree(RECIPES, target, ignore=shutil.ignore_patterns("bundles"))
    return target
