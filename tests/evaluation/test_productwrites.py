"""generator.evaluate.productwrites: the products a build stores are written by a helper
process when there are many; what a reader finds afterwards is what storing them here finds,
a helper that dies or cannot start costs only misses (or the build writes), and the helper of
a build that is gone stops and removes nothing."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import generator.cachewriter as cachewriter
import generator.evaluate.productwrites as writes
from generator.cacheauth import CacheAuth
from generator.evaluate.products import PointerProduct, RecipeProduct, StoredKind, StoredOutcome
from generator.evaluate.productstore import ProductStore
from generator.forkedcall import can_fork
from generator.model import VerifyExit
from tests._evidence_fakes import identity

AUTH = CacheAuth(b"w" * 40)
SIGNER = identity("acme")
MANY = writes.MIN_HANDED + 6

SLOW_HELPER = """
import sys, time
from pathlib import Path
import generator.cachewriter as writer
real = writer.replace_whole
def slow(path, data, **kw):
    time.sleep(0.01)
    real(path, data, **kw)
writer.replace_whole = slow
writer.serve(Path(sys.argv[1]), sys.stdin.buffer, int(sys.argv[2]))
"""


def _slow_command(folder: Path) -> list[str]:
    return [sys.executable, "-c", SLOW_HELPER, str(folder), str(os.getpid())]


def _product(n: int) -> RecipeProduct:
    path = f"evidence/r{n}/s/sha256-{n:064x}.yaml"
    pointer = PointerProduct(
        path=path,
        outcome=StoredOutcome(StoredKind.VERIFIED, VerifyExit.VALID, SIGNER),
        document={"path": path, "n": n, "text": "x" * (n % 7)},
        entry=None,
    )
    return RecipeProduct(f"{n:064x}", ((SIGNER, "mark"),), (pointer,))


def _files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir())} if root.exists() else {}


def _never(signer: Any) -> Any:
    raise AssertionError("no board entry to classify")


@pytest.fixture(autouse=True)
def _no_helper_left() -> Any:
    yield
    writes.finish_writing()


def test_many_products_are_written_by_a_helper_as_this_process_writes_them(
    tmp_path: Path,
) -> None:
    products = [_product(n) for n in range(MANY)]
    here = ProductStore(tmp_path / "here", AUTH)
    writes._store_here(here, products, [p.key for p in products])

    handed = ProductStore(tmp_path / "handed", AUTH)
    writes.store_products(handed, products, [p.key for p in products])
    assert len(writes._WRITING) == 1  # a helper writes them
    writes.finish_writing()
    assert not writes._WRITING
    assert _files(tmp_path / "handed") == _files(tmp_path / "here")
    assert len(_files(tmp_path / "handed")) == 2 * MANY
    assert handed.load(products[3].key, _never) == products[3]


def test_the_helper_lets_go_of_the_products_the_tree_no_longer_has(tmp_path: Path) -> None:
    store = ProductStore(tmp_path, AUTH)
    gone = _product(10_000)
    store.store(gone)
    products = [_product(n) for n in range(MANY)]
    writes.store_products(store, products, [p.key for p in products])
    writes.finish_writing()
    assert store.load(gone.key, _never) is None
    assert not any(name.startswith(gone.key) for name in _files(tmp_path))
    assert store.load(products[-1].key, _never) == products[-1]


def test_few_products_are_written_here(tmp_path: Path) -> None:
    products = [_product(n) for n in range(writes.MIN_HANDED - 1)]
    store = ProductStore(tmp_path, AUTH)
    writes.store_products(store, products, [p.key for p in products])
    assert not writes._WRITING
    assert store.load(products[0].key, _never) == products[0]


def test_a_helper_that_cannot_start_leaves_the_writing_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cachewriter, "helper_command", lambda folder: [str(tmp_path / "none")])
    products = [_product(n) for n in range(MANY)]
    store = ProductStore(tmp_path / "store", AUTH)
    writes.store_products(store, products, [p.key for p in products])
    assert not writes._WRITING
    assert store.load(products[5].key, _never) == products[5]


def test_what_a_helper_gone_meanwhile_did_not_take_is_written_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper that exits at once (here: one that reads nothing): the build finds its pipe
    closed and stores every product itself."""
    monkeypatch.setattr(
        cachewriter, "helper_command", lambda folder: [sys.executable, "-c", "pass"]
    )
    products = [_product(n) for n in range(MANY)]
    big = [RecipeProduct(p.key, p.signers, p.pointers * 40) for p in products]  # fills the pipe
    store = ProductStore(tmp_path, AUTH)
    writes.store_products(store, big, [p.key for p in big])
    assert not writes._WRITING
    assert all(store.load(p.key, _never) == p for p in big)


