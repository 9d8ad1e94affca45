"""Escaping for every place a contributor-controlled string can land on the site.

Recipe names, test names, identities, labels, stdout lines, URLs and hints come from pointer
files and signed bundles anyone can submit, so each is escaped for its exact context: HTML text,
HTML attributes, Markdown table cells, Markdown inline text, and chart JSON. Links are http(s)
only; anything else is rendered as text.

Before any of that, `neutral` turns the characters that change how the text around them reads
(bidi overrides and isolates, directional marks, NUL and other C0/C1 controls) into a visible
escape such as `\\u202e`: a label cannot reorder a row of the grid or hide text. Every escaper
here calls it, so every path that puts a contributor string on a page does too.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup

_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
# Characters Markdown (or its extensions) may treat as syntax inside inline text. Written as
# HTML entities, which Markdown passes through and the browser shows as the character.
_MD = {
    **_HTML,
    "|": "&#124;",
    "`": "&#96;",
    "[": "&#91;",
    "]": "&#93;",
    "*": "&#42;",
    "_": "&#95;",
    "\\": "&#92;",
    "~": "&#126;",
    "^": "&#94;",
    "=": "&#61;",
    "{": "&#123;",
    "}": "&#125;",
    "!": "&#33;",
    ":": "&#58;",
    "#": "&#35;",
    "+": "&#43;",
    "$": "&#36;",
}
# The Markdown map as a `str.translate` table: one C-level pass per string.
_SPACE = re.compile(r"\s")
_MD_TABLE = str.maketrans(_MD)
# Bidi embeddings/overrides/isolates, directional marks, the Arabic letter mark, and C0/C1
# controls (with DEL) except tab and newline: shown as `\\uXXXX` instead of acting on the text.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Plotly reads pseudo-HTML (`<a href>`, `<b>`, `<span style>`, `<br>`) and entities in every
# text it draws, and `%{...}` as a template in titles, hover and text templates.
_PLOTLY = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "%": "&#37;"}


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def neutral(value: str) -> str:
    """`value` with every bidi control and C0/C1 control (but tab and newline) made visible.

    `str.isprintable` is one C pass and true for almost every value (it is false for all the
    characters replaced here, and for tab and newline), so the regular expression runs only
    on the rare strings that hold one of them.
    """
    if value.isprintable():
        return value
    return _INVISIBLE.sub(_visible, value)


def chart_text(value: object) -> str:
    """A contributor string as Plotly text: neutral, with Plotly's markup characters as
    entities (Plotly shows them as the characters), so it is drawn literally."""
    s = neutral("" if value is None else str(value))
    for char, entity in _PLOTLY.items():
        if char in s:
            s = s.replace(char, entity)
    return s


def finalize(value: Any) -> Any:
    """The Jinja environment's `finalize`: every plain string a template writes has its
    controls made visible before autoescaping.

    `Markup` passes as it is: it comes only from the escapers of this module, which have
    already done it (scanning whole finished cards and grids again would cost a regular
    expression pass over every page's HTML).
    """
    if type(value) is str and not value.isprintable():
        return _INVISIBLE.sub(_visible, value)
    return value


def text(value: object) -> str:
    """`html` as a plain str, for code that builds whole blocks and marks them safe once.

    One `in` test per special character and a replace only where needed: most values
    (names, versions, digests) hold none, and this is several times faster than
    `str.translate` with a mapping, which looks every character up.
    """
    if value is None:
        return ""
    s = str(value)
    if not s.isprintable():
        s = _INVISIBLE.sub(_visible, s)
    if "&" in s:
        s = s.replace("&", "&amp;")
    if "<" in s:
        s = s.replace("<", "&lt;")
    if ">" in s:
        s = s.replace(">", "&gt;")
    if '"' in s:
        s = s.replace('"', "&quot;")
    if "'" in s:
        s = s.replace("'", "&#39;")
    return s


def html(value: object) -> Markup:
    """Text for an HTML element body or a double-quoted attribute value."""
    return Markup(text(value))


def attr(value: object) -> Markup:
    """A double-quoted HTML attribute value (same escaping as `html`, newlines kept)."""
    return html(value)


def md(value: object) -> Markup:
    """Inline Markdown text: every syntax character as an entity, newlines folded to spaces.

    Safe in table cells (`|` escaped), list items, headings and paragraphs: a leading `#`,
    `-`, `>` or digit-dot cannot start a block because `#`, `+` and `>` are entities and `-` /
    `.` at the start get one too.
    """
    text = neutral("" if value is None else str(value))
    text = " ".join(text.split())
    out = text.translate(_MD_TABLE)
    if out[:1] in ("-", "."):
        out = ("&#45;" if out[0] == "-" else "&#46;") + out[1:]
    if len(out) >= 2 and out[0].isdigit():
        head = len(out) - len(out.lstrip("0123456789"))
        if out[head : head + 1] in (".", ")"):
            out = out[:head] + ("&#46;" if out[head] == "." else "&#41;") + out[head + 1 :]
    return Markup(out)


def safe_url(value: object) -> str | None:
    """The URL when it is an absolute http(s) URL with a host, else None."""
    if not isinstance(value, str) or not value:
        return None
    return value if _is_web_url(str(value)) else None


@functools.lru_cache(maxsize=1 << 14)
def _is_web_url(value: str) -> bool:
    """`safe_url`'s test, remembered (pages repeat the same few URLs)."""
    if _SPACE.search(value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def link(text: object, url: object, *, cls: str = "") -> Markup:
    """An `<a>` for an http(s) URL (opening a new tab, no referrer), else the text alone."""
    good = safe_url(url)
    if good is None:
        return html(text)
    extra = f' class="{html(cls)}"' if cls else ""
    return Markup(
        f'<a href="{attr(good)}"{extra} rel="noopener noreferrer nofollow">{html(text)}</a>'
    )


def figure_attr(figure: Any) -> Markup:
    """A Plotly figure as HTML-escaped JSON for a `data-figure` attribute.

    `text` writes controls and bidi characters as `\\uXXXX`, which inside a JSON string is
    the JSON escape of the same character: JSON.parse gives back the exact string, and none
    stands raw in the page."""
    dumped = json.dumps(
        figure, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return Markup(text(dumped))


def data_attr(value: Any) -> Markup:
    """Any JSON value for a `data-*` attribute (route tables, filter values)."""
    return figure_attr(value)


def code(value: object) -> Markup:
    """Text for inside `<code>` (HTML-escaped; Markdown does not touch raw HTML blocks)."""
    return html(value)
