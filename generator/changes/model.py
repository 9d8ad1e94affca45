"""The board as the change feed sees it, and what changed between two boards (pure).

A `Snapshot` keeps, per recipe, only what a follower is told about: the rollup, each check's
consensus, the freshness summary and each pointer's verdict. It is small (one short record per
pointer, one per check) and is written into `data/changes.json` (`board`), so the next build
compares against it without reading the previous site's large documents. `diff` lists every
difference as a `Change`, in a fixed order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from generator.data.views import evidence_time, tab_checks, verdict_of

__all__ = [
    "RECIPE_NAME",
    "Change",
    "ChangeKind",
    "RecipeState",
    "Snapshot",
    "diff",
    "freshness_state",
    "snapshot_from_doc",
    "snapshot_of",
]

RECIPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""A recipe name as the pointer schema allows it (and so a safe URL segment)."""
_SHORT = 500
"""Longest state, check or path string taken from a previous board."""


class ChangeKind(StrEnum):
    RECIPE_ADDED = "recipe-added"
    RECIPE_REMOVED = "recipe-removed"
    ROLLUP = "rollup"
    CHECK = "check"
    FRESHNESS = "freshness"
    EVIDENCE_ADDED = "evidence-added"
    EVIDENCE_REMOVED = "evidence-removed"
    EVIDENCE_REJECTED = "evidence-rejected"


_KIND_ORDER = {kind: n for n, kind in enumerate(ChangeKind)}


@dataclass(frozen=True)
class Change:
    """One difference: for `recipe`, `subject` (a check, a pointer path, or empty) went from
    `before` to `after` (None: absent)."""

    recipe: str
    kind: ChangeKind
    subject: str = ""
    before: str | None = None
    after: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "recipe": self.recipe,
            "kind": str(self.kind),
            "subject": self.subject,
            "before": self.before,
            "after": self.after,
        }

    def sort_key(self) -> tuple[str, int, str]:
        return (self.recipe, _KIND_ORDER[self.kind], self.subject)


