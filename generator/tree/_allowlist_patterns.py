"""The narrowness rules of an allowlist `identityPattern`, and the RE2 options it compiles with.

A pattern is `^<literal path>@<ref pattern>$`: left of the first unescaped `@` only literal
characters and escaped punctuation, right of it no top-level alternation (which would escape the
anchors). `_scan_pattern` returns the literal prefix, which two entries may not share.
"""

from __future__ import annotations

from typing import Any

import re2

_METACHARS = frozenset(".*+?()[]{}|^$")


def _re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False
    return options


def _scan_pattern(pattern: str) -> tuple[str, str] | str:
    """Split an anchored pattern into (literal prefix, right part), or return why it is too broad.

    The prefix is the part left of the first unescaped `@`, with escapes removed. Left of `@`
    only literal characters and escaped punctuation (`\\.`) are allowed; an escaped letter or
    digit (`\\d`, `\\w`, `\\Q`) is a class or operator, not a literal, and is refused. Right of
    `@`, alternation at the top level is refused because it would escape the anchors.
    """
    if not pattern.startswith("^"):
        return "it must start with ^"
    body = pattern[1:]
    if not body.endswith("$"):
        return "it must end with $"
    # the final $ must itself be unescaped: count the backslashes before it
    trailing = len(body[:-1]) - len(body[:-1].rstrip("\\"))
    if trailing % 2 == 1:
        return "it must end with an unescaped $"
    body = body[:-1]
    literal: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            if i + 1 >= len(body):
                return "it ends with a lone backslash"
            nxt = body[i + 1]
            if nxt.isalnum():
                return f"\\{nxt} left of '@' is a character class or operator, not a literal"
            literal.append(nxt)
            i += 2
            continue
        if ch == "@":
            rest = body[i + 1 :]
            problem = _top_level_alternation(rest)
            return problem if problem else ("".join(literal), rest)
        if ch in _METACHARS:
            return f"the unescaped metacharacter {ch!r} appears left of '@'"
        literal.append(ch)
        i += 1
    return "it has no unescaped '@' (the OIDC subject shape <path>@<ref>)"


def _top_level_alternation(rest: str) -> str | None:
    """Why `rest` (right of `@`) is too broad, or None: a `|` outside groups escapes `^...$`."""
    depth = 0
    in_class = False
    i = 0
    while i < len(rest):
        ch = rest[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if rest[i + 1 : i + 2] == "^":
                i += 1
            if rest[i + 1 : i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return "a top-level '|' right of '@' would escape the ^...$ anchors"
        i += 1
    return None
