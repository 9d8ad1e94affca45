"""Where the recipe products (`generator.evaluate.products`) are kept between builds.

Products are stored two files per key under `<cache>/recipes/`: `<key>.json`, the JSON part,
sealed with an HMAC tag (`generator.cacheauth`, purpose `recipe`) bound to the key, so an
authentic product cannot stand in for another; and `<key>.layouts`, its pointers' entries'
text (each entry's layout, then its text as data/pointers.json holds it), every piece of which
the JSON part names by sha256 (checked when the text is read:
`generator.data.laidout.LayoutFile`, or by the data helper, `generator.data.spool`). A reused
product stored again (a signer renamed) keeps its file's bytes and appends the new text to it
in place (`append_to_cache_file`: only to the regular, unlinked file of the size it was read
at), so the entries of the build that stores it still find their text where it was, and the
file is not written again (written afresh once most of it is text no entry names).
Every byte read back is hostile until checked: a file that is a link or not a regular file,
larger than its limit, whose tag does not check, whose shape is not exactly the expected one
(`product_from_json`), or a file of entries of another size than the product names, is a miss,
and its recipe is evaluated again. A file of entries changed to the same size is found when
an entry's text is read: it is removed and the build starts its evaluation again once
(`generator.build`), with that recipe a miss.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from generator.cacheauth import (
    CacheAuth,
    Purpose,
    cache_file_size,
    keep_only_entries,
    keyed_entry,
    open_cache_entry,
    read_cache_file,
)
from generator.data.laidout import LaidOutEntry, LayoutFile
from generator.evaluate.products import (
    MAX_LAYOUTS_BYTES,
    ProductFormatError,
    RecipeProduct,
    layouts_size,
    product_bytes,
    product_from_json,
)
from generator.model import Classification, SignerIdentity
from generator.wholefile import replace_whole

__all__ = ["LAYOUTS_SUFFIX", "MAX_PRODUCT_BYTES", "ProductStore"]

MAX_PRODUCT_BYTES = 64 << 20
"""A product file larger than this is not read (a recipe's product is a few MB at most)."""
LAYOUTS_SUFFIX = ".layouts"
"""The file of a product's laid-out entries: `<key>.layouts`."""


def _loads(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)  # integers beyond 64 bits; anything else raises again


def _layout_file(path: Path, size: int) -> LayoutFile | None:
    """The file of laid-out entries at `path` when it is a regular file (not through a link)
    of `size` bytes (its content is checked entry by entry when read); None for anything else.
    """
    if size > MAX_LAYOUTS_BYTES or cache_file_size(path) != size:
        return None
    return LayoutFile(path, size)


def append_to_cache_file(path: Path, size: int, data: bytes) -> bool:
    """Append `data` to the cache entry at `path` when it is still a regular file of `size`
    bytes with no other name (`open_cache_entry`: never through a link, never to a FIFO planted
    there; never to a file hard-linked from elsewhere); whether all of `data` was appended. A
    file cut short by a failure is longer than its product names: a miss, never a wrong text."""
    opened = open_cache_entry(path, append=True)
    if opened is None:
        return False
    fd, info = opened
    try:
        if info.st_nlink != 1 or info.st_size != size:
            return False
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _stored_over(product: RecipeProduct, target: Path) -> LayoutFile | None:
    """The file of laid-out entries `product` is stored over, when its entries came from it
    (a reused product stored again): they keep their place, the new text is appended, and the
    entries of this build still read their text where it was."""
    for pointer in product.pointers:
        document = pointer.document
        if isinstance(document, LaidOutEntry) and document.span is not None:
            if document.span.file.path == target:
                return document.span.file
    return None


class ProductStore:
    """The recipe products under `<cache>/recipes/`, one sealed file per key."""

    def __init__(self, root: Path, auth: CacheAuth) -> None:
        self.root = root
        self.auth = auth

    def _file(self, key: str, suffix: str = ".json") -> Path:
        return keyed_entry(self.root, key, suffix, "product")

    def load(
        self, key: str, classify: Callable[[SignerIdentity], Classification]
    ) -> RecipeProduct | None:
        """The product stored under `key`, or None (absent, unreadable, too large, failing
        its tag, or malformed): never an error."""
        stored = read_cache_file(self._file(key), MAX_PRODUCT_BYTES)
        if stored is None:
            return None
        body = self.auth.open(Purpose.RECIPE, stored, key.encode(), f"recipe product {key}")
        if body is None:
            return None
        try:
            doc = _loads(body)
            layouts = _layout_file(self._file(key, LAYOUTS_SUFFIX), layouts_size(doc))
            if layouts is None:
                return None
            return product_from_json(doc, key, classify, layouts)
        except (ProductFormatError, ValueError):
            return None

    def store(self, product: RecipeProduct) -> None:
        """Keep `product` (written whole, then renamed into place, or its new entries' text
        appended to the file it was read from); failures only cost the next build."""
        try:
            target = self._file(product.key, LAYOUTS_SUFFIX)
            kept = _stored_over(product, target)
            body, layouts, appended = product_bytes(product, kept)
            if appended and kept is not None:
                # its file of entries keeps its bytes: the new text is appended in place, never
                # rewritten (a reader in between finds it longer than its product says: a miss)
                if not append_to_cache_file(target, kept.size, layouts):
                    return  # changed, cut short or gone: the product stays as it was
                files = [self._sealed(product, body)]
            else:
                files = [(target.name, layouts), self._sealed(product, body)]
            # a product stored again (a signer renamed) replaces its files, its JSON part
            # removed first: a reader in between finds no product
            with contextlib.suppress(OSError):
                os.unlink(self._file(product.key))
            for name, data in files:
                replace_whole(self.root / name, data)
        except (OSError, ValueError, TypeError):
            pass

    def fresh_files(
        self, product: RecipeProduct
    ) -> tuple[tuple[str, bytes], tuple[str, bytes]] | None:
        """The files `product` is stored in afresh, by name in `root`, in the order they are
        written (its file of entries, then its sealed JSON part, which names that file's size
        and digests): what `store` writes for it. None when it is stored over its own file of
        entries (`store` appends to it) or cannot be written."""
        try:
            target = self._file(product.key, LAYOUTS_SUFFIX)
            if _stored_over(product, target) is not None:
                return None
            body, layouts, _ = product_bytes(product)
        except (OSError, ValueError, TypeError):
            return None
        return (target.name, layouts), self._sealed(product, body)

    def _sealed(self, product: RecipeProduct, body: bytes) -> tuple[str, bytes]:
        """The name and bytes of `product`'s JSON part, `body` sealed."""
        return self._file(product.key).name, self.auth.seal(
            Purpose.RECIPE, body, product.key.encode()
        )

    def kept_names(self, keys: Iterable[str]) -> set[str]:
        """The names of the files of the products of `keys`."""
        return {f"{key}{suffix}" for key in keys for suffix in (".json", LAYOUTS_SUFFIX)}

    def keep_only(self, keys: Iterable[str]) -> None:
        """Remove every stored product but those of `keys` (the current build's)."""
        keep_only_entries(self.root, self.kept_names(keys))
