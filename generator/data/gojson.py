"""JSON written byte for byte as Go's `encoding/json` `MarshalIndent(v, "", "  ")` writes it
(aicr 2.5), plus a trailing newline.

Sorted keys, 2-space indent, raw UTF-8, Go's HTML escaping of `<`, `>`, `&` plus U+2028 and
U+2029, and numbers as Go writes them: a Python int as its decimal digits, a float as Go writes
a float64 (`generator.data.gonumbers.go_float`: `300`, `0.00001`, `1e-7`, `1e+21`, `-0`). Two
builds from the same inputs are byte-identical and aicr's own output compares byte for byte
(`tests/data/gojson/main.go` is the ground truth the tests run).

The text is made in two steps. First Python's `json.dumps(..., indent=2)` layout, by the fastest
of three ways that give exactly its text:

1. orjson (Rust), for every subtree it writes: it refuses what it cannot write (integers
   beyond 64 bits, non-string keys, lone surrogates), and that subtree goes the next way;
2. `_Indenter`, which writes each container holding only scalars with one C-encoder call;
3. the reference encoder itself, for anything `_Indenter` does not handle exactly.

Then `go_numbers` (`generator.data.gonumbers`) rewrites the float tokens whose form differs
from Go's. All of this rests on one fact: an encoded string never holds a raw newline, so every
newline in the text is a separator, a number token is always followed by `,\n`, `\n` or the
end of the text (a string by a quote), and a subtree written at depth 0 is moved to its depth
by indenting after each newline. Big documents are written as a stream of subtrees, never as
one string.

A NaN or infinity, which JSON cannot express (Go's encoder refuses it), is written as `null`
(as JavaScript's `JSON.stringify` does) instead of failing a whole build; contributor JSON is
parsed strictly (`generator.strictjson`), so none comes from a bundle.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

from generator.data.gonumbers import go_numbers
from generator.data.laidout import LAID_OUT, LaidOutEntry, materialized

_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_GO_ESCAPES_UTF8 = tuple(  # one-byte characters first: `_escape_utf8` relies on it
    sorted(((k.encode(), v.encode()) for k, v in _GO_ESCAPES.items()), key=lambda kv: len(kv[0]))
)
_INDENT = "  "
_CONTAINERS = (dict, list, tuple)
_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINER_TYPES = frozenset(_CONTAINERS)
_INFINITIES = (float("inf"), float("-inf"))
_SCALAR = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)
_PAIRS = (("}", "{"), ("}", "["), ("]", "{"), ("]", "["))
_encode_str = json.encoder.encode_basestring
"""Python's own string encoder (its C version where available), as `ensure_ascii=False` uses."""
_ORJSON = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
_ORJSON |= orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""orjson's form of `json.dumps(sort_keys=True, indent=2)`. Dataclasses and datetimes, which
the reference refuses, are passed through to no `default`, so orjson refuses them too."""
WALKED_DEPTH = 2
"""Containers above this depth are written item by item, deeper subtrees in one piece: a
pointer or a recipe tab is one piece of tens of KB, the documents hundreds of MB."""
INDEX_WALK = 6
"""How deep data/index.json is walked: down to its tabs (groups, dashboards, tabs), each one
piece, so a tab kept from an earlier build (`generator.evaluate.tabstore`) is written from its
text, never parsed."""


def _escape_utf8(data: bytes) -> bytes:
    """Go's HTML escaping on UTF-8 JSON text: exact, as these characters only occur in strings
    and UTF-8 never holds one character's bytes inside another's. A one-byte search is a
    `memchr`, a three-byte one several times slower: U+2028/U+2029 are only looked for in text
    holding their first byte (the data documents are hundreds of MB)."""
    for raw, escaped in _GO_ESCAPES_UTF8:
        if len(raw) > 1 and b"\xe2" not in data:
            break  # the separators, last
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def _finite(value: Any) -> Any:
    """`value` with every NaN and infinity replaced by None (the slow paths' form of orjson's
    `null`); anything else is returned as it is."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind in LAID_OUT:
        return _finite(materialized(value))
    if kind is dict:
        return {k: _finite(v) for k, v in value.items()}
    if kind is list:
        return [_finite(v) for v in value]
    if kind is tuple:
        return tuple(_finite(v) for v in value)
    return value


def subtree_layout(value: Any) -> bytes:
    """The first step of a subtree's text: Python's `indent=2` layout at depth 0 (UTF-8),
    before Go's numbers, indent and escaping (`finish_layout`). A `LaidOutEntry` is its own
    layout, kept from when it was first made."""
    if type(value) is LaidOutEntry:
        return value.layout
    try:
        return orjson.dumps(value, option=_ORJSON, default=materialized)
    except TypeError:  # orjson.JSONEncodeError: something orjson does not write
        pass
    value = _finite(value)
    try:
        text = _Indenter().encode(value, "")
    except (_Unusual, RecursionError):
        text = reference_json(value)
    return text.encode("utf-8")


