"""Numbers in JSON text as Go's `encoding/json` writes them (`generator.data.gojson`'s second
step): a float64 in Go's notation (`go_float`), and the float tokens of orjson's or Python's text
rewritten to it (`go_numbers`)."""

from __future__ import annotations

import math
import re

__all__ = ["EXPONENTS", "POINT_ZEROS", "STEPS", "go_float", "go_numbers", "number_steps"]

_EXPONENT_MINUS = re.compile(rb"e-[0-9]")
_EXPONENT_PLUS = re.compile(rb"e\+[0-9]")
_POINT_ZERO = re.compile(rb"\.0(?=,?\n)")
"""The `.0` of an integral float in the text, which Go does not write."""
_DIGITS = frozenset(b"0123456789")
_EXPONENT_TOKEN = re.compile(rb'(?m)(^ *|(?<=": ))(-?[0-9]+(?:\.[0-9]+)?e[-+][0-9]+)(?=,?$)')
"""A number token with an exponent: an array item (a line of its own) or an object value."""


def go_float(value: float) -> str:
    """A finite float as Go's `encoding/json` writes a float64: the shortest digits that read
    back as the same value (Python's `repr` digits, which are Go's `strconv` digits), in plain
    notation (`300`, `0.00001`, `100000000000000000000`) unless below 1e-6 or from 1e21 on,
    which Go writes with an exponent of at least one digit after `-` and two after `+`
    (`1e-7`, `1.5e-10`, `1e+21`). Zero keeps its sign (`-0`), as in Go."""
    if value == 0.0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    text = float.__repr__(value)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)  # value = 0.<digits> * 10**point
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    digits = significant.rstrip("0")
    size = abs(value)
    if size < 1e-6 or size >= 1e21:
        power = point - 1
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e-{-power}" if power < 0 else f"{sign}{body}e+{power:02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _go_token(match: re.Match[bytes]) -> bytes:
    """One number token with an exponent, rewritten as Go writes it (its indent kept)."""
    return match[1] + go_float(float(match[2])).encode("ascii")


def _exponent(pattern: re.Pattern[bytes], data: bytes) -> bool:
    """Whether `pattern` (`e-` or `e+` then a digit) matches after a digit in `data`."""
    return any(m.start() and data[m.start() - 1] in _DIGITS for m in pattern.finditer(data))


EXPONENTS = 1
"""A `number_steps` bit: the text holds a float token with an exponent to rewrite."""
POINT_ZEROS = 2
"""A `number_steps` bit: the text holds the `.0` of an integral float (before its end)."""
STEPS = frozenset(range((EXPONENTS | POINT_ZEROS) + 1))
"""Every value `number_steps` can give: what a stored or spooled steps value must be."""


def number_steps(data: bytes) -> int:
    """Which of `go_numbers`' rewriting steps change `data` (`EXPONENTS | POINT_ZEROS`), found
    by the same searches: kept with a text that is written again and again (a stored pointer
    entry), so those searches run once, not each time (`go_numbers(data, steps)`)."""
    steps = 0
    if _has_exponent(data):
        steps |= EXPONENTS
        data = _EXPONENT_TOKEN.sub(_go_token, data)
    if _POINT_ZERO.search(data) is not None:
        steps |= POINT_ZEROS
    return steps


def _has_exponent(data: bytes) -> bool:
    """Whether `data` holds a float token with an exponent (`e-` or `e+` after a digit)."""
    return (b"+" in data and _exponent(_EXPONENT_PLUS, data)) or _exponent(_EXPONENT_MINUS, data)


def go_numbers(data: bytes, steps: int | None = None) -> bytes:
    """JSON text at depth 0 (orjson's or Python's) with its float tokens as Go writes them.

    An integral float (`300.0`) is common: `.0` right before `,\n`, `\n` or the end of the
    text can only end a number token (a string ends with a quote; shortest digits never end in
    another 0 after the point), and dropping it is exact: that is all Go's form differs by.
    A float with an exponent (Python `1e-05`, `1e+16`; orjson `1e-6`, `1e+16`) is rare: only
    when the text holds `e-` or `e+` between digits are its tokens found line by line and
    rewritten. The searches are what the cost of this is, so each is the fastest found: a
    regex whose literal prefix starts with a rare byte, a one-byte `in` (memchr); `e-` is
    the one common prefix left, and was already searched for before numbers were Go's.
    `steps`, when given, are `number_steps(data)`: only those steps run, without the searches.
    """
    exponents = _has_exponent(data) if steps is None else steps & EXPONENTS
    if exponents:
        data = _EXPONENT_TOKEN.sub(_go_token, data)
    point_zeros = _POINT_ZERO.search(data) is not None if steps is None else steps & POINT_ZEROS
    if point_zeros:
        data = _POINT_ZERO.sub(b"", data)
    return data[:-2] if data.endswith(b".0") else data
