"""A pointers.json entry kept as its text, read field by field and parsed whole only when asked.

A one-change build at 10,000 attestations reuses almost every pointer's entry from its
recipe's stored product (`generator.evaluate.products`). Parsing all of them (90 MB) and laying
them out again for data/pointers.json and for the page keys cost about half a second, while
the build only reads a few small fields of most of them: where each sits, its recipe, verdict,
signer and freshness, and when its evidence was signed. `LaidOutEntry` holds the entry's
`subtree_layout` text (what data/pointers.json is written from, `generator.data.gojson`) with
those fields (`HEAD_KEYS`, and parts of `PART_KEYS`) already read; any other field parses the
text once. It is a read-only `Mapping`, never a dict: code that needs a dict says so
(`materialized`) and nothing can change it behind its text. Verification workers
(`generator.evaluate.pool`) send the entries they make back laid out too: their text is what
the recipe products and data/pointers.json are written from anyway.

The text is laid out with sorted keys, so an entry iterates its keys in sorted order, where a
freshly made entry keeps the order it was made in: no page or document depends on it (every
test of `tests/evaluation/test_incremental.py` compares a build from laid-out entries with a
cold build, byte for byte). The text comes from an authenticated product
(`generator.cacheauth`); a text that does not parse as the keys it was stored with raises
`LayoutError` (a build error: the previous output stays), never another value. An entry read
from a product does not hold its text: it is read from the product's file (`LayoutFile`, which
holds a few recent files) each time it is asked for, so a build that reads every entry (every
page made again) does not hold them all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from generator.data.layoutfile import LayoutError, LayoutFile, Span

__all__ = [
    "ENTRY_PAD",
    "HEAD_KEYS",
    "PART_KEYS",
    "LAID_OUT",
    "LaidOutEntry",
    "LayoutError",
    "LayoutFile",
    "Span",
    "head_of",
    "materialized",
    "plain",
]

HEAD_KEYS = ("duplicateOf", "freshness", "path", "recipe", "signer")
"""The top-level fields read of every pointer (the site's indexes, the change feed, the recipe
products: an entry is stored as a pointer that duplicates none)."""
PART_KEYS = {"evidence": ("attestedAt", "loggedAt"), "verify": ("exit", "pending")}
"""The objects read of every pointer only in part: when its evidence was signed (the order of
pages), its verdict (not the verification steps)."""
_PART_NAMES = frozenset(PART_KEYS)
ENTRY_PAD = "    "
"""The indent of a pointer's entry in data/pointers.json (`{"pointers": [entry, ...]}`)."""


