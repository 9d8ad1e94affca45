"""Strict JSON for contributor files: no non-finite numbers, no lone surrogates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import strictjson


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e400", "[-1e999]",
                                  '{"x": [1, {"y": NaN}]}'])
def test_non_finite_numbers_are_not_json(text: str) -> None:
    assert json.loads(text) is not None  # Python's own json takes them ...
    with pytest.raises(ValueError, match="not a JSON number|beyond a float's range"):
        strictjson.loads(text)            # ... JSON and Go do not


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1.5, "b": [1e308, -0.0, 2]}', {"a": 1.5, "b": [1e308, -0.0, 2]}),
    ('"\\ud83d\\ude00"', "\U0001f600"),                  # a valid pair is one character
    ('["x\\ud800y"]', ["x\ufffdy"]),                    # a lone high surrogate
    ('{"k\\uDFFF": "\\udc00"}', {"k\ufffd": "\ufffd"}),  # lone low ones, keys too
    ('"\\\\ud800"', "\\ud800"),                          # an escaped backslash, not an escape
])
def test_values_and_surrogates(text: str, expected: Any) -> None:
    got = strictjson.loads(text.encode())
    assert got == expected
    assert strictjson.loads(text) == expected
    json.dumps(got, ensure_ascii=False).encode("utf-8")  # always writable as UTF-8
