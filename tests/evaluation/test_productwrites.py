"""generator.evaluate.productwrites: the products a build stores are written by a forked child
when there are many; what a reader finds afterwards is what storing them here finds, a child
that dies costs only misses, and no child is forked while another thread runs."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import generator.evaluate.productwrites as writes
import generator.forkedcall as forkedcall
from generator.cacheauth import CacheAuth
from generator.evaluate.products import PointerProduct, RecipeProduct, StoredKind, StoredOutcome
from generator.evaluate.productstore import ProductStore
from generator.forkedcall import can_fork
from generator.model import VerifyExit
from tests._evidence_fakes import identity

AUTH = CacheAuth(b"w" * 40)
SIGNER = identity("acme")
MANY = writes.MIN_FORKED + 6

needs_fork = pytest.mark.skipif(not can_fork(), reason="no fork on this platform")


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
def _no_child_left() -> Any:
    yield
    writes.finish_writing()


@needs_fork
def test_many_products_are_written_by_a_child_as_this_process_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    products = [_product(n) for n in range(MANY)]
    here = ProductStore(tmp_path / "here", AUTH)
    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: False)
    writes.store_products(here, products, [p.key for p in products])
    assert not writes._WRITING

    forked = ProductStore(tmp_path / "forked", AUTH)
    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)
    writes.store_products(forked, products, [p.key for p in products])
    assert len(writes._WRITING) == 1  # a child writes them
    writes.finish_writing()
    assert not writes._WRITING
    assert _files(tmp_path / "forked") == _files(tmp_path / "here")
    assert len(_files(tmp_path / "forked")) == 2 * MANY
    assert forked.load(products[3].key, _never) == products[3]


@needs_fork
def test_the_child_lets_go_of_the_products_the_tree_no_longer_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ProductStore(tmp_path, AUTH)
    gone = _product(10_000)
    store.store(gone)
    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)
    products = [_product(n) for n in range(MANY)]
    writes.store_products(store, products, [p.key for p in products])
    writes.finish_writing()
    assert store.load(gone.key, _never) is None
    assert not any(name.startswith(gone.key) for name in _files(tmp_path))


def test_few_products_are_written_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)
    products = [_product(n) for n in range(writes.MIN_FORKED - 1)]
    store = ProductStore(tmp_path, AUTH)
    writes.store_products(store, products, [p.key for p in products])
    assert not writes._WRITING
    assert store.load(products[0].key, _never) == products[0]


def test_no_child_while_another_thread_runs(tmp_path: Path) -> None:
    """A child forked beside a running thread inherits the locks that thread holds."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        products = [_product(n) for n in range(MANY)]
        store = ProductStore(tmp_path, AUTH)
        writes.store_products(store, products, [p.key for p in products])
        assert not writes._WRITING
        assert store.load(products[-1].key, _never) == products[-1]
    finally:
        stop.set()
        other.join()


def test_a_child_that_cannot_be_forked_leaves_the_writing_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_process(*args: Any) -> Any:
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)
    monkeypatch.setattr(forkedcall, "ForkedCall", no_process)
    products = [_product(n) for n in range(MANY)]
    store = ProductStore(tmp_path, AUTH)
    writes.store_products(store, products, [p.key for p in products])
    assert store.load(products[5].key, _never) == products[5]


@needs_fork
def test_a_child_killed_while_writing_costs_misses_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed halfway, the child leaves each product whole or absent: every load is the
    product or a miss, never an error or another product."""
    real_store = ProductStore.store

    def slow_store(self: ProductStore, product: RecipeProduct) -> None:
        real_store(self, product)
        time.sleep(0.02)

    monkeypatch.setattr(ProductStore, "store", slow_store)
    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)
    products = [_product(n) for n in range(MANY)]
    store = ProductStore(tmp_path, AUTH)
    writes.store_products(store, products, [p.key for p in products])
    child = writes._WRITING[0]
    deadline = time.monotonic() + 30
    while len(_files(tmp_path)) < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    writes.finish_writing()  # returns: a dead child is no error
    found = [store.load(p.key, _never) for p in products]
    assert any(f is None for f in found)
    assert any(f is not None for f in found)
    assert all(f is None or f == p for f, p in zip(found, products, strict=True))


@needs_fork
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


def test_a_child_whose_build_is_gone_stops_and_removes_nothing(tmp_path: Path) -> None:
    """A build killed while its child writes may be followed by another build on the same
    cache: the orphan must not go on removing products the new build stores (its `keep` names
    only the old tree's)."""
    store = ProductStore(tmp_path, AUTH)
    newer = _product(20_000)
    store.store(newer)  # what a later build stored meanwhile
    before = _files(tmp_path)
    products = [_product(n) for n in range(3)]
    gone_build = os.getppid() + 1_000_000  # not this process's parent: its build is gone
    assert writes._store_all(store, products, [p.key for p in products], gone_build) is False
    assert _files(tmp_path) == before
    assert store.load(newer.key, _never) == newer


def test_a_child_of_a_running_build_stores_and_removes(tmp_path: Path) -> None:
    store = ProductStore(tmp_path, AUTH)
    old = _product(30_000)
    store.store(old)
    products = [_product(n) for n in range(3)]
    keep = [p.key for p in products]
    assert writes._store_all(store, products, keep, os.getppid()) is True
    assert store.load(old.key, _never) is None
    assert store.load(products[1].key, _never) == products[1]


def _build_killed_while_its_child_writes(root: str) -> None:
    """A build process that hands its products to a child and is gone at once."""
    real_store = ProductStore.store

    def slow_store(self: ProductStore, product: RecipeProduct) -> None:
        real_store(self, product)
        time.sleep(0.05)

    ProductStore.store = slow_store  # type: ignore[method-assign]
    forkedcall.fork_is_safe = lambda: True  # type: ignore[assignment]
    products = [_product(n) for n in range(MANY)]
    writes.store_products(ProductStore(Path(root), AUTH), products, [p.key for p in products])
    os._exit(0)  # killed: no wait for the child


@needs_fork
def test_the_child_of_a_killed_build_stops_writing_and_removes_nothing(tmp_path: Path) -> None:
    import multiprocessing

    store = ProductStore(tmp_path, AUTH)
    newer = _product(40_000)
    store.store(newer)
    build = multiprocessing.get_context("fork").Process(
        target=_build_killed_while_its_child_writes, args=(str(tmp_path),)
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