def orjson_layout(value: Any) -> bytes:
    """`subtree_layout` of a value orjson writes whole; TypeError for one it does not (an
    integer beyond 64 bits, a lone surrogate): such a value is laid out by the slow ways only."""
    return orjson.dumps(value, option=_ORJSON, default=materialized)


def finish_layout(layout: bytes, pad: str, steps: int | None = None) -> bytes:
    """The second step: a `subtree_layout` with Go's numbers, at the indent `pad`, escaped.
    `steps`: the layout's `number_steps` when known (its searches are not run again). Go's
    numbers never touch a newline or the spaces after one, so the steps of a layout at depth
    0 hold at every indent."""
    data = go_numbers(layout, steps)
    if pad:
        data = data.replace(b"\n", b"\n" + pad.encode("ascii"))
    return _escape_utf8(data)


@dataclass(frozen=True, slots=True)
class Subtree:
    """A subtree `go_json_plan` leaves to be written whole: its text is `subtree_text`."""

    value: Any
    pad: str


def subtree_text(value: Any, pad: str) -> bytes:
    """The text of a subtree written whole at the indent `pad` (escaped, Go's numbers); a
    laid-out entry's stored text at that indent is copied, its stored `number_steps` spare
    their searches."""
    if type(value) is LaidOutEntry:
        return value.finished_text(pad) or finish_layout(value.layout, pad, value.steps)
    return finish_layout(subtree_layout(value), pad)


def go_json_plan(obj: Any, walk: int = WALKED_DEPTH) -> Iterator[bytes | Subtree]:
    """`go_json_parts(obj)` before its subtrees are encoded: the text of the walked top levels
    and, in order, the subtrees to be written whole (`Subtree`). `walk`: how many levels are
    walked (a document whose laid-out parts lie deeper walks down to them)."""
    yield from _plan(obj, "", 0, walk)
    yield b"\n"


def _plan(value: Any, pad: str, depth: int, walk: int) -> Iterator[bytes | Subtree]:
    """The text of `value` at `pad`, its top levels walked, the deeper subtrees left whole."""
    kind = type(value)
    if (
        depth < walk
        and value
        and (kind is list or kind is tuple or (kind is dict and all(type(k) is str for k in value)))
    ):
        inner = pad + _INDENT
        between = (",\n" + inner).encode("ascii")
        if kind is dict:
            yield b"{\n" + inner.encode("ascii")
            for n, key in enumerate(sorted(value)):
                if n:
                    yield between
                yield _escape_utf8(_encode_str(key).encode("utf-8")) + b": "
                yield from _plan(value[key], inner, depth + 1, walk)
            yield b"\n" + pad.encode("ascii") + b"}"
        else:
            yield b"[\n" + inner.encode("ascii")
            for n, item in enumerate(value):
                if n:
                    yield between
                yield from _plan(item, inner, depth + 1, walk)
            yield b"\n" + pad.encode("ascii") + b"]"
        return
    yield Subtree(value, pad)


def _pieces(value: Any, pad: str, depth: int, walk: int) -> Iterator[bytes]:
    """The text of `value` at `pad` (escaped), its top levels walked, as a stream of parts."""
    for part in _plan(value, pad, depth, walk):
        yield part if type(part) is bytes else subtree_text(part.value, part.pad)  # type: ignore[union-attr]


def go_json_bytes(obj: Any) -> bytes:
    """Serialise `obj` like Go `json.MarshalIndent(obj, "", "  ")` plus a newline, as UTF-8:
    laid out whole, in one pass (a thousand series files 0.16 -> 0.06 s); `go_json_parts`
    streams a big document a subtree at a time, to the same bytes."""
    return subtree_text(obj, "") + b"\n"


def go_json(obj: Any) -> str:
    """`go_json_bytes` as text."""
    return go_json_bytes(obj).decode("utf-8")


def go_json_parts(obj: Any, walk: int = WALKED_DEPTH) -> Iterator[bytes]:
    """`go_json_bytes(obj)` as a stream of parts: one subtree of a document at a time (`walk`:
    see `go_json_plan`)."""
    yield from _pieces(obj, "", 0, walk)
    yield b"\n"


def write_go_json(obj: Any, fh: IO[bytes], walk: int = WALKED_DEPTH) -> str:
    """Write `go_json_bytes(obj)` to the binary file `fh`, a subtree at a time (streamed); the
    sha256 (hex) of what was written (`walk`: see `go_json_plan`)."""
    digest = hashlib.sha256()
    for part in go_json_parts(obj, walk):
        digest.update(part)
        fh.write(part)
    return digest.hexdigest()


