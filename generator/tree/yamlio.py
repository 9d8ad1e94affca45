"""The one safe YAML loader for pointers, the allowlist, `recipe.yaml` and `snapshot.yaml`.

Untrusted YAML is read at the *event* level and built into plain Python data here, so nothing
but the rules below decides what a document means. The event parser is libyaml (through PyYAML's
`CParser`, ~20x faster) when it is available, else ruamel.yaml's pure-Python parser; both emit
the same events and the value rules are ours, so the result does not depend on the backend:

- YAML 1.2 core schema for plain scalars: `null`/`~`/empty, `true`/`false` (three spellings),
  decimal, `0o` and `0x` integers, floats, `.inf`/`.nan`. Everything else, including `yes`/`no`/
  `on`/`off`, sexagesimal `1:20` and timestamps, stays a string. Quoted scalars are strings.
- Exactly one document; an empty stream reads as `None` (as Go's `yaml.Unmarshal` leaves a zero
  value), so callers report the missing fields themselves.
- Only plain data: dict, list, str, int, float, bool, None. Explicit tags are accepted only for
  the core types (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map`, `!!seq`) and the
  non-specific `!`; any other tag (`!!binary`, `!!timestamp`, `!!set`, `!custom`, ...) is refused.
- Refused with `YamlError` naming the file: invalid UTF-8, NUL bytes, duplicate mapping keys,
  non-scalar keys, recursive aliases, and anything over `generator.limits.ParseLimits`: more
  bytes than `document_bytes`, nesting deeper than `MAX_DEPTH`, more than `MAX_ALIASES` alias
  uses or more than `MAX_NODES` nodes after alias expansion (billion-laughs bombs), a sequence
  or mapping of more than `container_items` entries, a scalar longer than `string_chars`.
  Depth is enforced on the event stream, which neither parser builds recursively, so no
  document can make either recurse.
- `<<` is an ordinary key (YAML 1.2 has no merge keys).

Aliases are returned as shared references to the anchored value; the expansion bound makes that
safe for any consumer that walks the tree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml as pyyaml

from generator.errors import Location, YamlError
from generator.limits import PARSE_LIMITS, ParseLimits
from generator.tree._yaml_builder import MAX_ALIASES, MAX_DEPTH, MAX_NODES, Event, _build
from generator.tree._yaml_scalars import resolve_plain

__all__ = [
    "BACKENDS",
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_NODES",
    "Event",
    "load_yaml",
    "load_yaml_with_events",
    "resolve_plain",
]

BACKENDS = ("libyaml", "ruamel") if pyyaml.__with_libyaml__ else ("ruamel",)
"""Available event parsers, preferred first."""


def _events(text: str, backend: str) -> Iterable[Event]:
    events: Iterable[Event]
    if backend == "libyaml":
        # What `yaml.parse(text, Loader=CSafeLoader)` yields, pulled straight from libyaml's
        # `get_event` (None after the stream end) without a Python generator frame per event.
        events = iter(pyyaml.CSafeLoader(text).get_event, None)
    else:  # imported only here: 15 ms of every build's start, where libyaml is available
        from ruamel.yaml import YAML

        events = YAML(typ="safe", pure=True).parse(text)
    return events


def _parser_errors(backend: str) -> tuple[type[Exception], ...]:
    """What the event parser of `backend` raises for input that is not YAML."""
    if backend == "libyaml":
        return (pyyaml.YAMLError,)
    from ruamel.yaml.error import YAMLError

    return (YAMLError, pyyaml.YAMLError)


def load_yaml(
    data: bytes, *, file: str, backend: str | None = None, limits: ParseLimits | None = None
) -> Any:
    """Parse one untrusted YAML document into plain Python data (rules in the module docstring).

    `file` is the name shown in errors (relative to the recipes root or the bundle). `backend`
    picks an event parser from `BACKENDS` (default: the first, the fastest available). `limits`
    defaults to `PARSE_LIMITS` (with the module's `MAX_*` values).
    """
    return _load(data, file, backend, None, limits)


def load_yaml_with_events(data: bytes, *, file: str) -> tuple[Any, list[Event] | None]:
    """`load_yaml` with the default backend, plus the PyYAML event stream it read.

    The events are exactly what `yaml.parse(data, Loader=yaml.CSafeLoader)` yields, so a second
    reader (the canonical recipe digest) can reuse them instead of parsing the bytes again. They
    are None when that would not hold: without libyaml, or for input starting with a BOM (read
    here with the BOM removed, by libyaml as bytes with it).
    """
    if BACKENDS[0] != "libyaml" or data.startswith(b"\xef\xbb\xbf"):
        return _load(data, file, None, None), None
    events: list[Event] = []
    return _load(data, file, "libyaml", events), events


def _load(
    data: bytes,
    file: str,
    backend: str | None,
    record: list[Event] | None,
    limits: ParseLimits | None = None,
) -> Any:
    chosen = backend if backend is not None else BACKENDS[0]
    if chosen not in BACKENDS:
        raise ValueError(f"unknown or unavailable YAML backend {chosen!r}")
    bounds = limits or PARSE_LIMITS
    text = _text(data, file, bounds)
    try:
        return _build(
            _events(text, chosen), file, record, limits, long_text=len(text) > bounds.string_chars
        )
    except _parser_errors(chosen) as exc:
        raise _syntax_error(exc, file, limits) from exc


def _text(data: bytes, file: str, bounds: ParseLimits) -> str:
    """The document as text (without a BOM); `YamlError` when too large, binary or not UTF-8."""
    if len(data) > bounds.document_bytes:
        raise YamlError(
            "YAML document too large",
            location=Location(file),
            expected=f"at most {bounds.document_bytes} bytes (limit document_bytes)",
            found=f"{len(data)} bytes",
            hint="split or shorten the document",
        )
    if b"\x00" in data:
        raise YamlError(
            "NUL byte in YAML",
            location=Location(file),
            expected="a text file",
            found=f"a NUL byte at offset {data.index(0)}",
            hint="the file is binary or UTF-16; save it as UTF-8",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError(
            "invalid UTF-8",
            location=Location(file),
            expected="UTF-8 text",
            found=f"byte 0x{data[exc.start]:02x} at offset {exc.start}",
            hint="save the file as UTF-8",
        ) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _syntax_error(exc: Exception, file: str, limits: ParseLimits | None) -> YamlError:
    """A parser's complaint as `YamlError` at its line and column (too deep, or not YAML)."""
    mark = getattr(exc, "problem_mark", None)
    key = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if "nesting depth" in str(problem):  # libyaml's own bound (1,000) met while scanning
        depth = limits.depth if limits is not None else MAX_DEPTH
        return YamlError(
            "nesting too deep",
            location=Location(file, key),
            expected=f"at most {depth} levels (limit depth)",
            found=f"more than {depth} nested mappings/sequences",
            hint="flatten the document",
        )
    return YamlError(
        "not valid YAML",
        location=Location(file, key),
        expected="well-formed YAML",
        found=str(problem),
        hint="fix the syntax at the reported position",
    )
