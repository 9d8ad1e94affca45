"""The PR evidence report: what a pull request does to recipe evidence (aicr-dashboard 4, 9.15).

`run_report` materialises the merge base and HEAD from git objects, evaluates both trees with
the build's engine and compares them; `render_markdown` and `render_json` turn the `Report` into
the sticky PR comment and its machine-readable twin. The affected-recipe walk, the allowlist and
board diffs and the cell vocabulary are pure functions in `affected`, `core` and `cells`.
"""

from generator.report._compute import compute_report
from generator.report.affected import Affected, Overlay, affected_recipes, overlay_from_doc
from generator.report.core import FailOn, Report, Side
from generator.report.render import (
    MARKER,
    md_escape,
    render_document,
    render_json,
    render_markdown,
)
from generator.report.run import load_overlays, run_report

__all__ = [
    "MARKER",
    "Affected",
    "FailOn",
    "Overlay",
    "Report",
    "Side",
    "affected_recipes",
    "compute_report",
    "load_overlays",
    "md_escape",
    "overlay_from_doc",
    "render_document",
    "render_json",
    "render_markdown",
    "run_report",
]
