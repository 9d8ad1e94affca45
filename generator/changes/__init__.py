"""The change feed and history of the board (issue 15, part 4).

`build --previous SITE` compares the previous board with this one: `model` (snapshots and
their differences, pure), `atom` (Atom 1.0 feeds: render, and read a previous feed as hostile
input), `previous` (read the previous site, a folder or an https:// URL, bounded), `output`
(write `data/changes.json`, `feed.xml`, `recipes/<recipe>/feed.xml` and fill the pages).
"""

from generator.changes.atom import FeedEntry, FeedError, FeedLimits, parse_feed, render_feed
from generator.changes.model import (
    Change,
    ChangeKind,
    RecipeState,
    Snapshot,
    diff,
    snapshot_from_doc,
    snapshot_of,
)
from generator.changes.output import (
    BOARD_MARKER,
    CHANGES_PATH,
    END_MARKER,
    HISTORY_LIMIT,
    RECIPE_MARKER,
    ChangeSet,
    entries_for,
    fill_marked,
    merge_history,
    plan_changes,
    previous_warnings,
    write_changes,
)
from generator.changes.previous import PreviousSite, load_previous, replay_previous

__all__ = [
    "BOARD_MARKER",
    "CHANGES_PATH",
    "END_MARKER",
    "HISTORY_LIMIT",
    "RECIPE_MARKER",
    "Change",
    "ChangeKind",
    "ChangeSet",
    "FeedEntry",
    "FeedError",
    "FeedLimits",
    "PreviousSite",
    "RecipeState",
    "Snapshot",
    "diff",
    "entries_for",
    "fill_marked",
    "load_previous",
    "merge_history",
    "parse_feed",
    "plan_changes",
    "previous_warnings",
    "render_feed",
    "replay_previous",
    "snapshot_from_doc",
    "snapshot_of",
    "write_changes",
]
