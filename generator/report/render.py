"""Render a `Report` as the sticky PR comment (Markdown) or as JSON (aicr-dashboard 4.4, 9.15).

Every contributor string goes through `md_escape`: newlines collapse, `|` is escaped, backticks
are dropped, `@` mentions and HTML are neutralised, Markdown link and emphasis syntax is escaped.
Tables stop at `MAX_ROWS` rows with a "+N more" row, and the whole comment stays under
`MAX_CHARS`, cut at a line boundary with any open `<details>` closed.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import Any

from generator.model import ConsensusState
from generator.report.cells import VerifyCell, VerifyError, VerifyInvalid
from generator.report.core import (
    OTHER_MAX,
    PointerRow,
    RemovedRow,
    Report,
)

MARKER = "<!-- recipe-evidence-gate -->"
MAX_ROWS = 80
MAX_CHARS = 65_000
"""GitHub refuses comments over 65,536 characters; the comment workflow cuts at 65,000."""
CELL_MAX = 300
JSON_SCHEMA = "evidence-dashboard-pr-report/v1"
_ESCAPED = frozenset("\\|*_[]~<>")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_escape(value: object, limit: int = CELL_MAX) -> str:
    """One safe Markdown table-cell string from untrusted text."""
    out: list[str] = []
    for char in str(value):
        if char in "\r\n\t\v\f\u2028\u2029":
            out.append(" ")
        elif char == "`":
            continue
        elif char in _HTML:
            out.append(_HTML[char])
        elif char == "@":
            out.append("@\u200b")  # a zero-width space after @: no mention, no team ping
        elif char in _ESCAPED:
            out.append("\\" + char)
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            continue  # controls, bidi overrides and invisible formatting
        else:
            out.append(char)
    text = " ".join("".join(out).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip("\\") + "…"
    return text


def _state(value: ConsensusState | None) -> str:
    return str(value) if value is not None else "—"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], limit: int = MAX_ROWS
           ) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows[:limit])
    if len(rows) > limit:
        more = [f"+{len(rows) - limit} more"] + [""] * (len(header) - 1)
        lines.append("| " + " | ".join(more) + " |")
    return lines


def _row_cells(row: PointerRow | RemovedRow) -> list[str]:
    if isinstance(row, RemovedRow):
        plural = "s" if row.count != 1 else ""
        return [md_escape(row.directory), "—", "—",
                f":warning: evidence pointer removed ({row.count} pointer{plural} at base)", "—"]
    return [md_escape(row.directory), md_escape(row.source), md_escape(row.pointer),
            verify_md(row.verify), row.digest.text]


def verify_md(cell: VerifyCell) -> str:
    """The Verify cell in Markdown: aicr's fixed wording, with every variable part escaped."""
    if isinstance(cell, VerifyInvalid):
        text = f":x: invalid — {md_escape(cell.failure_class, 60)}"
        if cell.http_status is not None:
            text += f" (HTTP {int(cell.http_status)})"
        return text + (f": {md_escape(cell.hint)}" if cell.hint else "")
    if isinstance(cell, VerifyError):
        text = f":x: verify error (result exit {int(cell.exit)})"
        return text + (f" — {md_escape(cell.failure_class, 60)}" if cell.failure_class else "")
    return cell.text


