"""The PR evidence report as data: compare the base and the head evaluation of a tree.

Pure: the shell hands over the changed paths, both sides' parsed overlays, pointer records,
allowlists and boards; `compute_report` returns a `Report` that the Markdown and JSON renderers
turn into text. The base board is the base allowlist's, the head board the head allowlist's.

This module holds the report's types and the allowlist and board diffs; `compute_report` itself
is in `_compute` (exported by the package).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from generator.corroborate import Board
from generator.data import PointerRecord
from generator.model import (
    AllowlistEntry,
    ConsensusState,
    ParsedPointer,
    Phase,
    Rejected,
    SignerClass,
    SignerIdentity,
    Verified,
)
from generator.report.affected import (
    Affected,
    Overlay,
)
from generator.report.cells import (
    DigestCell,
    DigestStale,
    VerifyCell,
)

OTHER_MAX = 200


class FailOn(StrEnum):
    """`--fail-on`: which warnings turn into exit 1."""

    NONE = "none"
    INVALID = "invalid"
    STALE = "stale"
    ANY = "any"


@dataclass(frozen=True)
class Side:
    """One revision's evaluated tree."""

    overlays: Mapping[str, Overlay]
    records: tuple[PointerRecord, ...]
    allowlist: Any
    """A `generator.tree.Allowlist`, or None when the revision has no evidence tree."""
    board: Board | None

    @property
    def by_path(self) -> dict[str, PointerRecord]:
        return {r.path: r for r in self.records}


EMPTY_SIDE = Side(overlays={}, records=(), allowlist=None, board=None)


@dataclass(frozen=True)
class PointerRow:
    """One protected pointer at HEAD: Recipe | Source | Pointer | Verify | Digest match."""

    recipe: str
    directory: str
    source: str
    pointer: str
    path: str
    verify: VerifyCell
    digest: DigestCell

    @property
    def warnings(self) -> int:
        return int(self.verify.warning) + int(self.digest.warning)


@dataclass(frozen=True)
class RemovedRow:
    """A pointer directory that had pointers at BASE and has none at HEAD."""

    recipe: str
    directory: str
    count: int
    warnings: int = 1


Row = PointerRow | RemovedRow


@dataclass(frozen=True)
class Orphan:
    """A changed pointer at HEAD whose overlay `overlays/<recipe>.yaml` does not exist."""

    path: str
    directory: str
    recipe: str
    verify: VerifyCell


@dataclass(frozen=True)
class SignerChange:
    """An allowlist entry added, removed, moved between classes or relabelled."""

    key: str
    label: str
    change: str
    before: SignerClass | None
    after: SignerClass | None
    recipes: tuple[str, ...] = ()

    @property
    def describe(self) -> str:
        if self.change == "moved":
            return f"{self.label} moved {self.before} -> {self.after}"
        if self.change == "added":
            return f"{self.label} added as {self.after}"
        if self.change == "removed":
            return f"{self.label} removed (was {self.before})"
        return f"{self.label} relabelled"


@dataclass(frozen=True)
class RowChange:
    """A board row whose consensus state differs between BASE and HEAD (None: no such row)."""

    recipe: str
    phase: Phase
    name: str
    before: ConsensusState | None
    after: ConsensusState | None


@dataclass(frozen=True)
class RollupChange:
    recipe: str
    before: ConsensusState | None
    after: ConsensusState | None

    @property
    def changed(self) -> bool:
        return self.before is not self.after


@dataclass(frozen=True)
class Warnings:
    invalid: int
    stale: int
    other: int

    @property
    def total(self) -> int:
        return self.invalid + self.stale + self.other


