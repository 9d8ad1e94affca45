"""The escapers at their edges: each special character alone, escaping order (no double or
missed escapes), Markdown block starters only at the start, and URL schemes by exact rule."""

from __future__ import annotations

import pytest
from markupsafe import Markup

from generator.site.escape import chart_text, figure_attr, finalize, link, md, safe_url, text


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&quot;"),
        ("'", "&#39;"),
        ("&lt;", "&amp;lt;"),
        ("<&>", "&lt;&amp;&gt;"),
        ("<a href='x' title=\"y\">", "&lt;a href=&#39;x&#39; title=&quot;y&quot;&gt;"),
        ("plain text", "plain text"),
        ("", ""),
    ],
)
def test_html_text_escapes_each_special_character_once(raw: str, escaped: str) -> None:
    assert text(raw) == escaped


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("1. one", "1&#46; one"),
        ("1) one", "1&#41; one"),
        ("12. twelve", "12&#46; twelve"),
        ("1.", "1&#46;"),
        ("1", "1"),
        ("12", "12"),
        ("1a. x", "1a. x"),
        ("-x", "&#45;x"),
        (".x", "&#46;x"),
        ("-", "&#45;"),
        ("a-b.c", "a-b.c"),
        ("  1. indented", "1&#46; indented"),
        ("v1.2", "v1.2"),
    ],
)
def test_markdown_block_starters_are_escaped_only_at_the_start(raw: str, escaped: str) -> None:
    assert str(md(raw)) == escaped


def test_markdown_folds_every_whitespace_run_to_one_space() -> None:
    assert str(md("a\n\nb\t c")) == "a b c"
    assert str(md(None)) == ""


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://example.com/x", True),
        ("http://example.com", True),
        ("HTTPS://example.com", True),
        ("https://", False),
        ("https:///path", False),
        ("https://exa mple.com", False),
        ("ftp://example.com", False),
        ("javascript:alert(1)", False),
        ("//example.com", False),
        ("", False),
        (None, False),
        ("https://example.com/\n", False),
    ],
)
def test_safe_url_takes_only_absolute_http_urls_with_a_host(url: object, ok: bool) -> None:
    assert safe_url(url) == (url if ok else None)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("50%", "50&#37;"),
        ("%{x}", "&#37;{x}"),
        ("<b>", "&lt;b&gt;"),
        ("a&b", "a&amp;b"),
        (None, ""),
        (3, "3"),
        ("plain", "plain"),
    ],
)
def test_chart_text_escapes_plotly_markup(raw: object, shown: str) -> None:
    assert chart_text(raw) == shown


def test_finalize_makes_controls_visible_and_passes_markup_and_non_strings() -> None:
    assert finalize("a\u202eb") == "a\\u202eb"
    assert finalize("ok") == "ok"
    assert finalize(Markup("<b>\u202e</b>")) == Markup("<b>\u202e</b>")
    assert finalize(5) == 5


MARKDOWN_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&#39;",
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
"""Every character that Markdown or an enabled extension reads as syntax (`{: .attr}` lists,
`$` math, `~~` and `^^`, `==` marks, `:emoji:`), with its entity, written out here."""


@pytest.mark.parametrize(("raw", "entity"), sorted(MARKDOWN_ENTITIES.items()))
def test_each_markdown_syntax_character_becomes_its_entity(raw: str, entity: str) -> None:
    assert str(md(f"a{raw}b")) == f"a{entity}b"
    assert str(md(raw * 2)) == entity * 2


def test_a_link_without_a_class_is_exactly_the_anchor() -> None:
    assert str(link("t<", "https://x.example/a")) == (
        '<a href="https://x.example/a" rel="noopener noreferrer nofollow">t&lt;</a>'
    )
    assert str(link("t", "https://x.example/", cls="c")) == (
        '<a href="https://x.example/" class="c" rel="noopener noreferrer nofollow">t</a>'
    )


def test_a_figure_keeps_non_ascii_text_as_its_characters() -> None:
    """The JSON is written with the characters themselves (smaller pages, stable bytes); only
    controls and bidi characters are written as `\\uXXXX`."""
    assert str(figure_attr({"name": "Zoë 東京", "x": "\u202e"})) == (
        "{&quot;name&quot;:&quot;Zoë 東京&quot;,&quot;x&quot;:&quot;\\u202e&quot;}"
    )


class _LooksLikeAUrl:
    def __str__(self) -> str:
        return "https://example.com/"


@pytest.mark.parametrize(
    "value", [_LooksLikeAUrl(), b"https://example.com/", "https://[::1", "http://[bad"]
)
def test_only_a_string_that_parses_as_a_web_url_is_one(value: object) -> None:
    """An object that prints as a URL is not a URL (only strings are), and a string that
    `urlsplit` cannot parse (an unclosed IPv6 bracket) is refused, never guessed at."""
    assert safe_url(value) is None
    assert link("t", value) == Markup("t")


def test_figure_json_is_the_same_bytes_whatever_the_key_order() -> None:
    """Byte-identical pages need one spelling per figure: keys sorted, compact separators."""
    assert figure_attr({"b": 1, "a": 2}) == figure_attr({"a": 2, "b": 1})
    assert figure_attr({"b": 1, "a": 2}) == Markup("{&quot;a&quot;:2,&quot;b&quot;:1}")


def test_figure_json_keeps_non_ascii_text_as_itself() -> None:
    """`é` stays `é` (UTF-8 pages), not `\\u00e9`: the chart shows the label as written."""
    dumped = str(figure_attr({"label": "café"}))
    assert "café" in dumped and "\\u00e9" not in dumped


def test_a_data_attribute_is_escaped_json() -> None:
    from generator.site.escape import data_attr

    assert data_attr({"q": "a<b"}) == Markup("{&quot;q&quot;:&quot;a&lt;b&quot;}")
    assert data_attr(None) == Markup("null")


@pytest.mark.parametrize("number", [float("nan"), float("inf"), -float("inf")])
def test_a_figure_with_a_non_finite_number_is_refused_not_written_as_invalid_json(
    number: float,
) -> None:
    """`NaN` and `Infinity` are not JSON: the browser's JSON.parse would throw and the chart
    would be blank, so the figure is refused where it is made, not in the reader's browser."""
    with pytest.raises(ValueError):
        figure_attr({"y": [1.0, number]})
