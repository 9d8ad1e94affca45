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

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from generator.errors import Location, YamlError
from generator.limits import PARSE_LIMITS, ParseLimits

Event = Any
"""A parser event of either backend (same class names and attributes in both)."""

MAX_DEPTH = PARSE_LIMITS.depth
"""Deepest allowed nesting of mappings and sequences (the default `ParseLimits.depth`)."""
MAX_ALIASES = PARSE_LIMITS.yaml_aliases
"""Most alias uses (`*name`) in one document."""
MAX_NODES = PARSE_LIMITS.total_items
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


_SCALAR, _MAPPING_START, _SEQUENCE_START, _COLLECTION_END, _ALIAS, _DOCUMENT_START, _OTHER = range(
    1, 8
)
_KIND_BY_NAME = {
    "ScalarEvent": _SCALAR,
    "MappingStartEvent": _MAPPING_START,
    "SequenceStartEvent": _SEQUENCE_START,
    "MappingEndEvent": _COLLECTION_END,
    "SequenceEndEvent": _COLLECTION_END,
    "AliasEvent": _ALIAS,
    "DocumentStartEvent": _DOCUMENT_START,
}
_KIND_BY_CLASS: dict[type, int] = {}
"""Event class to kind, learnt per process from the class names (both backends share them)."""

_SCALAR_TAGS = frozenset(_ALLOWED_TAGS - {f"{_CORE}map", f"{_CORE}seq"})
_MAPPING_TAGS = frozenset({"!", f"{_CORE}map"})
_SEQUENCE_TAGS = frozenset({"!", f"{_CORE}seq"})


def _event_kind(event: Event) -> int:
    cls = type(event)
    kind = _KIND_BY_CLASS.get(cls)
    if kind is None:
        kind = _KIND_BY_CLASS[cls] = _KIND_BY_NAME.get(cls.__name__, _OTHER)
    return kind


@dataclass(slots=True)
class _Frame:
    """An open mapping or sequence while events are being built into data."""

    container: dict[Any, Any] | list[Any]
    anchor: str | None
    is_list: bool
    size: int = 1
    pending_key: Any = None
    has_key: bool = False


