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
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from generator.report.cells import (
    DigestCell,
    DigestMatches,
    DigestSkipped,
    DigestStale,
    DigestUnknown,
    VerifyCell,
    VerifyError,
    VerifyInvalid,
    VerifyPassed,
    VerifyPhaseFailures,
)
from generator.report.core import (
    OTHER_MAX,
    RemovedRow,
    Report,
)
from generator.site.escape import neutral

MARKER = "<!-- recipe-evidence-gate -->"
MAX_ROWS = 80
MAX_CHARS = 65_000
"""GitHub refuses comments over 65,536 characters; the comment workflow cuts at 65,000."""
CELL_MAX = 300
JSON_SCHEMA = "evidence-dashboard-pr-report/v1"
_ESCAPED = frozenset("\\|*_[]~$")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "`": "&#96;"}
_ZWSP = "\u200b"
_SPACES = frozenset("\n\t\v\f\u2028\u2029")
# Emoji (and their text forms) the report itself uses, or that read as a verdict: a
# contributor string shows them as `\\uXXXX`, never as a mark.
_MARKS = frozenset(
    "\u2705\u274c\u274e\u26a0\u231b\u23f3\u2714\u2713\u2717\u2718\u2716"
    "\u2757\u2755\u26d4\u2b55\U0001f6ab\U0001f534\U0001f7e2\U0001f7e1"
    "\U0001f7e0\U0001f7e5\U0001f7e9\U0001f6a8\u2611\u2612\u2610"
)
_DROP = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))
# After escaping: `:` before a non-space (URLs, `:shortcode:`), `www.` and `GH-<digit>` get
# a zero-width space, so GitHub autolinks none of them.
_AUTOLINK = re.compile(r"(:)(?=\S)|(www)(?=\.)|(gh-)(?=\d)", re.IGNORECASE)


def _mark(char: str) -> str:
    code = ord(char)
    return f"\\\\u{code:04x}" if code <= 0xFFFF else f"\\\\U{code:08x}"


def md_escape(value: object, limit: int = CELL_MAX) -> str:
    """One safe GitHub Markdown table-cell string from untrusted text."""
    out: list[str] = []
    for char in neutral(str(value)):
        if char in _SPACES:
            out.append(" ")
        elif char in _HTML:
            out.append(_HTML[char])
        elif char == "@":
            out.append("@" + _ZWSP)  # no mention, no team ping, no e-mail autolink
        elif char == "#":
            out.append("#" + _ZWSP)  # no `#1` / `owner/repo#1` reference
        elif char in _ESCAPED:
            out.append("\\" + char)
        elif char in _MARKS:
            out.append(_mark(char))
        elif unicodedata.category(char) in _DROP:
            continue  # invisible formatting (zero-width characters, private use, unassigned)
        else:
            out.append(char)
    text = " ".join("".join(out).split())
    text = _AUTOLINK.sub(lambda m: m.group() + _ZWSP, text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip("\\") + "…"
    return text


def _state(value: object) -> str:
    """A consensus state name (the schema allows only the six) or an em dash for none."""
    return md_escape(value, 40) if value else "—"


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], limit: int = MAX_ROWS
) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows[:limit])
    if len(rows) > limit:
        more = [f"+{len(rows) - limit} more"] + [""] * (len(header) - 1)
        lines.append("| " + " | ".join(more) + " |")
    return lines


def verify_md(cell: VerifyCell) -> str:
    """The Verify cell in Markdown: aicr's fixed wording, with every variable part escaped."""
    if isinstance(cell, VerifyInvalid):
        text = f":x: invalid — {md_escape(cell.failure_class, 60)}"
        if cell.http_status is not None:
            text += f" (HTTP {int(cell.http_status)})"
        if cell.detail:
            text += f": {md_escape(cell.detail)}"
            return text + (f" (next step: {md_escape(cell.hint)})" if cell.hint else "")
        return text + (f": {md_escape(cell.hint)}" if cell.hint else "")
    if isinstance(cell, VerifyError):
        text = f":x: verify error (result exit {int(cell.exit)})"
        return text + (f" — {md_escape(cell.failure_class, 60)}" if cell.failure_class else "")
    return cell.text


_PENDING_TEXT = VerifyPassed(pending=True).text


