"""Each bundle counts once, whichever of the pointers naming it passed on its own.

Several pointers may name one bundle (a flat pending copy, a pointer filed under another recipe).
Each is verified and judged on its own; of those that pass, one board entry per bundle digest is
kept, so one bundle never counts as two runs, and a pointer that failed never lends its bundle to
another (nor takes it away: a passing repeat still counts when the first pointer failed).
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.corroborate.board import BoardEntry

__all__ = ["count_each_bundle_once"]


def count_each_bundle_once(candidates: Sequence[tuple[bool, int, BoardEntry]]) -> list[BoardEntry]:
    """From (is a duplicate, position, entry) candidates, one entry per bundle digest: a
    pointer that is not a duplicate first, then the earliest; in their original order."""
    chosen: dict[str, tuple[bool, int, BoardEntry]] = {}
    for candidate in candidates:
        digest = str(candidate[2].run.bundle_digest)
        if digest not in chosen or candidate[:2] < chosen[digest][:2]:
            chosen[digest] = candidate
    return [entry for _dup, _n, entry in sorted(chosen.values(), key=lambda c: c[1])]
