"""The tree's digest worked out by a forked child while the build imports: the same answer
as the build's own, and anything short of a complete answer for that root is no answer."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import generator.forkedcall as forkedcall
import generator.treeprefetch as prefetch
from generator.buildmemo import fingerprint
from generator.folderdigest import tree_digest
from generator.treeprefetch import checked_answer, prefetched_tree, take
from tests._support import demo_build

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a child is forked only on Linux"
)


@pytest.fixture(autouse=True)
def _forking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork even while threads another test left behind are idle in this process (the one
    test of the thread rule uses the real rule)."""
    if request.function is not test_no_child_while_other_threads_run:
        monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)


def _tree(root: Path) -> Path:
    (root / "evidence" / "r1" / "src").mkdir(parents=True)
    (root / "evidence" / "r1" / "src" / "sha256-a.yaml").write_bytes(b"a: 1\n")
    (root / "evidence" / "allowlist.yaml").write_bytes(b"signers: []\n")
    (root / "overlays").mkdir()
    (root / "overlays" / "x.yaml").write_bytes(b"x" * 70_000)  # beyond one pipe buffer
    os.symlink("x.yaml", root / "overlays" / "link.yaml")
    (root / os.fsdecode(b"odd-\xff-name")).write_bytes(b"not UTF-8 in its name")
    return root


def test_the_childs_answer_is_the_builds_own(tmp_path: Path) -> None:
    root = _tree(tmp_path / "recipes")
    here: dict[str, str] = {}
    expected = tree_digest(root, hashed=here)
    with prefetched_tree(root):
        answer = take(root)
        assert take(root) is None  # taken once
    assert answer == (expected, here)


def test_a_change_after_the_answer_was_worked_out_is_seen_by_the_next_build(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "recipes")
    with prefetched_tree(root):
        first = take(root)
    (root / "evidence" / "r1" / "src" / "sha256-a.yaml").write_bytes(b"a: 2\n")
    with prefetched_tree(root):
        second = take(root)
    assert first is not None and second is not None
    assert first[0] != second[0] == tree_digest(root)


def test_an_answer_for_another_root_is_none(tmp_path: Path) -> None:
    root = _tree(tmp_path / "recipes")
    with prefetched_tree(root):
        assert take(tmp_path / "other") is None
        assert take(root) is not None


def test_a_failing_child_is_no_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "recipes")

    def broken(*_args: object, **_kwargs: object) -> str:
        raise OSError("the disk went away")

    monkeypatch.setattr(prefetch, "tree_digest", broken)  # the forked child inherits it
    with prefetched_tree(root):
        assert take(root) is None


def test_a_child_killed_before_it_answered_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "recipes")

    def stuck(*_args: object, **_kwargs: object) -> str:
        time.sleep(600)  # a disk that does not answer: the child is killed first
        return "never"

    monkeypatch.setattr(prefetch, "tree_digest", stuck)  # the forked child inherits it
    with prefetched_tree(root):
        child = prefetch._PENDING[str(root)]
        os.kill(child.pid, 9)
        assert take(root) is None


def test_an_untaken_child_is_stopped_and_reaped(tmp_path: Path) -> None:
    root = _tree(tmp_path / "recipes")
    with prefetched_tree(root):
        child = prefetch._PENDING[str(root)]
    assert str(root) not in prefetch._PENDING
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # reaped: no longer this process's child


def test_one_child_per_root_when_asked_twice(tmp_path: Path) -> None:
    root = _tree(tmp_path / "recipes")
    with prefetched_tree(root):
        child = prefetch._PENDING[str(root)]
        with prefetched_tree(root):
            assert prefetch._PENDING[str(root)] is child
        assert prefetch._PENDING.get(str(root)) is child  # the inner block stopped nothing
        assert take(root) is not None


def test_no_child_while_other_threads_run(tmp_path: Path) -> None:
    root = _tree(tmp_path / "recipes")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with prefetched_tree(root):
            assert str(root) not in prefetch._PENDING
            assert take(root) is None
    finally:
        stop.set()
        other.join()


_GOOD = {"root": "/t", "digest": "a" * 64, "hashed": {"/t/f": "b" * 64}}


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "not a mapping",
        [],
        {**_GOOD, "root": "/other"},
        {**_GOOD, "digest": "A" * 64},
        {**_GOOD, "digest": "a" * 63},
        {**_GOOD, "digest": None},
        {**_GOOD, "hashed": []},
        {**_GOOD, "hashed": {"/t/f": "short"}},
        {**_GOOD, "hashed": {"/t/f": 7}},
        {k: v for k, v in _GOOD.items() if k != "hashed"},  # cut short
    ],
)
def test_anything_but_a_complete_answer_for_the_root_is_none(answer: Any) -> None:
    assert checked_answer(answer, "/t") is None


def test_the_complete_answer_parses() -> None:
    assert checked_answer(dict(_GOOD), "/t") == ("a" * 64, {"/t/f": "b" * 64})


def test_an_answer_longer_than_allowed_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "recipes")
    monkeypatch.setattr(prefetch, "_MAX_ANSWER", 200)  # its answer is several hundred bytes
    with prefetched_tree(root):
        assert take(root) is None


def test_the_fingerprint_is_the_same_with_the_childs_answer(tmp_path: Path) -> None:
    tree = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", tree)
    options = demo_build(tree, tmp_path / "out", tmp_path / "cache").evaluation
    own: dict[str, str] = {}
    expected = fingerprint(options, None, hashed=own)
    taken: dict[str, str] = {}
    with prefetched_tree(tree):
        assert fingerprint(options, None, hashed=taken) == expected
        assert str(tree) not in prefetch._PENDING  # the fingerprint took the answer
    assert taken == own
