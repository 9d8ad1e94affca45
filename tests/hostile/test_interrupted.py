"""Interrupted and failed builds: the output folder is always a complete site, old or new.

A build is killed (SIGKILL) right after its staging folder appears and again while MkDocs is
writing into it; the half-done swap states are made directly with `generator.site.swap`; a build
that fails (unusable allowlist, oversize allowlist, broken site config) exits non-zero. In every
case `--out` still holds the last good site, and the next build recovers and completes.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from generator.site.swap import old_path, publish_atomically, recover
from tests.hostile.conftest import Sandbox, new_sandbox, tree_snapshot

pytestmark = pytest.mark.slow


def site_digest(out: Path) -> dict[str, str]:
    """{relative path: sha256} of every file of a site."""
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def assert_complete(out: Path) -> None:
    for name in (
        "index.html",
        "rejected/index.html",
        "data/index.json",
        "data/pointers.json",
        "data/build-info.json",
    ):
        assert (out / name).is_file(), f"{name} missing from {out.name}"


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sandbox, dict[str, str]]:
    box = new_sandbox(tmp_path_factory.mktemp("interrupt"))
    done = box.run()
    assert done.returncode == 0, done.stderr
    assert_complete(box.out)
    return box, site_digest(box.out)


def _staging(box: Sandbox) -> list[Path]:
    """The build's work folders (the site MkDocs writes is staged inside one)."""
    return sorted(box.root.glob(".evidence-build-*"))


def _files_in(folders: list[Path]) -> int:
    """How many entries the folders hold now (0 for one the build removed meanwhile)."""
    count = 0
    for folder in folders:
        try:
            count += sum(1 for _ in folder.rglob("*"))
        except OSError:  # the build finished and swept it while it was listed
            continue
    return count


def _kill_when(box: Sandbox, ready: str, timeout: float = 60) -> bool:
    """Start a build and SIGKILL it once `ready` holds; True if it was killed mid-build.

    `--reevaluate` makes the build do all its work (an unchanged tree would otherwise be
    answered from the evaluation memo in a blink)."""
    proc = subprocess.Popen(
        box.build_args("--reevaluate"),
        cwd=box.root,
        env=box.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            found = _staging(box)
            files = _files_in(found) if ready == "site" else 0
            if (ready == "staging" and found) or (ready == "site" and files > 40):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.005)
        return False
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize("ready", ["staging", "site"])
def test_killed_build_leaves_the_previous_site(
    good: tuple[Sandbox, dict[str, str]], ready: str
) -> None:
    box, before = good
    killed = any(_kill_when(box, ready) for _ in range(5))
    if not killed:
        pytest.skip(f"the build finished before the {ready} point could be observed")
    if not box.out.exists():  # killed between the swap's two renames: recovery undoes it
        assert recover(box.out) == "rolled-back"
    assert site_digest(box.out) == before
    assert not old_path(box.out).exists()
    assert not list(box.root.glob(f".{box.out.name}.staging-*"))  # nothing outside the work


def test_next_build_recovers_from_every_swap_state(good: tuple[Sandbox, dict[str, str]]) -> None:
    box, before = good
    out, old = box.out, old_path(box.out)
    # killed between "out -> out.old" and "staging -> out": out is missing
    os.replace(out, old)
    assert recover(out) == "rolled-back"
    assert site_digest(out) == before
    # killed between "staging -> out" and "delete out.old": both exist, out is the new one
    staged = box.inputs / "staged-copy"
    os.replace(out, old)
    done = box.run()  # the real CLI recovers first, then swaps its own new site in
    assert done.returncode == 0, done.stderr
    assert not old.exists()
    assert site_digest(out) == before  # same inputs: the same complete site
    # both present: recovery keeps `out` and deletes the old copy
    old.mkdir()
    (old / "stale.html").write_text("old", encoding="utf-8")
    assert recover(out) == "finished"
    assert not old.exists() and site_digest(out) == before
    # a complete publish over an existing output swaps in whole (in a scratch folder)
    target = box.inputs / "published"
    target.mkdir()
    (target / "index.html").write_text("old", encoding="utf-8")
    staged.mkdir()
    (staged / "index.html").write_text("new", encoding="utf-8")
    publish_atomically(staged, target)
    assert (target / "index.html").read_text(encoding="utf-8") == "new"
    assert not old_path(target).exists() and not staged.exists()


ALLOWLIST_FAULTS = {
    "backreference": "schemaVersion: 1.0.0\nfirstParty: []\ncommunity: []\npartner:\n"
    "  - label: x\n    issuer: https://github.com/login/oauth\n"
    "    identityPattern: '^(a+)\\1$'\n",
    "duplicate-key": "schemaVersion: 1.0.0\nschemaVersion: 1.0.0\nfirstParty: []\n",
    "oversize": "# " + "x" * (1024 * 1024 + 1) + "\n",
    "yaml-bomb": "schemaVersion: 1.0.0\na: &a [x,x,x,x,x,x,x,x,x,x]\n"
    + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n"
        for p, n in zip("abcdefg", "bcdefgh", strict=True)
    ),
}


@pytest.mark.parametrize("fault", sorted(ALLOWLIST_FAULTS))
def test_unusable_allowlist_fails_and_keeps_the_last_good_site(
    good: tuple[Sandbox, dict[str, str]], fault: str
) -> None:
    box, _before = good
    allowlist = box.evidence / "allowlist.yaml"
    original = allowlist.read_bytes()
    current = site_digest(box.out)
    cache_before = tree_snapshot(box.cache)
    try:
        allowlist.write_text(ALLOWLIST_FAULTS[fault], encoding="utf-8")
        done = box.run()
    finally:
        allowlist.write_bytes(original)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "allowlist.yaml" in done.stdout  # the JSON error names the file
    assert site_digest(box.out) == current
    assert tree_snapshot(box.cache) == cache_before
    assert not _staging(box) or all(s.name.startswith(".evidence-build-") for s in _staging(box))


def test_failed_site_build_keeps_the_last_good_site(good: tuple[Sandbox, dict[str, str]]) -> None:
    box, _before = good
    current = site_digest(box.out)
    earlier = {s for s in _staging(box) if s.exists()}  # left by builds killed before this one
    config = box.inputs / "broken-mkdocs.yml"
    config.write_text("site_name: [unclosed\n", encoding="utf-8")
    done = box.run("--config", str(config))
    assert done.returncode in (2, 3), (done.returncode, done.stdout, done.stderr)
    assert site_digest(box.out) == current
    # a failed (not killed) build removes its own staging folder: nothing new is left behind
    assert {s for s in _staging(box) if s.exists()} <= earlier
