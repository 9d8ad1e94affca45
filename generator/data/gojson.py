"""JSON written the way Go's `encoding/json` `MarshalIndent` writes it (aicr 2.5).

Sorted keys, 2-space indent, trailing newline, raw UTF-8, and Go's HTML escaping of `<`, `>`,
`&` plus U+2028 and U+2029, so two builds from the same inputs are byte-identical and aicr's
own output can be compared byte for byte.

Python's `json.dumps(..., indent=2)` is the reference output, but with an indent it runs the
pure-Python encoder, which dominated big builds. `go_json` gives the same text faster: a
container holding only scalars is written by the C encoder in one call, with the item separator
carrying the newline and indentation of its depth; so is a list of such containers (a table)
and the scalar part of a mixed dict. Only containers holding containers are walked here. All
of this rests on one fact: an encoded string never holds a raw newline, so every newline in the
text is a separator. Anything unusual (non-string keys, a Mapping or sequence that is not a plain dict,
list or tuple) falls back to the reference encoder, so the output never differs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any

_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_INDENT = "  "
_CONTAINERS = (dict, list, tuple)
_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINER_TYPES = frozenset(_CONTAINERS)
_INFINITIES = (float("inf"), float("-inf"))
_SCALAR = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)
_PAIRS = (("}", "{"), ("}", "["), ("]", "{"), ("]", "["))
_encode_str = json.encoder.encode_basestring
"""Python's own string encoder (its C version where available), as `ensure_ascii=False` uses."""


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


def _nothing() -> None:
    """The `spill` of an in-memory encoding: keep every part."""


class _Unusual(Exception):
    """Raised by the fast path for input it does not handle exactly; the reference path runs."""


def go_json(obj: Any) -> str:
    """Serialise `obj` like Go `json.MarshalIndent(obj, "", "  ")` plus a newline."""
    try:
        text = _Indenter().encode(obj, "")
    except (_Unusual, RecursionError):
        text = reference_json(obj)
    return _go_escape(text) + "\n"


def _go_escape(text: str) -> str:
    # These characters only ever occur inside JSON strings, so a plain replacement is exact.
    for raw, escaped in _GO_ESCAPES.items():
        if raw in text:
            text = text.replace(raw, escaped)
    return text


class _Sink(list[str]):
    """An `out` list for `_Indenter` that is written to a file (Go-escaped) whenever it holds
    `LIMIT` parts or so (about a MiB), so a document of hundreds of MB is never held as one
    string (nor as its copies). Its `append` is the list's own: the writer appends millions
    of parts, and a Python-level method per part cost more than the encoding."""

    LIMIT = 1 << 14

    def __init__(self, fh: IO[str]) -> None:
        super().__init__()
        self._fh = fh

    def flush(self) -> None:
        if self:
            self._fh.write(_go_escape("".join(self)))
            self.clear()


def write_go_json(obj: Any, fh: IO[str]) -> None:
    """Write `go_json(obj)` to the text file `fh` (opened for writing at its start), streamed.

    The fast path writes as it goes; if it meets input it does not handle exactly, the file
    is rewritten from the start by the reference encoder, so the bytes equal `go_json(obj)`.
    """
    sink = _Sink(fh)
    try:
        _Indenter(sink.flush, _Sink.LIMIT)._emit(obj, "", sink)
        sink.flush()
    except (_Unusual, RecursionError):
        fh.seek(0)
        fh.truncate()
        fh.write(_go_escape(reference_json(obj)))
    fh.write("\n")


def reference_json(obj: Any) -> str:
    """The reference text (before Go's escaping): `json.dumps` with a 2-space indent."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


class _Indenter:
    """The fast path of `go_json`: one C encoder per depth for the scalar-only containers."""

    def __init__(self, spill: Callable[[], None] | None = None, spill_at: int = 0) -> None:
        self._flat: dict[str, Any] = {}
        self._spill = spill or _nothing
        self._spill_at = spill_at if spill is not None else sys.maxsize
        """After a container is written, `spill()` runs once `out` holds `spill_at` parts."""

    def _flat_encoder(self, inner: str) -> Any:
        """The compact C encoder whose item separator is the newline and indent of `inner`."""
        encoder = self._flat.get(inner)
        if encoder is None:
            make = getattr(json.encoder, "c_make_encoder", None)  # None without the C module
            if make is None:
                plain = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False,
                                         separators=(",\n" + inner, ": "))
                encoder = plain.encode
            else:
                step = make(None, _SCALAR.default, _encode_str, None, ": ",
                            ",\n" + inner, True, False, False)

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
                    child and set(map(type, child.values() if type(child) is dict else child))
                    <= _SCALARS for child in value):
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
            if len(out) >= self._spill_at:
                self._spill()
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
        if len(out) >= self._spill_at:
            self._spill()

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
                body = body.replace(seam, "\n" + inner + close + ",\n" + inner + open_
                                    + "\n" + deeper)
        out.append("[\n" + inner + body[0] + "\n" + deeper)
        out.append(body[1:-1])
        out.append("\n" + inner + body[-1] + "\n" + pad + "]")

