"""Strict JSON for contributor input: what RFC 8259 (and Go's `encoding/json`) accept.

Python's `json.loads` also takes `NaN`, `Infinity` and `-Infinity`, and turns a number too big
for a float (`1e400`) into infinity. None of these is JSON, and a non-finite number in a signed
CTRF report or predicate would reach code that counts with it (`int(nan)` raises). Here each
is a `ValueError`, which every reader of bundle files already reports as "not JSON".

An escaped lone surrogate (`"\\ud800"`) is valid JSON but no character: Python would keep it
in the string, and writing that string as UTF-8 (the verdict cache, data/) raises. As Go does,
each becomes U+FFFD, the replacement character.

Most input is read by orjson (several times faster, and it shares the strings of repeated keys,
which keeps a build's parsed bundles small). orjson refuses everything above on its own
(non-finite numbers, lone surrogates), and what it refuses is read again by the reference
reader, `json.loads` with the checks above, which decides; so does input holding a run of 19
or more digits, where orjson would turn an integer beyond 64 bits into a float.

Every document is read under `generator.limits.ParseLimits` (size, nesting depth, string length,
items per container and in total): a document over a limit raises `JsonLimitError` (also a
`ValueError`, so every caller already turns it into that item's rejection). Depth is checked on
the bytes *before* any parser runs, because both parsers recurse (Python's `json` raises
`RecursionError` near 1,000 levels); the other limits are checked on the parsed value, only when
a cheap count of the bytes (commas, brackets, length) cannot rule a violation out.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from generator.limits import PARSE_LIMITS, ParseLimits

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""The escape of a surrogate code point; only input holding one is walked for lone ones."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x78 for b in range(256))
_LONG_DIGITS = b"0" * 19
"""A number orjson may not read exactly (an integer beyond 64 bits, read as a float): a run of
19 digits, found as 19 zeros once every digit reads `0` (far cheaper than a regex search)."""


class NotJsonNumberError(ValueError):
    """A number JSON cannot carry: `NaN`, `Infinity`, or one beyond a float's range."""


