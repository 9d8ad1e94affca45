"""Everything MkDocs-specific about the site, behind one module (a move to another engine,
such as Zensical, changes only this file):

- running MkDocs + Material in-process in strict mode (`run_mkdocs`), with warnings turned
  into a BuildError;
- the splice: the big finished-HTML blocks of a Markdown page are cut out before MkDocs sees
  it (`split_fragments`) and put back after search has indexed the page (`join_fragments`);
- the recipe page shell, filled per recipe (`PageShell`), and the search index, sitemap and
  tags file patched with the recipe pages' entries (`expand`).

Recipe pages without a MkDocs pass each: one MkDocs-rendered page shell, filled per recipe.

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
import hashlib
import io
import json
import logging
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import BuildError, Location
from generator.site import csp, escape
from generator.site.pages import HtmlPage

__all__ = [
    "BODY_MARKER",
    "FRAGMENT_CLOSE",
    "FRAGMENT_OPEN",
    "SHELL_NAME",
    "SHELL_PAGE",
    "SHELL_URL",
    "TITLE_TOKEN",
    "PageShell",
    "expand",
    "fragment_slot",
    "join_fragments",
    "run_mkdocs",
    "shell_markdown",
    "split_fragments",
]

SHELL_NAME = "_evidence-shell"
SHELL_PAGE = f"recipes/{SHELL_NAME}.md"
SHELL_URL = f"recipes/{SHELL_NAME}/"
TITLE_TOKEN = "EvidenceDashboardShellTitle7f3c"
BODY_MARKER = "<!--evidence-dashboard-shell-body-->"


def shell_markdown() -> str:
    """The shell page's Markdown: recipe-page front matter, a placeholder title, a marker."""
    return f"---\nhide:\n  - navigation\n  - toc\ntitle: {TITLE_TOKEN}\n---\n\n{BODY_MARKER}\n"


@dataclass(frozen=True)
class Finished:
    """A finished recipe page (UTF-8) and where its body lies in it: (offset, length)."""

    data: bytes
    body: tuple[int, int]


@dataclass(frozen=True)
class PageShell:
    """The rendered shell page cut at its body marker; `finish` makes one recipe page."""

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

    def finish(self, recipe: str, title: str, body: bytes) -> Finished:
        """The finished page of `recipe`: the shell with its title, address and `body` (UTF-8:
        just rendered, or kept in the page cache in another shell)."""
        shown = str(escape.html(title))
        url = f"recipes/{recipe}/"
        head = self.head.replace(TITLE_TOKEN, shown).replace(SHELL_URL, url).encode("utf-8")
        tail = self.tail.replace(TITLE_TOKEN, shown).replace(SHELL_URL, url).encode("utf-8")
        return Finished(head + body + tail, (len(head), len(body)))

    def digest(self) -> str:
        """The sha256 (hex) of the shell: a finished page is its body in this shell."""
        return hashlib.sha256(f"{self.head}\0{self.tail}".encode()).hexdigest()


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


FRAGMENT_OPEN = "<!--fragment-->"
FRAGMENT_CLOSE = "<!--/fragment-->"


def fragment_slot(n: int) -> str:
    """The comment that stands in for fragment `n` while MkDocs converts the page."""
    return f"<!--evidence-fragment {n}-->"


def split_fragments(text: str) -> tuple[str, tuple[str, ...]]:
    """Cut the finished-HTML blocks out of a page so Markdown and search skip them.

    The templates mark big raw HTML (grids, evidence cards) with `<!--fragment-->` and
    `<!--/fragment-->` lines. Each block is replaced by a `fragment_slot` comment (a raw HTML
    block, which Markdown passes through) and returned so the build can put it back into the
    converted page. Contributor strings are escaped in the templates, so none can contain a
    marker. Unbalanced markers are a template bug and raise ValueError.
    """
    kept: list[str] = []
    blocks: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        marker = line.rstrip("\n")
        if marker == FRAGMENT_OPEN:
            if current is not None:
                raise ValueError("nested <!--fragment--> marker")
            current = []
        elif marker == FRAGMENT_CLOSE:
            if current is None:
                raise ValueError("<!--/fragment--> without an opening marker")
            kept.append(f"\n{fragment_slot(len(blocks))}\n\n")
            blocks.append("".join(current))
            current = None
        elif current is not None:
            current.append(line)
        else:
            kept.append(line)
    if current is not None:
        raise ValueError("<!--fragment--> without a closing marker")
    return "".join(kept), tuple(blocks)


