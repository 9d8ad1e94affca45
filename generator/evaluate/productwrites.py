"""The recipe products a build stores, written by a helper process while the build goes on.

Storing the products of a tree is serializing, sealing and writing two files per recipe: about
three seconds at 10,000 attestations, half of it writing. With enough products, the build
serializes and seals each and hands its files to a helper (`generator.cachewriter`), which
writes them on the other core (idle by then: the verification workers are done), then
removes the products of recipes the tree no longer has, while the build goes on with the
board, the data and the site. `finish_writing` waits for it: the build does before it ends,
and a plan does before it reads products (`RecipePlan.make`). A helper that fails or is
killed only costs the next build: each product's files are written whole and renamed into
place, and one missing or cut short is a miss then (`ProductStore.load`); when the helper is
gone before it took them all, the build stores them all itself. Products stored again over their own
file of entries (a signer renamed) are stored by the build: their new text is appended.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.cachewriter import CacheWriter
from generator.evaluate.products import RecipeProduct
from generator.evaluate.productstore import ProductStore

__all__ = ["MIN_HANDED", "finish_writing", "store_products"]

MIN_HANDED = 64
"""Fewer products than this are written by the build: starting a helper costs more."""

_WRITING: list[CacheWriter] = []
"""The helpers writing this process's products (`finish_writing` waits for them)."""


def store_products(store: ProductStore, products: Sequence[RecipeProduct], keep: list[str]) -> None:
    """Store `products`, then remove every stored product but those of `keep`: their files
    written by a helper when worthwhile, else here and now."""
    writer = CacheWriter.start(store.root) if len(products) >= MIN_HANDED else None
    if writer is None:
        _store_here(store, products, keep)
        return
    for product in products:
        if not _hand(writer, store, product):
            writer.abandon()  # gone: what it took but did not write is lost with it
            _store_here(store, products, keep)
            return
    if not writer.keep_only(store.kept_names(keep)):
        writer.abandon()
        store.keep_only(keep)
        return
    _WRITING.append(writer)


def _hand(writer: CacheWriter, store: ProductStore, product: RecipeProduct) -> bool:
    """Hand `product`'s files to `writer` (its JSON part removed first: a reader meanwhile
    finds no product), or store it here when it is not stored afresh; False when the
    writer is gone."""
    files = store.fresh_files(product)
    if files is None:
        store.store(product)
        return True
    first, sealed = files
    return writer.remove(sealed[0]) and writer.write(*first) and writer.write(*sealed)


def _store_here(store: ProductStore, products: Sequence[RecipeProduct], keep: list[str]) -> None:
    for product in products:
        store.store(product)
    store.keep_only(keep)


def finish_writing() -> None:
    """Wait until every product a helper of this process writes is written (or it failed)."""
    while _WRITING:
        _WRITING.pop().finish()
