"""The verdict cache's kept index: where each key's latest entry is, so a build does not read
every pack's header to find the few verdicts it needs.

A cache of 10,000 verdicts is hundreds of packs (each batch of a worker writes one); reading
all their headers cost a one-pointer build about 0.05 s, to look up ten keys. The index
`generator.verify.cache` builds from the headers is kept, sealed, in `pack-index.json` beside
`packs/`, with the names of the packs it covers in name order. It is used only while those
names are exactly the first names of the folder's listing (packs are never changed or
removed, and a new pack's name sorts after the old ones, as it starts with its writing time);
then only the headers of the packs written since are read. Anything else (a pack gone, one
sorting among the covered, an index that does not check or does not parse) and every header
is read, as without it.

The index only says where to look: each entry is checked against its own tag and must name
the key it was looked up by, so an index that pointed elsewhere could only make a miss.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from generator.cacheauth import CacheAuth, Purpose, read_cache_file

__all__ = ["INDEX_NAME", "KEEP_AFTER", "keep_index", "kept_index"]

INDEX_NAME = "pack-index.json"
INDEX_VERSION = "verdict-pack-index/v2"
KEEP_AFTER = 8
"""The index is kept again when at least this many packs were not covered by the kept one."""
MAX_INDEX_BYTES = 256 << 20
"""A kept index larger than this is not read (about 90 bytes per verdict)."""


def kept_index(
    root: Path, auth: CacheAuth, names: list[str], packs: str
) -> tuple[int, dict[str, tuple[str, int]]]:
    """How many of `names` (the packs folder's listing, sorted) the kept index covers, and
    where it says each key's latest entry is (pack path under `packs`, entry number); (0, {})
    when there is no kept index that can be used."""
    stored = read_cache_file(root / INDEX_NAME, MAX_INDEX_BYTES)
    if stored is None:
        return 0, {}
    data = auth.open(Purpose.VERDICT_INDEX, stored, INDEX_NAME.encode(), f"verdict {INDEX_NAME}")
    if data is None:
        return 0, {}
    try:
        doc: Any = orjson.loads(data)
        covered = doc["packs"]
        if doc["v"] != INDEX_VERSION or covered != names[: len(covered)]:
            return 0, {}
        paths = [f"{packs}/{name}" for name in covered]
        # Not checked one by one: a key is only ever looked up as 64 hex digits, and the
        # cache reads an entry number only as what it is (`VerdictCache._entry`).
        found = {key: (paths[pack], n) for key, (pack, n) in doc["entries"].items()}
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return 0, {}
    return len(covered), found


def keep_index(
    root: Path,
    auth: CacheAuth,
    names: list[str],
    by_key: Mapping[str, tuple[str, int]],
    packs: str,
) -> None:
    """Keep `by_key` (read from the headers of exactly the packs `names`, under `packs`) as
    the index of those packs. A cache that cannot be written only costs speed."""
    number = {f"{packs}/{name}": i for i, name in enumerate(names)}
    try:
        entries = {key: [number[path], n] for key, (path, n) in by_key.items()}
        doc = {"v": INDEX_VERSION, "packs": names, "entries": entries}
        auth.write_sealed(
            root / INDEX_NAME, Purpose.VERDICT_INDEX, orjson.dumps(doc), INDEX_NAME.encode()
        )
    except (KeyError, OSError):
        pass
