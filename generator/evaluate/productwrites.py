"""The recipe products a build stores, written by a forked child while the build goes on.

Storing the products of a tree is serializing, sealing and writing two files per recipe: about
a second at 10,000 attestations, on the build's one core while the other is idle (the
verification workers are done by then). With enough products, and where a child forks sound
(`generator.forkedcall.fork_is_safe`), a forked child stores them and removes the products of
recipes the tree no longer has, while the build goes on with the board, the data and the site.
`finish_writing` waits for it: the build does before it ends, and a plan does before it reads
products (`RecipePlan.make`). A child that fails or is killed only costs the next build: each
product is written whole and renamed into place, and one missing or cut short is a miss then
(`ProductStore.load`); a child whose build is gone (killed) stops, and removes nothing.
Products stored again over their own file of entries (a signer renamed) are never handed to
a child: this build still reads entries' text from that file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from generator.evaluate.products import RecipeProduct
from generator.evaluate.productstore import ProductStore
from generator.forkedcall import ForkedCall, start_forked

__all__ = ["MIN_FORKED", "finish_writing", "store_products"]

MIN_FORKED = 64
"""Fewer products than this are stored in this process: forking a big process costs more."""

_WRITING: list[ForkedCall] = []
"""The children storing this process's products (`finish_writing` waits for them)."""


def store_products(store: ProductStore, products: Sequence[RecipeProduct], keep: list[str]) -> None:
    """Store `products`, then remove every stored product but those of `keep`: in a forked
    child when worthwhile and sound, else here and now."""
    if len(products) >= MIN_FORKED:
        child = start_forked(_store_all, (store, tuple(products), tuple(keep), os.getpid()))
        if child is not None:
            _WRITING.append(child)
            return
    _store_all(store, products, keep)


def _store_all(
    store: ProductStore,
    products: Sequence[RecipeProduct],
    keep: Sequence[str],
    build: int | None = None,
) -> bool:
    """Store `products`, then remove the others but `keep`. In a child (`build`: the pid of
    the build that forked it), only while that build runs: a build killed meanwhile may be
    followed by another on the same cache, whose products this one's `keep` does not name."""

    def orphaned() -> bool:
        return build is not None and os.getppid() != build

    for product in products:
        if orphaned():
            return False
        store.store(product)
    if orphaned():
        return False
    store.keep_only(keep)
    return True


def finish_writing() -> None:
    """Wait until every product a child of this process stores is written (or it failed)."""
    while _WRITING:
        _WRITING.pop().result(max_bytes=64)