def join_fragments(html_text: str, blocks: Sequence[str]) -> str:
    """Put the blocks `split_fragments` cut out back into the converted page's HTML."""
    if not blocks:
        return html_text
    parts = html_text.split("<!--evidence-fragment ")
    out = [parts[0]]
    for part in parts[1:]:
        number, sep, rest = part.partition("-->")
        if sep and number.isdigit() and int(number) < len(blocks):
            out.append(blocks[int(number)] + rest)
        else:
            out.append("<!--evidence-fragment " + part)
    return "".join(out)


class _Collect(logging.Handler):
    """Keeps MkDocs warnings so a strict failure can say what broke."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _collect_warnings() -> Iterator[_Collect]:
    handler = _Collect()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def _splice_plugin(
    fragments: Mapping[str, tuple[str, ...]], template_cache: Path | None = None
) -> Any:
    """An in-process MkDocs plugin that puts each page's cut-out HTML blocks back.

    It runs on `page_context` after every other plugin (search indexes the page there), so
    the blocks reach the rendered page but not the search index: what search finds is the
    page's Markdown part, including its short searchable summary. With `template_cache` it
    also keeps the theme's compiled Jinja templates between builds (compiling Material's
    templates is a good part of a small build).
    """
    from mkdocs.plugins import BasePlugin, event_priority

    from generator.site.bytecode import SealedBytecodeCache

    class Splice(BasePlugin):  # type: ignore[type-arg, no-untyped-call]
        def on_env(self, env: Any, *, config: Any, files: Any) -> Any:
            env.filters["evidence_csp"] = csp.policy  # the theme override's CSP <meta>
            if template_cache is not None:
                try:
                    template_cache.mkdir(parents=True, exist_ok=True)
                    env.bytecode_cache = SealedBytecodeCache(template_cache)
                except OSError:
                    pass
            return env

        @event_priority(-100)
        def on_page_context(self, context: Any, *, page: Any, config: Any, nav: Any) -> Any:
            blocks = fragments.get(page.file.src_uri)
            if blocks and page.content is not None:
                page.content = join_fragments(page.content, blocks)
            return context

    return Splice()


def _list_no_hidden_folders(theme: Any) -> None:
    """Have the theme's template loader list no file under a hidden folder.

    MkDocs lists every file of the theme's folders to copy its static files, and drops any
    path with a part that starts with a dot; Material keeps its 14,000 icons under `.icons`,
    listed and dropped one by one in every build (about 0.05 s). Not walking hidden folders
    gives MkDocs the same static files; templates load as before."""
    import jinja2

    make_env = theme.get_env

    class Loader(jinja2.FileSystemLoader):
        def list_templates(self) -> list[str]:
            found: set[str] = set()
            for root in self.searchpath:
                for folder, subfolders, names in os.walk(root, followlinks=self.followlinks):
                    subfolders[:] = [d for d in subfolders if not d.startswith(".")]
                    base = Path(folder).relative_to(root)
                    found.update((base / name).as_posix() for name in names)
            return sorted(found)

    def get_env() -> Any:
        env = make_env()
        env.loader = Loader(list(theme.dirs))
        return env

    theme.get_env = get_env


def run_mkdocs(
    config_file: Path,
    fragments: Mapping[str, tuple[str, ...]] | None = None,
    template_cache: Path | None = None,
) -> None:
    """`mkdocs build --strict` in-process; warnings become a BuildError.

    `fragments` (page path -> HTML blocks from `write_docs`) are spliced back into the pages.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    with _collect_warnings() as seen:
        try:
            cfg = load_config(config_file=str(config_file), strict=True)
            cfg.plugins["evidence-dashboard-splice"] = _splice_plugin(
                fragments or {}, template_cache
            )
            _list_no_hidden_folders(cfg.theme)
            cfg.plugins.on_startup(command="build", dirty=False)
            try:
                build(cfg)
            finally:
                cfg.plugins.on_shutdown()
        except (Abort, ConfigurationError, SystemExit) as exc:
            detail = "; ".join(seen.messages[:5]) or str(exc)
            raise BuildError(
                "MkDocs refused the generated site (strict mode)",
                location=Location(str(config_file)),
                expected="no warnings (broken links and anchors are fatal)",
                found=detail,
                hint="open the generated Markdown under the build docs folder "
                "to see the page that broke",
            ) from exc
