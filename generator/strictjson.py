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
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""The escape of a surrogate code point; only input holding one is walked for lone ones."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
"""A number orjson may not read exactly (an integer beyond 64 bits, read as a float)."""


class NotJsonNumberError(ValueError):
    """A number JSON cannot carry: `NaN`, `Infinity`, or one beyond a float's range."""


def _constant(name: str) -> Any:
    raise NotJsonNumberError(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJsonNumberError(f"{text[:40]} is beyond a float's range")
    return value


def loads(data: bytes | str) -> Any:
    """`json.loads` refusing non-finite numbers (`NotJsonNumberError`, a `ValueError`), with
    lone surrogates replaced by U+FFFD."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _LONG_DIGITS.search(raw) is None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # the reference reader decides (a BOM, UTF-16, 1e400, a lone surrogate, ...)
    value = reference_loads(data)
    return _replace_surrogates(value) if _SURROGATE_ESCAPE.search(raw) else value


def reference_loads(data: bytes | str) -> Any:
    """`json.loads` refusing non-finite numbers (lone surrogates kept): what `loads` means."""
    return json.loads(data, parse_constant=_constant, parse_float=_float)


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
