"""GitHub Markdown primitives of the PR report: the cell escape, tables, and the length cut.

`md_escape` neutralises every contributor string (rules in `render`'s docstring); `_table` stops
at `MAX_ROWS` rows; `truncate` keeps the comment under `MAX_CHARS`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from generator.site.escape import neutral

MAX_ROWS = 80


MAX_CHARS = 65_000
"""GitHub refuses comments over 65,536 characters; the comment workflow cuts at 65,000."""


CELL_MAX = 300


_ESCAPED = frozenset("\\|*_[]~$")


_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "`": "&#96;"}


_ZWSP = "\u200b"


_SPACES = frozenset("\n\t\v\f\u2028\u2029")


# Emoji (and their text forms) the report itself uses, or that read as a verdict: a
# contributor string shows them as `\\uXXXX`, never as a mark.
_MARKS = frozenset(
    "\u2705\u274c\u274e\u26a0\u231b\u23f3\u2714\u2713\u2717\u2718\u2716"
    "\u2757\u2755\u26d4\u2b55\U0001f6ab\U0001f534\U0001f7e2\U0001f7e1"
    "\U0001f7e0\U0001f7e5\U0001f7e9\U0001f6a8\u2611\u2612\u2610"
)


_DROP = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))


# After escaping: `:` before a non-space (URLs, `:shortcode:`), `www.` and `GH-<digit>` get
# a zero-width space, so GitHub autolinks none of them.
_AUTOLINK = re.compile(r"(:)(?=\S)|(www)(?=\.)|(gh-)(?=\d)", re.IGNORECASE)


def _mark(char: str) -> str:
    code = ord(char)
    return f"\\\\u{code:04x}" if code <= 0xFFFF else f"\\\\U{code:08x}"


def md_escape(value: object, limit: int = CELL_MAX) -> str:
    """One safe GitHub Markdown table-cell string from untrusted text."""
    out: list[str] = []
    for char in neutral(str(value)):
        if char in _SPACES:
            out.append(" ")
        elif char in _HTML:
            out.append(_HTML[char])
        elif char == "@":
            out.append("@" + _ZWSP)  # no mention, no team ping, no e-mail autolink
        elif char == "#":
            out.append("#" + _ZWSP)  # no `#1` / `owner/repo#1` reference
        elif char in _ESCAPED:
            out.append("\\" + char)
        elif char in _MARKS:
            out.append(_mark(char))
        elif unicodedata.category(char) in _DROP:
            continue  # invisible formatting (zero-width characters, private use, unassigned)
        else:
            out.append(char)
    text = " ".join("".join(out).split())
    text = _AUTOLINK.sub(lambda m: m.group() + _ZWSP, text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip("\\") + "…"
    return text


def _state(value: object) -> str:
    """A consensus state name (the schema allows only the six) or an em dash for none."""
    return md_escape(value, 40) if value else "—"


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], limit: int = MAX_ROWS
) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows[:limit])
    if len(rows) > limit:
        more = [f"+{len(rows) - limit} more"] + [""] * (len(header) - 1)
        lines.append("| " + " | ".join(more) + " |")
    return lines


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _short(rev: str) -> str:
    return md_escape(rev[:12], 40)


def truncate(text: str, limit: int = MAX_CHARS) -> str:
    """Cut at a line boundary under `limit`, close an open `<details>`, say it was cut."""
    if len(text) <= limit:
        return text
    note = ("", f"_Report truncated at {limit} characters; the JSON report has every row._", "")
    budget = limit - sum(len(n) + 1 for n in note) - len("</details>\n") - 1
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    opened = sum(1 for line in kept if line.startswith("<details>"))
    closed = sum(1 for line in kept if line == "</details>")
    if opened > closed:
        kept.append("</details>")
    return "\n".join([*kept, *note])