class _Builder:
    """Turns one document's events into plain data while enforcing every bound."""

    def __init__(self, file: str, limits: ParseLimits | None = None) -> None:
        self.file = file
        # the module values unless limits are given (tests lower the module values)
        self.max_depth = MAX_DEPTH if limits is None else limits.depth
        self.max_aliases = MAX_ALIASES if limits is None else limits.yaml_aliases
        self.max_nodes = MAX_NODES if limits is None else limits.total_items
        chosen = limits or PARSE_LIMITS
        self.max_items = chosen.container_items
        self.max_string = chosen.string_chars
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.open_anchors: set[str] = set()
        self.aliases = 0
        self.nodes = 0
        self.result: Any = None
        self.done = False

    def fail(
        self, message: str, *, expected: str, found: str, hint: str, event: Event | None = None
    ) -> YamlError:
        key = None
        mark = getattr(event, "start_mark", None) if event is not None else None
        if mark is not None:
            key = f"line {mark.line + 1}, column {mark.column + 1}"
        return YamlError(
            message, location=Location(self.file, key), expected=expected, found=found, hint=hint
        )

    def _too_many_nodes(self, event: Event) -> YamlError:
        return self.fail(
            "document expands to too many nodes",
            expected=f"at most {self.max_nodes} nodes",
            found=f"more than {self.max_nodes} (alias expansion)",
            event=event,
            hint="this looks like an alias bomb; do not use nested anchors and aliases",
        )

    def _bad_tag(self, tag: str, event: Event) -> YamlError:
        return self.fail(
            "unsupported YAML tag",
            expected="plain scalars, mappings and sequences",
            found=f"tag {tag.replace(_CORE, '!!', 1)}",
            event=event,
            hint="remove the tag; only plain YAML data is accepted",
        )

    def _duplicate_key(self, value: Any, event: Event) -> YamlError:
        # Every earlier key is already in the container and equal scalars hash alike, so the
        # `in` test also refuses keys equal across types (1, 1.0 and true).
        return self.fail(
            "duplicate mapping key",
            expected="each key once per mapping",
            found=f"key {value!r} repeated",
            event=event,
            hint="remove or rename the repeated key",
        )

    def _plain_value(self, text: str, event: Event) -> Any:
        """The core-schema value of a plain scalar that may be a non-string."""
        try:
            return _resolve_by_rules(text)
        except ValueError as exc:  # e.g. an integer with too many digits
            raise self.fail(
                "scalar cannot be read",
                expected="a usable number",
                found=str(exc),
                event=event,
                hint="quote the value to keep it a string",
            ) from exc

    def _add(self, value: Any, size: int, event: Event) -> None:
        """Place a finished node (of `size` expanded nodes) into its parent or as the result."""
        if not self.stack:
            self.result = value
            self.done = True
            return
        parent = self.stack[-1]
        parent.size += size
        container = parent.container
        if parent.is_list:
            container.append(value)  # type: ignore[union-attr]
            return
        if not parent.has_key:
            if isinstance(value, (dict, list)):
                raise self.fail(
                    "mapping key is not a scalar",
                    expected="a string, number, bool or null key",
                    found="a mapping or sequence used as a key",
                    event=event,
                    hint="use a plain scalar as the key",
                )
            if value in container:
                raise self._duplicate_key(value, event)
            parent.pending_key = value
            parent.has_key = True
            return
        container[parent.pending_key] = value
        parent.has_key = False
        parent.pending_key = None

    def _open(self, container: dict[Any, Any] | list[Any], event: Event) -> None:
        if len(self.stack) >= self.max_depth:
            raise self.fail(
                "nesting too deep",
                expected=f"at most {self.max_depth} levels (limit depth)",
                found=f"more than {self.max_depth} nested mappings/sequences",
                event=event,
                hint="flatten the document",
            )
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise self._too_many_nodes(event)
        anchor = event.anchor
        if anchor is not None:
            self.open_anchors.add(anchor)
        self.stack.append(_Frame(container, anchor, isinstance(container, list)))

    def _scalar(self, event: Event) -> None:
        tag = event.tag
        if tag is not None and tag not in _SCALAR_TAGS:
            raise self._bad_tag(tag, event)
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise self._too_many_nodes(event)
        text = event.value
        if len(text) > self.max_string:
            raise self.fail(
                "scalar too long",
                expected=f"at most {self.max_string} characters (limit string_chars)",
                found=f"a scalar of {len(text)} characters",
                event=event,
                hint="shorten the value; evidence files hold no such text",
            )
        if tag is not None:
            try:
                value = _tagged(tag, text)
            except ValueError as exc:
                raise self.fail(
                    "scalar does not match its tag",
                    expected="a valid value",
                    found=str(exc),
                    event=event,
                    hint="fix the value or drop the tag",
                ) from exc
        elif not event.style:  # plain: None (ruamel) or "" (libyaml)
            value = (
                text if text and text[0] not in _NOT_PLAIN_START else self._plain_value(text, event)
            )
        else:
            value = text
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1)
        self._add(value, 1, event)

    def _alias(self, event: Event) -> None:
        name = event.anchor
        if name in self.open_anchors:
            raise self.fail(
                "recursive alias",
                expected="aliases to finished nodes only",
                found=f"*{name} inside its own anchor",
                event=event,
                hint="remove the self-reference",
            )
        if name not in self.anchors:
            raise self.fail(
                "unknown alias",
                expected="an anchor defined before its alias",
                found=f"*{name}",
                event=event,
                hint="define the anchor first",
            )
        self.aliases += 1
        if self.aliases > self.max_aliases:
            raise self.fail(
                "too many aliases",
                expected=f"at most {self.max_aliases} aliases",
                found=f"more than {self.max_aliases}",
                event=event,
                hint="this looks like an alias bomb; expand the data instead",
            )
        value, size = self.anchors[name]
        self.nodes += size
        if self.nodes > self.max_nodes:
            raise self._too_many_nodes(event)
        self._add(value, size, event)

    def feed(self, event: Event, kind: int | None = None) -> None:
        """Build one event (`kind` from `_event_kind`, computed when not given)."""
        if kind is None:
            kind = _event_kind(event)
        if kind == _SCALAR:
            self._scalar(event)
        elif kind == _MAPPING_START:
            tag = event.tag
            if tag is not None and tag not in _MAPPING_TAGS:
                raise self._bad_tag(tag, event)
            self._open({}, event)
        elif kind == _SEQUENCE_START:
            tag = event.tag
            if tag is not None and tag not in _SEQUENCE_TAGS:
                raise self._bad_tag(tag, event)
            self._open([], event)
        elif kind == _COLLECTION_END:
            frame = self.stack.pop()
            entries = len(frame.container)
            if entries > self.max_items:
                raise self.fail(
                    "too many entries",
                    expected=f"at most {self.max_items} entries in one "
                    "sequence or mapping (limit container_items)",
                    found=f"{entries} entries",
                    event=event,
                    hint="split the data; evidence files hold no such list",
                )
            if frame.anchor is not None:
                self.open_anchors.discard(frame.anchor)
                self.anchors[frame.anchor] = (frame.container, frame.size)
            self._add(frame.container, frame.size, event)
        elif kind == _ALIAS:
            self._alias(event)


