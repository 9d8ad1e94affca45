"""generator.site.escape: every context a contributor string can land in."""

from __future__ import annotations

import html as std_html
import json
from typing import Any

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


@pytest.mark.parametrize(
    ("url", "ok"),
    [
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
    ],
)
def test_safe_url_allows_only_http(url: object, ok: bool) -> None:
    assert (escape.safe_url(url) is not None) is ok


def test_link_renders_bad_urls_as_text() -> None:
    assert str(escape.link("x<y", "javascript:alert(1)")) == "x&lt;y"
    good = str(escape.link("log", 'https://e.example/?a="b"'))
    assert good.startswith('<a href="https://e.example/?a=&quot;b&quot;"')
    assert 'rel="noopener noreferrer nofollow"' in good


def test_figure_attr_round_trips_through_an_attribute() -> None:
    fig = {"data": [{"x": ["</div><script>x</script>", "a\"b'c&"], "y": [1.5, 2]}]}
    out = str(escape.figure_attr(fig))
    assert "<" not in out and '"' not in out
    assert json.loads(std_html.unescape(out)) == fig


def test_none_is_empty() -> None:
    assert str(escape.html(None)) == "" and str(escape.md(None)) == ""


# --------------------------------------------------------------------------- neutral text

CONTROL_CASES = [
    ("\u202e", "\\u202e"),
    ("\u202a", "\\u202a"),
    ("\u202d", "\\u202d"),
    ("\u2066", "\\u2066"),
    ("\u2069", "\\u2069"),
    ("\u200e", "\\u200e"),
    ("\u200f", "\\u200f"),
    ("\u061c", "\\u061c"),
    ("\x00", "\\u0000"),
    ("\x07", "\\u0007"),
    ("\x0b", "\\u000b"),
    ("\r", "\\u000d"),
    ("\x1b", "\\u001b"),
    ("\x7f", "\\u007f"),
    ("\x80", "\\u0080"),
    ("\x85", "\\u0085"),
    ("\x9f", "\\u009f"),
]


@pytest.mark.parametrize(("char", "shown"), CONTROL_CASES)
def test_every_escaper_shows_bidi_and_controls_as_visible_escapes(char: str, shown: str) -> None:
    raw = f"a{char}b"
    assert escape.neutral(raw) == f"a{shown}b"
    for out in (
        escape.text(raw),
        str(escape.html(raw)),
        str(escape.attr(raw)),
        str(escape.code(raw)),
        escape.chart_text(raw),
        str(escape.link(raw, "x")),
    ):
        assert char not in out and shown in out, out
    md_out = str(escape.md(raw))
    assert char not in md_out and "&#92;u" + shown[2:] in md_out  # `\` is an entity in Markdown


def test_tab_newline_and_printable_text_pass_unchanged() -> None:
    for value in ("plain", "tab\there", "line\nbreak", "日本語 é ü", "\u00a0nbsp"):
        assert escape.neutral(value) == value
    assert "\n" in escape.text("a\nb")


def test_figure_json_keeps_the_exact_string_without_a_raw_control() -> None:
    value = {"name": "x\u202ey\x00z\u2066\x85"}
    out = str(escape.figure_attr(value))
    assert escape._INVISIBLE.search(out) is None
    assert json.loads(std_html.unescape(out)) == value


@pytest.mark.parametrize(
    "source",
    [
        "{{ x }}",
        "{{ x|h }}",
        "{{ x|md }}",
        "{{ x|attr }}",
        "{{ x|code }}",
        "{% for c in [x] %}{{ c }}{% endfor %}",
        "{{ x ~ '!' }}",
        "{{ link(x, 'https://e.example') }}",
    ],
)
def test_the_jinja_environment_neutralises_every_output(source: str, tmp_path: Any) -> None:
    from generator.site.environment import environment

    (tmp_path / "t.j2").write_text(source, encoding="utf-8")
    env = environment(tmp_path)
    out = env.get_template("t.j2").render(x="a\u202eb\x00c")
    assert "\u202e" not in out and "\x00" not in out, out
    assert "u202e" in out
