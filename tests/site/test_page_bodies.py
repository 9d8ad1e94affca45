"""What a page's body (and a Markdown row) sees of the build information, and a body finished in
a shell: the page cache keys bodies without the commit (only the shell's footer and the About
page show it), so a body must be unable to read it, and a cached body put into a new shell must
be exactly the page rendered into that shell."""

from __future__ import annotations

from typing import Any

import pytest

import generator.site.pages as pages_module
from generator.site.mkdocs_adapter import BODY_MARKER, SHELL_URL, TITLE_TOKEN, PageShell
from generator.site.model import SiteModel, body_build_info
from generator.site.pages import HtmlPage

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("build_info", "seen"),
    [
        ({"commit": COMMIT, "verifier": "v"}, {"verifier": "v"}),
        ({"verifier": "v"}, {"verifier": "v"}),
        (
            {"commit": COMMIT, "sourceUrl": "https://example.org/tree"},
            {"commit": COMMIT, "sourceUrl": "https://example.org/tree"},
        ),
        ({"commit": COMMIT, "sourceUrl": ""}, {"sourceUrl": ""}),
    ],
    ids=["commit-only-in-the-footer", "no-commit", "cards-link-the-commit", "empty-source-url"],
)
def test_a_body_sees_the_commit_only_when_its_cards_link_it(
    build_info: dict[str, Any], seen: dict[str, Any]
) -> None:
    assert body_build_info(build_info) == seen
    model = SiteModel({}, {}, {"pointers": []}, build_info)
    bodies = model.for_bodies()
    assert bodies.build_info == seen and model.build_info == build_info
    assert bodies.memo is not model.memo and bodies.build_time == model.build_time
    assert model.for_bodies() is bodies and bodies.for_bodies() is bodies  # made once


def test_markdown_pages_render_from_the_body_view_and_only_about_is_given_the_commit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Every Markdown template sees `m` without the commit (their rows are kept by keys
    without it); the About page alone is handed the commit, and its key has it."""
    seen: list[SiteModel] = []
    given: dict[str, Any] = {}

    def common(model: SiteModel, badges: Any) -> dict[str, Any]:
        seen.append(model)
        return {}

    class Template:
        def __init__(self, name: str) -> None:
            self.name = name

        def render(self, **values: Any) -> str:
            given[self.name] = values.get("commit")
            return ""

    class Env:
        def get_template(self, name: str) -> Template:
            return Template(name)

    monkeypatch.setattr(pages_module, "_common", common)
    monkeypatch.setattr(pages_module, "environment", lambda templates: Env())
    monkeypatch.setattr(pages_module, "badges_for", lambda env, model: None)
    monkeypatch.setattr(pages_module, "route_table", lambda model: [])
    model = SiteModel({}, {}, {"pointers": []}, {"commit": COMMIT})
    pages_module.render_pages(model, tmp_path)
    assert [m.build_info for m in seen] == [{}]
    assert given.pop("about.md.j2") == COMMIT
    assert set(given.values()) == {None}


def test_a_cached_body_finished_in_a_new_shell_is_the_page_rendered_into_it() -> None:
    old = PageShell(f"<title>{TITLE_TOKEN}</title><a href='/{SHELL_URL}'>", "<footer>aaaa</footer>")
    new = PageShell(f"<title>{TITLE_TOKEN} ✓</title>", f"<a href='{SHELL_URL}'>b</a></html>")
    page = HtmlPage("gb300 <eks>", "<p>body ✓ 🙂</p>", "", ())
    kept = old.finish("gb300", page.title, page.body.encode())
    assert kept.data.decode() == (
        "<title>gb300 &lt;eks&gt;</title><a href='/recipes/gb300/'><p>body ✓ 🙂</p>"
        "<footer>aaaa</footer>"
    )
    offset, length = kept.body
    body = kept.data[offset : offset + length]
    assert body == page.body.encode()
    assert new.finish("gb300", page.title, body).data.decode() == (
        "<title>gb300 &lt;eks&gt; ✓</title><p>body ✓ 🙂</p><a href='recipes/gb300/'>b</a></html>"
    )
    assert old.digest() != new.digest() and old.digest() == PageShell(old.head, old.tail).digest()
    assert BODY_MARKER not in kept.data.decode()
