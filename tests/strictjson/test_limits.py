"""The one JSON reader refuses documents over the parse limits with a reason, never an internal
error; everything at a limit is accepted (depth 64, size, string length, items)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import strictjson

DEPTH = 64
"""The published nesting limit (README "Limits on contributor input")."""


def nested(depth: int, open_: str = "[", close: str = "]") -> bytes:
    return (open_ * depth + close * depth).encode()


def objects(depth: int) -> bytes:
    return ('{"a":' * depth + "1" + "}" * depth).encode()


def refused(data: bytes | str, **kwargs: Any) -> ValueError:
    """The error `loads` raises; a RecursionError (or anything not a ValueError) fails here."""
    with pytest.raises(ValueError) as caught:
        strictjson.loads(data, **kwargs)
    return caught.value


def test_the_limits_live_in_one_frozen_dataclass() -> None:
    import dataclasses

    from generator.limits import PARSE_LIMITS, ParseLimits

    assert dataclasses.is_dataclass(ParseLimits)
    assert PARSE_LIMITS.depth == DEPTH
    with pytest.raises(dataclasses.FrozenInstanceError):
        PARSE_LIMITS.depth = 1000  # type: ignore[misc]


def mixed(depth: int) -> bytes:
    """Arrays and objects alternating, `depth` levels in all."""
    pairs, odd = divmod(depth, 2)
    return ('[{"k":' * pairs + ("[]" if odd else "1") + "}]" * pairs).encode()


@pytest.mark.parametrize("make", [nested, objects, mixed], ids=["arrays", "objects", "mixed"])
def test_exactly_64_deep_is_accepted_65_is_refused(make: Any) -> None:
    assert strictjson.loads(make(DEPTH)) is not None
    error = refused(make(DEPTH + 1))
    assert "nested more than 64 deep" in str(error)
    assert isinstance(error, strictjson.JsonLimitError) and error.limit == "depth"


@pytest.mark.parametrize("depth", [1_000, 2_000, 10_000, 100_000])
def test_deep_documents_are_refused_not_a_recursion_error(depth: int) -> None:
    # Python's json raised RecursionError from ~1,000 levels; orjson refuses > 1,024 and then
    # handed the bytes to json.loads, so one deep document stopped the whole build.
    for data in (nested(depth), objects(depth), b'{"x": ' + nested(depth) + b"}"):
        assert "nested more than 64 deep" in str(refused(data))


def test_a_deep_unclosed_document_is_refused_before_parsing() -> None:
    assert "nested more than" in str(refused(b"[" * 100_000))
    assert "nested more than" in str(refused(b'{"a":' * 50_000))


def test_a_deep_utf16_document_is_refused() -> None:
    # json.loads decodes UTF-16/32 itself; the scan must see its brackets too
    assert "nested more than" in str(refused(("[" * 5000 + "]" * 5000).encode("utf-16")))
    assert strictjson.loads(("[" * DEPTH + "]" * DEPTH).encode("utf-16-le")) is not None


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"a": "[" * 500, "b": "{" * 500}),  # brackets inside strings
        json.dumps(['\\"[[[' * 100, "\\" * 7, "]" * 90]),  # escaped quotes and backslashes
        json.dumps({"[" * 70: "x", '"': "{" * 80}),  # keys too
        json.dumps(['"' + "[" * 100]),  # an escaped quote opening a string
    ],
)
def test_brackets_inside_strings_do_not_count(text: str) -> None:
    assert strictjson.loads(text) == json.loads(text)


def test_invalid_json_keeps_its_own_message() -> None:
    error = refused(b'{"a": [1, 2}' + b" " * 100 + b"[" * 10)
    assert not isinstance(error, strictjson.JsonLimitError)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


_TEXT = st.sampled_from(["", "[", "]", "{", "}", '"', "\\", '\\"', "a\\\\", "[]", "\\u005b"])
_TREE = st.recursive(
    st.one_of(_TEXT, st.integers(-5, 5), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(tree=_TREE, wrap=st.integers(0, 70), ascii_only=st.booleans(), indent=st.booleans())
def test_depth_check_agrees_with_the_parsed_depth(
    tree: Any, wrap: int, ascii_only: bool, indent: bool
) -> None:
    """Exact on both sides: never refuses a legal document, never lets a deeper one through."""
    value = tree
    for _ in range(wrap):
        value = [value]
    data = json.dumps(value, ensure_ascii=ascii_only, indent=1 if indent else None).encode()
    if _depth(value) <= DEPTH:
        assert strictjson.loads(data) == value
    else:
        assert isinstance(refused(data), strictjson.JsonLimitError)


# --------------------------------------------------------------------------- size, strings, items


def test_document_size_at_the_limit_is_accepted_one_byte_more_is_refused() -> None:
    from generator.limits import PARSE_LIMITS

    size = PARSE_LIMITS.document_bytes
    assert strictjson.loads(b"[" + b" " * (size - 2) + b"]") == []
    error = refused(b"[" + b" " * (size - 1) + b"]")
    assert "limit document_bytes" in str(error)


def test_string_length_at_the_limit_is_accepted_one_more_is_refused() -> None:
    from generator.limits import PARSE_LIMITS

    chars = PARSE_LIMITS.string_chars
    assert len(strictjson.loads(json.dumps(["x" * chars]))[0]) == chars
    assert "limit string_chars" in str(refused(json.dumps(["x" * (chars + 1)])))
    assert "limit string_chars" in str(refused(json.dumps({"k" * (chars + 1): 1})))
    # escapes count as the characters they make: 6 bytes of \\u0041 are one character
    assert len(strictjson.loads(json.dumps(["é" * chars], ensure_ascii=True))[0]) == chars


def test_items_in_one_container_at_the_limit_are_accepted_one_more_is_refused() -> None:
    from generator.limits import PARSE_LIMITS

    items = PARSE_LIMITS.container_items
    assert len(strictjson.loads(b"[" + b",".join([b"0"] * items) + b"]")) == items
    assert "limit container_items" in str(refused(b"[" + b",".join([b"0"] * (items + 1)) + b"]"))
    members = b",".join(b'"%d":0' % i for i in range(items + 1))
    assert "limit container_items" in str(refused(b"{" + members + b"}"))


def test_items_in_all_at_the_limit_are_accepted_one_more_is_refused() -> None:
    from generator.limits import PARSE_LIMITS

    total = PARSE_LIMITS.total_items  # values, containers included: root + lists + numbers
    lists = 11
    numbers = total - 1 - lists
    sizes = [numbers // lists] * lists
    sizes[-1] += numbers - sum(sizes)
    assert max(sizes) <= PARSE_LIMITS.container_items

    def document(sizes: list[int]) -> bytes:
        return b"[" + b",".join(b"[" + b",".join([b"0"] * n) + b"]" for n in sizes) + b"]"

    assert len(strictjson.loads(document(sizes))) == lists
    sizes[0] += 1
    assert "limit total_items" in str(refused(document(sizes)))


def test_smaller_limits_can_be_given() -> None:
    from generator.limits import ParseLimits

    tight = ParseLimits(depth=2, string_chars=3, container_items=2, total_items=5)
    assert strictjson.loads(b'[[1, "abc"]]', tight) == [[1, "abc"]]
    assert refused(b"[[[1]]]", limits=tight).limit == "depth"  # type: ignore[attr-defined]
    assert refused(b'["abcd"]', limits=tight).limit == "string_chars"  # type: ignore[attr-defined]
    assert refused(b"[1, 2, 3]", limits=tight).limit == "container_items"  # type: ignore[attr-defined]
    assert refused(b"[[1, 2], [3, 4]]", limits=tight).limit == "total_items"  # type: ignore[attr-defined]


def test_reading_leaves_the_recursion_limit_alone() -> None:
    before = sys.getrecursionlimit()
    refused(nested(50_000))
    assert sys.getrecursionlimit() == before