class _Fields(Mapping[str, Any]):
    """A read-only mapping whose keys are known before its values (`_keys`, in order)."""

    __slots__ = ("_keys",)
    _keys: tuple[str, ...]

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class LaidOutEntry(_Fields):
    """A pointers.json entry: its layout text (or where it lies), its keys, and the fields read
    so far."""

    __slots__ = (
        "_digest",
        "_full",
        "_known",
        "_layout",
        "_relayout",
        "_steps",
        "derived",
        "finished",
        "span",
    )

    def __init__(
        self,
        layout: bytes | Span,
        keys: tuple[str, ...],
        known: dict[str, Any],
        steps: int | None = None,
    ) -> None:
        self._layout = layout if isinstance(layout, bytes) else None
        self.span = layout if isinstance(layout, Span) else None
        """Where its text lies in a product's file (None: made here)."""
        self._digest = None if self.span is None else self.span.sha256
        self._steps = steps if self.span is None else self.span.steps
        self._keys = keys
        self._known = known
        self._full: dict[str, Any] | None = None
        self._relayout: Callable[[Any], bytes] | None = None
        self.derived: Mapping[str, Any] = {}
        """Values worked out from the whole entry when it was laid out, kept with its text
        (a kept tab's checks, `generator.evaluate.tabstore`): read without parsing."""
        self.finished: Span | None = None
        """Where its text as data/pointers.json holds it lies (`finish_layout` of its layout at
        `ENTRY_PAD`), stored with its layout: copied, never made again (None: not stored)."""

    @property
    def layout(self) -> bytes:
        """`subtree_layout` of the entry: the exact text data/pointers.json is made from."""
        if self._layout is None:
            if self.span is not None:  # read from its product's file each time, not held
                return self.span.file.text(self.span)
            # made in this build and let go (`release`): made again
            assert self._relayout is not None and self._full is not None
            self._layout = self._relayout(self._full)
        return self._layout

    def release(self) -> None:
        """Let go of the text of an entry made in this build (`made` with a `relayout`) once
        the data files are written from it: a site of 10,000 attestations holds a hundred MB
        of it. Asked for again, it is laid out again from the same document."""
        if self.span is None and self._relayout is not None and self._full is not None:
            self.sha256  # noqa: B018 - kept: the page keys hash it
            self._layout = None

    def finished_text(self, pad: str) -> bytes | None:
        """Its stored text as data/pointers.json holds it when `pad` is the indent it was
        finished at (`finished`), checked against its sha256 (`LayoutError` when it does not
        check); None when not stored."""
        if self.finished is None or pad != ENTRY_PAD:
            return None
        return self.finished.file.text(self.finished)

    @property
    def steps(self) -> int | None:
        """Which of Go's number steps change its text (`Span.steps`, or as searched where its
        text was laid out; None: not known)."""
        return self._steps

    @property
    def unread(self) -> Span | None:
        """Where its text lies, for an entry read from a product (the data helper reads it there;
        None: made in this build)."""
        return self.span if self._layout is None else None

    @property
    def sha256(self) -> bytes:
        """The sha256 of its text (the stored one, which reading the text checked)."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.layout).digest()
        return self._digest

    @classmethod
    def made(
        cls,
        document: dict[str, Any],
        layout: bytes,
        steps: int | None = None,
        relayout: Callable[[Any], bytes] | None = None,
    ) -> LaidOutEntry:
        """An entry made in this build and laid out now (`layout` is its `subtree_layout`,
        `steps` its number steps when known): read from `document` itself, written from
        `layout`, never parsed. `relayout` (what made `layout`) lets `release` drop it."""
        entry = cls(layout, tuple(sorted(document)), {}, steps)
        entry._full = document
        entry._relayout = relayout
        return entry

    @classmethod
    def from_head(
        cls,
        layout: bytes | Span,
        head: Mapping[str, Any],
        steps: int | None = None,
        *,
        part_names: frozenset[str] = _PART_NAMES,
    ) -> LaidOutEntry:
        """The entry of `layout` with the fields `head_of` read (ValueError for another
        shape); `steps`: its text's number steps, when `layout` is the text and they are
        known (`generator.data.gonumbers.number_steps`). `part_names`: the fields a head may
        know in part (a pointer entry's `PART_KEYS`)."""
        keys, key_set = _keys(head.get("keys"))
        known = head.get("known")
        parts = head.get("parts")
        if type(known) is not dict or type(parts) is not dict:
            raise ValueError("an entry's head has no known fields and parts")
        if not key_set.issuperset(known) or not part_names.issuperset(parts):
            raise ValueError("the known fields are not among the entry's keys")
        entry = cls(layout, keys, dict(known), steps)
        for name, part in parts.items():
            if name in known or name not in key_set or type(part) is not dict:
                raise ValueError(f"the part {name!r} is known whole, absent or not an object")
            part_keys, part_set = _keys(part.get("keys"))
            part_known = part.get("known")
            if type(part_known) is not dict or not part_set.issuperset(part_known):
                raise ValueError(f"the known fields of {name!r} are not among its keys")
            entry._known[name] = _Part(entry, name, part_keys, part_known)
        return entry

    def __getitem__(self, key: str) -> Any:
        known = self._known
        if key in known:
            return known[key]
        if self._full is None:
            if key not in self._keys:
                raise KeyError(key)
            return self._parsed()[key]
        return self._full[key]

    @property
    def is_parsed(self) -> bool:
        """Whether a field beyond the head was asked for (the text was parsed)."""
        return self._full is not None

    def __repr__(self) -> str:
        return f"LaidOutEntry({self.get('path')!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        head = self.head()
        return (_rebuilt, (self.layout, head, self.steps, sorted(head["parts"]), self.derived))

    def head(self) -> dict[str, Any]:
        """What it reads without parsing, as `head_of` gives it (`from_head` takes it back)."""
        known: dict[str, Any] = {}
        parts: dict[str, Any] = {}
        for key, value in self._known.items():
            if type(value) is _Part:
                parts[key] = {"keys": list(value._keys), "known": dict(value.known)}
            else:
                known[key] = value
        return {"keys": list(self._keys), "known": known, "parts": parts}

    def _parsed(self) -> dict[str, Any]:
        """The whole entry, parsed once (its text is a product's, authenticated)."""
        full = self._full
        if full is None:
            try:
                full = orjson.loads(self.layout)
            except orjson.JSONDecodeError as exc:
                raise LayoutError(f"a laid-out entry does not parse: {exc}") from exc
            if not isinstance(full, dict) or tuple(full) != self._keys:
                raise LayoutError("a laid-out entry has other keys than it says")
            self._full = full
        return full

    def materialized(self) -> dict[str, Any]:
        """The entry as a new dict of its parsed values."""
        return dict(self._parsed())


class _Part(_Fields):
    """An object field of a `LaidOutEntry` (`PART_KEYS`): some fields read, the rest parsed
    from the entry."""

    __slots__ = ("entry", "known", "name")

    def __init__(
        self, entry: LaidOutEntry, name: str, keys: tuple[str, ...], known: dict[str, Any]
    ) -> None:
        self.entry = entry
        self.name = name
        self._keys = keys
        self.known = known

    def __getitem__(self, key: str) -> Any:
        if key in self.known:
            return self.known[key]
        if key not in self._keys:
            raise KeyError(key)
        whole: Mapping[str, Any] = self.entry._parsed()[self.name]
        return whole[key]

    def materialized(self) -> dict[str, Any]:
        return dict(self.entry._parsed()[self.name])


def _rebuilt(
    layout: bytes,
    head: dict[str, Any],
    steps: int | None = None,
    part_names: Sequence[str] | None = None,
    derived: Mapping[str, Any] | None = None,
) -> LaidOutEntry:
    names = _PART_NAMES if part_names is None else frozenset(part_names)
    entry = LaidOutEntry.from_head(layout, head, steps, part_names=names)
    entry.derived = dict(derived or {})
    return entry


_SHAPES: dict[tuple[str, ...], frozenset[str]] = {}
"""Key lists already checked (a tree's entries have a handful of shapes), up to `_MAX_SHAPES`."""
_MAX_SHAPES = 4096


def _keys(value: Any) -> tuple[tuple[str, ...], frozenset[str]]:
    """A head's key list as a tuple, with its set; ValueError unless a list of strings."""
    if type(value) is not list:
        raise ValueError("an entry's keys are not a list")
    keys = tuple(value)
    try:
        seen = _SHAPES.get(keys)
    except TypeError:  # an unhashable item: not a string
        seen = None
    if seen is None:
        if not set(map(type, keys)) <= {str}:
            raise ValueError("an entry's keys are not all strings")
        seen = frozenset(keys)
        if len(_SHAPES) < _MAX_SHAPES:
            _SHAPES[keys] = seen
    return keys, seen


def head_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What a `LaidOutEntry` of `doc` reads without parsing: its sorted keys, its `HEAD_KEYS`
    fields and, of each `PART_KEYS` field that is an object, its sorted keys and those fields
    (a part that is not an object is known whole)."""
    known = {k: doc[k] for k in HEAD_KEYS if k in doc}
    parts: dict[str, Any] = {}
    for name, wanted in PART_KEYS.items():
        if name not in doc:
            continue
        value = doc[name]
        if isinstance(value, Mapping):
            parts[name] = {
                "keys": sorted(value),
                "known": {k: value[k] for k in wanted if k in value},
            }
        else:
            known[name] = value
    return {"keys": sorted(doc), "known": known, "parts": parts}


LAID_OUT: frozenset[type] = frozenset({LaidOutEntry, _Part})
"""The types of a laid-out entry and of its parts: Mappings that are not dicts."""


def materialized(value: Any) -> Any:
    """`value` as plain JSON types where it is a laid-out entry or part of one (a serializer's
    `default`; `dict(entry)` keeps its parts as they are); TypeError for anything else, as a
    serializer without a `default` raises."""
    if type(value) in LAID_OUT:
        return value.materialized()
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def plain(document: Mapping[str, Any]) -> dict[str, Any]:
    """A pointer entry as a new dict of plain values, laid out or not."""
    return document.materialized() if type(document) is LaidOutEntry else dict(document)
