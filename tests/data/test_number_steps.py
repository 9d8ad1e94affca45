"""A stored entry's number steps (`generator.data.gonumbers.number_steps`) spare the searches
of Go's numbers and change nothing else: finishing a layout with its steps gives the bytes
finishing it without them gives, at every indent; wrong steps give other bytes, which is why
they are kept sealed inside the product (`tests/evaluation/test_products_store.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from generator.data.gojson import finish_layout, subtree_layout
from generator.data.gonumbers import EXPONENTS, POINT_ZEROS, number_steps

LAYOUTS: dict[str, Any] = {
    "none": {"a": "node-1 e-1 1e", "n": [1, 2.5, -3], "t": "2026-01-01T00:00:00+00:00"},
    "point-zero": {"floor": 750.0, "measured": [1014.0, 918.5], "last": 300.0},
    "exponent": {"tiny": 1e-7, "huge": 1e21, "x": 1.5e-10, "big": 2.5e16},
    "both": {"tiny": 1e-7, "floor": 750.0, "v": [0.00001, 20.0]},
    "escapes": {"c": "Constraint: >= 750 & <x> \u2028 \u2029", "n": 750.0},
    "top-level-float": 300.0,
    "list": [1e-7, 300.0, "e-1", 2],
}
EXPECTED = {
    "none": 0,
    "point-zero": POINT_ZEROS,
    "exponent": EXPONENTS,
    "both": EXPONENTS | POINT_ZEROS,
    "escapes": POINT_ZEROS,
    "top-level-float": 0,  # the end of the text: `go_numbers` always looks there
    "list": EXPONENTS | POINT_ZEROS,
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_the_steps_name_what_go_numbers_changes(name: str) -> None:
    assert number_steps(subtree_layout(LAYOUTS[name])) == EXPECTED[name]


@pytest.mark.parametrize("pad", ["", "  ", "      "])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_finishing_with_the_steps_is_finishing_without_them(name: str, pad: str) -> None:
    layout = subtree_layout(LAYOUTS[name])
    assert finish_layout(layout, pad, number_steps(layout)) == finish_layout(layout, pad)


@pytest.mark.parametrize("name", ["point-zero", "exponent", "both"])
def test_wrong_steps_give_other_bytes(name: str) -> None:
    layout = subtree_layout(LAYOUTS[name])
    assert finish_layout(layout, "  ", 0) != finish_layout(layout, "  ")
