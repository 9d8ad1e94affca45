"""Parsed YAML as JSON data: a small tagged form for what JSON cannot say directly.

Non-string mapping keys, NaN and infinity are written tagged (`encode_data`) and read back by
`decode_data` / `loads_decoded`; subtrees that need no tag are taken as they are, found by a
bounded probe (`_untagged`), so hostile nesting costs a few walks at most.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

_PROBES = 2
"""How many levels of `encode_data` look for untouched subtrees (`_untagged`) before the rest of
a subtree is encoded node by node: each level walks its subtree once more, so the cost stays a
few walks even for hostile, deeply nested data."""


_MAX_PROBE_NODES = 4_000_000
"""A tree larger than this (or a cyclic one) is never taken as is; it is encoded node by node."""


_INF = math.inf


def encode_data(value: Any, _probes: int = _PROBES) -> Any:
    """Plain data (as JSON or the YAML loader return it) to JSON that `decode_data` inverts.

    A value that needs no tagging (`_untagged`) is returned as it is, not copied: it already
    is what the node-by-node encoding below would build, and one cheap walk over it costs far
    less than rebuilding it. Otherwise its children are encoded the same way (for `_PROBES`
    levels), so one `$schema` key at the top of a document leaves the rest untouched.
    """
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return value
    if _probes and (kind is dict or kind is list) and _untagged(value):
        return value
    probes = _probes - 1 if _probes > 0 else 0
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        return value
    if isinstance(value, list | tuple):
        return [encode_data(v, probes) for v in value]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value) and not any(k.startswith("$") for k in value):
            return {k: encode_data(v, probes) for k, v in value.items()}
        return {"$map": [[encode_data(k, 0), encode_data(v, probes)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"cannot serialize {type(value).__name__} in a verdict")


def _untagged(value: Any) -> bool:
    """True when `encode_data` would rebuild `value` unchanged: only exact dicts with `str` keys
    not starting with `$`, lists, `str`, `int`, `bool`, None and finite floats (no subclasses,
    tuples or bytes). One loop, no calls per node; False for a tree over `_MAX_PROBE_NODES`."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    budget = _MAX_PROBE_NODES
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            budget -= len(item)
            if budget < 0:
                return False
            for key in item:
                if type(key) is not str or key[:1] == "$":
                    return False
            extend(item.values())
        elif kind is list:
            budget -= len(item)
            if budget < 0:
                return False
            extend(item)
        elif kind is str or kind is int or kind is bool or item is None:
            continue
        elif kind is float:
            if item != item or item == _INF or item == -_INF:
                return False
        else:
            return False
    return True


def decode_data(value: Any, _probes: int = _PROBES) -> Any:
    """Invert `encode_data`. A subtree with nothing tagged (`_untagged`: no `$` key, nothing
    but JSON's own types) is returned as it is, not copied, after one loop over it instead of
    a call per node: callers only read what they get back. As in `encode_data`, only
    `_PROBES` levels probe, so hostile nesting costs a few walks at most."""
    kind = type(value)
    if _probes and (kind is dict or kind is list) and _untagged(value):
        return value
    probes = _probes - 1 if _probes > 0 else 0
    if kind is list:
        return [decode_data(v, probes) for v in value]
    if kind is dict:  # the children first, then the object itself, as `loads_decoded` does
        return _untag({k: decode_data(v, probes) for k, v in value.items()})
    return value


def _as_is(value: Any) -> Any:
    """`decode_data` for data known to hold no tagged values."""
    return value


def loads_decoded(text: bytes | str) -> Any:
    """Parse JSON written from `encode_data` output with its tagged values already decoded.

    The parser hands each object to `_untag` as it is built (innermost first), which is much
    cheaper than walking the parsed tree again with `decode_data`; feed the result to
    `verdict_from_json(..., plain=True)`. Only the data fields of a verdict document hold
    objects with a single `$` key, since `encode_data` writes any other mapping with
    `$`-keys as `$map`. Raises `ValueError` or `TypeError` for malformed input.
    """
    return json.loads(text, object_hook=_untag)


def _untag(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if "$float" in obj:
            return float(obj["$float"])
        if "$bytes" in obj:
            return base64.b64decode(obj["$bytes"])
        if "$map" in obj:
            return {_key(k): v for k, v in obj["$map"]}
    return obj


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
