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
    monkeypatch.setattr(writes, "fork_is_safe", lambda: False)
    writes.store_products(here, products, [p.key for p in products])
    assert not writes._WRITING

    forked = ProductStore(tmp_path / "forked", AUTH)
    monkeypatch.setattr(writes, "fork_is_safe", lambda: True)
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
    monkeypatch.setattr(writes, "fork_is_safe", lambda: True)
    products = [_product(n) for n in range(MANY)]
    writes.store_products(store, products, [p.key for p in products])
    writes.finish_writing()
    assert store.load(gone.key, _never) is None
    assert not any(name.startswith(gone.key) for name in _files(tmp_path))


def test_few_products_are_written_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes, "fork_is_safe", lambda: True)
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

    monkeypatch.setattr(writes, "fork_is_safe", lambda: True)
    monkeypatch.setattr(writes, "ForkedCall", no_process)
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
    monkeypatch.setattr(writes, "fork_is_safe", lambda: True)
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
