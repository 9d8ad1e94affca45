"""Whoever can write the cache can plant things that are not files: a FIFO (whose open blocks
until a writer comes), a link to a file elsewhere, a file of any size. None of them is ever
followed, waited on or read whole: each is a miss, the build finishes, and the site is the
honest one."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from generator.build import run_build
from generator.cacheauth import read_cache_file
from tests.cacheauth.conftest import options
from tests.cacheauth.test_tampered_cache import site_files

ENTRY_FOLDERS = ("evaluation", "freshness", "pages", "recipes", "templates", "tree", "verify")
"""Every kind of cache entry a build reads back (the key file is not a cache entry)."""
PATIENCE_S = 120


def _entries(cache: Path) -> list[Path]:
    found = [
        path
        for folder in ENTRY_FOLDERS
        for path in sorted((cache / folder).rglob("*"))
        if path.is_file() and not path.is_symlink()
    ]
    kinds = {path.relative_to(cache).parts[0] for path in found}
    assert kinds == set(ENTRY_FOLDERS), f"the cache layout changed: {sorted(kinds)}"
    return found


def _fifo(path: Path, keep: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link(path: Path, keep: Path) -> None:
    """A link to an honest copy outside the cache: right bytes, but not a cache file."""
    copy = keep / str(abs(hash(path)))
    path.rename(copy)
    path.symlink_to(copy)


class Blocked(BaseException):
    """A build blocked on a planted entry (not an `Exception`: nothing may take it for a
    failed read and go on to block on the next entry)."""


@pytest.fixture()
def patience() -> Iterator[None]:
    """Fail, instead of hanging the suite, should a read block (a FIFO opened for reading
    blocks until a writer comes; the signal interrupts it, and again every second)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise Blocked(f"a build blocked for {PATIENCE_S} s on a planted cache entry")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, PATIENCE_S, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("plant", [_fifo, _link], ids=["fifo", "link"])
def test_planted_cache_entries_are_misses(
    tree: Path, tmp_path: Path, patience: None, plant: object
) -> None:
    cache = tmp_path / "cache"
    run_build(options(tree, tmp_path / "honest", cache))
    keep = tmp_path / "elsewhere"
    keep.mkdir()
    for path in _entries(cache):
        plant(path, keep)  # type: ignore[operator]
    again = run_build(options(tree, tmp_path / "again", cache))
    assert site_files(tmp_path / "again") == site_files(tmp_path / "honest")
    assert again.pointers > 0 and not again.from_memo


def test_a_cache_file_is_read_only_up_to_its_limit(tmp_path: Path, patience: None) -> None:
    entry = tmp_path / "entry"
    entry.write_bytes(b"x" * 100)
    assert read_cache_file(entry, 100) == b"x" * 100
    assert read_cache_file(entry, 99) is None  # larger than the limit: not read at all
    assert read_cache_file(entry, 10, head=True) == b"x" * 10  # a header: the first bytes
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read_cache_file(fifo, 100) is None and read_cache_file(fifo, 10, head=True) is None
    link = tmp_path / "link"
    link.symlink_to(entry)
    assert read_cache_file(link, 100) is None
    assert read_cache_file(tmp_path, 100) is None  # a folder
    assert read_cache_file(tmp_path / "absent", 100) is None


BOUNDS = [
    ("generator.buildmemo", "MAX_META_BYTES", "evaluation"),
    ("generator.freshness.memo", "MAX_MEMO_BYTES", "freshness"),
    ("generator.site.pagecache", "MAX_PAGE_ENTRY_BYTES", "pages"),
    ("generator.evaluate.productstore", "MAX_PRODUCT_BYTES", "recipes"),
    ("generator.site.bytecode", "MAX_BYTECODE_BYTES", "templates"),
    ("generator.evaluate.pointermemo", "MAX_MEMO_BYTES", "tree"),
    ("generator.verify.cache", "MAX_PACK_BYTES", "verify"),
]
"""Each kind of cache entry, the bound its reader applies and the folder it lives in."""


@pytest.mark.parametrize(("module", "bound", "folder"), BOUNDS, ids=[b[2] for b in BOUNDS])
def test_an_entry_over_its_bound_is_never_read(
    tree: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    module: str,
    bound: str,
    folder: str,
) -> None:
    """Every entry of one kind is made larger than its reader's bound (here: lowered to one
    byte, as a planted file of any size is larger than the real one): each read of it is a
    miss, and the site is still the honest one."""
    import importlib

    cache = tmp_path / "cache"
    run_build(options(tree, tmp_path / "honest", cache))
    reader = importlib.import_module(module)
    monkeypatch.setattr(reader, bound, 1)
    reads: list[bytes | None] = []
    real = reader.read_cache_file

    def recorded(path: Any, limit: int, **kwargs: Any) -> bytes | None:
        data = real(path, limit, **kwargs)
        if (cache / folder) in Path(path).parents and not kwargs.get("head"):
            reads.append(data)  # a pack's header has a bound of its own (test_serialize_cache)
        return data

    monkeypatch.setattr(reader, "read_cache_file", recorded)
    if folder in ("recipes", "tree"):  # read by an incremental evaluation, not the memo's
        shutil.rmtree(cache / "evaluation")
    incremental = folder in ("evaluation", "recipes", "tree")
    run_build(options(tree, tmp_path / "again", cache, reevaluate=not incremental))
    assert reads, f"nothing under {folder}/ was read: the reader changed"
    assert all(data is None for data in reads)
    assert site_files(tmp_path / "again") == site_files(tmp_path / "honest")


def test_a_fifo_put_in_place_of_a_walked_file_never_blocks_the_tree_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, patience: None
) -> None:
    """Between the walk's `stat` and the read, a regular file is swapped for a FIFO (or a
    link): the digest does not block or follow it, and it is not the digest of the file."""
    import generator.folderdigest as folderdigest

    (tmp_path / "evidence").mkdir()
    pointer = tmp_path / "evidence" / "p.yaml"
    pointer.write_bytes(b"kind: pointer\n")
    honest = folderdigest.tree_digest(tmp_path)
    walked = list(folderdigest.walk(tmp_path))
    pointer.unlink()
    os.mkfifo(pointer)
    monkeypatch.setattr(folderdigest, "walk", lambda root: iter(walked))
    assert folderdigest.tree_digest(tmp_path) != honest
    pointer.unlink()
    pointer.symlink_to(tmp_path / "elsewhere.yaml")
    (tmp_path / "elsewhere.yaml").write_bytes(b"kind: pointer\n")
    assert folderdigest.tree_digest(tmp_path) != honest
