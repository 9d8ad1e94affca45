"""generator.site.escape: every context a contributor string can land in."""

from __future__ import annotations

import html as std_html
import json

import markdown
import pytest

from generator.site import escape

HOSTILE = [
    "<script>alert(1)</script>",
    '" onmouseover="alert(1)',
    "a | b | c",
    "`code` and ``more``",
    "[x](javascript:alert(1))",
    "# heading",
    "- item",
    "> quote",
    "1. one",
    "**bold** _it_ ~~s~~",
    "![img](http://evil.example/x.png)",
    "&amp; &lt;",
    "line\nbreak\n\n| new | row |",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_html_round_trips_as_text(text: str) -> None:
    out = str(escape.html(text))
    assert "<" not in out and ">" not in out and '"' not in out
    assert std_html.unescape(out) == text


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_cell_renders_the_text_itself(text: str) -> None:
    cell = str(escape.md(text))
    assert "|" not in cell and "`" not in cell and "[" not in cell and "\n" not in cell
    source = f"| h |\n| --- |\n| {cell} |\n"
    rendered = markdown.markdown(source, extensions=["tables"])
    body = rendered.split("<td>", 1)[1].split("</td>", 1)[0]
    assert std_html.unescape(body) == " ".join(text.split())
    assert rendered.count("<td>") == 1


@pytest.mark.parametrize("text", ["# heading", "- item", "> quote", "1. one", "+ plus"])
def test_markdown_block_start_is_plain_paragraph(text: str) -> None:
    rendered = markdown.markdown(str(escape.md(text)))
    assert rendered.startswith("<p>")
    assert std_html.unescape(rendered[3:-4]) == text


@pytest.mark.parametrize(("url", "ok"), [
    ("https://search.sigstore.dev/?logIndex=1", True),
    ("http://example.com/a", True),
    ("HTTPS://EXAMPLE.COM", True),
    ("javascript:alert(1)", False),
    ("JavaScript:alert(1)", False),
    ("data:text/html,<script>", False),
    ("//evil.example/x", False),
    ("/relative", False),
    ("https://", False),
    ("https://a b", False),
    ("vbscript:x", False),
    ("", False),
    (None, False),
    (42, False),
])
def test_safe_url_allows_only_http(url: object, ok: bool) -> None:
    assert (escape.safe_url(url) is not None) is ok


def test_link_renders_bad_urls_as_text() -> None:
    assert str(escape.link("x<y", "javascript:alert(1)")) == "x&lt;y"
    good = str(escape.link("log", 'https://e.example/?a="b"'))
    assert good.startswith('<a href="https://e.example/?a=&quot;b&quot;"')
    assert "rel=\"noopener noreferrer nofollow\"" in good


def test_figure_attr_round_trips_through_an_attribute() -> None:
    fig = {"data": [{"x": ["</div><script>x</script>", "a\"b'c&"], "y": [1.5, 2]}]}
    out = str(escape.figure_attr(fig))
    assert "<" not in out and '"' not in out
    assert json.loads(std_html.unescape(out)) == fig


def test_none_is_empty() -> None:
    assert str(escape.html(None)) == "" and str(escape.md(None)) == ""
