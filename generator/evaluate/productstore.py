"""Where the recipe products (`generator.evaluate.products`) are kept between builds.

Products are stored one file per key under `<cache>/recipes/`, sealed with an HMAC tag
(`generator.cacheauth`, purpose `recipe`) bound to the key, so an authentic product cannot stand
in for another. Every byte read back is hostile until checked: a file that is a link or not a
regular file, larger than `MAX_PRODUCT_BYTES`, whose tag does not check or whose content is not
exactly the expected shape (`product_from_bytes`) is a miss, and its recipe is evaluated again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from generator.cacheauth import CacheAuth, Purpose, read_cache_file
from generator.evaluate.products import (
    ProductFormatError,
    RecipeProduct,
    product_bytes,
    product_from_bytes,
)
from generator.model import Classification, SignerIdentity

__all__ = ["MAX_PRODUCT_BYTES", "ProductStore"]

MAX_PRODUCT_BYTES = 64 << 20
"""A product file larger than this is not read (a recipe's product is a few MB at most)."""


class ProductStore:
    """The recipe products under `<cache>/recipes/`, one sealed file per key."""

    def __init__(self, root: Path, auth: CacheAuth) -> None:
        self.root = root
        self.auth = auth

    def _file(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a product key: {key!r}")
        return self.root / f"{key}.json"

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
            return product_from_bytes(body, key, classify)
        except (ProductFormatError, ValueError):
            return None

    def store(self, product: RecipeProduct) -> None:
        """Keep `product` (written whole, then renamed into place); failures only cost the
        next build."""
        try:
            body = product_bytes(product)
            self.auth.write_sealed(
                self._file(product.key), Purpose.RECIPE, body, product.key.encode()
            )
        except (OSError, ValueError, TypeError):
            pass

    def keep_only(self, keys: Iterable[str]) -> None:
        """Remove every stored product but those of `keys` (the current build's)."""
        wanted = {f"{key}.json" for key in keys}
        try:
            with os.scandir(self.root) as entries:
                names = [e.name for e in entries]
        except OSError:
            return
        for name in names:
            if name not in wanted:
                with contextlib.suppress(OSError):
                    os.unlink(self.root / name)