def verify_of(doc: Mapping[str, Any]) -> VerifyCell:
    """The Verify cell a document's `verify` object describes (its own `text` is not used,
    except to tell a pending signature from a pass, which the schema pins to two values)."""
    state = doc.get("state")
    if state == "passed":
        return VerifyPassed(pending=doc.get("text") == _PENDING_TEXT)
    if state == "phase-failures":
        return VerifyPhaseFailures()
    if state == "invalid":
        status = doc.get("httpStatus")
        return VerifyInvalid(
            str(doc.get("class") or ""),
            status if isinstance(status, int) else None,
            str(doc.get("hint") or ""),
            detail=str(doc.get("detail") or ""),
        )
    code = doc.get("exit")
    failure = doc.get("class")
    return VerifyError(code if isinstance(code, int) else 3, str(failure) if failure else None)


def digest_of(doc: Mapping[str, Any]) -> DigestCell:
    """The Digest match cell a document's `digest` object describes (hex prefixes only)."""
    state = doc.get("state")
    if state == "matches":
        return DigestMatches()
    if state == "stale":
        return DigestStale(
            signed=str(doc.get("signed") or ""), current=str(doc.get("current") or "")
        )
    if state == "skipped":
        return DigestSkipped(warning=bool(doc.get("warning")))
    return DigestUnknown()


def _row_cells(row: Mapping[str, Any]) -> list[str]:
    if row.get("kind") == "removed":
        count = int(row.get("pointersAtBase") or 0)
        plural = "s" if count != 1 else ""
        return [
            md_escape(row.get("directory")),
            "—",
            "—",
            f":warning: evidence pointer removed ({count} pointer{plural} at base)",
            "—",
        ]
    return [
        md_escape(row.get("directory")),
        md_escape(row.get("source")),
        md_escape(row.get("pointer")),
        verify_md(verify_of(row.get("verify") or {})),
        digest_of(row.get("digest") or {}).text,
    ]


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def render_markdown(report: Report) -> str:
    """The sticky PR comment, marker first (rendered from the report's JSON document)."""
    return render_document(report_document(report, fail_on="none", exit_code=0))


