"""Rows of the Markdown pages, rendered once per recipe and kept between builds.

The overview and the source pages hold a row (or a few) for every recipe they list; a change to
one recipe used to render all of them again. A template marks such a row with
`{% cached recipe, part, ... %}...{% endcached %}` (`CachedRows`), and `RowCache` answers it
from the rows the last build kept, under a key made of the recipe's page key (which covers the
recipe's own documents, everything every page reads, the templates and the page code:
`generator.site.recipepages.page_keys`; the pages read the build information without the
commit, `SiteModel.for_bodies`), the page the row is on and the row's own parts. A row
therefore reads nothing but those: the recipe's documents, the shared context, the page and the
parts its tag names. Rows come back from the page cache (sealed, `PageCache.get_rows`), so a row
that is not this build's to reuse is never found; a template rendered without a `RowCache`
renders every row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from jinja2 import nodes
from jinja2.ext import Extension
from markupsafe import Markup

__all__ = ["ROW_CACHE_NAME", "CachedRows", "RowCache"]

ROW_CACHE_NAME = "_row_cache"
"""The template variable a `RowCache` is handed in (`render(..., _row_cache=rows)`)."""


def _key_text(value: list[Any]) -> bytes:
    """The JSON of a row's key parts; text orjson refuses (a lone surrogate) goes through
    `json`, marked so that the two can never give the same bytes."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return b"\0" + json.dumps(value).encode("ascii")


class RowCache:
    """The rows one build renders, found among `stored` (the last build's) by key.

    `recipe_keys` maps each recipe to its page key; a row of a recipe without one is rendered
    and not kept."""

    def __init__(self, recipe_keys: Mapping[str, str], stored: Mapping[str, str] | None) -> None:
        self._recipe_keys = recipe_keys
        self._stored = stored or {}
        self._used: dict[str, str] = {}
        self.rendered = 0

    def row(self, page: str, recipe: str, parts: tuple[Any, ...], render: Callable[[], str]) -> str:
        """The row of `recipe` on `page` with `parts`: kept, or rendered by `render` now."""
        recipe_key = self._recipe_keys.get(recipe)
        if recipe_key is None:
            self.rendered += 1
            return render()
        key = hashlib.sha256(_key_text([recipe_key, page, [str(p) for p in parts]])).hexdigest()
        text = self._used.get(key)
        if text is None:
            text = self._stored.get(key)
            if text is None:
                text = str(render())
                self.rendered += 1
            self._used[key] = text
        return text

    def used(self) -> dict[str, str]:
        """The rows this build used, by key (what the next build may reuse)."""
        return dict(self._used)

    @property
    def changed(self) -> bool:
        """Whether the rows to keep differ from the stored ones."""
        return self.rendered > 0 or len(self._used) != len(self._stored)


class CachedRows(Extension):
    """`{% cached recipe, part, ... %}body{% endcached %}`: the body, rendered or kept
    (`RowCache.row`) for the current `page`. Without a `RowCache` the body is rendered."""

    tags = {"cached"}  # noqa: RUF012 - Jinja's own class attribute

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        args = [parser.parse_expression()]
        while parser.stream.skip_if("comma"):
            args.append(parser.parse_expression())
        body = parser.parse_statements(("name:endcached",), drop_needle=True)
        call = self.call_method(
            "_row", [nodes.Name(ROW_CACHE_NAME, "load"), nodes.Name("page", "load"), *args]
        )
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    @staticmethod
    def _row(rows: Any, page: Any, recipe: Any, *parts: Any, caller: Callable[[], str]) -> str:
        if not isinstance(rows, RowCache):
            return caller()
        return Markup(rows.row(str(page), str(recipe), parts, caller))
