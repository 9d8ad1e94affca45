"""Demo sites built through the real CLI for the change-feed tests, once per session.

- `before`: the demo tree with one of the two pointers of a confirmed recipe removed (so the
  recipe is single-signer there), built without `--previous`;
- `after`: the whole demo tree a day later with `--previous before` (the recipe becomes
  confirmed again);
- `after_again`: the same build as `after` into another folder (same inputs, same bytes);
- `later`: the whole tree another day later with `--previous after` (nothing changes: the
  history is carried over).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.proves.conftest import PUBLISHER_ARGS, RECIPES, REPO, SCENARIO, TRUST_ROOT

DAY = 86400
EPOCH = 1800000000 - 1800000000 % DAY
RECIPE = "gb300-eks-ubuntu-inference-dynamo"


def build(
    out: Path,
    *,
    recipes: Path = RECIPES,
    cache: Path,
    epoch: int,
    extra: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """One offline, signed build in its own process (asserts it exits 0)."""
    env = {k: v for k, v in os.environ.items() if k not in {"SOURCE_DATE_EPOCH", "SITE_URL"}}
    env.update(SOURCE_DATE_EPOCH=str(epoch), PYTHONPATH=str(REPO), NO_MKDOCS_2_WARNING="1")
    argv = [
        sys.executable,
        "-c",
        "from generator.cli import main; main()",
        "build",
        "--recipes",
        str(recipes),
        "--out",
        str(out),
        "--offline",
        "--trust-root",
        str(TRUST_ROOT),
        "--oci-layout",
        str(RECIPES / "bundles"),
        "--cache",
        str(cache),
        "--quiet",
        "--sign-with-test-authority",
        str(SCENARIO),
        *PUBLISHER_ARGS,
        *extra,
    ]
    done = subprocess.run(
        argv, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, f"build failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


@dataclass(frozen=True)
class Sites:
    before: Path
    after: Path
    after_again: Path
    later: Path
    cache: Path
    root: Path


@pytest.fixture(scope="session")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    if not (RECIPES / "evidence").is_dir() or not (RECIPES / "bundles").is_dir():
        pytest.skip("the demo tree (recipes/) is absent")
    root = tmp_path_factory.mktemp("changes")
    cache = root / "cache"
    trimmed = Path(
        shutil.copytree(RECIPES, root / "recipes", ignore=shutil.ignore_patterns("bundles"))
    )
    pointers = sorted((trimmed / "evidence" / RECIPE).rglob("sha256-*.yaml"))
    assert len(pointers) == 2
    pointers[0].unlink()
    before = root / "before"
    build(before, recipes=trimmed, cache=cache, epoch=EPOCH)
    after = root / "after"
    build(after, cache=cache, epoch=EPOCH + DAY, extra=["--previous", str(before)])
    again = root / "after-again"
    build(again, cache=cache, epoch=EPOCH + DAY, extra=["--previous", str(before)])
    later = root / "later"
    build(later, cache=cache, epoch=EPOCH + 2 * DAY, extra=["--previous", str(after)])
    return Sites(before, after, again, later, cache, root)