def _constant(name: str) -> Any:
    raise NotJsonNumberError(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJsonNumberError(f"{text[:40]} is beyond a float's range")
    return value


class JsonLimitError(ValueError):
    """A document over one of the `ParseLimits` (`limit` names the field)."""

    def __init__(self, limit: str, allowed: int, message: str) -> None:
        super().__init__(f"{message} (limit {limit} = {allowed})")
        self.limit = limit
        self.allowed = allowed


def loads(data: bytes | str, limits: ParseLimits = PARSE_LIMITS) -> Any:
    """`json.loads` refusing non-finite numbers (`NotJsonNumberError`, a `ValueError`), with
    lone surrogates replaced by U+FFFD, and documents over `limits` (`JsonLimitError`)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > limits.document_bytes:
        raise JsonLimitError(
            "document_bytes", limits.document_bytes, f"document is {len(raw)} bytes"
        )
    opens = raw.count(b"[") + raw.count(b"{")
    if opens > limits.depth:
        _check_depth(raw, limits.depth)
    if _LONG_DIGITS not in raw.translate(_DIGITS_AS_ZERO):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = _reference(data, raw)  # the reference reader decides (a BOM, UTF-16, ...)
    else:
        value = _reference(data, raw)
    commas = raw.count(b",") if opens else 0
    if (
        commas + opens + 1 > limits.total_items
        or commas + 1 > limits.container_items
        or len(raw) > limits.string_chars
    ):
        _check_items(value, limits)
    return value


def _reference(data: bytes | str, raw: bytes) -> Any:
    value = reference_loads(data)
    return _replace_surrogates(value) if _SURROGATE_ESCAPE.search(raw) else value


def reference_loads(data: bytes | str) -> Any:
    """`json.loads` refusing non-finite numbers (lone surrogates kept): what `loads` means."""
    return json.loads(data, parse_constant=_constant, parse_float=_float)


def problem(exc: ValueError) -> str:
    """How a caller words a document `loads` refused: "exceeds a parse limit: ..." for a
    limit, else "is not JSON: ..."."""
    if isinstance(exc, JsonLimitError):
        return f"exceeds a parse limit: {exc}"
    return f"is not JSON: {exc}"


# --------------------------------------------------------------------------- limits

_DROP = bytes(sorted(set(range(256)) - set(b'"[]{}')))
"""Every byte but quotes and brackets (deleted before the depth scan)."""
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
"""Objects and arrays nest alike: `{` and `}` are read as `[` and `]`."""


def _check_depth(raw: bytes, limit: int) -> None:
    """Raise `JsonLimitError` unless the brackets of `raw` outside strings nest at most
    `limit` deep, counted exactly as a parser reading `raw` would reach them.

    All in C-speed bytes operations: escaped backslashes and quotes are dropped (so every quote
    left opens or closes a string), then everything but quotes and brackets; adjacent quotes
    are dropped (an empty string, or two strings merged: no byte changes sides), then what is
    still quoted; each pass of `replace(b"[]", b"")` then removes the innermost pairs, so the
    brackets nest at most `limit` deep exactly when `limit` passes leave nothing. Unbalanced
    input (not JSON) passes when a parser could not open more than `limit` before failing.
    """
    text = raw
    if raw[:4].count(0) or raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:  # UTF-16/32, which the reference reader decodes: scan the characters
            text = raw.decode(json.detect_encoding(raw)).encode("utf-8", "surrogatepass")
        except (UnicodeDecodeError, LookupError):
            return  # the reference reader refuses it before parsing anything
    if _escapes_quote_or_backslash(text):
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    text = text.translate(_ONE_KIND, _DROP)
    if b'"' in text:
        text = text.replace(b'""', b"")
        if b'"' in text:
            text = b"".join(text.split(b'"')[::2])
    passes = 0
    while text:
        if passes == limit:
            break
        shorter = text.replace(b"[]", b"")
        if len(shorter) == len(text):  # unbalanced (not JSON): what a parser could open
            if shorter.count(b"[") + passes <= limit:
                return
            break
        text = shorter
        passes += 1
    else:
        return
    raise JsonLimitError("depth", limit, f"arrays/objects nested more than {limit} deep")


def _escapes_quote_or_backslash(text: bytes) -> bool:
    """Whether some backslash in `text` is followed by a quote or a backslash (few documents
    hold any backslash; looking at each of a handful is cheaper than searching for pairs)."""
    count = text.count(b"\\")
    if count > 16:
        return True
    at = -1
    for _ in range(count):
        at = text.find(b"\\", at + 1)
        if text[at + 1 : at + 2] in (b"\\", b'"'):
            return True
    return False


def _check_items(value: Any, limits: ParseLimits) -> None:
    """Raise `JsonLimitError` when a parsed document has too many items (in one container or
    in all) or too long a string (keys included). Iterative: depth is already bounded."""
    total = 1
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str:
            if len(node) > limits.string_chars:
                raise JsonLimitError(
                    "string_chars", limits.string_chars, f"a string of {len(node)} characters"
                )
            continue
        if kind is dict:
            stack.extend(node)
            items = node.values()
        elif kind is list:
            items = node
        else:
            continue
        count = len(items)
        if count > limits.container_items:
            raise JsonLimitError(
                "container_items", limits.container_items, f"an array/object of {count} items"
            )
        total += count
        if total > limits.total_items:
            raise JsonLimitError(
                "total_items", limits.total_items, f"more than {limits.total_items} values in all"
            )
        stack.extend(items)


def _replace_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys included) replaced by U+FFFD.
    (`json.loads` joins a valid pair into one character, so any surrogate left is lone.)"""
    kind = type(value)
    if kind is str:
        return _SURROGATE.sub("\ufffd", value)
    if kind is list:
        return [_replace_surrogates(v) for v in value]
    if kind is dict:
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value
