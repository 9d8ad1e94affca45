"""Where the board's tabs are kept between builds (`generator.corroborate.TabLookup`).

A one-change build at 10,000 attestations reuses almost every recipe's product, yet making
each recipe's tab again (its grids and series) and then its documents (`data/index.json`'s
tab, `data/series/<recipe>.json`) cost most of a second, and their digests for the page keys
a tenth more. A tab's documents depend only on:

- its coordinate and the runs the board counts there, in board order: each named by the
  pointer it came from, the key of the recipe product that pointer belongs to and how its
  signer is classified (`generator.evaluate.perrecipe`: a product's key and its signers'
  classifications name every input its entries depend on, and its entries are only ever what
  evaluating those inputs makes);
- the organisation each run's signer counts for (from the allowlist's labels, which the
  product keys leave out);
- the count limits and the code (`generator.buildmemo.code_digest`).

The key of a tab is a sha256 over these; a run from a pointer whose recipe is neither reused
nor stored this build (a verdict that was not definite) has no name, and its tab is made and
not kept. A tab is kept in two files under `<cache>/tabs/`: `<key>.tab`, sealed with an HMAC
tag (`generator.cacheauth`, purpose `tab`) bound to its key, holds a JSON head line (the
fields read of every tab without parsing it, all but its grids and series; the signers its
series has builds for; the checks of its combined grid, `generator.data.views.tab_checks`;
its `Omitted` counts; the size and sha256 of its tab document's text) and then the series
document's `subtree_layout` text; `<key>.tablayout` holds the tab document's text (tens of
KB a recipe, about 90 MB at 10,000 attestations), which the build itself never reads: the
data helper writes data/index.json from it and checks it against its sha256
(`generator.data.spool`), and the page keys take that sha256. Every byte read back is hostile
until checked: a file that is a link or not a regular file, larger than its limit, whose tag
does not check, or not exactly that shape, or a text file of another size than the head
names, is a miss and the tab is made again; a text of that size whose sha256 differs is found
when it is read (`generator.data.laidout.LayoutFile`), removed, and the build evaluates again
once (`generator.build`). A kept document is a `LaidOutEntry`: a page that needs its grids
parses its text.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from generator.buildmemo import code_digest
from generator.cacheauth import (
    CacheAuth,
    Purpose,
    cache_file_size,
    keep_only_entries,
    keyed_entry,
    read_cache_file,
)
from generator.corroborate import Board, KeptDocs, Omitted, Tab
from generator.data.gojson import orjson_layout
from generator.data.gonumbers import STEPS, number_steps
from generator.data.laidout import LaidOutEntry, LayoutFile, Span
from generator.data.views import tab_checks
from generator.evaluate.products import classification_mark
from generator.model import Classification, Run
from generator.wholefile import write_whole

__all__ = [
    "MAX_TAB_BYTES",
    "TAB_SUFFIX",
    "TEXT_SUFFIX",
    "TabStore",
    "finish_storing",
    "release_made",
]

TAB_VERSION = "tabs/v1"
"""Changes whenever what a kept tab holds changes."""
MAX_TAB_BYTES = 64 << 20
"""A kept tab larger than this is not read (a recipe's documents are a few MB at most)."""
TAB_SUFFIX = ".tab"
TEXT_SUFFIX = ".tablayout"
"""The file of a kept tab document's text: `<key>.tablayout`."""

_WHOLE_TAB = frozenset({"combined", "versions"})
"""The fields of a tab's document read only by parsing its text (its grids)."""
_WHOLE_SERIES = frozenset({"builds", "health", "rows"})
"""The fields of a series document read only by parsing its text, but for `builds`' keys."""
_SERIES_PARTS = frozenset({"builds"})
_OMITTED = ("unlisted_signers", "unlisted_runs", "versions", "history_runs", "history_rows")


_WRITING: list[threading.Thread] = []
"""The threads writing this process's kept tabs (`finish_storing` waits for them)."""


def finish_storing() -> None:
    """Wait until every kept tab `TabStore.store` handed to a thread is written."""
    while _WRITING:
        _WRITING.pop().join()


class TabStore:
    """The kept tabs under `<cache>/tabs/`, one sealed file per key. `products` maps the
    path of each pointer whose entry is determined by a recipe product's key (reused, or
    stored this build) to that key. Every key asked for a kept tab and every tab stored is
    remembered; `store` removes the rest."""

    def __init__(self, root: Path, auth: CacheAuth, products: Mapping[str, str]) -> None:
        self.root = root
        self.auth = auth
        self.products = products
        self._common = hashlib.sha256(f"{TAB_VERSION}\0{code_digest()}".encode()).hexdigest()
        self._used: set[str] = set()
        self._marks: dict[Classification, str] = {}

    def _file(self, key: str, suffix: str = TAB_SUFFIX) -> Path:
        return keyed_entry(self.root, key, suffix, "tab")

    def key(
        self,
        path: str,
        runs: Sequence[Run],
        origins: Sequence[str],
        orgs: Sequence[str],
        limits: str,
    ) -> str | None:
        products = [self.products.get(origin) for origin in origins]
        if not origins or None in products or not len(runs) == len(orgs) == len(origins):
            return None
        marks = [self._mark(run.classification) for run in runs]
        try:
            text = orjson.dumps(
                [self._common, limits, path, list(origins), products, marks, list(orgs)]
            )
        except TypeError:  # text orjson refuses (a lone surrogate): not named, not kept
            return None
        return hashlib.sha256(text).hexdigest()

    def _mark(self, classification: Classification) -> str:
        """`classification_mark`, worked out once per classification (a tree has a few)."""
        mark = self._marks.get(classification)
        if mark is None:
            mark = self._marks[classification] = classification_mark(classification)
        return mark

    def kept(self, key: str) -> KeptDocs | None:
        """The documents kept under `key`, or None (absent, unreadable, too large, failing its
        tag, or malformed): never an error."""
        stored = read_cache_file(self._file(key), MAX_TAB_BYTES)
        if stored is None:
            return None
        body = self.auth.open(Purpose.TAB, stored, key.encode(), f"tab {key}")
        if body is None:
            return None
        try:
            docs = _kept_docs(body, self._file(key, TEXT_SUFFIX))
        except (ValueError, TypeError, KeyError, AttributeError, orjson.JSONDecodeError):
            return None
        self._used.add(key)
        return docs

    def store(self, board: Board, documents: Mapping[str, Any]) -> None:
        """Keep the documents of every tab `board` made and keyed (`Board.tab_keys`), written
        on a thread (`finish_storing` waits for it), which then removes every kept tab this
        build neither read nor stored; failures only cost the next build. Each made tab's documents in `documents` are replaced by
        `LaidOutEntry.made` of themselves: their text, laid out once here, is what the data
        files are written from and the page keys hash (the same content, read as before)."""
        places = _tab_places(documents.get("index") or {})
        series = documents.get("series") or {}
        writes: list[tuple[str, bytes, bytes]] = []
        for tab in board.made_tabs():
            place, made = places.get(tab.recipe), series.get(tab.recipe)
            if place is None or type(place[0][place[1]]) is not dict or type(made) is not dict:
                continue
            try:
                laid = _laid_out(place[0][place[1]], made)
            except TypeError:  # what orjson does not write: left as it is, not kept
                continue
            place[0][place[1]] = laid.doc
            series[tab.recipe] = laid.series
            key = board.tab_keys.get(tab.recipe)
            if key is not None:
                with contextlib.suppress(TypeError):  # a head orjson refuses: not kept
                    writes.append((key, laid.doc.layout, _kept_bytes(tab, laid)))
                    self._used.add(key)
        # file-system work, which lets go of the interpreter: on a thread of its own, then
        # every tab this build did not use is removed
        thread = threading.Thread(target=self._write, args=(writes,), daemon=True)
        thread.start()
        _WRITING.append(thread)

    def _write(self, writes: list[tuple[str, bytes, bytes]]) -> None:
        writes.reverse()
        while writes:  # each tab's text let go once written (a hundred MB at 10,000)
            key, text, body = writes.pop()
            with contextlib.suppress(OSError, ValueError, TypeError):
                write_whole(self._file(key, TEXT_SUFFIX), text)
                self.auth.write_sealed(self._file(key), Purpose.TAB, body, key.encode())
        self.keep_only(self._used)

    def keep_only(self, keys: Iterable[str]) -> None:
        """Remove every kept tab but those of `keys`."""
        wanted = {f"{key}{suffix}" for key in keys for suffix in (TAB_SUFFIX, TEXT_SUFFIX)}
        keep_only_entries(self.root, wanted)


def _tab_places(index: Mapping[str, Any]) -> dict[str, tuple[list[Any], int]]:
    """Where each tab document of an index.json document is (its dashboard's list of tabs and
    its place there), by recipe."""
    places: dict[str, tuple[list[Any], int]] = {}
    for group in index.get("groups") or ():
        for dashboard in group.get("dashboards") or ():
            tabs = dashboard.get("tabs")
            if isinstance(tabs, list):
                for n, tab in enumerate(tabs):
                    places[str(tab.get("recipe"))] = (tabs, n)
    return places


def _head(doc: Mapping[str, Any], whole: frozenset[str], parts: frozenset[str]) -> dict[str, Any]:
    """What a `LaidOutEntry` of `doc` reads without parsing (`LaidOutEntry.from_head`)."""
    return {
        "keys": sorted(doc),
        "known": {k: v for k, v in doc.items() if k not in whole},
        "parts": {
            name: {"keys": sorted(doc[name]), "known": {}}
            for name in sorted(parts)
            if isinstance(doc.get(name), Mapping)
        },
    }


class _Laid(NamedTuple):
    """A made tab's two documents, each laid out once (`LaidOutEntry.made`)."""

    doc: LaidOutEntry
    series: LaidOutEntry


def _laid_out(doc: dict[str, Any], series: dict[str, Any]) -> _Laid:
    """A made tab's documents laid out once (TypeError for what orjson does not write)."""
    text, series_layout = orjson_layout(doc), orjson_layout(series)
    laid_doc = LaidOutEntry.made(doc, text, relayout=orjson_layout)
    laid_doc.derived = {"checks": tab_checks(doc)}
    steps = number_steps(series_layout)
    laid_series = LaidOutEntry.made(series, series_layout, steps, relayout=orjson_layout)
    return _Laid(laid_doc, laid_series)


def release_made(documents: Mapping[str, Any]) -> None:
    """Let go of the text of the tabs laid out in this build (`LaidOutEntry.release`), once
    the data files are written from it."""
    for tab in _tab_places(documents.get("index") or {}).values():
        entry = tab[0][tab[1]]
        if isinstance(entry, LaidOutEntry):
            entry.release()
    for series in (documents.get("series") or {}).values():
        if isinstance(series, LaidOutEntry):
            series.release()


def _kept_bytes(tab: Tab, laid: _Laid) -> bytes:
    """A kept tab's sealed file before its seal: the head line, then the series document's
    layout (the tab document's text is kept beside it)."""
    doc, series = laid
    whole = doc.materialized()
    head = {
        "doc": {
            **_head(whole, _WHOLE_TAB, frozenset()),
            "size": len(doc.layout),
            "sha256": doc.sha256.hex(),
        },
        "series": {
            **_head(series.materialized(), _WHOLE_SERIES, _SERIES_PARTS),
            "steps": series.steps,
        },
        "checks": doc.derived["checks"],
        "omitted": {name: getattr(tab.omitted, name) for name in _OMITTED},
    }
    return orjson.dumps(head) + b"\n" + series.layout


def _kept_docs(body: bytes, text_file: Path) -> KeptDocs:
    """The documents of a kept tab's (authentic) file, its tab document's text in
    `text_file`; ValueError (or TypeError, KeyError) for anything but the shape `_kept_bytes`
    writes, or a text file of another size."""
    line = body.find(b"\n")
    if line < 0:
        raise ValueError("a kept tab without a head line")
    head = orjson.loads(body[:line])
    if type(head) is not dict:
        raise ValueError("a kept tab's head is not an object")
    size, sha256 = head["doc"]["size"], bytes.fromhex(head["doc"]["sha256"])
    if type(size) is not int or not 0 <= size <= MAX_TAB_BYTES or len(sha256) != 32:
        raise ValueError("a kept tab's text is not named by its size and sha256")
    if cache_file_size(text_file) != size:
        raise ValueError("a kept tab's text is not the size its head names")
    span = Span(LayoutFile(text_file, size), 0, size, sha256)
    doc = LaidOutEntry.from_head(span, head["doc"], part_names=frozenset())
    steps = head["series"]["steps"]
    if steps not in STEPS:
        raise ValueError("a kept series' number steps are not known ones")
    series = LaidOutEntry.from_head(
        body[line + 1 :], head["series"], steps, part_names=_SERIES_PARTS
    )
    checks = head["checks"]
    if type(checks) is not dict or not all(type(v) is str for v in checks.values()):
        raise ValueError("a kept tab's checks are not names and states")
    doc.derived = {"checks": checks}
    counts = head["omitted"]
    if type(counts) is not dict or set(counts) != set(_OMITTED):
        raise ValueError("a kept tab's omitted counts are not the expected ones")
    if not all(type(v) is int and v >= 0 for v in counts.values()):
        raise ValueError("a kept tab's omitted counts are not counts")
    return KeptDocs(doc, series, Omitted(**counts))