def render_markdown(report: Report) -> str:
    """The sticky PR comment, marker first."""
    lines = [MARKER, "## Recipe evidence check", ""]
    merge = report.merge_base
    lines.append(f"Base `{_short(report.base)}`"
                 + (f" (merge base `{_short(merge)}`)" if merge and merge != report.base else "")
                 + f" · head `{_short(report.head)}`"
                 + (f" · trust root {md_escape(report.trust)}" if report.trust else ""))
    lines.append("")
    affected = report.affected
    if affected.broad:
        lines += ["> **Broad impact:** `overlays/base.yaml` changed, so every leaf recipe is "
                  "affected.", ""]
    if any(path.rsplit("/", 1)[-1].startswith("registry") for path, _ in affected.not_covered):
        lines += ["> **Registry change:** component registry entries are not walked; recipes "
                  "that use a changed component are not listed unless another rule applies.", ""]

    if not affected.recipes and not report.orphans and not report.signers:
        lines += ["No leaf overlays affected by this PR.", ""]
    else:
        lines += [f"### Protected recipes ({len(report.protected)})", ""]
        if report.rows:
            lines += _table(["Recipe", "Source", "Pointer", "Verify", "Digest match"],
                            [_row_cells(r) for r in report.rows])
        else:
            lines.append("No affected recipe has an evidence pointer.")
        lines.append("")
        if report.protected:
            lines += [f"<details><summary>Why these {len(report.protected)} recipes are "
                      "affected</summary>", ""]
            lines += [f"- {md_escape(r)}: {md_escape('; '.join(affected.reasons.get(r, ())), 600)}"
                      for r in report.protected[:OTHER_MAX]]
            lines += ["", "</details>", ""]
        if report.other:
            lines += [f"<details><summary>Other affected recipes ({len(report.other)}): no "
                      "evidence pointer at base or head</summary>", ""]
            for recipe in report.other[:OTHER_MAX]:
                why = "; ".join(affected.reasons.get(recipe, ()))
                lines.append(f"- {md_escape(recipe)}: {md_escape(why)}")
            if len(report.other) > OTHER_MAX:
                lines.append(f"- +{len(report.other) - OTHER_MAX} more")
            lines += ["", "</details>", ""]
    if report.orphans:
        lines += [f"### Orphan evidence pointers ({len(report.orphans)})", "",
                  "These pointers changed, but `overlays/<recipe>.yaml` does not exist at head.",
                  ""]
        lines += _table(["Recipe", "Pointer", "Expected overlay", "Verify"],
                        [[md_escape(o.directory), md_escape(o.path),
                          md_escape(f"overlays/{o.recipe}.yaml"), verify_md(o.verify)]
                         for o in report.orphans])
        lines.append("")
    if report.removed:
        lines += [f"### Removed evidence pointers ({len(report.removed)})", ""]
        lines += [f"- {md_escape(p)}" for p in report.removed[:MAX_ROWS]]
        if len(report.removed) > MAX_ROWS:
            lines.append(f"- +{len(report.removed) - MAX_ROWS} more")
        lines.append("")
    if report.signers:
        lines += [f"### Allowlist changes ({len(report.signers)})", "",
                  "The base board uses the base allowlist, the head board the head allowlist.", ""]
        lines += _table(["Signer", "Change", "Before", "After", "Recipes with its evidence"],
                        [[md_escape(s.label), s.change, str(s.before or "—"),
                          str(s.after or "—"),
                          md_escape(", ".join(s.recipes) or "—", 600)] for s in report.signers])
        lines.append("")
    if report.board_rows or any(r.changed for r in report.rollups):
        lines += [f"### Board changes ({len(report.board_rows)} rows)", ""]
        if report.board_rows:
            lines += _table(["Recipe", "Phase", "Check", "Base", "Head"],
                            [[md_escape(c.recipe), str(c.phase), md_escape(c.name),
                              _state(c.before), _state(c.after)] for c in report.board_rows])
            lines.append("")
        lines += ["#### Recipe rollups", ""]
        lines += _table(["Recipe", "Base", "Head"],
                        [[md_escape(r.recipe), _state(r.before),
                          _state(r.after) + ("" if r.changed else " (unchanged)")]
                         for r in report.rollups])
        lines.append("")
    if affected.not_covered:
        lines += [f"<details><summary>Not covered by this report ({len(affected.not_covered)} "
                  "changed files)</summary>", "",
                  "Hydration also merges these, but the report does not walk them "
                  "(criteria-matched overlays, registry component entries, unreferenced files).",
                  ""]
        for path, why in affected.not_covered[:OTHER_MAX]:
            lines.append(f"- {md_escape(path)}: {md_escape(why)}")
        if len(affected.not_covered) > OTHER_MAX:
            lines.append(f"- +{len(affected.not_covered) - OTHER_MAX} more")
        lines += ["", "</details>", ""]
    counts = report.warnings
    if counts.total:
        lines += _refresh_help()
    lines += ["---", f"_{counts.total} warning{'s' if counts.total != 1 else ''} "
              f"({counts.invalid} invalid, {counts.stale} stale, {counts.other} other). "
              "This check is warning-only unless the repository sets `--fail-on` "
              "(ADR-007)._", ""]
    return truncate("\n".join(lines))


