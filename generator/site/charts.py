"""Plotly figure dicts for bandwidth charts, built as plain data (no plotly.py at build time).

Figures use `template: "none"`; colours for the palette are applied in the browser by
charts.js. Every number drawn also appears in the plain table under the chart.

Signer labels and check names are contributor text: each goes through
`generator.site.escape.chart_text` as it enters a figure (titles, categories, legends, hover),
so Plotly draws `<a href>`, `<span style>` or `%{...}` literally instead of as markup or a
template. The fixed hovertemplate only ever refers to data by `%{x}` and `%{y}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from generator.site.escape import chart_text

_SIGNER_COLOURS = ("#1565c0", "#6a1b9a", "#00838f", "#ef6c00", "#5d4037", "#ad1457")


@dataclass(frozen=True)
class Reading:
    """One measured bus bandwidth of one signer's run (GB/s), with its floor."""

    signer: str
    counted: bool
    when: str
    measured: float | None
    floor: float | None
    pass_line: float | None
    result: str | None


def _layout(title: str, x_title: str) -> dict[str, Any]:
    return {
        "template": "none",
        "title": {"text": title},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 60},
        "height": 320,
        "xaxis": {"title": {"text": x_title}, "automargin": True},
        "yaxis": {"title": {"text": "bus bandwidth (GB/s)"}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.3},
        "showlegend": True,
    }


def latest_figure(check: str, readings: Sequence[Reading]) -> dict[str, Any]:
    """Bars: each signer's latest measured value, with the floor and the 0.9 x floor pass line."""
    shown = [r for r in readings if r.measured is not None]
    names = [chart_text(r.signer if r.counted else f"{r.signer} (not counted)") for r in shown]
    floor = next((r.floor for r in readings if r.floor is not None), None)
    line = next((r.pass_line for r in readings if r.pass_line is not None), None)
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "name": "measured",
            "x": names,
            "y": [r.measured for r in shown],
            "text": [f"{r.measured:g}" for r in shown if r.measured is not None],
            "textposition": "auto",
            "marker": {
                "color": [_SIGNER_COLOURS[i % len(_SIGNER_COLOURS)] for i in range(len(shown))]
            },
            "hovertemplate": "%{x}: %{y} GB/s<extra></extra>",
        }
    ]
    if floor is not None and names:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"floor {floor:g}",
                "x": names,
                "y": [floor] * len(names),
                "line": {"color": "#c62828", "dash": "solid", "width": 2},
            }
        )
    if line is not None and names:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"pass line {line:g} (0.9 x floor)",
                "x": names,
                "y": [line] * len(names),
                "line": {"color": "#f9a825", "dash": "dash", "width": 2},
            }
        )
    return {
        "data": data,
        "layout": _layout(f"{chart_text(check)}: latest run per signer", "signer"),
    }


def history_figure(check: str, readings: Sequence[Reading]) -> dict[str, Any]:
    """Lines: every measured value of each signer over time, with the floor."""
    by_signer: dict[str, list[Reading]] = {}
    for r in readings:
        if r.measured is not None:
            by_signer.setdefault(r.signer, []).append(r)
    data: list[dict[str, Any]] = []
    whens: list[str] = []
    for i, (signer, rows) in enumerate(sorted(by_signer.items())):
        rows = sorted(rows, key=lambda r: r.when)
        whens.extend(r.when for r in rows)
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": chart_text(signer),
                "x": [r.when for r in rows],
                "y": [r.measured for r in rows],
                "line": {"color": _SIGNER_COLOURS[i % len(_SIGNER_COLOURS)]},
            }
        )
    floor = next((r.floor for r in readings if r.floor is not None), None)
    if floor is not None and whens:
        span = [min(whens), max(whens)]
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"floor {floor:g}",
                "x": span,
                "y": [floor, floor],
                "line": {"color": "#c62828", "width": 2},
            }
        )
    layout = _layout(f"{chart_text(check)}: history per signer", "attested at")
    layout["xaxis"]["type"] = "date"
    return {"data": data, "layout": layout}


def gbps(value: Any) -> Any:
    """A bandwidth number as a float: data/*.json writes an integral float as Go does (`300`),
    which reads back as an int, and a page must not depend on which of the two it got."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def newest_per_signer(readings: list[Reading], limit: int) -> list[Reading]:
    """At most `limit` readings per signer (its newest), of a list sorted by signer and time."""
    counts: dict[str, int] = {}
    for r in readings:
        counts[r.signer] = counts.get(r.signer, 0) + 1
    if all(n <= limit for n in counts.values()):
        return readings
    seen: dict[str, int] = {}
    kept = []
    for r in readings:
        seen[r.signer] = seen.get(r.signer, 0) + 1
        if counts[r.signer] - seen[r.signer] < limit:
            kept.append(r)
    return kept
