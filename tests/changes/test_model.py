"""The board snapshot agrees with what the pages show, and `diff` names every kind of change."""

from __future__ import annotations

import json
from pathlib import Path

from generator.changes import ChangeKind, RecipeState, Snapshot, diff, snapshot_of
from generator.site.pages import SiteModel
from tests.changes.conftest import Sites


def _docs(site: Path) -> tuple[dict, dict, dict]:
    data = site / "data"
    return tuple(
        json.loads((data / n).read_bytes())
        for n in ("index.json", "pointers.json", "build-info.json")
    )  # type: ignore[return-value]


def test_the_snapshot_says_what_the_recipe_pages_say(sites: Sites) -> None:
    for site in (sites.before, sites.after):
        index, pointers, info = _docs(site)
        board = snapshot_of(index, pointers, info)
        model = SiteModel(index, {}, pointers, info)
        assert list(board.recipes) == [t.recipe for t in model.tabs]
        for tab in model.tabs:
            state = board.recipes[tab.recipe]
            assert state.rollup == tab.doc["rollup"]
            assert state.freshness == model.freshness(tab.recipe).state
            assert set(state.evidence) == {str(p["path"]) for p in model.pointers_for(tab.recipe)}
        assert board.as_dict() == json.loads((site / "data" / "changes.json").read_bytes())["board"]


def test_diff_names_every_kind_of_change() -> None:
    before = Snapshot(
        "2027-01-01T00:00:00Z",
        "a" * 40,
        {
            "kept": RecipeState(
                "SINGLE",
                {"p/c1": "SINGLE", "p/gone": "SINGLE"},
                "fresh",
                {"e1": "verified", "e2": "verified", "e3": "pending", "e4": "verified"},
            ),
            "dropped": RecipeState("FAILING"),
        },
    )
    after = Snapshot(
        "2027-01-02T00:00:00Z",
        "b" * 40,
        {
            "kept": RecipeState(
                "CONFIRMED",
                {"p/c1": "CONFIRMED", "p/new": "SINGLE"},
                "stale",
                {"e1": "verified", "e2": "rejected", "e3": "verified", "e5": "verified"},
            ),
            "fresh-recipe": RecipeState("SINGLE", {"p/c": "SINGLE"}, "fresh", {"x": "verified"}),
        },
    )
    got = [(c.recipe, c.kind, c.subject, c.before, c.after) for c in diff(before, after)]
    assert got == [
        ("dropped", ChangeKind.RECIPE_REMOVED, "", "FAILING", None),
        ("fresh-recipe", ChangeKind.RECIPE_ADDED, "", None, "SINGLE"),
        ("fresh-recipe", ChangeKind.EVIDENCE_ADDED, "x", None, "verified"),
        ("kept", ChangeKind.ROLLUP, "", "SINGLE", "CONFIRMED"),
        ("kept", ChangeKind.CHECK, "p/c1", "SINGLE", "CONFIRMED"),
        ("kept", ChangeKind.CHECK, "p/gone", "SINGLE", None),
        ("kept", ChangeKind.CHECK, "p/new", None, "SINGLE"),
        ("kept", ChangeKind.FRESHNESS, "", "fresh", "stale"),
        ("kept", ChangeKind.EVIDENCE_ADDED, "e3", "pending", "verified"),
        ("kept", ChangeKind.EVIDENCE_ADDED, "e5", None, "verified"),
        ("kept", ChangeKind.EVIDENCE_REMOVED, "e4", "verified", None),
        ("kept", ChangeKind.EVIDENCE_REJECTED, "e2", "verified", "rejected"),
    ]
    assert diff(after, after) == []
