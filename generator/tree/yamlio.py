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
  non-scalar keys, nesting deeper than `MAX_DEPTH`, more than `MAX_ALIASES` alias uses or more
  than `MAX_NODES` nodes after alias expansion (billion-laughs bombs), recursive aliases.
- `<<` is an ordinary key (YAML 1.2 has no merge keys).

Aliases are returned as shared references to the anchored value; the expansion bound makes that
safe for any consumer that walks the tree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from generator.errors import Location, YamlError

Event = Any
"""A parser event of either backend (same class names and attributes in both)."""

MAX_DEPTH = 100
"""Deepest allowed nesting of mappings and sequences."""
MAX_ALIASES = 10_000
"""Most alias uses (`*name`) in one document."""
MAX_NODES = 1_000_000
"""Most nodes the document may hold once every alias is expanded."""

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


def resolve_plain(text: str) -> Any:
    """The YAML 1.2 core-schema value of an untagged plain scalar."""
    if _NULL.fullmatch(text):
        return None
    if _TRUE.fullmatch(text):
        return True
    if _FALSE.fullmatch(text):
        return False
    if _INT10.fullmatch(text):
        return int(text, 10)
    if _INT8.fullmatch(text):
        return int(text[2:], 8)
    if _INT16.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


def _tagged(tag: str, text: str) -> Any:
    """The value of a scalar with an explicit core tag; raises ValueError when it does not fit."""
    if tag in ("!", f"{_CORE}str"):
        return text
    value: Any = resolve_plain(text)
    kind = tag[len(_CORE):]
    wanted: dict[str, tuple[type, ...]] = {
        "int": (int,), "float": (float, int), "bool": (bool,), "null": (type(None),),
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


@dataclass
class _Frame:
    """An open mapping or sequence while events are being built into data."""

    container: dict[Any, Any] | list[Any]
    anchor: str | None
    size: int = 1
    pending_key: Any = None
    has_key: bool = False
    seen: set[tuple[type, Any]] = field(default_factory=set)


class _Builder:
    """Turns one document's events into plain data while enforcing every bound."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.open_anchors: set[str] = set()
        self.aliases = 0
        self.nodes = 0
        self.result: Any = None
        self.done = False

    def fail(self, message: str, *, expected: str, found: str, hint: str,
             event: Event | None = None) -> YamlError:
        key = None
        mark = getattr(event, "start_mark", None) if event is not None else None
        if mark is not None:
            key = f"line {mark.line + 1}, column {mark.column + 1}"
        return YamlError(message, location=Location(self.file, key), expected=expected,
                         found=found, hint=hint)

    def _count(self, n: int, event: Event) -> None:
        self.nodes += n
        if self.nodes > MAX_NODES:
            raise self.fail(
                "document expands to too many nodes", expected=f"at most {MAX_NODES} nodes",
                found=f"more than {MAX_NODES} (alias expansion)", event=event,
                hint="this looks like an alias bomb; do not use nested anchors and aliases",
            )

    def _check_tag(self, tag: str | None, event: Event, allowed: set[str]) -> None:
        if tag is not None and tag not in allowed:
            raise self.fail(
                "unsupported YAML tag", expected="plain scalars, mappings and sequences",
                found=f"tag {tag.replace(_CORE, '!!', 1)}", event=event,
                hint="remove the tag; only plain YAML data is accepted",
            )

    def _add(self, value: Any, size: int, event: Event) -> None:
        """Place a finished node (of `size` expanded nodes) into its parent or as the result."""
        if not self.stack:
            self.result = value
            self.done = True
            return
        parent = self.stack[-1]
        parent.size += size
        if isinstance(parent.container, list):
            parent.container.append(value)
            return
        if not parent.has_key:
            if isinstance(value, (dict, list)):
                raise self.fail(
                    "mapping key is not a scalar", expected="a string, number, bool or null key",
                    found="a mapping or sequence used as a key", event=event,
                    hint="use a plain scalar as the key",
                )
            marker = (type(value), value)
            if marker in parent.seen or value in parent.container:
                raise self.fail(
                    "duplicate mapping key", expected="each key once per mapping",
                    found=f"key {value!r} repeated", event=event,
                    hint="remove or rename the repeated key",
                )
            parent.seen.add(marker)
            parent.pending_key = value
            parent.has_key = True
            return
        assert isinstance(parent.container, dict)
        parent.container[parent.pending_key] = value
        parent.has_key = False
        parent.pending_key = None

    def _open(self, container: dict[Any, Any] | list[Any], anchor: str | None,
              event: Event) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise self.fail(
                "nesting too deep", expected=f"at most {MAX_DEPTH} levels",
                found=f"more than {MAX_DEPTH} nested mappings/sequences", event=event,
                hint="flatten the document",
            )
        self._count(1, event)
        if anchor is not None:
            self.open_anchors.add(anchor)
        self.stack.append(_Frame(container, anchor))

    def _close(self, event: Event) -> None:
        frame = self.stack.pop()
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
            self.anchors[frame.anchor] = (frame.container, frame.size)
        self._add(frame.container, frame.size, event)

    def feed(self, event: Event) -> None:
        kind = type(event).__name__
        if kind == "ScalarEvent":
            self._check_tag(event.tag, event, _ALLOWED_TAGS - {f"{_CORE}map", f"{_CORE}seq"})
            self._count(1, event)
            if event.tag is not None:
                try:
                    value = _tagged(event.tag, event.value)
                except ValueError as exc:
                    raise self.fail("scalar does not match its tag", expected="a valid value",
                                    found=str(exc), event=event,
                                    hint="fix the value or drop the tag") from exc
            elif not event.style:  # plain: None (ruamel) or "" (libyaml)
                try:
                    value = resolve_plain(event.value)
                except ValueError as exc:  # e.g. an integer with too many digits
                    raise self.fail("scalar cannot be read", expected="a usable number",
                                    found=str(exc), event=event,
                                    hint="quote the value to keep it a string") from exc
            else:
                value = event.value
            if event.anchor is not None:
                self.anchors[event.anchor] = (value, 1)
            self._add(value, 1, event)
        elif kind == "MappingStartEvent":
            self._check_tag(event.tag, event, {"!", f"{_CORE}map"})
            self._open({}, event.anchor, event)
        elif kind == "SequenceStartEvent":
            self._check_tag(event.tag, event, {"!", f"{_CORE}seq"})
            self._open([], event.anchor, event)
        elif kind in ("MappingEndEvent", "SequenceEndEvent"):
            self._close(event)
        elif kind == "AliasEvent":
            name = event.anchor
            if name in self.open_anchors:
                raise self.fail("recursive alias", expected="aliases to finished nodes only",
                                found=f"*{name} inside its own anchor", event=event,
                                hint="remove the self-reference")
            if name not in self.anchors:
                raise self.fail("unknown alias", expected="an anchor defined before its alias",
                                found=f"*{name}", event=event, hint="define the anchor first")
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise self.fail("too many aliases", expected=f"at most {MAX_ALIASES} aliases",
                                found=f"more than {MAX_ALIASES}", event=event,
                                hint="this looks like an alias bomb; expand the data instead")
            value, size = self.anchors[name]
            self._count(size, event)
            self._add(value, size, event)


BACKENDS = ("libyaml", "ruamel") if pyyaml.__with_libyaml__ else ("ruamel",)
"""Available event parsers, preferred first."""


def _events(text: str, backend: str) -> Iterable[Event]:
    events: Iterable[Event]
    if backend == "libyaml":
        events = pyyaml.parse(text, Loader=pyyaml.CSafeLoader)
    else:
        events = YAML(typ="safe", pure=True).parse(text)
    return events


def load_yaml(data: bytes, *, file: str, backend: str | None = None) -> Any:
    """Parse one untrusted YAML document into plain Python data (rules in the module docstring).

    `file` is the name shown in errors (relative to the recipes root or the bundle). `backend`
    picks an event parser from `BACKENDS` (default: the first, the fastest available).
    """
    chosen = backend if backend is not None else BACKENDS[0]
    if chosen not in BACKENDS:
        raise ValueError(f"unknown or unavailable YAML backend {chosen!r}")
    if b"\x00" in data:
        raise YamlError("NUL byte in YAML", location=Location(file), expected="a text file",
                        found=f"a NUL byte at offset {data.index(0)}",
                        hint="the file is binary or UTF-16; save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError("invalid UTF-8", location=Location(file), expected="UTF-8 text",
                        found=f"byte 0x{data[exc.start]:02x} at offset {exc.start}",
                        hint="save the file as UTF-8") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    builder: _Builder | None = None
    documents = 0
    try:
        for event in _events(text, chosen):
            if type(event).__name__ == "DocumentStartEvent":
                documents += 1
                if documents > 1:
                    raise YamlError(
                        "more than one YAML document", location=Location(file),
                        expected="exactly one document", found="a second '---' document",
                        hint="keep one document per file",
                    )
                builder = _Builder(file)
            elif builder is not None and not builder.done:
                builder.feed(event)
    except (YAMLError, pyyaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        key = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError("not valid YAML", location=Location(file, key),
                        expected="well-formed YAML", found=str(problem),
                        hint="fix the syntax at the reported position") from exc
    if builder is None:
        return None
    return builder.result
