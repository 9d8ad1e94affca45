"""The sections of the PR comment, each rendered from the report document into Markdown lines.

Every fixed word (status marks, headings) is written here; every document value goes through
`md_escape`. A section with nothing to show renders no lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from generator.report._markdown import MAX_ROWS, _count, _short, _state, _table, md_escape
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
from generator.report.core import OTHER_MAX


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


def heading(doc: Mapping[str, Any]) -> list[str]:
    """The revisions compared (base, merge base, head) and the trust root."""
    base = str(doc.get("base") or "")
    merge = str(doc.get("mergeBase") or "")
    trust = doc.get("trust")
    return [
        f"Base `{_short(base)}`"
        + (f" (merge base `{_short(merge)}`)" if merge and merge != base else "")
        + f" · head `{_short(str(doc.get('head') or ''))}`"
        + (f" · trust root {md_escape(trust)}" if trust else ""),
        "",
    ]


def notices(doc: Mapping[str, Any], not_covered: Sequence[Mapping[str, Any]]) -> list[str]:
    """The broad-impact and registry-change notes, when they apply."""
    lines: list[str] = []
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
    return lines


def affected_section(doc: Mapping[str, Any], affected: Sequence[Mapping[str, Any]]) -> list[str]:
    """The protected recipes' pointers, why they are affected, and the other affected recipes."""
    reasons = {str(a.get("recipe")): [str(r) for r in a.get("reasons") or ()] for a in affected}
    protected = [str(a.get("recipe")) for a in affected if a.get("protected")]
    other = [str(r) for r in doc.get("otherAffected") or ()]
    rows = [r for r in doc.get("protected") or () if isinstance(r, Mapping)]
    lines = [f"### Protected recipes ({len(protected)})", ""]
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
    return lines


def orphans_section(orphans: Sequence[Mapping[str, Any]]) -> list[str]:
    """Changed pointers whose overlay does not exist at head."""
    if not orphans:
        return []
    lines = [
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
    return lines


def removed_section(doc: Mapping[str, Any]) -> list[str]:
    """Pointer files the PR deletes."""
    removed = [str(p) for p in doc.get("removedPointers") or ()]
    if not removed:
        return []
    lines = [f"### Removed evidence pointers ({len(removed)})", ""]
    lines += [f"- {md_escape(p)}" for p in removed[:MAX_ROWS]]
    if len(removed) > MAX_ROWS:
        lines.append(f"- +{len(removed) - MAX_ROWS} more")
    lines.append("")
    return lines


def allowlist_section(signers: Sequence[Mapping[str, Any]]) -> list[str]:
    """Signers the PR adds, removes or reclassifies, with the recipes holding their evidence."""
    if not signers:
        return []
    lines = [
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
    return lines


def board_section(doc: Mapping[str, Any]) -> list[str]:
    """Board rows whose consensus changes, and every affected recipe's rollup."""
    board = doc.get("board") or {}
    board_rows = [c for c in board.get("rows") or () if isinstance(c, Mapping)]
    rollups = [r for r in board.get("rollups") or () if isinstance(r, Mapping)]
    if not (board_rows or any(r.get("changed") for r in rollups)):
        return []
    lines = [f"### Board changes ({len(board_rows)} rows)", ""]
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
    return lines


def not_covered_section(not_covered: Sequence[Mapping[str, Any]]) -> list[str]:
    """Changed files hydration merges but the report does not walk."""
    if not not_covered:
        return []
    lines = [
        f"<details><summary>Not covered by this report ({len(not_covered)} "
        "changed files)</summary>",
        "",
        "Hydration also merges these, but the report does not walk them "
        "(criteria-matched overlays, registry component entries, unreferenced files).",
        "",
    ]
    lines += [
        f"- {md_escape(n.get('path'))}: {md_escape(n.get('reason'))}"
        for n in not_covered[:OTHER_MAX]
    ]
    if len(not_covered) > OTHER_MAX:
        lines.append(f"- +{len(not_covered) - OTHER_MAX} more")
    lines += ["", "</details>", ""]
    return lines


def footer(doc: Mapping[str, Any]) -> list[str]:
    """How to refresh evidence (when there are warnings) and the warning counts."""
    counts = doc.get("warnings") or {}
    total, invalid = _count(counts.get("total")), _count(counts.get("invalid"))
    stale, others = _count(counts.get("stale")), _count(counts.get("other"))
    lines = _refresh_help() if total else []
    lines += [
        "---",
        f"_{total} warning{'s' if total != 1 else ''} "
        f"({invalid} invalid, {stale} stale, {others} other). "
        "This check is warning-only unless the repository sets `--fail-on` "
        "(ADR-007)._",
        "",
    ]
    return lines
