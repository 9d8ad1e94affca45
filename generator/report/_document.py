"""The machine-readable PR report (spec 9.15): the same computation as the comment, as JSON data.

The comment is rendered from this document (`render.render_document`), never from the `Report`
itself, so a validated JSON report renders the same comment as a direct run.
"""

from __future__ import annotations

from typing import Any

from generator.report.cells import VerifyCell
from generator.report.core import PointerRow, RemovedRow, Report

JSON_SCHEMA = "evidence-dashboard-pr-report/v1"


def report_document(report: Report, *, fail_on: str, exit_code: int) -> dict[str, Any]:
    """The machine-readable report: the same computation as the comment (spec 9.15)."""
    counts = report.warnings
    return {
        "schema": JSON_SCHEMA,
        "base": report.base,
        "head": report.head,
        "mergeBase": report.merge_base or report.base,
        "generatedAt": report.generated_at,
        "trust": report.trust,
        "broadImpact": report.affected.broad,
        "affected": [
            {
                "recipe": r,
                "protected": r in report.protected,
                "reasons": list(report.affected.reasons[r]),
            }
            for r in report.affected.recipes
        ],
        "protected": [_row_document(row) for row in report.rows],
        "otherAffected": list(report.other),
        "orphans": [
            {
                "path": o.path,
                "directory": o.directory,
                "recipe": o.recipe,
                "verify": _verify_document(o.verify),
            }
            for o in report.orphans
        ],
        "removedPointers": list(report.removed),
        "allowlist": [
            {
                "key": s.key,
                "label": s.label,
                "change": s.change,
                "before": str(s.before) if s.before else None,
                "after": str(s.after) if s.after else None,
                "recipes": list(s.recipes),
            }
            for s in report.signers
        ],
        "board": _board_document(report),
        "notCovered": [{"path": p, "reason": why} for p, why in report.affected.not_covered],
        "warnings": {
            "total": counts.total,
            "invalid": counts.invalid,
            "stale": counts.stale,
            "other": counts.other,
        },
        "failOn": fail_on,
        "exit": exit_code,
    }


def _row_document(row: PointerRow | RemovedRow) -> dict[str, Any]:
    """One protected row: a pointer with its Verify and Digest cells, or a removed directory."""
    if isinstance(row, RemovedRow):
        return {
            "kind": "removed",
            "recipe": row.recipe,
            "directory": row.directory,
            "pointersAtBase": row.count,
            "warning": True,
        }
    verify = _verify_document(row.verify)
    verify["warning"] = row.verify.warning
    digest: dict[str, Any] = {
        "state": row.digest.kind,
        "text": row.digest.text,
        "warning": row.digest.warning,
    }
    for name in ("signed", "current"):
        if hasattr(row.digest, name):
            digest[name] = getattr(row.digest, name)
    return {
        "kind": "pointer",
        "recipe": row.recipe,
        "directory": row.directory,
        "source": row.source,
        "pointer": row.pointer,
        "path": row.path,
        "verify": verify,
        "digest": digest,
        "warning": row.warnings > 0,
    }


def _board_document(report: Report) -> dict[str, Any]:
    """The board rows whose consensus changed, and the rollup of every affected recipe."""
    return {
        "rows": [
            {
                "recipe": c.recipe,
                "phase": str(c.phase),
                "name": c.name,
                "base": str(c.before) if c.before else None,
                "head": str(c.after) if c.after else None,
            }
            for c in report.board_rows
        ],
        "rollups": [
            {
                "recipe": r.recipe,
                "base": str(r.before) if r.before else None,
                "head": str(r.after) if r.after else None,
                "changed": r.changed,
            }
            for r in report.rollups
        ],
    }


def _verify_document(cell: VerifyCell) -> dict[str, Any]:
    """A Verify cell's state, aicr text and the data behind it (what `verify_of` reads)."""
    verify: dict[str, Any] = {"state": cell.kind, "text": cell.text}
    for name in ("failure_class", "http_status", "hint", "detail", "exit"):
        if hasattr(cell, name):
            verify[_camel(name)] = getattr(cell, name)
    return verify


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest) if name != "failure_class" else "class"
