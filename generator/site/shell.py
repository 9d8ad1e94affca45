"""Recipe pages without a MkDocs pass each: one MkDocs-rendered page shell, filled per recipe.

A site of 1,000 recipes would spend most of its build in MkDocs converting and templating
1,000 pages that differ only in their title, address and body. Instead the build gives MkDocs
one extra page, the *shell* (`recipes/_evidence-shell.md`: a placeholder title and a marker
for the body), so the shell carries exactly what Material renders around every recipe page
(header, tabs, search, footer, banners, assets at the same depth). Each recipe page is then
the shell with its title, address and finished HTML body put in (`PageShell.fill`), and the
search index, the sitemap and Material's tags file get the entries MkDocs would have written.

Recipe names are `[A-Za-z0-9][A-Za-z0-9._-]*` (the pointer schema), so a recipe can never be
named like the shell (leading `_`) and its name needs no escaping inside a URL.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import BuildError, Location
from generator.site import escape
from generator.site.pages import HtmlPage

SHELL_NAME = "_evidence-shell"
SHELL_PAGE = f"recipes/{SHELL_NAME}.md"
SHELL_URL = f"recipes/{SHELL_NAME}/"
TITLE_TOKEN = "EvidenceDashboardShellTitle7f3c"
BODY_MARKER = "<!--evidence-dashboard-shell-body-->"


def shell_markdown() -> str:
    """The shell page's Markdown: recipe-page front matter, a placeholder title, a marker."""
    return f"---\nhide:\n  - navigation\n  - toc\ntitle: {TITLE_TOKEN}\n---\n\n{BODY_MARKER}\n"


@dataclass(frozen=True)
class PageShell:
    """The rendered shell page cut at its body marker; `fill` makes one recipe page."""

    head: str
    tail: str

    @classmethod
    def parse(cls, html_text: str, source: str) -> PageShell:
        """Cut a rendered shell; a theme that dropped the body marker is a BuildError."""
        found = html_text.count(BODY_MARKER)
        if found != 1:
            raise BuildError(
                "the theme's page template did not keep the page body exactly once",
                location=Location(source),
                expected=f"one {BODY_MARKER} in the rendered shell page",
                found=f"{found} occurrences",
                hint="check the theme overrides: the main template must render page.content once",
            )
        head, tail = html_text.split(BODY_MARKER)
        return cls(head, tail)

    def fill(self, recipe: str, page: HtmlPage) -> str:
        """The finished page of `recipe`: the shell with its title, address and body."""
        title = str(escape.html(page.title))
        url = f"recipes/{recipe}/"
        head = self.head.replace(TITLE_TOKEN, title).replace(SHELL_URL, url)
        tail = self.tail.replace(TITLE_TOKEN, title).replace(SHELL_URL, url)
        return f"{head}{page.body}{tail}"


def expand(site: Path, pages: Mapping[str, HtmlPage], written: Iterable[str]) -> None:
    """Replace the shell's traces in the built site by the recipe pages' entries.

    `written` lists the recipe names whose pages were written under `site/recipes/`. The
    shell's own folder, search entries, sitemap entry and tags mapping are removed.
    """
    names = list(written)
    shutil.rmtree(site / "recipes" / SHELL_NAME, ignore_errors=True)
    _fix_search(site / "search" / "search_index.json", pages, names)
    _fix_sitemap(site / "sitemap.xml", names)
    _fix_tags(site / "tags.json", pages, names)


def _fix_search(path: Path, pages: Mapping[str, HtmlPage], names: Sequence[str]) -> None:
    if not path.is_file():
        return
    index: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    docs = [
        d for d in index.get("docs", []) if not str(d.get("location", "")).startswith(SHELL_URL)
    ]
    for name in names:
        page = pages[name]
        entry: dict[str, Any] = {
            "location": f"recipes/{name}/",
            "title": escape.neutral(page.title),
            "text": page.search_text,
        }
        if page.tags:
            entry["tags"] = [escape.neutral(t) for t in page.tags]
        docs.append(entry)
    index["docs"] = docs
    path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def _fix_sitemap(path: Path, names: Sequence[str]) -> None:
    """Swap the shell's `<url>` entry for one per recipe page (same lastmod), and re-gzip."""
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    at = text.find(SHELL_URL)
    open_at = text.rfind("<url>", 0, at) if at >= 0 else -1
    close_at = text.find("</url>", at) if at >= 0 else -1
    if open_at < 0 or close_at < 0:
        return
    close_at += len("</url>")
    line_start = text.rfind("\n", 0, open_at) + 1
    indent = text[line_start:open_at]
    entry = text[open_at:close_at]
    line_end = close_at + 1 if text[close_at : close_at + 1] == "\n" else close_at
    rest = text[:line_start] + text[line_end:]
    added = "".join(f"{indent}{entry.replace(SHELL_URL, f'recipes/{n}/')}\n" for n in names)
    end = rest.rfind("</urlset>")
    text = rest[:end] + added + rest[end:]
    path.write_text(text, encoding="utf-8")
    gz = path.with_name(path.name + ".gz")
    if gz.exists():
        buffer = io.BytesIO()
        with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as fh:
            fh.write(text.encode("utf-8"))
        gz.write_bytes(buffer.getvalue())


def _fix_tags(path: Path, pages: Mapping[str, HtmlPage], names: Sequence[str]) -> None:
    if not path.is_file():
        return
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    mappings = [
        m for m in data.get("mappings", []) if (m.get("item") or {}).get("url") != SHELL_URL
    ]
    mappings.extend(
        {"item": {"url": f"recipes/{n}/", "title": pages[n].title}, "tags": list(pages[n].tags)}
        for n in names
        if pages[n].tags
    )
    data["mappings"] = mappings
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
