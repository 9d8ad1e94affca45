"""Where pages live and how they link: Markdown paths, MkDocs URLs, relative links and stable
anchors (plain functions of names; part of `generator.site.model`'s face)."""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re


def page_url(path: str) -> str:
    """The directory URL MkDocs gives a Markdown file (`a/b.md` -> `a/b/`, `index.md` -> ``)."""
    stem = path[:-3]
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem[:-5]
    return stem + "/"


@functools.lru_cache(maxsize=1 << 16)
def rel(from_page: str, to_page: str) -> str:
    """A relative link from one Markdown page's URL to another's (works under any base path).

    Remembered: every recipe page links the same few pages, and `relpath` is slow."""
    base = page_url(from_page) or "."
    target = page_url(to_page) or "."
    out = relative(target, base.rstrip("/") or ".")
    return "./" if out == "." else out + "/"


def relative(target: str, base: str) -> str:
    """`posixpath.relpath(target, base)` for two paths relative to the same root, without its
    two `getcwd` calls (thousands of links per build); a path it does not take as plain
    (empty, `.` or `..` parts, absolute) goes to `relpath` itself."""
    to_parts = target.rstrip("/").split("/") if target not in ("", ".") else []
    from_parts = base.rstrip("/").split("/") if base not in ("", ".") else []
    if (
        not target
        or target.startswith("/")
        or base.startswith("/")
        or not _plain(to_parts)
        or not _plain(from_parts)
    ):
        return posixpath.relpath(target, base)
    common = 0
    for mine, theirs in zip(to_parts, from_parts, strict=False):
        if mine != theirs:
            break
        common += 1
    parts = [".."] * (len(from_parts) - common) + to_parts[common:]
    return "/".join(parts) or "."


def _plain(parts: list[str]) -> bool:
    return all(part not in ("", ".", "..") for part in parts)


def mdrel(from_page: str, to_page: str) -> str:
    """A relative link between two Markdown files, for Markdown links MkDocs validates."""
    return posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")


_NOT_SLUG = re.compile("[^a-z0-9-]")


def anchor(kind: str, *parts: object) -> str:
    """A stable HTML id for a card, grid row or test: `<kind>-<readable slug>-<8 hex>`.

    The slug is the last part, lowercased, other characters as `-`, at most 40 characters (so
    a link says what it points at); the hash over every part keeps ids unique and the same from
    build to build for the same thing."""
    text = "\0".join(str(p) for p in parts)
    tail = str(parts[-1]).lower() if parts else ""
    slug = _NOT_SLUG.sub("-", tail[:40]).strip("-")
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{kind}-{slug}-{digest}" if slug else f"{kind}-{digest}"


def recipe_page(recipe: str) -> str:
    return f"recipes/{recipe}.md"


def source_page(slug: str) -> str:
    return f"sources/{slug}.md"
