"""The PR evidence report as data: compare the base and the head evaluation of a tree.

Pure: the shell hands over the changed paths, both sides' parsed overlays, pointer records,
allowlists and boards; `compute_report` returns a `Report` that the Markdown and JSON renderers
turn into text. The base board is the base allowlist's, the head board the head allowlist's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
    affected_recipes,
    is_pointer_path,
    pointer_dir,
    pointer_overlay,
    pointer_profile,
)
from generator.report.cells import (
    DigestCell,
    DigestStale,
    VerifyCell,
    digest_cell,
    verify_cell,
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


# --------------------------------------------------------------------------- the report


def _split(path: str) -> tuple[str, str]:
    """(source column, pointer column) of a pointer path."""
    parts = path.split("/")
    if len(parts) >= 4:
        return parts[-2], parts[-1].removesuffix(".yaml")
    return "(flat)", parts[-1].removesuffix(".yaml")


def _directory_key(path: str) -> str:
    """The folder a pointer sits in: nested `evidence/<dir>` or flat `evidence`."""
    return path.rsplit("/", 2)[0] if path.count("/") >= 3 else "evidence"


def _map(records: Iterable[PointerRecord], names: set[str]) -> dict[str, tuple[str, bool]]:
    return {r.path: pointer_overlay(r.path, pointer_profile(r.pointer), names) for r in records}


def compute_report(
    *,
    base_rev: str,
    head_rev: str,
    changed: Sequence[str],
    base: Side,
    head: Side,
    generated_at: str,
    trust: str = "",
    merge_base: str = "",
) -> Report:
    """Everything the PR comment and its JSON say, from two evaluated sides."""
    changed_set = set(changed)
    names = set(head.overlays) | set(base.overlays)
    head_map = _map(head.records, set(head.overlays))
    base_map = _map(base.records, names)
    head_paths, base_paths = head.by_path, base.by_path

    # Pointers changed by the diff, mapped back through the pointer's profile.
    pointer_recipes: dict[str, str] = {}
    for path in sorted(p for p in changed_set if is_pointer_path(p)):
        mapped = head_map.get(path) or base_map.get(path)
        pointer_recipes[path] = mapped[0] if mapped else pointer_dir(path)

    # Allowlist changes and the recipes whose evidence they reclassify.
    signers = allowlist_changes(base.allowlist, head.allowlist)
    by_key = {s.key: s for s in signers}
    recipes_of: dict[str, set[str]] = {s.key: set() for s in signers}
    allowlist_recipes: dict[str, list[str]] = {}
    if signers:
        for record in head.records:
            _attribute(record, head_map, base.allowlist, head.allowlist, recipes_of)
        for record in base.records:
            _attribute(record, base_map, base.allowlist, head.allowlist, recipes_of)
        for key, recipes in recipes_of.items():
            for recipe in recipes:
                allowlist_recipes.setdefault(recipe, []).append(by_key[key].describe)
    signers = tuple(
        SignerChange(s.key, s.label, s.change, s.before, s.after, tuple(sorted(recipes_of[s.key])))
        for s in signers
    )

    affected = affected_recipes(
        sorted(changed_set), head.overlays, base.overlays, pointer_recipes, allowlist_recipes
    )
    with_pointers = {m[0] for m in head_map.values()} | {m[0] for m in base_map.values()}
    protected = tuple(r for r in affected.recipes if r in with_pointers)
    other = tuple(r for r in affected.recipes if r not in with_pointers)

    rows: list[Row] = []
    for recipe in protected:
        at_head = sorted(p for p, m in head_map.items() if m[0] == recipe)
        at_base = sorted(p for p, m in base_map.items() if m[0] == recipe)
        for path in at_head:
            record = head_paths[path]
            source, pointer = _split(path)
            verify = verify_cell(record)
            rows.append(
                PointerRow(
                    recipe,
                    pointer_dir(path),
                    source,
                    pointer,
                    path,
                    verify,
                    digest_cell(record, verify),
                )
            )
        head_dirs = {_directory_key(p) for p in at_head}
        gone: dict[str, list[str]] = {}
        for path in at_base:
            if _directory_key(path) not in head_dirs:
                gone.setdefault(_directory_key(path), []).append(path)
        for _folder, paths in sorted(gone.items()):
            rows.append(RemovedRow(recipe, pointer_dir(paths[0]), len(paths)))

    orphans = tuple(
        Orphan(path, pointer_dir(path), head_map[path][0], verify_cell(head_paths[path]))
        for path in sorted(pointer_recipes)
        if path in head_map and not head_map[path][1]
    )
    removed = tuple(p for p in sorted(pointer_recipes) if p in base_paths and p not in head_paths)
    board_rows, rollups = board_changes(base.board, head.board)
    return Report(
        base=base_rev,
        head=head_rev,
        generated_at=generated_at,
        affected=affected,
        protected=protected,
        rows=tuple(rows),
        other=other,
        orphans=orphans,
        removed=removed,
        signers=signers,
        board_rows=board_rows,
        rollups=rollups,
        trust=trust,
        merge_base=merge_base or base_rev,
    )


def _attribute(
    record: PointerRecord,
    mapping: Mapping[str, tuple[str, bool]],
    base: Any,
    head: Any,
    recipes_of: dict[str, set[str]],
) -> None:
    signer = record_signer(record)
    if signer is None:
        return
    for key in {_entry_of(base, signer), _entry_of(head, signer)}:
        if key is not None and key in recipes_of:
            recipes_of[key].add(mapping[record.path][0])