def test_a_helper_killed_while_writing_costs_misses_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed halfway, the helper leaves each product whole or absent: every load is the
    product or a miss, never an error or another product."""
    monkeypatch.setattr(cachewriter, "helper_command", _slow_command)
    products = [_product(n) for n in range(MANY)]
    store = ProductStore(tmp_path, AUTH)
    writes.store_products(store, products, [p.key for p in products])
    helper = writes._WRITING[0]
    deadline = time.monotonic() + 30
    while len(_files(tmp_path)) < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(helper.pid, signal.SIGKILL)
    writes.finish_writing()  # returns: a dead helper is no error
    found = [store.load(p.key, _never) for p in products]
    assert any(f is None for f in found)
    assert any(f is not None for f in found)
    assert all(f is None or f == p for f, p in zip(found, products, strict=True))


def test_a_plan_waits_for_the_products_being_written_before_it_reads_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.evaluate import perrecipe

    waited: list[bool] = []
    monkeypatch.setattr(perrecipe, "finish_writing", lambda: waited.append(True))
    options: Any = type("Options", (), {"tree": type("Tree", (), {"recipes": tmp_path})()})()
    monkeypatch.setattr(perrecipe, "_common_digest", lambda *args: "c" * 64)
    perrecipe.RecipePlan.make(
        options,
        [],
        allowlist=None,  # type: ignore[arg-type]
        trust_digest="t",
        policy="p",
        store_root=tmp_path / "recipes",
        digests={},
        auth=AUTH,
    )
    assert waited == [True]


def _build_killed_while_its_helper_writes(root: str) -> None:
    """A build process that hands its products to a slow helper and is gone at once."""
    cachewriter.helper_command = _slow_command  # type: ignore[assignment]
    products = [_product(n) for n in range(MANY)]
    writes.store_products(ProductStore(Path(root), AUTH), products, [p.key for p in products])
    os._exit(0)  # killed: no wait for the helper


@pytest.mark.skipif(not can_fork(), reason="no fork on this platform")
def test_the_helper_of_a_killed_build_stops_writing_and_removes_nothing(tmp_path: Path) -> None:
    """A build killed while its helper writes may be followed by another build on the same
    cache: the orphan must not go on removing products the new build stores (its
    `keep_only` names only the old tree's)."""
    import multiprocessing

    store = ProductStore(tmp_path, AUTH)
    newer = _product(40_000)
    store.store(newer)
    build = multiprocessing.get_context("fork").Process(
        target=_build_killed_while_its_helper_writes, args=(str(tmp_path),)
    )
    build.start()
    build.join()
    settled, seen = 0, -1
    while settled < 10:  # until the orphan wrote nothing for half a second
        time.sleep(0.05)
        count = len(_files(tmp_path))
        settled, seen = (settled + 1, count) if count == seen else (0, count)
    assert store.load(newer.key, _never) == newer  # not removed by the orphan
    assert len(_files(tmp_path)) < 2 * (MANY + 1)  # it stopped early


def test_a_helper_that_takes_nothing_is_stopped_and_the_build_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper stuck before reading (here: one that only sleeps) cannot hold the build: once
    the pipe is full and stays so for the patience, the build stops it and stores itself."""
    monkeypatch.setattr(
        cachewriter,
        "helper_command",
        lambda folder: [sys.executable, "-c", "import time; time.sleep(120)"],
    )
    monkeypatch.setattr(cachewriter, "SEND_PATIENCE_S", 0.3)
    products = [_product(n) for n in range(MANY)]
    big = [RecipeProduct(p.key, p.signers, p.pointers * 40) for p in products]  # fills the pipe
    store = ProductStore(tmp_path, AUTH)
    started = time.monotonic()
    writes.store_products(store, big, [p.key for p in big])
    assert time.monotonic() - started < 30
    assert not writes._WRITING
    assert all(store.load(p.key, _never) == p for p in big)
