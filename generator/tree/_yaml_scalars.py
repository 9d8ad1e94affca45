"""The YAML 1.2 core schema for scalars: what a plain scalar means, and what a core tag allows.

Plain scalars resolve by the core-schema patterns below, first matching rule wins; everything
else (`yes`/`no`, sexagesimal, timestamps) stays a string. Used by `_yaml_builder`.
"""

from __future__ import annotations

import math
import re
from typing import Any

_CORE = "tag:yaml.org,2002:"


_ALLOWED_TAGS = {f"{_CORE}{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")}
_ALLOWED_TAGS.add("!")


_NULL = re.compile(r"(?:~|null|Null|NULL)?")


_TRUE = re.compile(r"true|True|TRUE")


_FALSE = re.compile(r"false|False|FALSE")


_INT10 = re.compile(r"[-+]?[0-9]+")


_INT8 = re.compile(r"0o[0-7]+")


_INT16 = re.compile(r"0x[0-9a-fA-F]+")


_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


_INF = re.compile(r"[-+]?(?:\.inf|\.Inf|\.INF)")


_NAN = re.compile(r"\.nan|\.NaN|\.NAN")


_NOT_PLAIN_START = frozenset("0123456789+-.~nNtTfF")
"""First characters of every non-string core-schema scalar; anything else stays a string."""


def resolve_plain(text: str) -> Any:
    """The YAML 1.2 core-schema value of an untagged plain scalar."""
    if text and text[0] not in _NOT_PLAIN_START:
        return text  # fast path: no core pattern can match (checked by tests against the rules)
    return _resolve_by_rules(text)


_CORE_PLAIN = re.compile(
    "|".join(
        f"(?P<{name}>{pattern.pattern})"
        for name, pattern in (
            ("null", _NULL),
            ("true", _TRUE),
            ("false", _FALSE),
            ("int10", _INT10),
            ("int8", _INT8),
            ("int16", _INT16),
            ("float", _FLOAT),
            ("inf", _INF),
            ("nan", _NAN),
        )
    )
)
"""The patterns above as one alternation, tried in the same order (`lastgroup` names the rule)."""


def _resolve_by_rules(text: str) -> Any:
    """`resolve_plain` by the core-schema patterns, first matching rule wins."""
    match = _CORE_PLAIN.fullmatch(text)
    if match is None:
        return text
    rule = match.lastgroup
    if rule == "null":
        return None
    if rule == "true":
        return True
    if rule == "false":
        return False
    if rule == "int10":
        return int(text, 10)
    if rule == "int8":
        return int(text[2:], 8)
    if rule == "int16":
        return int(text[2:], 16)
    if rule == "float":
        return float(text)
    if rule == "inf":
        return -math.inf if text.startswith("-") else math.inf
    return math.nan


def _tagged(tag: str, text: str) -> Any:
    """The value of a scalar with an explicit core tag; raises ValueError when it does not fit."""
    if tag in ("!", f"{_CORE}str"):
        return text
    value: Any = resolve_plain(text)
    kind = tag[len(_CORE) :]
    wanted: dict[str, tuple[type, ...]] = {
        "int": (int,),
        "float": (float, int),
        "bool": (bool,),
        "null": (type(None),),
    }
    types = wanted.get(kind)
    if types is None:
        raise ValueError(f"a scalar cannot carry the tag !!{kind}")
    if isinstance(value, bool) and kind != "bool":
        raise ValueError(f"{text!r} is not a valid !!{kind}")
    if not isinstance(value, types):
        raise ValueError(f"{text!r} is not a valid !!{kind}")
    number: Any = value
    return float(number) if kind == "float" else number
