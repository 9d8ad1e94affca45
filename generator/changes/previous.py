"""Read the previously published site (`build --previous SITE`): its board and its feed.

SITE is a folder or an https:// address (fetched with `generator.sitefetch`, the bundle
transport's guards and bounds). The board comes from the previous `data/changes.json`
(`board`), or, for a site built before there was one, from its `data/index.json` and
`data/pointers.json`; the history from its `feed.xml`. Everything read is bounded and
checked; whatever cannot be read is a warning (the feed then starts from this build), never
a failure of the build.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator import strictjson
from generator.changes.atom import FeedEntry, FeedLimits, parse_feed
from generator.changes.model import Snapshot, snapshot_from_doc, snapshot_of
from generator.errors import EvidenceDashError
from generator.limits import LISTING_LIMITS
from generator.siteurl import is_site_url

__all__ = ["PreviousSite", "load_previous", "replay_previous"]

log = logging.getLogger(__name__)

MiB = 1024 * 1024
CHANGES_CAP = 64 * MiB
INDEX_CAP = 256 * MiB
POINTERS_CAP = 1024 * MiB
_BIG = replace(
    LISTING_LIMITS, document_bytes=POINTERS_CAP, container_items=5_000_000, total_items=200_000_000
)


@dataclass(frozen=True)
class PreviousSite:
    """What a previous site gave: its board (None: none readable), its feed's entries, and
    warnings for whatever could not be read."""

    site: str | None
    board: Snapshot | None = None
    entries: tuple[FeedEntry, ...] = ()
    warnings: tuple[str, ...] = field(default=())


Reader = Callable[[str, int], bytes | None]
"""Read a site path under a byte cap: its bytes, None when absent; raises on failure."""


def _folder_reader(root: Path) -> Reader:
    def read(path: str, cap: int) -> bytes | None:
        target = root / path
        if target.is_symlink() or not target.is_file():
            return None
        with target.open("rb") as fh:
            data = fh.read(cap + 1)
        if len(data) > cap:
            raise ValueError(f"{path} is larger than {cap} bytes")
        return data

    return read


def _json(read: Reader, path: str, cap: int, limits: Any = LISTING_LIMITS) -> Any:
    data = read(path, cap)
    return None if data is None else strictjson.loads(data, limits)


def _board(read: Reader) -> Snapshot | None:
    changes = _json(read, "data/changes.json", CHANGES_CAP)
    if isinstance(changes, dict) and "board" in changes:
        return snapshot_from_doc(changes["board"])
    index = _json(read, "data/index.json", INDEX_CAP, _BIG)
    if not isinstance(index, dict):
        return None
    pointers = _json(read, "data/pointers.json", POINTERS_CAP, _BIG)
    info = _json(read, "data/build-info.json", 16 * MiB)
    return snapshot_of(
        index,
        pointers if isinstance(pointers, dict) else {},
        info if isinstance(info, dict) else {},
    )


def _read_site(read: Reader, site: str, feed_limits: FeedLimits) -> PreviousSite:
    warnings: list[str] = []
    board: Snapshot | None = None
    entries: tuple[FeedEntry, ...] = ()
    try:
        board = _board(read)
        if board is None:
            warnings.append(
                f"previous site {site}: no readable board (data/changes.json or "
                "data/index.json); the changes start from this build"
            )
    except (EvidenceDashError, ValueError, TypeError, OSError, RecursionError) as exc:
        warnings.append(
            f"previous site {site}: its board could not be read ({_why(exc)}); "
            "the changes start from this build"
        )
    try:
        feed = read("feed.xml", feed_limits.max_bytes)
        if feed is not None:
            entries = tuple(parse_feed(feed, feed_limits))
    except (EvidenceDashError, ValueError, OSError) as exc:
        warnings.append(
            f"previous site {site}: its feed.xml could not be read ({_why(exc)}); "
            "the history starts from this build"
        )
    return PreviousSite(site, board, entries, tuple(warnings))


def _why(exc: BaseException) -> str:
    if isinstance(exc, EvidenceDashError):
        return exc.message
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def load_previous(
    site: str | None,
    *,
    ca_bundle: Path | None = None,
    allow_private: Iterable[str] = (),
    feed_limits: FeedLimits | None = None,
) -> PreviousSite:
    """Read the previous site `site` (folder or URL); None: there is none (no warning)."""
    limits = feed_limits or FeedLimits()
    if site is None:
        return PreviousSite(None)
    if not is_site_url(site):
        root = Path(site)
        # A folder is named by its last segment only: the output never holds a local path.
        label = f"folder {root.name or '.'}"
        if not root.is_dir():
            return PreviousSite(
                label,
                warnings=(
                    f"previous site {site} is not a folder; the changes start from this build",
                ),
            )
        found = _read_site(_folder_reader(root), label, limits)
    else:
        from generator.sitefetch import SiteFetcher  # the HTTP libraries: only for a URL

        try:
            with SiteFetcher(site, ca_bundle=ca_bundle, allow_private=allow_private) as fetcher:

                def read(path: str, cap: int) -> bytes | None:
                    return fetcher.get(path, cap=cap)

                found = _read_site(read, site, limits)
        except EvidenceDashError as exc:
            found = PreviousSite(
                site,
                warnings=(
                    f"previous site {site} could not be read ({exc.message}); the "
                    "changes start from this build",
                ),
            )
    for warning in found.warnings:
        log.warning("%s", warning)
    return found


def replay_previous(site: Path) -> PreviousSite:
    """The previous site as a built site recorded it, for `verify-site --rebuild`: the board it
    compared with (`previous.board` of its data/changes.json), the warnings it gave, and the
    entries of its feed that it carried over (those that are not its own changes). Rebuilding
    with these gives the same feed and pages, byte for byte, when the code is the same."""
    read = _folder_reader(site)
    try:
        doc = _json(read, "data/changes.json", CHANGES_CAP)
        prior = doc.get("previous") if isinstance(doc, dict) else None
        if not isinstance(prior, dict):
            return PreviousSite(None)
        own = {c.get("id") for c in doc.get("changes") or () if isinstance(c, dict)}
        board = snapshot_from_doc(prior.get("board")) if prior.get("board") else None
        warnings = tuple(str(w) for w in prior.get("warnings") or ())
        feed = read("feed.xml", FeedLimits().max_bytes)
        entries = () if feed is None else tuple(e for e in parse_feed(feed) if e.id not in own)
    except (EvidenceDashError, ValueError, TypeError, OSError, RecursionError):
        return PreviousSite(None)
    return PreviousSite("replayed", board, entries, warnings)
