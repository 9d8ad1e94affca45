"""The output folder is the tool's alone: where --out may point, symlinks, the marker, the lock.

Every build here is the real CLI on a sandboxed copy of the demo tree (real Sigstore
verification through the demo authority, offline from its OCI layout).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from pathlib import Path

import pytest

from generator.errors import UsageError
from generator.outdir import (
    MARKER_NAME,
    Protected,
    check_output,
    claim_output,
    lock_path,
    output_lock,
)
from generator.site.swap import old_path
from tests.hostile.conftest import ROOT, Sandbox, new_sandbox, tree_snapshot

pytestmark = pytest.mark.slow


def assert_complete(out: Path) -> None:
    for name in (
        "index.html",
        "rejected/index.html",
        "data/index.json",
        "data/pointers.json",
        "data/build-info.json",
        MARKER_NAME,
    ):
        assert (out / name).is_file(), f"{name} missing from {out}"


def error_of(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """The JSON error document of a refused `--format json` build."""
    doc = json.loads(done.stdout)
    assert isinstance(doc, dict)
    return doc


@pytest.fixture()
def box(tmp_path: Path) -> Sandbox:
    return new_sandbox(tmp_path)


def run_out(
    box: Sandbox, out: Path | str, *extra: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The sandbox's build with another --out (and optionally another working folder)."""
    args = box.build_args(*extra)
    args[args.index("--out") + 1] = str(out)
    return subprocess.run(
        args,
        cwd=cwd or box.root,
        env=box.env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_foreign_non_empty_folder_is_refused_and_untouched(box: Sandbox) -> None:
    box.out.mkdir()
    (box.out / "thesis.tex").write_text("years of work", encoding="utf-8")
    (box.out / "notes").mkdir()
    (box.out / "notes" / "a.txt").write_text("a", encoding="utf-8")
    before = tree_snapshot(box.out)
    done = box.run()
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = error_of(done)
    assert error["file"] == str(box.out)
    assert MARKER_NAME in str(error["expected"]) and error["hint"]
    assert tree_snapshot(box.out) == before
    assert not lock_path(box.out).exists()  # refused before anything was created
    assert not list(box.root.glob(".evidence-build-*"))


@pytest.mark.parametrize("where", ["tree", "inside-tree", "cache", "inside-cache", "sandbox-root"])
def test_out_on_an_input_is_refused(box: Sandbox, where: str) -> None:
    (box.cache / "keep").mkdir(parents=True)
    (box.cache / "keep" / "verdict.json").write_text("{}", encoding="utf-8")
    out = {
        "tree": box.recipes,
        "inside-tree": box.recipes / "evidence" / "site",
        "cache": box.cache,
        "inside-cache": box.cache / "site",
        "sandbox-root": box.root,
    }[where]
    tree_before, cache_before = tree_snapshot(box.recipes), tree_snapshot(box.cache)
    done = run_out(box, out)
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = error_of(done)
    assert error["file"] == str(out) and "--out" in str(error["message"])
    assert tree_snapshot(box.recipes) == tree_before
    assert tree_snapshot(box.cache) == cache_before


def test_out_on_the_default_cache_is_refused(box: Sandbox) -> None:
    default = box.home / ".cache" / "evidence-dashboard"  # XDG_CACHE_HOME of the sandbox
    (default / "verify").mkdir(parents=True)
    (default / "verify" / "pack.json").write_text("{}", encoding="utf-8")
    before = tree_snapshot(default)
    args = box.build_args()
    at = args.index("--cache")
    del args[at : at + 2]
    args[args.index("--out") + 1] = str(default / "site")
    done = subprocess.run(
        args, cwd=box.root, env=box.env(), capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "cache" in str(error_of(done)["message"])
    assert tree_snapshot(default) == before


def test_out_dot_in_the_repository_is_refused(box: Sandbox) -> None:
    done = run_out(box, ".", cwd=ROOT)
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = str(error_of(done)["message"])
    assert "--out contains" in message
    assert (ROOT / "generator" / "outdir.py").is_file()
    assert not (ROOT / MARKER_NAME).exists()


def test_symlinked_out_stays_a_link_and_later_builds_work(box: Sandbox) -> None:
    target = box.inputs / "published"
    box.out.symlink_to(target, target_is_directory=True)
    first = box.run()
    assert first.returncode == 0, first.stderr
    assert box.out.is_symlink() and box.out.resolve() == target.resolve()
    assert_complete(target)
    (target / "stale.html").write_text("from before", encoding="utf-8")
    second = box.run()
    assert second.returncode == 0, (second.stdout, second.stderr)
    assert box.out.is_symlink() and box.out.resolve() == target.resolve()
    assert_complete(target)
    assert not (target / "stale.html").exists()
    assert not old_path(box.out).exists() and not old_path(target).exists()
    third = box.run()
    assert third.returncode == 0, (third.stdout, third.stderr)


def test_marked_folder_is_replaced_and_empty_folder_is_used(box: Sandbox) -> None:
    box.out.mkdir()
    done = box.run()
    assert done.returncode == 0, done.stderr
    assert_complete(box.out)
    (box.out / "stale.html").write_text("old page", encoding="utf-8")
    again = box.run()  # unchanged tree: answered from the evaluation memo
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["evaluation"] == "reused"
    assert_complete(box.out)
    assert not (box.out / "stale.html").exists()


def test_data_only_build_carries_the_marker(box: Sandbox) -> None:
    done = box.run("--data-only")
    assert done.returncode == 0, done.stderr
    assert (box.out / MARKER_NAME).is_file() and (box.out / "data" / "index.json").is_file()
    assert not (box.out / "index.html").exists()
    assert box.run().returncode == 0  # a data-only folder is the tool's: a full build replaces it


def test_concurrent_builds_into_one_out_take_turns(box: Sandbox) -> None:
    procs = [
        subprocess.Popen(
            box.build_args("--reevaluate"),
            cwd=box.root,
            env=box.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [(p.communicate(timeout=600), p.returncode) for p in procs]
    assert [code for _, code in results] == [0, 0, 0, 0], results
    assert_complete(box.out)
    assert not old_path(box.out).exists()
    assert not [p for p in box.root.glob(".evidence-build-*") if p.exists()]


def _hold_lock(out: Path) -> int:
    lock = lock_path(out)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_held_lock_times_out_with_exit_2(box: Sandbox) -> None:
    fd = _hold_lock(box.out)
    try:
        done = box.run("--lock-timeout", "0")
    finally:
        os.close(fd)
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = error_of(done)
    assert "another build" in str(error["message"]) and "--lock-timeout" in str(error["hint"])
    assert not box.out.exists()


def test_a_second_build_waits_for_the_lock_then_builds(box: Sandbox) -> None:
    fd = _hold_lock(box.out)
    proc = subprocess.Popen(
        box.build_args(),
        cwd=box.root,
        env=box.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the build says it waits: the explicit signal
        assert "waiting for another build" in line, line
        assert not box.out.exists()
    finally:
        os.close(fd)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, (out, err)
    assert_complete(box.out)


# The checks themselves, on plain folders (no build).


def test_check_output_refuses_ancestors_and_foreign_leftovers(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "inner").mkdir(parents=True)
    here = [Protected("the current folder", work / "inner", inside_ok=True)]
    assert check_output(work / "inner" / "site", here) == (work / "inner" / "site").resolve()
    for out in (work / "inner", work, Path("/")):
        with pytest.raises(UsageError):
            check_output(out, here)
    site = tmp_path / "site"
    old = old_path(site)
    old.mkdir()
    (old / "mine.txt").write_text("not a site", encoding="utf-8")
    with pytest.raises(UsageError) as err:
        check_output(site, [])
    assert str(old) in err.value.diagnostics()
    (old / MARKER_NAME).write_text("", encoding="utf-8")
    assert check_output(site, []) == site.resolve()


def test_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "site").write_text("a file", encoding="utf-8")
    with pytest.raises(UsageError, match="not a folder"):
        check_output(tmp_path / "site", [])


def test_lock_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep", encoding="utf-8")
    lock_path(tmp_path / "site").symlink_to(victim)
    with pytest.raises(UsageError, match="lock"):
        with output_lock(tmp_path / "site", timeout=0):
            pass
    assert victim.read_text(encoding="utf-8") == "keep"


def test_claim_output_yields_the_link_target(tmp_path: Path) -> None:
    target = tmp_path / "real"
    link = tmp_path / "site"
    link.symlink_to(target, target_is_directory=True)
    with claim_output(link, [], timeout=0) as where:
        assert where == target.resolve()
        assert lock_path(target).exists()