def render_document(doc: Mapping[str, Any]) -> str:
    """The sticky PR comment from a report document (`report_document`, or a JSON report
    validated by `generator.report.schema`), marker first."""
    lines = [MARKER, "## Recipe evidence check", ""]
    base = str(doc.get("base") or "")
    merge = str(doc.get("mergeBase") or "")
    trust = doc.get("trust")
    lines.append(
        f"Base `{_short(base)}`"
        + (f" (merge base `{_short(merge)}`)" if merge and merge != base else "")
        + f" · head `{_short(str(doc.get('head') or ''))}`"
        + (f" · trust root {md_escape(trust)}" if trust else "")
    )
    lines.append("")
    affected = [a for a in doc.get("affected") or () if isinstance(a, Mapping)]
    reasons = {str(a.get("recipe")): [str(r) for r in a.get("reasons") or ()] for a in affected}
    protected = [str(a.get("recipe")) for a in affected if a.get("protected")]
    other = [str(r) for r in doc.get("otherAffected") or ()]
    orphans = [o for o in doc.get("orphans") or () if isinstance(o, Mapping)]
    signers = [s for s in doc.get("allowlist") or () if isinstance(s, Mapping)]
    not_covered = [n for n in doc.get("notCovered") or () if isinstance(n, Mapping)]
    rows = [r for r in doc.get("protected") or () if isinstance(r, Mapping)]
    if doc.get("broadImpact"):
        lines += [
            "> **Broad impact:** `overlays/base.yaml` changed, so every leaf recipe is affected.",
            "",
        ]
    if any(str(n.get("path")).rsplit("/", 1)[-1].startswith("registry") for n in not_covered):
        lines += [
            "> **Registry change:** component registry entries are not walked; recipes "
            "that use a changed component are not listed unless another rule applies.",
            "",
        ]

    if not affected and not orphans and not signers:
        lines += ["No leaf overlays affected by this PR.", ""]
    else:
        lines += [f"### Protected recipes ({len(protected)})", ""]
        if rows:
            lines += _table(
                ["Recipe", "Source", "Pointer", "Verify", "Digest match"],
                [_row_cells(r) for r in rows],
            )
        else:
            lines.append("No affected recipe has an evidence pointer.")
        lines.append("")
        if protected:
            lines += [
                f"<details><summary>Why these {len(protected)} recipes are affected</summary>",
                "",
            ]
            lines += [
                f"- {md_escape(r)}: {md_escape('; '.join(reasons.get(r, ())), 600)}"
                for r in protected[:OTHER_MAX]
            ]
            lines += ["", "</details>", ""]
        if other:
            lines += [
                f"<details><summary>Other affected recipes ({len(other)}): no "
                "evidence pointer at base or head</summary>",
                "",
            ]
            for recipe in other[:OTHER_MAX]:
                why = "; ".join(reasons.get(recipe, ()))
                lines.append(f"- {md_escape(recipe)}: {md_escape(why)}")
            if len(other) > OTHER_MAX:
                lines.append(f"- +{len(other) - OTHER_MAX} more")
            lines += ["", "</details>", ""]
    if orphans:
        lines += [
            f"### Orphan evidence pointers ({len(orphans)})",
            "",
            "These pointers changed, but `overlays/<recipe>.yaml` does not exist at head.",
            "",
        ]
        lines += _table(
            ["Recipe", "Pointer", "Expected overlay", "Verify"],
            [
                [
                    md_escape(o.get("directory")),
                    md_escape(o.get("path")),
                    md_escape(f"overlays/{o.get('recipe')}.yaml"),
                    verify_md(verify_of(o.get("verify") or {})),
                ]
                for o in orphans
            ],
        )
        lines.append("")
    removed = [str(p) for p in doc.get("removedPointers") or ()]
    if removed:
        lines += [f"### Removed evidence pointers ({len(removed)})", ""]
        lines += [f"- {md_escape(p)}" for p in removed[:MAX_ROWS]]
        if len(removed) > MAX_ROWS:
            lines.append(f"- +{len(removed) - MAX_ROWS} more")
        lines.append("")
    if signers:
        lines += [
            f"### Allowlist changes ({len(signers)})",
            "",
            "The base board uses the base allowlist, the head board the head allowlist.",
            "",
        ]
        lines += _table(
            ["Signer", "Change", "Before", "After", "Recipes with its evidence"],
            [
                [
                    md_escape(s.get("label")),
                    md_escape(s.get("change"), 40),
                    md_escape(s.get("before") or "—", 40),
                    md_escape(s.get("after") or "—", 40),
                    md_escape(", ".join(str(r) for r in s.get("recipes") or ()) or "—", 600),
                ]
                for s in signers
            ],
        )
        lines.append("")
    board = doc.get("board") or {}
    board_rows = [c for c in board.get("rows") or () if isinstance(c, Mapping)]
    rollups = [r for r in board.get("rollups") or () if isinstance(r, Mapping)]
    if board_rows or any(r.get("changed") for r in rollups):
        lines += [f"### Board changes ({len(board_rows)} rows)", ""]
        if board_rows:
            lines += _table(
                ["Recipe", "Phase", "Check", "Base", "Head"],
                [
                    [
                        md_escape(c.get("recipe")),
                        md_escape(c.get("phase"), 40),
                        md_escape(c.get("name")),
                        _state(c.get("base")),
                        _state(c.get("head")),
                    ]
                    for c in board_rows
                ],
            )
            lines.append("")
        lines += ["#### Recipe rollups", ""]
        lines += _table(
            ["Recipe", "Base", "Head"],
            [
                [
                    md_escape(r.get("recipe")),
                    _state(r.get("base")),
                    _state(r.get("head")) + ("" if r.get("changed") else " (unchanged)"),
                ]
                for r in rollups
            ],
        )
        lines.append("")
    if not_covered:
        lines += [
            f"<details><summary>Not covered by this report ({len(not_covered)} "
            "changed files)</summary>",
            "",
            "Hydration also merges these, but the report does not walk them "
            "(criteria-matched overlays, registry component entries, unreferenced files).",
            "",
        ]
        for n in not_covered[:OTHER_MAX]:
            lines.append(f"- {md_escape(n.get('path'))}: {md_escape(n.get('reason'))}")
        if len(not_covered) > OTHER_MAX:
            lines.append(f"- +{len(not_covered) - OTHER_MAX} more")
        lines += ["", "</details>", ""]
    counts = doc.get("warnings") or {}
    total, invalid = _count(counts.get("total")), _count(counts.get("invalid"))
    stale, others = _count(counts.get("stale")), _count(counts.get("other"))
    if total:
        lines += _refresh_help()
    lines += [
        "---",
        f"_{total} warning{'s' if total != 1 else ''} "
        f"({invalid} invalid, {stale} stale, {others} other). "
        "This check is warning-only unless the repository sets `--fail-on` "
        "(ADR-007)._",
        "",
    ]
    return truncate("\n".join(lines))


def _refresh_help() -> list[str]:
    return [
        "### How to refresh evidence",
        "",
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
            rows.append(
                {
                    "kind": "removed",
                    "recipe": row.recipe,
                    "directory": row.directory,
                    "pointersAtBase": row.count,
                    "warning": True,
                }
            )
            continue
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
        rows.append(
            {
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
        )
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
        "protected": rows,
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
        "board": {
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
        },
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


def render_json(report: Report, *, fail_on: str, exit_code: int) -> str:
    return (
        json.dumps(
            report_document(report, fail_on=fail_on, exit_code=exit_code),
            indent=2,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
    )
