"""Builds one YAML document's parser events into plain data, enforcing every bound on the way.

`_build` handles the common events (untagged scalars into an open collection) inline, as this
is the loop every pointer, allowlist and recipe passes through; `_Builder` handles the rest and
holds the checks: tags, duplicate keys, aliases (count and expanded size), depth, node count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from generator.errors import Location, YamlError
from generator.limits import PARSE_LIMITS, ParseLimits
from generator.tree._yaml_scalars import (
    _ALLOWED_TAGS,
    _CORE,
    _NOT_PLAIN_START,
    _resolve_by_rules,
    _tagged,
)

Event = Any
"""A parser event of either backend (same class names and attributes in both)."""


MAX_DEPTH = PARSE_LIMITS.depth
"""Deepest allowed nesting of mappings and sequences (the default `ParseLimits.depth`)."""


MAX_ALIASES = PARSE_LIMITS.yaml_aliases
"""Most alias uses (`*name`) in one document."""


MAX_NODES = PARSE_LIMITS.total_items
"""Most nodes the document may hold once every alias is expanded."""


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