@dataclass(frozen=True)
class RecipeState:
    """One recipe's state on a board."""

    rollup: str
    checks: Mapping[str, str] = field(default_factory=dict)
    """`<phase>/<check>` -> consensus state."""
    freshness: str = "none"
    evidence: Mapping[str, str] = field(default_factory=dict)
    """Pointer path -> `verified` | `failures` | `rejected` | `pending` | `no-verdict`."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rollup": self.rollup,
            "checks": dict(sorted(self.checks.items())),
            "freshness": self.freshness,
            "evidence": dict(sorted(self.evidence.items())),
        }


@dataclass(frozen=True)
class Snapshot:
    """A whole board: its build time, evidence tree commit and recipes."""

    build_time: str
    commit: str | None
    recipes: Mapping[str, RecipeState]

    def as_dict(self) -> dict[str, Any]:
        return {
            "buildTime": self.build_time,
            "commit": self.commit,
            "recipes": {name: self.recipes[name].as_dict() for name in sorted(self.recipes)},
        }


def freshness_state(pointers: Iterable[tuple[Mapping[str, Any], str]]) -> str:
    """The recipe page's freshness summary state (`generator.site.pages.SiteModel.freshness`)
    in one pass over (pointer, verdict) pairs: over each signer's latest counted evidence (the newest log time, the
    smallest path on a tie), `stale` if any is stale, `unknown` if any is not fresh, `fresh`,
    or `none` without counted evidence."""
    best: dict[str, tuple[str, str, str | None]] = {}
    for p, verdict in pointers:
        if verdict not in ("verified", "failures"):
            continue
        evidence = p.get("evidence")
        if evidence is None or p.get("omitted"):
            continue
        src = str((p.get("signer") or {}).get("sourceId") or p.get("path"))
        when, path = evidence_time(evidence), str(p.get("path"))
        cur = best.get(src)
        if cur is None or when > cur[0] or (when == cur[0] and path < cur[1]):
            best[src] = (when, path, (p.get("freshness") or {}).get("state"))
    states = [state for _, _, state in best.values()]
    if not states:
        return "none"
    if "stale" in states:
        return "stale"
    return "fresh" if all(s == "fresh" for s in states) else "unknown"


def snapshot_of(
    index: Mapping[str, Any], pointers: Mapping[str, Any], build_info: Mapping[str, Any]
) -> Snapshot:
    """The snapshot of this build's documents (one pass over the pointers, about a
    microsecond each)."""
    by_recipe: dict[str, list[tuple[Mapping[str, Any], str]]] = {}
    for p in pointers.get("pointers") or ():
        recipe = p.get("recipe")
        if isinstance(recipe, str) and isinstance(p.get("path"), str):
            by_recipe.setdefault(recipe, []).append((p, verdict_of(p)))
    recipes: dict[str, RecipeState] = {}
    for group in index.get("groups") or ():
        for dashboard in group.get("dashboards") or ():
            for tab in dashboard.get("tabs") or ():
                name = str(tab["recipe"])
                checks = tab_checks(tab)
                own = by_recipe.get(name, [])
                recipes[name] = RecipeState(
                    rollup=str(tab.get("rollup") or "UNTESTED"),
                    checks=checks,
                    freshness=freshness_state(own),
                    evidence={str(p["path"]): verdict for p, verdict in own},
                )
    commit = build_info.get("commit")
    meta = index.get("meta") or {}
    return Snapshot(
        build_time=str(build_info.get("buildTime") or meta.get("buildTime") or ""),
        commit=None if commit is None else str(commit),
        recipes=recipes,
    )


def _short(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= _SHORT else None


def _strings(raw: Any, limit: int) -> dict[str, str]:
    """A {str: str} mapping from hostile JSON: other entries are dropped, at most `limit`."""
    out: dict[str, str] = {}
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            if len(out) >= limit:
                break
            k, v = _short(key), _short(value)
            if k is not None and v is not None:
                out[k] = v
    return out


def snapshot_from_doc(
    doc: Any, *, max_recipes: int = 100_000, max_items: int = 1_000_000
) -> Snapshot | None:
    """A previous build's `board` (from its data/changes.json), or None when it is not one.

    The document comes from another site: only well-formed entries are kept, within bounds."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("recipes"), Mapping):
        return None
    recipes: dict[str, RecipeState] = {}
    budget = max_items
    for name, raw in doc["recipes"].items():
        if len(recipes) >= max_recipes or budget <= 0:
            break
        if not isinstance(name, str) or not RECIPE_NAME.fullmatch(name):
            continue
        if not isinstance(raw, Mapping) or _short(raw.get("rollup")) is None:
            continue
        checks = _strings(raw.get("checks"), budget)
        evidence = _strings(raw.get("evidence"), budget)
        budget -= len(checks) + len(evidence) + 1
        recipes[name] = RecipeState(
            rollup=str(raw["rollup"]),
            checks=checks,
            freshness=_short(raw.get("freshness")) or "none",
            evidence=evidence,
        )
    commit = _short(doc.get("commit"))
    return Snapshot(build_time=_short(doc.get("buildTime")) or "", commit=commit, recipes=recipes)


def diff(before: Snapshot, after: Snapshot) -> list[Change]:
    """Every change from `before` to `after`, ordered by recipe, kind and subject."""
    changes: list[Change] = []
    for name in sorted(before.recipes.keys() | after.recipes.keys()):
        old, new = before.recipes.get(name), after.recipes.get(name)
        if old is None:
            assert new is not None
            changes.append(Change(name, ChangeKind.RECIPE_ADDED, "", None, new.rollup))
            # A new recipe: its state is the one change; each piece of evidence is listed.
            old = RecipeState(rollup=new.rollup, checks=new.checks, freshness=new.freshness)
        if new is None:
            changes.append(Change(name, ChangeKind.RECIPE_REMOVED, "", old.rollup, None))
            continue
        if old.rollup != new.rollup:
            changes.append(Change(name, ChangeKind.ROLLUP, "", old.rollup, new.rollup))
        for check in sorted(old.checks.keys() | new.checks.keys()):
            a, b = old.checks.get(check), new.checks.get(check)
            if a != b:
                changes.append(Change(name, ChangeKind.CHECK, check, a, b))
        if old.freshness != new.freshness:
            changes.append(Change(name, ChangeKind.FRESHNESS, "", old.freshness, new.freshness))
        for path in sorted(old.evidence.keys() | new.evidence.keys()):
            a, b = old.evidence.get(path), new.evidence.get(path)
            if a == b:
                continue
            if b is None:
                changes.append(Change(name, ChangeKind.EVIDENCE_REMOVED, path, a, None))
            elif b == "rejected":
                changes.append(Change(name, ChangeKind.EVIDENCE_REJECTED, path, a, b))
            elif a is None:
                changes.append(Change(name, ChangeKind.EVIDENCE_ADDED, path, None, b))
            else:
                changes.append(Change(name, ChangeKind.EVIDENCE_ADDED, path, a, b))
    changes.sort(key=Change.sort_key)
    return changes