def _scalar_text(value: Any) -> str:
    """One scalar as the reference encoder writes it; anything else is `_Unusual`."""
    kind = type(value)
    if kind is str:
        return str(_encode_str(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and value == value and value not in _INFINITIES:
        return float.__repr__(value)
    if kind is float or isinstance(value, _CONTAINERS):
        raise _Unusual  # NaN, infinity, a container subclass: the reference encoder decides
    return _SCALAR.encode(value)  # enums and other subclasses, as the C encoder writes them


class _Unusual(Exception):
    """Raised by `_Indenter` for input it does not handle exactly; the reference path runs."""


def reference_json(obj: Any) -> str:
    """The reference layout: `json.dumps` with a 2-space indent (before Go's numbers and
    escaping)."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


class _Indenter:
    """The second path: one C encoder per depth for the scalar-only containers."""

    def __init__(self) -> None:
        self._flat: dict[str, Any] = {}

    def _flat_encoder(self, inner: str) -> Any:
        """The compact C encoder whose item separator is the newline and indent of `inner`."""
        encoder = self._flat.get(inner)
        if encoder is None:
            make = getattr(json.encoder, "c_make_encoder", None)  # None without the C module
            if make is None:
                plain = json.JSONEncoder(
                    sort_keys=True,
                    ensure_ascii=False,
                    allow_nan=False,
                    separators=(",\n" + inner, ": "),
                )
                encoder = plain.encode
            else:
                step = make(
                    None,
                    _SCALAR.default,
                    _encode_str,
                    None,
                    ": ",
                    ",\n" + inner,
                    True,
                    False,
                    False,
                )

                def encoder(value: Any, _step: Any = step) -> str:
                    return "".join(_step(value, 0))

            self._flat[inner] = encoder
        return encoder

    def encode(self, value: Any, pad: str) -> str:
        """`value` indented as `json.dumps(indent=2)` would at the depth of `pad`."""
        out: list[str] = []
        self._emit(value, pad, out)
        return "".join(out)

    def _emit(self, value: Any, pad: str, out: list[str]) -> None:
        """Append the text of `value` at the depth of `pad` to `out` (no copying of subtrees)."""
        kind = type(value)
        if kind is dict:
            if not value:
                out.append("{}")
                return
            if set(map(type, value.values())) <= _SCALARS:
                self._flat_text(value, pad, out)
                return
            self._mixed_dict(value, pad, out)
            return
        if kind is list or kind is tuple:
            if not value:
                out.append("[]")
                return
            kinds = set(map(type, value))
            if kinds <= _SCALARS:
                self._flat_text(value, pad, out)
                return
            if kinds <= _CONTAINER_TYPES and all(
                child
                and set(map(type, child.values() if type(child) is dict else child)) <= _SCALARS
                for child in value
            ):
                self._table_text(value, pad, out)
                return
            inner = pad + _INDENT
            between = ",\n" + inner
            out.append("[\n" + inner)
            first = True
            for item in value:
                if first:
                    first = False
                else:
                    out.append(between)
                self._emit(item, inner, out)
            out.append("\n" + pad + "]")
            return
        out.append(_scalar_text(value))

    def _mixed_dict(self, value: dict[Any, Any], pad: str, out: list[str]) -> None:
        """A dict holding containers and (maybe) scalars.

        The scalar items are written by the C encoder in one call, with this depth's
        separator, and split on it again (exact: no string holds a raw newline); the
        containers are written in between, in sorted key order.
        """
        inner = pad + _INDENT
        between = ",\n" + inner
        containers: list[str] = []
        scalars: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            if type(item) in _SCALARS:
                scalars[key] = item
            else:
                containers.append(key)
        containers.sort()
        put = out.append
        put("{\n" + inner)
        texts: list[str] = []
        names: list[str] = []
        if scalars:
            texts = self._flat_encoder(inner)(scalars)[1:-1].split(between)
            names = sorted(scalars)
        count = len(names)
        first = True
        at = 0
        for key in containers:
            start = at
            while at < count and names[at] < key:
                at += 1
            if at > start:  # the scalars sorting before this container, in one part
                if not first:
                    put(between)
                put(between.join(texts[start:at]))
                first = False
            if not first:
                put(between)
            first = False
            put(_encode_str(key) + ": ")
            self._emit(value[key], inner, out)
        if at < count:
            if not first:
                put(between)
            put(between.join(texts[at:]))
        put("\n" + pad + "}")

    def _flat_text(self, value: Any, pad: str, out: list[str]) -> None:
        """A non-empty container of scalars, its brackets on their own lines."""
        inner = pad + _INDENT
        text: str = self._flat_encoder(inner)(value)
        out.append(text[0] + "\n" + inner + text[1:-1] + "\n" + pad + text[-1])

    def _table_text(self, value: Any, pad: str, out: list[str]) -> None:
        """A list of non-empty scalar-only containers (a table), in one C encoder call.

        The C encoder writes every separator as `,\\n` plus the children's indent. A separator
        between two children is the only one right after a closing bracket (a scalar never
        ends in one, and no string holds a raw newline) and it is followed by the next child's
        opening bracket, so plain replacements give the list its own separators and the
        children their brackets' lines.
        """
        inner = pad + _INDENT
        deeper = inner + _INDENT
        body: str = self._flat_encoder(deeper)(value)[1:-1]
        for close, open_ in _PAIRS:
            seam = close + ",\n" + deeper + open_
            if seam in body:
                body = body.replace(
                    seam, "\n" + inner + close + ",\n" + inner + open_ + "\n" + deeper
                )
        out.append("[\n" + inner + body[0] + "\n" + deeper)
        out.append(body[1:-1])
        out.append("\n" + inner + body[-1] + "\n" + pad + "]")