@dataclass(frozen=True)
class Report:
    base: str
    head: str
    generated_at: str
    affected: Affected
    protected: tuple[str, ...]
    rows: tuple[Row, ...]
    other: tuple[str, ...]
    orphans: tuple[Orphan, ...]
    removed: tuple[str, ...]
    signers: tuple[SignerChange, ...]
    board_rows: tuple[RowChange, ...]
    rollups: tuple[RollupChange, ...]
    trust: str = ""
    merge_base: str = ""
    """The merge base of BASE and HEAD: the diff and the base board are taken there."""

    @property
    def warnings(self) -> Warnings:
        invalid = sum(1 for r in self.rows if isinstance(r, PointerRow) and r.verify.warning)
        stale = sum(
            1 for r in self.rows if isinstance(r, PointerRow) and isinstance(r.digest, DigestStale)
        )
        other = sum(r.warnings for r in self.rows) - invalid - stale + len(self.orphans)
        return Warnings(invalid=invalid, stale=stale, other=other)

    def fails(self, mode: FailOn) -> bool:
        """Whether `--fail-on mode` is triggered (never for `none`)."""
        counts = self.warnings
        if mode is FailOn.INVALID:
            return counts.invalid > 0
        if mode is FailOn.STALE:
            return counts.stale > 0
        if mode is FailOn.ANY:
            return counts.total > 0
        return False


# --------------------------------------------------------------------------- allowlist diff


def entry_key(entry: AllowlistEntry) -> str:
    """An entry's identity across revisions: its source slug, else issuer and pattern."""
    if entry.source is not None:
        return f"source {entry.source}"
    return f"pattern {entry.issuer} {entry.identity_pattern}"


def _entry_label(entry: AllowlistEntry) -> str:
    return entry.label or str(entry.source or entry.identity_pattern or "")


def allowlist_changes(base: Any, head: Any) -> tuple[SignerChange, ...]:
    """Entries added, removed, moved between classes or relabelled (first entry per key wins)."""
    before: dict[str, AllowlistEntry] = {}
    after: dict[str, AllowlistEntry] = {}
    for entry in base.entries if base is not None else ():
        before.setdefault(entry_key(entry), entry)
    for entry in head.entries if head is not None else ():
        after.setdefault(entry_key(entry), entry)
    changes: list[SignerChange] = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old is None and new is not None:
            changes.append(SignerChange(key, _entry_label(new), "added", None, new.signer_class))
        elif new is None and old is not None:
            changes.append(SignerChange(key, _entry_label(old), "removed", old.signer_class, None))
        elif old is not None and new is not None:
            if old.signer_class is not new.signer_class:
                changes.append(
                    SignerChange(
                        key, _entry_label(new), "moved", old.signer_class, new.signer_class
                    )
                )
            elif old.label != new.label:
                changes.append(
                    SignerChange(
                        key, _entry_label(new), "relabelled", old.signer_class, new.signer_class
                    )
                )
    return tuple(changes)


def record_signer(record: PointerRecord) -> SignerIdentity | None:
    """The certificate's signer when verification read one, else the pointer's claimed signer."""
    verdict = record.verdict
    if isinstance(verdict, Verified | Rejected) and verdict.signer is not None:
        return verdict.signer
    item = record.pointer
    if isinstance(item, ParsedPointer) and item.pointer.signer is not None:
        return item.pointer.signer.identity
    return None


def _entry_of(allowlist: Any, signer: SignerIdentity) -> str | None:
    if allowlist is None:
        return None
    entry = allowlist.classify(signer).entry
    return entry_key(entry) if entry is not None else None


# --------------------------------------------------------------------------- board diff


def board_changes(
    base: Board | None, head: Board | None
) -> tuple[tuple[RowChange, ...], tuple[RollupChange, ...]]:
    """Rows whose consensus changes, and the rollups before and after of every recipe touched."""

    def tabs(board: Board | None) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for tab in board.tabs if board is not None else ():
            found.setdefault(tab.recipe, tab)
        return found

    old, new = tabs(base), tabs(head)
    rows: list[RowChange] = []
    rollups: list[RollupChange] = []
    for recipe in sorted(old.keys() | new.keys()):
        before = {r.key: r.consensus for r in old[recipe].combined.rows} if recipe in old else {}
        after = {r.key: r.consensus for r in new[recipe].combined.rows} if recipe in new else {}
        touched = False
        keys = sorted(before.keys() | after.keys(), key=lambda k: (k[0].order, k[1]))
        for key in keys:
            if before.get(key) is not after.get(key):
                rows.append(RowChange(recipe, key[0], key[1], before.get(key), after.get(key)))
                touched = True
        rollup_before = old[recipe].rollup if recipe in old else None
        rollup_after = new[recipe].rollup if recipe in new else None
        if touched or rollup_before is not rollup_after:
            rollups.append(RollupChange(recipe, rollup_before, rollup_after))
    return tuple(rows), tuple(rollups)
