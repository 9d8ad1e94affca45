"""Badges: one SVG and one shields.io endpoint JSON per recipe plus the board; well-formed,
accessible, readable (WCAG AA) and saying in words what the recipe's state is."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from generator.badges import (
    BOARD,
    COLOURS,
    LABEL_COLOUR,
    WORDS,
    board_badge,
    contrast,
    endpoint_json,
    recipe_badges,
    render_svg,
)

SVG = "{http://www.w3.org/2000/svg}"
SCHEMA = json.loads(
    (
        Path(__file__).resolve().parents[2]
        / "generator"
        / "data"
        / "schema"
        / "badge-endpoint.schema.json"
    ).read_text(encoding="utf-8")
)


def _rollups(site: Path) -> dict[str, str]:
    index = json.loads((site / "data" / "index.json").read_text(encoding="utf-8"))
    return {
        tab["recipe"]: tab["rollup"]
        for group in index["groups"]
        for dashboard in group["dashboards"]
        for tab in dashboard["tabs"]
    }


def test_one_svg_and_one_endpoint_per_recipe_and_the_board(signed_site: Path) -> None:
    rollups = _rollups(signed_site)
    assert len(set(rollups.values())) >= 3  # the demo shows several states
    names = {p.name for p in (signed_site / "badges").iterdir()}
    expected = {f"{r}.{ext}" for r in [*rollups, BOARD] for ext in ("svg", "json")}
    assert names == expected


def test_each_badge_says_its_state_in_words_and_colour(signed_site: Path) -> None:
    for recipe, state in _rollups(signed_site).items():
        doc = json.loads((signed_site / "badges" / f"{recipe}.json").read_text("utf-8"))
        jsonschema.validate(doc, SCHEMA)
        assert doc["schemaVersion"] == 1
        assert doc["message"].startswith(WORDS[state])
        assert "not production trust root" in doc["message"]  # the demo's caveat, in words
        assert "#" + doc["color"] == COLOURS[state]
        root = ET.fromstring((signed_site / "badges" / f"{recipe}.svg").read_bytes())
        assert root.tag == f"{SVG}svg" and root.get("role") == "img"
        title = root.find(f"{SVG}title")
        assert title is not None and title.text == f"aicr evidence: {doc['message']}"
        assert root.get("aria-label") == title.text
        fills = [r.get("fill") for r in root.iter(f"{SVG}rect")]
        assert fills == [LABEL_COLOUR, COLOURS[state]]
        texts = [t.text for t in root.iter(f"{SVG}text")]
        assert texts == ["aicr evidence", doc["message"]]
        assert not [e for e in root.iter() if e.tag.endswith(("script", "image", "use"))]


def test_the_board_badge_counts_the_recipes(signed_site: Path) -> None:
    rollups = _rollups(signed_site)
    doc = json.loads((signed_site / "badges" / "board.json").read_text("utf-8"))
    jsonschema.validate(doc, SCHEMA)
    confirmed = sum(1 for s in rollups.values() if s == "CONFIRMED")
    assert doc["message"].startswith(f"{confirmed} of {len(rollups)} recipes confirmed")
    if "FAILING" in rollups.values():
        assert doc["color"] == COLOURS["FAILING"].lstrip("#")


@pytest.mark.parametrize("state", sorted(COLOURS))
def test_badge_colours_keep_white_text_readable(state: str) -> None:
    assert contrast("#ffffff", COLOURS[state]) >= 4.5
    assert contrast("#ffffff", LABEL_COLOUR) >= 4.5


def test_words_are_escaped_and_the_badge_stays_well_formed() -> None:
    index = {
        "groups": [{"dashboards": [{"tabs": [{"recipe": "a-recipe", "rollup": "CONTESTED"}]}]}]
    }
    (badge,) = recipe_badges(index, {"trust": {"production": True}}, preview=True)
    assert badge.message == "contested (preview)"
    hostile = type(badge)(badge.name, badge.state, "<a & b>", 'say "hi"', badge.colour)
    root = ET.fromstring(render_svg(hostile))
    assert root.get("aria-label") == '<a & b>: say "hi"'
    assert json.loads(endpoint_json(hostile))["label"] == "<a & b>"
    board = board_badge(index, {})
    assert board.state == "CONTESTED" and "1 contested" in board.message
