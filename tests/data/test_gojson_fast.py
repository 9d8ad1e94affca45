"""`go_json`'s fast paths write exactly what the reference writes: `json.dumps(indent=2)`'s
layout with every float value written by `go_float` (which tests/data/test_gojson_go.py holds
against Go itself)."""

from __future__ import annotations

import enum
import json
import math
import re
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.data import gojson
from generator.data.gojson import _GO_ESCAPES, go_json, go_json_bytes, reference_json
from generator.data.gonumbers import go_float


def reference(obj: Any) -> str:
    """The plain reference: each finite float value swapped for a unique placeholder string,
    `json.dumps(indent=2)`, then each placeholder replaced by the float's `go_float` text."""
    mark = "float-" + uuid.uuid4().hex + "-"
    floats: list[float] = []

    def swap(value: Any) -> Any:
        if type(value) is float and math.isfinite(value):
            floats.append(value)
            return f"{mark}{len(floats) - 1}"
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [swap(v) for v in value]
        return value

    text = re.sub(
        f'"{mark}([0-9]+)"', lambda m: go_float(floats[int(m[1])]), reference_json(swap(obj))
    )
    for raw, escaped in _GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text + "\n"


TRICKY = st.sampled_from(
    [
        "}",
        "]",
        "{",
        "[",
        ",",
        ":",
        "},\n    {",
        '"',
        "\\",
        "\n",
        "<&>",
        "\u2028",
        "\u2029",
        "\u2027",  # shares its first two UTF-8 bytes with the separators, never escaped
        "\u2014",
        "é",
        "",
        " ",
        '": {',
        "],\n  [",
    ]
)
STRINGS = st.one_of(st.text(max_size=8), TRICKY, st.lists(TRICKY, max_size=4).map("".join))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    STRINGS,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(STRINGS, inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_fast_path_matches_reference(obj: Any) -> None:
    assert go_json(obj) == reference(obj)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_the_streamed_parts_are_the_whole_layout(obj: Any) -> None:
    """A document laid out whole (`go_json_bytes`) and walked a subtree at a time
    (`go_json_parts`, the streamed writers') are the same bytes."""
    assert b"".join(gojson.go_json_parts(obj)) == go_json_bytes(obj)


class Colour(enum.StrEnum):
    RED = "red"


class Size(enum.IntEnum):
    BIG = 3


@pytest.mark.parametrize(
    "obj",
    [
        [{"a": 1}, {"b": [1, 2]}, [3, "}"], {"c": "x]"}],  # a table of rows
        [{"a": 1}, {}],  # an empty row: not a table
        {"k": [{"a": "}"}, {"a": "],\n      {"}]},  # brackets inside strings
        {"e": Colour.RED, "s": Size.BIG, "n": [Colour.RED, Size.BIG]},
        {"o": OrderedDict([("b", 1), ("a", 2)])},  # a dict subclass
        {1: "int key", 2: {3: "nested"}, 4: [{5: None}]},  # non-string keys
        {"f": 1e300, "g": -0.0, "h": [1.5, 2]},
        "just a string <>",
        7,
    ],
)
def test_unusual_inputs_match_reference(obj: Any) -> None:
    assert go_json(obj) == reference(obj)


@pytest.mark.parametrize(
    "obj",
    [
        [{"x": float("inf")}, {"y": float("nan")}],  # orjson's own path
        {"x": [float("-inf"), 1e-7], "y": float("nan")},  # a small float: the slow paths
        {"x": float("nan"), "k": {1: "non-string key"}},  # the reference path
    ],
)
def test_non_finite_numbers_are_null_on_every_path(obj: Any) -> None:
    """JSON has no NaN or infinity: every path writes them as null (as JSON.stringify does)
    instead of failing the build."""
    written = json.loads(go_json(obj))
    assert "null" in go_json(obj)
    assert written == json.loads(reference(gojson._finite(obj)))


@pytest.mark.parametrize(
    "obj",
    [
        {"tiny": 1e-05, "neg": -3.5e-7, "list": [0.00001234, 1e-300]},  # Python's 1e-05 form
        {"int": 300.0, "z": [-0.0, 0.0, 1e16, 1e20, 1e21], "x": 2.5},  # 300.0, 1e+16 forms
        {"k": {1: [300.0, 1e-06, 1e16]}},  # the same, Python's way
        {"big": 2**70, "n": [-(2**64)]},  # beyond 64 bits
        {"s": "0.00001 in a string", "t": "1e-5"},  # look-alikes in strings
        {"when": __import__("datetime").date(2026, 1, 1)},  # refused by both
    ],
)
def test_what_orjson_or_python_write_unlike_go(obj: Any) -> None:
    try:
        expected = reference(obj)
    except TypeError:
        with pytest.raises(TypeError):
            go_json(obj)
        return
    assert go_json(obj) == expected


def test_deep_and_wide_documents_are_streamed_in_pieces() -> None:
    doc = {
        "pointers": [{"path": f"p{n}", "tests": [{"n": n, "s": "<&>"}] * 3} for n in range(50)],
        "b": {"c": {"d": {"e": [1, {"f": "\u2029"}]}}},
    }
    parts = list(gojson._pieces(doc, "", 0, gojson.WALKED_DEPTH))
    assert len(parts) > 50  # the top levels are walked
    assert b"".join(parts) + b"\n" == go_json_bytes(doc) == reference(doc).encode()


def test_the_streamed_writer_gives_the_same_bytes(tmp_path: Path) -> None:
    docs: list[Any] = [
        {"b": [1, 2, {"x": "<&>\u2028"}], "a": {"n": None, "t": True}},
        [{"k": "v" * 300, "j": [1.5, -2]}] * 400,
        {"bad": float("nan"), "small": [1e-9]},
        {1: "non-string key"},
    ]
    for n, doc in enumerate(docs):
        path = tmp_path / f"{n}.json"
        with path.open("wb") as fh:
            gojson.write_go_json(doc, fh)
        assert path.read_bytes() == go_json(doc).encode("utf-8"), n
