"""Write the change feed of a build: `data/changes.json`, `feed.xml`, one feed per recipe, and
the history into the Changes page and each recipe page.

`plan_changes` works the changes and history out before the site is built; `write_changes`
runs on the staging site before the manifest is written (so the manifest lists every file).
The pages carry a marker where the history goes (`BOARD_MARKER` on the Changes page,
`RECIPE_MARKER` in the recipe template's changes partial). The Changes page is filled here;
each recipe page gets its list (`ChangeSet.recipe_lists`) as it is placed into the site,
rendered or taken from the page cache, whose pages never hold a history (so never a stale
one). Everything is a function of this build's documents and the previous site: the same
inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.changes.atom import ID_PREFIX, FeedEntry, render_feed
from generator.changes.model import Change, ChangeKind, Snapshot, diff, snapshot_of
from generator.changes.previous import PreviousSite
from generator.data.gojson import go_json_bytes
from generator.quickwrite import write_or_link

__all__ = [
    "BOARD_MARKER",
    "CHANGES_PATH",
    "END_MARKER",
    "CHANGES_SCHEMA",
    "HISTORY_LIMIT",
    "RECIPE_MARKER",
    "RECIPE_PAGE_LIMIT",
    "ChangeSet",
    "changes_document",
    "entries_for",
    "fill_marked",
    "merge_history",
    "plan_changes",
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
_END_BYTES = END_MARKER.encode("ascii")
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


def fill_marked(page: bytes, marker: str, listing: bytes) -> bytes:
    """`page` with `listing` between `marker` and the next `END_MARKER` (as it is without them)."""
    opening = marker.encode("ascii")
    start = page.find(opening)
    if start < 0:
        return page
    end = page.find(_END_BYTES, start)
    if end < 0:
        return page
    return page[: start + len(opening)] + listing + page[end:]


def _fill(page: Path, marker: str, entries: Sequence[FeedEntry], link_prefix: str | None) -> None:
    """Put the list of `entries` into a written page (nothing to do without)."""
    if not entries or not page.is_file():
        return
    text = page.read_bytes()
    filled = fill_marked(text, marker, _list_html(entries, link_prefix).encode("utf-8"))
    if filled is not text:
        page.write_bytes(filled)


@dataclass(frozen=True)
class ChangeSet:
    """A build's changes against the previous site and the history its feeds and pages show,
    worked out before the site is built: each recipe page gets its list as it is placed
    (`recipe_lists`), never by reading a thousand written pages back."""

    changes: list[Change]
    document: dict[str, Any]
    history: list[FeedEntry]
    current: Snapshot
    site_url: str | None
    data_only: bool

    def by_recipe(self) -> dict[str, list[FeedEntry]]:
        """The history of each recipe that has one, newest first."""
        own: dict[str, list[FeedEntry]] = {}
        for e in self.history:
            own.setdefault(e.recipe, []).append(e)
        return own

    def recipe_lists(self) -> dict[str, bytes]:
        """Per recipe with a history, the list its page shows between `RECIPE_MARKER` and
        `END_MARKER` (UTF-8); a recipe without one keeps its page's empty-history text."""
        if self.data_only:
            return {}
        return {
            recipe: _list_html(own[:RECIPE_PAGE_LIMIT], None).encode("utf-8")
            for recipe, own in self.by_recipe().items()
        }


def plan_changes(
    documents: Mapping[str, Any],
    previous: PreviousSite,
    *,
    site_url: str | None,
    data_only: bool,
) -> ChangeSet:
    """This build's changes against `previous` and the history to show (nothing written)."""
    current = snapshot_of(
        documents.get("index") or {},
        documents.get("pointers") or {},
        documents.get("build_info") or {},
    )
    board = previous.board
    changes = diff(board, current) if board is not None else []
    new = entries_for(changes, board, current) if board is not None else []
    return ChangeSet(
        changes=changes,
        document=changes_document(changes, new, current, previous),
        history=merge_history(new, previous.entries),
        current=current,
        site_url=site_url,
        data_only=data_only,
    )


def write_changes(staging: Path, plan: ChangeSet, *, previous: Path | None = None) -> list[Change]:
    """Write the change feed of `plan` into `staging`; the changes found. The recipe pages'
    lists are not written here: the pages get them as they are placed (`recipe_lists`).
    `previous`: the output this site replaces, whose unchanged recipe feeds are linked
    (`write_or_link`)."""
    target = staging / CHANGES_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(go_json_bytes(plan.document))  # as every data file: Go's bytes
    if plan.data_only:
        return plan.changes
    history, current, site_url = plan.history, plan.current, plan.site_url
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
    by_recipe = plan.by_recipe()
    for recipe in sorted(current.recipes):
        folder = staging / "recipes" / recipe
        folder.mkdir(parents=True, exist_ok=True)
        here = f"{base}recipes/{recipe}/" if base else "./"
        write_or_link(
            folder / "feed.xml",
            render_feed(
                by_recipe.get(recipe, []),
                feed_id=f"{here}feed.xml" if base else f"{ID_PREFIX}feed/recipe/{recipe}",
                title=f"Recipe evidence: {recipe}",
                updated=current.build_time,
                self_href=f"{here}feed.xml" if base else "feed.xml",
                site_href=here,
                site_url=site_url,
                recipe_feed=True,
            ),
            None if previous is None else previous / "recipes" / recipe / "feed.xml",
        )
    return plan.changes
