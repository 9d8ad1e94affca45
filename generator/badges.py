"""Status badges: one self-contained SVG and one shields.io endpoint JSON per recipe and the board.

`badges/<recipe>.svg` shows the recipe's rollup state in words (colour only helps), with its
caveat (a preview site, a trust root that is not production) in the same words; it carries a
`<title>` and `role="img"` with an `aria-label`, so a screen reader says what a reader sees.
`badges/<recipe>.json` is the same in shields.io's endpoint schema (`schemaVersion: 1`, label,
message, color). `badges/board.*` summarises every recipe. Pure rendering, then one writer.
Colours are the site's state colours, darkened where white text would fall below WCAG AA.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from generator.quickwrite import write_or_link

__all__ = [
    "BOARD",
    "COLOURS",
    "LABEL",
    "LABEL_COLOUR",
    "Badge",
    "board_badge",
    "contrast",
    "endpoint_json",
    "recipe_badges",
    "render_svg",
    "write_badges",
]

LABEL = "aicr evidence"
LABEL_COLOUR = "#444444"
BOARD = "board"
"""The file stem of the whole board's badge (`badges/board.svg`); no recipe may take it."""
COLOURS: Mapping[str, str] = {
    "CONFIRMED": "#2e7d32",
    "SINGLE": "#1565c0",
    "PARTIAL": "#8d6e00",
    "UNTESTED": "#616161",
    "FAILING": "#c62828",
    "CONTESTED": "#bf360c",
}
"""Badge background per state: the site's colours (contested one step darker for AA)."""
WORDS: Mapping[str, str] = {
    "CONFIRMED": "confirmed",
    "SINGLE": "single signer",
    "PARTIAL": "partial",
    "UNTESTED": "untested",
    "FAILING": "failing",
    "CONTESTED": "contested",
}
_CHAR = 6.6  # average advance of an 11px sans-serif character
_PAD = 6


@dataclass(frozen=True)
class Badge:
    """One badge: file stem, state, the words on it and its background colour."""

    name: str
    state: str
    label: str
    message: str
    colour: str


def _luminance(colour: str) -> float:
    def channel(hex2: str) -> float:
        c = int(hex2, 16) / 255
        return c / 12.92 if c <= 0.03928 else float(((c + 0.055) / 1.055) ** 2.4)

    h = colour.lstrip("#")
    r, g, b = (channel(h[i : i + 2]) for i in (0, 2, 4))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two `#rrggbb` colours."""
    a, b = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def _caveat(build_info: Mapping[str, Any], preview: bool) -> str:
    trust = build_info.get("trust") or {}
    notes = []
    if preview or build_info.get("preview"):
        notes.append("preview")
    if isinstance(trust, Mapping) and not trust.get("production", True):
        notes.append("not production trust root")
    return ", ".join(notes)


def _tabs(index: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for group in index.get("groups") or ():
        for dashboard in group.get("dashboards") or ():
            for tab in dashboard.get("tabs") or ():
                yield str(tab["recipe"]), str(tab["rollup"])


def _with_caveat(words: str, caveat: str) -> str:
    return f"{words} ({caveat})" if caveat else words


def recipe_badges(
    index: Mapping[str, Any], build_info: Mapping[str, Any], *, preview: bool = False
) -> tuple[Badge, ...]:
    """One badge per recipe of the index, sorted by recipe name."""
    caveat = _caveat(build_info, preview)
    found = dict(_tabs(index))
    return tuple(
        Badge(
            name=recipe,
            state=state,
            label=LABEL,
            message=_with_caveat(WORDS.get(state, state.lower()), caveat),
            colour=COLOURS.get(state, COLOURS["UNTESTED"]),
        )
        for recipe, state in sorted(found.items())
        if recipe != BOARD
    )


def board_badge(
    index: Mapping[str, Any], build_info: Mapping[str, Any], *, preview: bool = False
) -> Badge:
    """The whole board: how many recipes are confirmed, coloured by the worst state present."""
    states = [state for _, state in dict(_tabs(index)).items()]
    confirmed = states.count("CONFIRMED")
    worst = next(
        (s for s in ("FAILING", "CONTESTED", "PARTIAL", "SINGLE", "UNTESTED") if s in states),
        "CONFIRMED" if states else "UNTESTED",
    )
    words = f"{confirmed} of {len(states)} recipes confirmed"
    problems = [f"{states.count(s)} {WORDS[s]}" for s in ("FAILING", "CONTESTED") if s in states]
    if problems:
        words += ", " + ", ".join(problems)
    return Badge(
        name=BOARD,
        state=worst,
        label=LABEL,
        message=_with_caveat(words, _caveat(build_info, preview)),
        colour=COLOURS[worst],
    )


def _width(text: str) -> int:
    return int(len(text) * _CHAR + 2 * _PAD + 0.5)


def render_svg(badge: Badge) -> str:
    """A self-contained flat SVG badge (no scripts, fonts or external references)."""
    left, right = _width(badge.label), _width(badge.message)
    total = left + right
    spoken = f"{badge.label}: {badge.message}"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" '
        f'viewBox="0 0 {total} 20" role="img" aria-label={quoteattr(spoken)}>'
        f"<title>{escape(spoken)}</title>"
        f'<rect width="{left}" height="20" fill="{LABEL_COLOUR}"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{badge.colour}"/>'
        '<g fill="#ffffff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" '
        'text-anchor="middle">'
        f'<text x="{left / 2:g}" y="14">{escape(badge.label)}</text>'
        f'<text x="{left + right / 2:g}" y="14">{escape(badge.message)}</text>'
        "</g></svg>\n"
    )


def endpoint_json(badge: Badge) -> str:
    """The shields.io endpoint document of a badge."""
    doc = {
        "schemaVersion": 1,
        "label": badge.label,
        "message": badge.message,
        "color": badge.colour.lstrip("#"),
        "labelColor": LABEL_COLOUR.lstrip("#"),
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def write_badges(
    site: Path,
    index: Mapping[str, Any],
    build_info: Mapping[str, Any],
    *,
    preview: bool = False,
    previous: Path | None = None,
) -> int:
    """Write `badges/<recipe>.{svg,json}` and `badges/board.{svg,json}`; returns the count.
    `previous`: the output this site replaces, whose unchanged badges are linked
    (`write_or_link`)."""
    folder = site / "badges"
    before = None if previous is None else previous / "badges"
    folder.mkdir(parents=True, exist_ok=True)
    badges = [
        *recipe_badges(index, build_info, preview=preview),
        board_badge(index, build_info, preview=preview),
    ]
    for badge in badges:
        for name, text in (
            (f"{badge.name}.svg", render_svg(badge)),
            (f"{badge.name}.json", endpoint_json(badge)),
        ):
            write_or_link(
                folder / name, text.encode("utf-8"), None if before is None else before / name
            )
    return len(badges)
