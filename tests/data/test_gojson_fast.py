"""`go_json`'s fast path writes exactly what the reference `json.dumps(indent=2)` path writes."""

from __future__ import annotations

import enum
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.data.gojson import _GO_ESCAPES, go_json, reference_json


def reference(obj: Any) -> str:
    text = reference_json(obj)
    for raw, escaped in _GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text + "\n"


TRICKY = st.sampled_from(["}", "]", "{", "[", ",", ":", "},\n    {", '"', "\\", "\n",
                          "<&>", "\u2028", "é", "", " ", '": {', "],\n  ["])
STRINGS = st.one_of(st.text(max_size=8), TRICKY, st.lists(TRICKY, max_size=4).map("".join))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(),
                    st.floats(allow_nan=False, allow_infinity=False), STRINGS)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(STRINGS, inner, max_size=5),
                            st.lists(inner, max_size=3).map(tuple)),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_fast_path_matches_reference(obj: Any) -> None:
    assert go_json(obj) == reference(obj)


class Colour(enum.StrEnum):
    RED = "red"


class Size(enum.IntEnum):
    BIG = 3


@pytest.mark.parametrize("obj", [
    [{"a": 1}, {"b": [1, 2]}, [3, "}"], {"c": "x]"}],            # a table of rows
    [{"a": 1}, {}],                                            # an empty row: not a table
    {"k": [{"a": "}"}, {"a": "],\n      {"}]},                   # brackets inside strings
    {"e": Colour.RED, "s": Size.BIG, "n": [Colour.RED, Size.BIG]},
    {"o": OrderedDict([("b", 1), ("a", 2)])},                  # a dict subclass
    {1: "int key", 2: {3: "nested"}, 4: [{5: None}]},           # non-string keys
    {"f": 1e300, "g": -0.0, "h": [1.5, 2]},
    "just a string <>",
    7,
])
def test_unusual_inputs_match_reference(obj: Any) -> None:
    assert go_json(obj) == reference(obj)


def test_infinity_still_refused() -> None:
    with pytest.raises(ValueError):
        go_json([{"x": float("inf")}])



def test_the_streamed_writer_gives_the_same_bytes(tmp_path: Path) -> None:
    from generator.data import gojson

    docs: list[Any] = [
        {"b": [1, 2, {"x": "<&>\u2028"}], "a": {"n": None, "t": True}},
        [{"k": "v" * 300, "j": [1.5, -2]}] * 400,  # many MiB-size flushes: chunk seams
        {"bad": float("nan")},  # the reference path after a partial write
        {1: "non-string key"},
    ]
    old = gojson._Sink.LIMIT
    gojson._Sink.LIMIT = 64  # flush often so every seam is exercised
    try:
        for n, doc in enumerate(docs):
            path = tmp_path / f"{n}.json"
            try:
                expected = go_json(doc)
            except ValueError:
                with pytest.raises(ValueError), path.open("w", encoding="utf-8") as fh:
                    gojson.write_go_json(doc, fh)
                continue
            with path.open("w", encoding="utf-8", newline="\n") as fh:
                gojson.write_go_json(doc, fh)
            assert path.read_text(encoding="utf-8") == expected, n
    finally:
        gojson._Sink.LIMIT = old
