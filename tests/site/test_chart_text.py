"""Contributor strings in charts are text: Plotly draws no link, no styled span, no template.

Plotly reads pseudo-HTML (`<a href>`, `<b>`, `<span style>`, `<br>`) in every text it draws.
Two figures built by generator.site.charts with hostile signer labels and check names are
drawn by the site's own charts.js and the packaged plotly.js in Chromium; the SVG must hold
the strings as literal text and no element made from them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.site import escape
from generator.site.build import plotly_js
from generator.site.charts import Reading, history_figure, latest_figure

JS = Path(__file__).resolve().parents[2] / "generator" / "resources" / "assets" / "js"
LINK = '<a href="https://evil.example">x</a>'
SPAN = '<span style="font-size:80px;color:red">CONFIRMED</span>'
TEMPLATE = "%{y} <b>bold</b> &amp; <br>next"
CHECK = 'nccl <a href="https://evil.example/check">check</a> %{meta}'

ELEMENTS = """(el) => {
  const out = [];
  for (const e of el.querySelectorAll('*')) {
    const href = e.getAttribute('href') || e.getAttribute('xlink:href') || '';
    if (href.includes('evil.example')) out.push(`${e.tagName} href=${href}`);
    const style = (e.getAttribute('style') || '').toLowerCase();
    if (style.includes('80px') || style.includes('color:red') || style.includes('color: red'))
      out.push(`${e.tagName} style=${style}`);
    if (e.tagName.toLowerCase() === 'tspan' && e.getAttribute('style')
        && (e.textContent || '').includes('CONFIRMED')) out.push('styled tspan CONFIRMED');
    if (e.tagName.toLowerCase() === 'a') out.push('a element');
    if (/^(b|strong)$/i.test(e.tagName)) out.push(`${e.tagName} element`);
  }
  return out;
}"""


def _readings() -> list[Reading]:
    return [
        Reading(LINK, True, "2026-11-01T12:00:00Z", 410.0, 400.0, 360.0, "pass"),
        Reading(SPAN, True, "2026-11-02T12:00:00Z", 390.0, 400.0, 360.0, "pass"),
        Reading(TEMPLATE, False, "2026-11-03T12:00:00Z", 300.0, 400.0, 360.0, "fail"),
    ]


@pytest.fixture(scope="module")
def chart_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.site.conftest import serve

    root = tmp_path_factory.mktemp("charts")
    (root / "plotly.min.js").write_bytes(plotly_js())
    (root / "charts.js").write_bytes((JS / "charts.js").read_bytes())
    readings = _readings()
    figures = (latest_figure(CHECK, readings), history_figure(CHECK, readings))
    divs = "".join(
        f'<div class="evidence-chart" id="c{i}" style="width:900px;height:320px" '
        f'data-kind="k{i}" data-figure="{escape.figure_attr(f)}"></div>\n'
        for i, f in enumerate(figures)
    )
    (root / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>charts</title></head><body>\n'
        f'{divs}<script src="plotly.min.js"></script><script src="charts.js"></script>\n'
        "</body></html>\n",
        encoding="utf-8",
    )
    server, base = serve(root)
    try:
        yield base
    finally:
        server.shutdown()


@pytest.mark.browser
def test_chart_strings_are_drawn_as_literal_text(chart_page: str, browser: Any) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(chart_page)
        for i in (0, 1):
            page.wait_for_selector(f"#c{i}[data-drawn='1'] .main-svg")
        # show the hover label of each signer's point, so hover text is in the SVG too
        page.evaluate("""() => {
          for (const el of document.querySelectorAll('.evidence-chart')) {
            el.data.forEach((trace, c) => (trace.x || []).forEach((_, p) => {
              window.Plotly.Fx.hover(el, [{curveNumber: c, pointNumber: p}]);
            }));
            window.Plotly.Fx.hover(el, [{curveNumber: 0, pointNumber: 0}]);
          }
        }""")
        for i in (0, 1):
            chart = page.locator(f"#c{i}")
            assert chart.evaluate(ELEMENTS) == [], i
            shown = chart.evaluate("(el) => el.querySelector('.main-svg').parentNode.textContent")
            assert LINK in shown and SPAN in shown, (i, shown)
            assert "<b>bold</b>" in shown and "%{y}" in shown, (i, shown)
            assert 'nccl <a href="https://evil.example/check">check</a> %{meta}' in shown, shown
        hover = page.locator("#c0 .hoverlayer").text_content() or ""
        assert LINK in hover or SPAN in hover or "%{y}" in hover, hover
    finally:
        context.close()


def test_every_contributor_string_enters_a_figure_escaped() -> None:
    """Plotly's markup characters arrive as entities in every text field of both figures."""
    readings = _readings()
    for figure in (latest_figure(CHECK, readings), history_figure(CHECK, readings)):
        texts = [figure["layout"]["title"]["text"]]
        for trace in figure["data"]:
            texts.append(trace["name"])
            texts.extend(str(x) for x in trace["x"] if not str(x).startswith("2026-"))
        for text in texts:
            assert "<" not in text and ">" not in text and "%{" not in text, text
        assert any("&lt;a href=" in t for t in texts)
        assert all(
            t.count("&") == t.count("&amp;") + t.count("&lt;") + t.count("&gt;") + t.count("&#37;")
            for t in texts
        )