def _build(
    events: Iterable[Event],
    file: str,
    record: list[Event] | None = None,
    limits: ParseLimits | None = None,
    long_text: bool = True,
) -> Any:
    """The one document of `events` as plain data (None for an empty stream).

    The common events (scalars, and keys and values into an open collection) are handled
    inline here, the rest by `_Builder`; the checks and their order are the builder's. Every
    event read is appended to `record` when one is given. `long_text` False says no scalar can
    exceed the string limit (the document is shorter), so the inline path need not look.
    """
    kinds = _KIND_BY_CLASS
    max_nodes = MAX_NODES if limits is None else limits.total_items
    builder: _Builder | None = None
    stack: list[_Frame] = []
    documents = 0
    for event in events:
        if record is not None:
            record.append(event)
        kind = kinds.get(type(event)) or _event_kind(event)
        if kind == _DOCUMENT_START:
            documents += 1
            if documents > 1:
                raise YamlError(
                    "more than one YAML document",
                    location=Location(file),
                    expected="exactly one document",
                    found="a second '---' document",
                    hint="keep one document per file",
                )
            builder = _Builder(file, limits)
            stack = builder.stack
            continue
        if builder is None or builder.done:
            continue
        if (
            kind != _SCALAR
            or not stack
            or event.tag is not None
            or event.anchor is not None
            or long_text
        ):
            builder.feed(event, kind)
            continue
        # an untagged, unanchored scalar inside a collection
        builder.nodes += 1
        if builder.nodes > max_nodes:
            raise builder._too_many_nodes(event)
        value = event.value
        if not event.style and (not value or value[0] in _NOT_PLAIN_START):
            value = builder._plain_value(value, event)
        parent = stack[-1]
        parent.size += 1
        if parent.is_list:
            parent.container.append(value)  # type: ignore[union-attr]
        elif parent.has_key:
            parent.container[parent.pending_key] = value
            parent.has_key = False
            parent.pending_key = None
        else:
            if value in parent.container:
                raise builder._duplicate_key(value, event)
            parent.pending_key = value
            parent.has_key = True
    return builder.result if builder is not None else None


BACKENDS = ("libyaml", "ruamel") if pyyaml.__with_libyaml__ else ("ruamel",)
"""Available event parsers, preferred first."""


def _events(text: str, backend: str) -> Iterable[Event]:
    events: Iterable[Event]
    if backend == "libyaml":
        # What `yaml.parse(text, Loader=CSafeLoader)` yields, pulled straight from libyaml's
        # `get_event` (None after the stream end) without a Python generator frame per event.
        events = iter(pyyaml.CSafeLoader(text).get_event, None)
    else:
        events = YAML(typ="safe", pure=True).parse(text)
    return events


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
    try:
        return _build(
            _events(text, chosen), file, record, limits, long_text=len(text) > bounds.string_chars
        )
    except (YAMLError, pyyaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        key = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "nesting depth" in str(problem):  # libyaml's own bound (1,000) met while scanning
            depth = limits.depth if limits is not None else MAX_DEPTH
            raise YamlError(
                "nesting too deep",
                location=Location(file, key),
                expected=f"at most {depth} levels (limit depth)",
                found=f"more than {depth} nested mappings/sequences",
                hint="flatten the document",
            ) from exc
        raise YamlError(
            "not valid YAML",
            location=Location(file, key),
            expected="well-formed YAML",
            found=str(problem),
            hint="fix the syntax at the reported position",
        ) from exc
