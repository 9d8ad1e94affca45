"""Write the change feed of a build: `data/changes.json`, `feed.xml`, one feed per recipe, and
the history into the Changes page and each recipe page.

Runs on the staging site before the manifest is written (so the manifest lists every file).
The pages carry a marker where the history goes (`BOARD_MARKER` on the Changes page,
`RECIPE_MARKER` in the recipe template's changes partial); the markers are filled here, after
the pages were rendered or taken from the page cache, so cached pages never hold a stale
history. Everything is a function of this build's documents and the previous site: the same
inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from generator.changes.atom import ID_PREFIX, FeedEntry, render_feed
from generator.changes.model import Change, ChangeKind, Snapshot, diff, snapshot_of
from generator.changes.previous import PreviousSite
from generator.data.gojson import go_json_bytes
from generator.quickwrite import write_file

__all__ = [
    "BOARD_MARKER",
    "CHANGES_PATH",
    "END_MARKER",
    "CHANGES_SCHEMA",
    "HISTORY_LIMIT",
    "RECIPE_MARKER",
    "RECIPE_PAGE_LIMIT",
    "changes_document",
    "entries_for",
    "merge_history",
    "previous_warnings",
    "write_changes",
]

CHANGES_PATH = "data/changes.json"
CHANGES_SCHEMA = "evidence-dashboard/changes/v1"
HISTORY_LIMIT = 200
"""Entries a feed keeps (this build's first, then the previous feed's)."""
RECIPE_PAGE_LIMIT = 20
"""Entries a recipe page shows (its feed has them all)."""
BOARD_MARKER = "<!--evidence-dashboard-changes:board-->"
RECIPE_MARKER = "<!--evidence-dashboard-changes:recipe-->"
END_MARKER = "<!--/evidence-dashboard-changes-->"
"""The templates put the empty-history text between a start marker and this one; a page with
history gets its list there instead (a page without keeps its bytes: no rewrite)."""
_WORDS = {
    "CONFIRMED": "confirmed",
    "SINGLE": "single signer",
    "PARTIAL": "partial",
    "UNTESTED": "untested",
    "FAILING": "failing",
    "CONTESTED": "contested",
}


def _word(state: str | None, absent: str) -> str:
    if state is None:
        return absent
    return _WORDS.get(state, state.lower())


def _title(c: Change) -> str:
    r = c.recipe
    if c.kind is ChangeKind.RECIPE_ADDED:
        return f"{r}: new recipe, {_word(c.after, 'untested')}"
    if c.kind is ChangeKind.RECIPE_REMOVED:
        return f"{r}: no longer on the board (was {_word(c.before, 'untested')})"
    if c.kind is ChangeKind.ROLLUP:
        return f"{r}: {_word(c.before, '?')} → {_word(c.after, '?')}"
    if c.kind is ChangeKind.CHECK:
        phase, _, name = c.subject.partition("/")
        return f"{r}: check {name} ({phase}) {_word(c.before, 'new')} → {_word(c.after, 'gone')}"
    if c.kind is ChangeKind.FRESHNESS:
        return f"{r}: freshness {c.before} → {c.after}"
    if c.kind is ChangeKind.EVIDENCE_REMOVED:
        return f"{r}: evidence removed"
    if c.kind is ChangeKind.EVIDENCE_REJECTED:
        return f"{r}: evidence rejected"
    if c.before is not None:
        return f"{r}: evidence {c.before} → {c.after}"
    return f"{r}: evidence added ({c.after})"


def _short(commit: str | None) -> str:
    return commit[:12] if commit else "unknown"


def entries_for(changes: Sequence[Change], before: Snapshot, after: Snapshot) -> list[FeedEntry]:
    """One feed entry per change, at this build's time; ids are a digest of the change and
    both builds (stable across rebuilds of the same inputs)."""
    out = []
    trees = f"evidence tree {_short(before.commit)} → {_short(after.commit)}"
    for c in changes:
        digest = hashlib.sha256(
            "\0".join(
                [
                    before.build_time,
                    before.commit or "",
                    after.build_time,
                    after.commit or "",
                    c.recipe,
                    str(c.kind),
                    c.subject,
                    c.before or "",
                    c.after or "",
                ]
            ).encode("utf-8")
        ).hexdigest()
        summary = f"{c.subject} ({trees})" if c.subject else trees
        out.append(
            FeedEntry(
                id=f"{ID_PREFIX}change/{digest}",
                title=_title(c),
                updated=after.build_time,
                recipe=c.recipe,
                kind=c.kind,
                summary=summary,
            )
        )
    return out


def merge_history(
    new: Sequence[FeedEntry], old: Sequence[FeedEntry], limit: int = HISTORY_LIMIT
) -> list[FeedEntry]:
    """This build's entries, then the previous ones not already present; newest first (stable),
    at most `limit`."""
    seen = {e.id for e in new}
    merged = list(new)
    for e in old:
        if e.id not in seen:
            seen.add(e.id)
            merged.append(e)
    merged.sort(key=lambda e: e.updated, reverse=True)
    return merged[:limit]


def changes_document(
    changes: Sequence[Change],
    entries: Sequence[FeedEntry],
    current: Snapshot,
    previous: PreviousSite,
) -> dict[str, Any]:
    """`data/changes.json`: this build's changes with both builds' commits, and its board."""
    board = previous.board
    return {
        "schema": CHANGES_SCHEMA,
        "buildTime": current.build_time,
        "commit": current.commit,
        "previous": {
            "read": board is not None,
            "buildTime": None if board is None else board.build_time,
            "commit": None if board is None else board.commit,
            "warnings": list(previous.warnings),
            # What this build compared with: `verify-site --rebuild` replays it.
            "board": None if board is None else board.as_dict(),
        },
        "changes": [{**c.as_dict(), "id": e.id} for c, e in zip(changes, entries, strict=True)],
        "board": current.as_dict(),
    }


def previous_warnings(site: Path) -> tuple[str, ...]:
    """The warnings a build recorded about its previous site (for the build summary)."""
    try:
        doc = json.loads((site / CHANGES_PATH).read_bytes())
        return tuple(str(w) for w in doc["previous"]["warnings"])
    except (OSError, ValueError, KeyError, TypeError):
        return ()


def _html(value: object) -> str:
    from generator.site import escape

    return str(escape.html(value))


def _list_html(entries: Sequence[FeedEntry], link_prefix: str | None) -> str:
    items = []
    for e in entries:
        title = e.title.removeprefix(f"{e.recipe}: ")
        recipe = (
            f' <a href="{link_prefix}{e.recipe}/">{_html(e.recipe)}</a>'
            if link_prefix is not None
            else ""
        )
        items.append(
            f'<li data-kind="{_html(str(e.kind))}"><time datetime="{_html(e.updated)}">'
            f"{_html(e.updated.replace('T', ' ').replace('Z', ' UTC'))}</time>{recipe}: "
            f'{_html(title)} <span class="muted">{_html(e.summary)}</span></li>'
        )
    return '<ol class="ed-changes">\n' + "\n".join(items) + "\n</ol>"


def _fill(page: Path, marker: str, entries: Sequence[FeedEntry], link_prefix: str | None) -> None:
    """Put the list of `entries` between `marker` and `END_MARKER` (nothing to do without)."""
    if not entries or not page.is_file():
        return
    text = page.read_text(encoding="utf-8")
    start = text.find(marker)
    end = text.find(END_MARKER, start)
    if start < 0 or end < 0:
        return
    filled = text[: start + len(marker)] + _list_html(entries, link_prefix) + text[end:]
    page.write_text(filled, encoding="utf-8", newline="")


def write_changes(
    staging: Path,
    documents: Mapping[str, Any],
    previous: PreviousSite,
    *,
    site_url: str | None,
    data_only: bool,
) -> list[Change]:
    """Write the change feed of this build into `staging`; the changes found."""
    current = snapshot_of(
        documents.get("index") or {},
        documents.get("pointers") or {},
        documents.get("build_info") or {},
    )
    board = previous.board
    changes = diff(board, current) if board is not None else []
    new = entries_for(changes, board, current) if board is not None else []
    doc = changes_document(changes, new, current, previous)
    target = staging / CHANGES_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(go_json_bytes(doc))  # as every data file: Go's MarshalIndent bytes
    if data_only:
        return changes
    history = merge_history(new, previous.entries)
    base = site_url.rstrip("/") + "/" if site_url else None
    feed = render_feed(
        history,
        feed_id=f"{base}feed.xml" if base else f"{ID_PREFIX}feed/board",
        title="Recipe evidence: changes",
        updated=current.build_time,
        self_href=f"{base}feed.xml" if base else "feed.xml",
        site_href=f"{base}changes/" if base else "changes/",
        site_url=site_url,
    )
    (staging / "feed.xml").write_bytes(feed)
    _fill(staging / "changes" / "index.html", BOARD_MARKER, history, "../recipes/")
    by_recipe: dict[str, list[FeedEntry]] = {}
    for e in history:
        by_recipe.setdefault(e.recipe, []).append(e)
    for recipe in sorted(current.recipes):
        folder = staging / "recipes" / recipe
        folder.mkdir(parents=True, exist_ok=True)
        own = by_recipe.get(recipe, [])
        here = f"{base}recipes/{recipe}/" if base else "./"
        write_file(
            folder / "feed.xml",
            render_feed(
                own,
                feed_id=f"{here}feed.xml" if base else f"{ID_PREFIX}feed/recipe/{recipe}",
                title=f"Recipe evidence: {recipe}",
                updated=current.build_time,
                self_href=f"{here}feed.xml" if base else "feed.xml",
                site_href=here,
                site_url=site_url,
                recipe_feed=True,
            ),
        )
        _fill(folder / "index.html", RECIPE_MARKER, own[:RECIPE_PAGE_LIMIT], None)
    return changes
