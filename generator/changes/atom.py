"""Atom 1.0 feeds of changes: render (deterministic bytes) and read a previous feed (bounded).

A previous feed comes from the live site, so it is read as hostile input by a strict expat
parser: a document type declaration (and so any entity definition, the billion-laughs bomb)
is refused outright, the size, nesting depth and element count are capped, and reading stops
after `max_entries` entries (newest first: the rest would be dropped anyway). Only entries this
tool could have written are carried over: an id of our form, an RFC 3339 UTC time, a valid
recipe name and change kind, short texts. Links are never taken from the old feed; they are
made again from the recipe name.
"""

from __future__ import annotations

import re
import xml.parsers.expat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from generator.changes.model import RECIPE_NAME, ChangeKind

__all__ = [
    "ATOM_NS",
    "ENTRY_ID",
    "FeedEntry",
    "FeedError",
    "FeedLimits",
    "parse_feed",
    "render_feed",
]

ATOM_NS = "http://www.w3.org/2005/Atom"
ID_PREFIX = "tag:evidence-dashboard.dev,2026:"
ENTRY_ID = re.compile(re.escape(ID_PREFIX) + r"change/[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
KIND_SCHEME = "https://evidence-dashboard.dev/change-kind"
RECIPE_SCHEME = "https://evidence-dashboard.dev/recipe"


@dataclass(frozen=True)
class FeedLimits:
    """Bounds on reading a previous feed."""

    max_bytes: int = 8 * 1024 * 1024
    max_depth: int = 8
    max_elements: int = 50_000
    max_entries: int = 200
    max_text: int = 2_000


class FeedError(ValueError):
    """The previous feed cannot be read (the reason in words)."""


@dataclass(frozen=True)
class FeedEntry:
    """One change as a feed entry."""

    id: str
    title: str
    updated: str
    recipe: str
    kind: ChangeKind
    summary: str


def _href(site_url: str | None, recipe: str, recipe_feed: bool) -> str:
    if site_url:
        return f"{site_url.rstrip('/')}/recipes/{recipe}/"
    return "./" if recipe_feed else f"recipes/{recipe}/"


def render_feed(
    entries: Sequence[FeedEntry],
    *,
    feed_id: str,
    title: str,
    updated: str,
    self_href: str,
    site_href: str,
    site_url: str | None,
    recipe_feed: bool = False,
) -> bytes:
    """An Atom 1.0 document, entries in the given order (newest first)."""
    out = [
        '<?xml version="1.0" encoding="utf-8"?>\n',
        f'<feed xmlns="{ATOM_NS}">\n',
        f"  <id>{escape(feed_id)}</id>\n",
        f"  <title>{escape(title)}</title>\n",
        f"  <updated>{escape(updated)}</updated>\n",
        f'  <link rel="self" type="application/atom+xml" href={quoteattr(self_href)}/>\n',
        f'  <link rel="alternate" type="text/html" href={quoteattr(site_href)}/>\n',
        "  <author><name>evidence-dashboard</name></author>\n",
        "  <generator>evidence-dashboard</generator>\n",
    ]
    for e in entries:
        href = _href(site_url, e.recipe, recipe_feed)
        out.extend(
            [
                "  <entry>\n",
                f"    <id>{escape(e.id)}</id>\n",
                f"    <title>{escape(e.title)}</title>\n",
                f"    <updated>{escape(e.updated)}</updated>\n",
                f'    <link rel="alternate" type="text/html" href={quoteattr(href)}/>\n',
                f"    <category scheme={quoteattr(RECIPE_SCHEME)} term={quoteattr(e.recipe)}/>\n",
                f"    <category scheme={quoteattr(KIND_SCHEME)} term={quoteattr(str(e.kind))}/>\n",
                f"    <summary>{escape(e.summary)}</summary>\n",
                "  </entry>\n",
            ]
        )
    out.append("</feed>\n")
    return "".join(out).encode("utf-8")


class _Stop(Exception):  # noqa: N818 - control flow: enough entries read
    pass


def parse_feed(data: bytes, limits: FeedLimits | None = None) -> list[FeedEntry]:
    """The entries of a previous feed we can carry over, in document order (at most
    `max_entries`). Raises `FeedError` when the document cannot be read safely."""
    limits = limits or FeedLimits()
    if len(data) > limits.max_bytes:
        raise FeedError(f"the feed is larger than {limits.max_bytes} bytes")
    reader = _FeedReader(limits)
    parser = reader.parser()
    try:
        parser.Parse(data, True)
    except _Stop:
        pass
    except xml.parsers.expat.ExpatError as exc:
        raise FeedError(f"the feed is not well-formed XML ({exc})") from None
    return [entry for item in reader.raw if (entry := _entry(item)) is not None]


def _refuse(*_args: Any) -> None:
    raise FeedError("the feed declares a document type or entities (refused)")


def _refuse_external(*_args: Any) -> int:
    raise FeedError("the feed refers to an external entity (refused)")


class _FeedReader:
    """expat's handlers for `parse_feed`: the raw fields of each entry, within `limits`."""

    def __init__(self, limits: FeedLimits) -> None:
        self.limits = limits
        self.depth = 0
        self.elements = 0
        self.entry: dict[str, Any] | None = None
        self.text: tuple[str, list[str]] | None = None
        self.raw: list[dict[str, Any]] = []

    def parser(self) -> Any:
        """A namespace-aware expat parser that refuses DTDs and entities, wired to this."""
        parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
        parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = _refuse
        parser.EntityDeclHandler = _refuse
        parser.UnparsedEntityDeclHandler = _refuse
        parser.ExternalEntityRefHandler = _refuse_external
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.chars
        return parser

    def start(self, name: str, attrs: dict[str, str]) -> None:
        limits = self.limits
        self.depth += 1
        self.elements += 1
        if self.depth > limits.max_depth:
            raise FeedError(f"the feed nests deeper than {limits.max_depth} elements")
        if self.elements > limits.max_elements:
            raise FeedError(f"the feed has more than {limits.max_elements} elements")
        ns, _, local = name.rpartition(" ")
        if self.depth == 1 and (ns, local) != (ATOM_NS, "feed"):
            raise FeedError("the document is not an Atom feed")
        if ns != ATOM_NS:
            self.text = None
            return
        if local == "entry" and self.depth == 2:
            self.entry = {"categories": {}}
        elif self.entry is not None and self.depth == 3:
            if local == "category":
                scheme, term = attrs.get("scheme", ""), attrs.get("term", "")
                if len(term) <= limits.max_text:
                    self.entry["categories"][scheme] = term
            elif local in ("id", "title", "updated", "summary"):
                self.text = (local, [])

    def chars(self, chunk: str) -> None:
        current = self.text
        if current is not None:
            current[1].append(chunk)
            if sum(len(c) for c in current[1]) > self.limits.max_text:
                self.text = None
                if self.entry is not None:
                    self.entry["bad"] = True

    def end(self, name: str) -> None:
        current = self.text
        if current is not None and self.entry is not None and self.depth == 3:
            self.entry[current[0]] = "".join(current[1])
        self.text = None
        if self.depth == 2 and self.entry is not None:
            self.raw.append(self.entry)
            self.entry = None
            if len(self.raw) >= self.limits.max_entries:
                raise _Stop
        self.depth -= 1


def _entry(item: dict[str, Any]) -> FeedEntry | None:
    """A carried-over entry, or None unless every field is one this tool writes."""
    if item.get("bad"):
        return None
    ident, title = str(item.get("id", "")).strip(), str(item.get("title", ""))
    updated, summary = str(item.get("updated", "")).strip(), str(item.get("summary", ""))
    recipe = item["categories"].get(RECIPE_SCHEME, "")
    kind = item["categories"].get(KIND_SCHEME, "")
    if not ENTRY_ID.fullmatch(ident) or not _TIME.fullmatch(updated):
        return None
    if not RECIPE_NAME.fullmatch(recipe) or kind not in ChangeKind.__members__.values():
        return None
    if not title:
        return None
    return FeedEntry(ident, title, updated, recipe, ChangeKind(kind), summary)
