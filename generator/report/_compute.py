"""`compute_report`: what a PR does to recipe evidence, from the two evaluated sides.

The changed pointers are mapped to their recipes, allowlist changes to the recipes whose evidence
they reclassify; the affected recipes with evidence become protected rows (pointers at head, and
folders that hold pointers only at base), the rest are listed as other. Pure: no git, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from generator.data import PointerRecord
from generator.report.affected import (
    affected_recipes,
    is_pointer_path,
    pointer_dir,
    pointer_overlay,
    pointer_profile,
)
from generator.report.cells import (
    digest_cell,
    verify_cell,
)
from generator.report.core import (
    Orphan,
    PointerRow,
    RemovedRow,
    Report,
    Row,
    Side,
    SignerChange,
    _entry_of,
    allowlist_changes,
    board_changes,
    record_signer,
)


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
    pointer_recipes = _pointer_recipes(changed_set, head_map, base_map)
    signers, allowlist_recipes = _signer_changes(base, head, head_map, base_map)
    affected = affected_recipes(
        sorted(changed_set), head.overlays, base.overlays, pointer_recipes, allowlist_recipes
    )
    with_pointers = {m[0] for m in head_map.values()} | {m[0] for m in base_map.values()}
    protected = tuple(r for r in affected.recipes if r in with_pointers)
    other = tuple(r for r in affected.recipes if r not in with_pointers)
    rows = [row for recipe in protected for row in _rows(recipe, head_map, base_map, head_paths)]
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


def _pointer_recipes(
    changed: set[str],
    head_map: Mapping[str, tuple[str, bool]],
    base_map: Mapping[str, tuple[str, bool]],
) -> dict[str, str]:
    """Pointers changed by the diff, mapped back to their recipe through the pointer's profile."""
    pointer_recipes: dict[str, str] = {}
    for path in sorted(p for p in changed if is_pointer_path(p)):
        mapped = head_map.get(path) or base_map.get(path)
        pointer_recipes[path] = mapped[0] if mapped else pointer_dir(path)
    return pointer_recipes


def _signer_changes(
    base: Side,
    head: Side,
    head_map: Mapping[str, tuple[str, bool]],
    base_map: Mapping[str, tuple[str, bool]],
) -> tuple[tuple[SignerChange, ...], dict[str, list[str]]]:
    """Allowlist changes with the recipes whose evidence they reclassify, and the reasons by
    recipe."""
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
    changes = tuple(
        SignerChange(s.key, s.label, s.change, s.before, s.after, tuple(sorted(recipes_of[s.key])))
        for s in signers
    )
    return changes, allowlist_recipes


def _rows(
    recipe: str,
    head_map: Mapping[str, tuple[str, bool]],
    base_map: Mapping[str, tuple[str, bool]],
    head_paths: Mapping[str, PointerRecord],
) -> list[Row]:
    """A protected recipe's pointers at head, then its folders that hold pointers only at base."""
    rows: list[Row] = []
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
    return rows


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