def _refresh_help() -> list[str]:
    return [
        "### How to refresh evidence", "",
        "1. Snapshot the cluster: `aicr snapshot`.",
        "2. Validate and publish: `aicr validate -r recipes/overlays/<recipe>.yaml "
        "--emit-attestation --push <registry>/<repo>`.",
        "3. Copy the printed pointer to "
        "`recipes/evidence/<recipe>/<source>/<bundle-digest>.yaml` and commit it.",
        "4. Profiled families (AKS, GKE, OKE `gpuStack`): hydrate with "
        "`aicr recipe ... --profile gpuStack=<value>` and commit the pointer under "
        "`recipes/evidence/<recipe>-gpustack-<value>/`; for AKS, the snapshot must include "
        "the GPU pool projection.",
        "",
    ]


def _short(rev: str) -> str:
    return md_escape(rev[:12], 40)


def truncate(text: str, limit: int = MAX_CHARS) -> str:
    """Cut at a line boundary under `limit`, close an open `<details>`, say it was cut."""
    if len(text) <= limit:
        return text
    note = ("", f"_Report truncated at {limit} characters; the JSON report has every row._", "")
    budget = limit - sum(len(n) + 1 for n in note) - len("</details>\n") - 1
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    opened = sum(1 for line in kept if line.startswith("<details>"))
    closed = sum(1 for line in kept if line == "</details>")
    if opened > closed:
        kept.append("</details>")
    return "\n".join([*kept, *note])


# --------------------------------------------------------------------------- JSON


def report_document(report: Report, *, fail_on: str, exit_code: int) -> dict[str, Any]:
    """The machine-readable report: the same computation as the comment (spec 9.15)."""
    counts = report.warnings
    rows: list[dict[str, Any]] = []
    for row in report.rows:
        if isinstance(row, RemovedRow):
            rows.append({"kind": "removed", "recipe": row.recipe, "directory": row.directory,
                         "pointersAtBase": row.count, "warning": True})
            continue
        verify: dict[str, Any] = {"state": row.verify.kind, "text": row.verify.text,
                                  "warning": row.verify.warning}
        for name in ("failure_class", "http_status", "hint", "exit"):
            if hasattr(row.verify, name):
                verify[_camel(name)] = getattr(row.verify, name)
        digest: dict[str, Any] = {"state": row.digest.kind, "text": row.digest.text,
                                  "warning": row.digest.warning}
        for name in ("signed", "current"):
            if hasattr(row.digest, name):
                digest[name] = getattr(row.digest, name)
        rows.append({"kind": "pointer", "recipe": row.recipe, "directory": row.directory,
                     "source": row.source, "pointer": row.pointer, "path": row.path,
                     "verify": verify, "digest": digest, "warning": row.warnings > 0})
    return {
        "schema": JSON_SCHEMA,
        "base": report.base,
        "head": report.head,
        "mergeBase": report.merge_base or report.base,
        "generatedAt": report.generated_at,
        "trust": report.trust,
        "broadImpact": report.affected.broad,
        "affected": [{"recipe": r, "protected": r in report.protected,
                      "reasons": list(report.affected.reasons[r])}
                     for r in report.affected.recipes],
        "protected": rows,
        "otherAffected": list(report.other),
        "orphans": [{"path": o.path, "directory": o.directory, "recipe": o.recipe,
                     "verify": {"state": o.verify.kind, "text": o.verify.text}}
                    for o in report.orphans],
        "removedPointers": list(report.removed),
        "allowlist": [{"key": s.key, "label": s.label, "change": s.change,
                       "before": str(s.before) if s.before else None,
                       "after": str(s.after) if s.after else None,
                       "recipes": list(s.recipes)} for s in report.signers],
        "board": {
            "rows": [{"recipe": c.recipe, "phase": str(c.phase), "name": c.name,
                      "base": str(c.before) if c.before else None,
                      "head": str(c.after) if c.after else None} for c in report.board_rows],
            "rollups": [{"recipe": r.recipe, "base": str(r.before) if r.before else None,
                         "head": str(r.after) if r.after else None, "changed": r.changed}
                        for r in report.rollups],
        },
        "notCovered": [{"path": p, "reason": why} for p, why in report.affected.not_covered],
        "warnings": {"total": counts.total, "invalid": counts.invalid, "stale": counts.stale,
                     "other": counts.other},
        "failOn": fail_on,
        "exit": exit_code,
    }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest) if name != "failure_class" else "class"


def render_json(report: Report, *, fail_on: str, exit_code: int) -> str:
    return json.dumps(report_document(report, fail_on=fail_on, exit_code=exit_code),
                      indent=2, sort_keys=True, ensure_ascii=False) + "\n"
