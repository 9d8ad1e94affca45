"""Strict JSON for contributor input: what RFC 8259 (and Go's `encoding/json`) accept.

Python's `json.loads` also takes `NaN`, `Infinity` and `-Infinity`, and turns a number too big
for a float (`1e400`) into infinity. None of these is JSON, and a non-finite number in a signed
CTRF report or predicate would reach code that counts with it (`int(nan)` raises). Here each
is a `ValueError`, which every reader of bundle files already reports as "not JSON".
"""

from __future__ import annotations

import json
import math
from typing import Any


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
    """`json.loads` refusing non-finite numbers (`NotJsonNumberError`, a `ValueError`)."""
    return json.loads(data, parse_constant=_constant, parse_float=_float)
