"""Render a `Report` as the sticky PR comment (Markdown) or as JSON (aicr-dashboard 4.4, 9.15).

The Markdown is rendered from the JSON document (`render_document`), never from anything else:
`render_markdown(report)` is `render_document(report_document(report))`, so the comment
workflow, which validates a PR run's JSON against `generator/data/schema/pr-report.schema.json`
and renders it with the default branch's code, writes the same comment as a direct run.
Every fixed word of the comment (status marks, headings) comes from this module; the document
supplies only data.

Every contributor string goes through `md_escape`, which neutralises GitHub Markdown: newlines
collapse; bidi and control characters become visible `\\uXXXX`; `|`, emphasis, link and `$`
math syntax are escaped; backticks and HTML are entities; `@` mentions, `#N` and `owner/repo#N`
references, `GH-N`, bare URLs (`://`), `www.` autolinks and `:emoji:` shortcodes are broken with
a zero-width space; and the emoji the report uses as status marks (✅ ❌ ⚠️ ⌛ …) are written as
visible escapes, so no contributor string can look like a verdict.
Tables stop at `MAX_ROWS` rows with a "+N more" row, and the whole comment stays under
`MAX_CHARS`, cut at a line boundary with any open `<details>` closed.

The document is made in `_document`, the comment's sections in `_sections`, and the Markdown
primitives (`md_escape`, tables, the cut) live in `_markdown`; this module reads as the comment.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from generator.report._document import JSON_SCHEMA, report_document
from generator.report._markdown import CELL_MAX, MAX_CHARS, MAX_ROWS, md_escape, truncate
from generator.report._sections import (
    affected_section,
    allowlist_section,
    board_section,
    digest_of,
    footer,
    heading,
    not_covered_section,
    notices,
    orphans_section,
    removed_section,
    verify_md,
    verify_of,
)
from generator.report.core import Report

__all__ = [
    "CELL_MAX",
    "JSON_SCHEMA",
    "MARKER",
    "MAX_CHARS",
    "MAX_ROWS",
    "digest_of",
    "md_escape",
    "render_document",
    "render_json",
    "render_markdown",
    "report_document",
    "truncate",
    "verify_md",
    "verify_of",
]

MARKER = "<!-- recipe-evidence-gate -->"


def render_markdown(report: Report) -> str:
    """The sticky PR comment, marker first (rendered from the report's JSON document)."""
    return render_document(report_document(report, fail_on="none", exit_code=0))


def render_document(doc: Mapping[str, Any]) -> str:
    """The sticky PR comment from a report document (`report_document`, or a JSON report
    validated by `generator.report.schema`), marker first."""
    affected = [a for a in doc.get("affected") or () if isinstance(a, Mapping)]
    orphans = [o for o in doc.get("orphans") or () if isinstance(o, Mapping)]
    signers = [s for s in doc.get("allowlist") or () if isinstance(s, Mapping)]
    not_covered = [n for n in doc.get("notCovered") or () if isinstance(n, Mapping)]
    lines = [MARKER, "## Recipe evidence check", ""]
    lines += heading(doc)
    lines += notices(doc, not_covered)
    if not affected and not orphans and not signers:
        lines += ["No leaf overlays affected by this PR.", ""]
    else:
        lines += affected_section(doc, affected)
    lines += orphans_section(orphans)
    lines += removed_section(doc)
    lines += allowlist_section(signers)
    lines += board_section(doc)
    lines += not_covered_section(not_covered)
    lines += footer(doc)
    return truncate("\n".join(lines))


def render_json(report: Report, *, fail_on: str, exit_code: int) -> str:
    """The JSON report (`report_document`), keys sorted, two-space indent."""
    return (
        json.dumps(
            report_document(report, fail_on=fail_on, exit_code=exit_code),
            indent=2,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
    )
