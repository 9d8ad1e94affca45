"""Strict JSON for contributor files: no non-finite numbers, no lone surrogates."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator import strictjson


@pytest.mark.parametrize(
    "text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e400", "[-1e999]", '{"x": [1, {"y": NaN}]}']
)
def test_non_finite_numbers_are_not_json(text: str) -> None:
    assert json.loads(text) is not None  # Python's own json takes them ...
    with pytest.raises(ValueError, match="not a JSON number|beyond a float's range"):
        strictjson.loads(text)  # ... JSON and Go do not


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1.5, "b": [1e308, -0.0, 2]}', {"a": 1.5, "b": [1e308, -0.0, 2]}),
        ('"\\ud83d\\ude00"', "\U0001f600"),  # a valid pair is one character
        ('["x\\ud800y"]', ["x\ufffdy"]),  # a lone high surrogate
        ('{"k\\uDFFF": "\\udc00"}', {"k\ufffd": "\ufffd"}),  # lone low ones, keys too
        ('"\\\\ud800"', "\\ud800"),  # an escaped backslash, not an escape
    ],
)
def test_values_and_surrogates(text: str, expected: Any) -> None:
    got = strictjson.loads(text.encode())
    assert got == expected
    assert strictjson.loads(text) == expected
    json.dumps(got, ensure_ascii=False).encode("utf-8")  # always writable as UTF-8


@pytest.mark.parametrize(
    "text",
    [
        b'\xef\xbb\xbf{"a": 1}',  # a UTF-8 BOM (orjson refuses it)
        '{"\u00e9": [1, 2]}'.encode("utf-16"),  # UTF-16, which json.loads detects
        b"[18446744073709551616, -9223372036854775809]",  # beyond 64 bits: exact integers
        b"123456789012345678901234567890",
        b'{"a": 1, "a": 2}',  # the last duplicate wins in both
        b"[1e-400, -0.0, 9223372036854775807]",
    ],
)
def test_orjson_and_the_reference_reader_agree(text: bytes) -> None:
    got = strictjson.loads(text)
    assert got == json.loads(text)
    assert json.dumps(got) == json.dumps(json.loads(text))  # same types: ints stay ints


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values, st.booleans())
def test_any_json_reads_as_the_reference_reads_it(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    if b"\\ud" in text.lower() or any(
        0xD800 <= ord(c) <= 0xDFFF for c in text.decode("utf-8", "surrogatepass")
    ):
        return  # lone surrogates: their own test above
    got = strictjson.loads(text)
    assert json.dumps(got, sort_keys=True) == json.dumps(
        strictjson.reference_loads(text), sort_keys=True
    )
