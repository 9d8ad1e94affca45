"""Markdown safety and limits: escaping of contributor strings, the 80-row cap, the size cap,
and aicr's cell vocabulary for verdicts the demo tree does not produce."""

from __future__ import annotations

import pytest

from generator.data import FreshnessInfo, PointerRecord
from generator.model import (
    FailureCause,
    FailureClass,
    Freshness,
    NoVerdict,
    PointerLocation,
    Rejected,
    RejectedPointer,
)
from generator.report.affected import Affected
from generator.report.cells import (
    DigestSkipped,
    DigestStale,
    VerifyError,
    VerifyInvalid,
    digest_cell,
    verify_cell,
)
from generator.report.core import FailOn, PointerRow, Report
from generator.report.render import (
    MARKER,
    MAX_CHARS,
    MAX_ROWS,
    md_escape,
    render_markdown,
    truncate,
    verify_md,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plain-name", "plain-name"),
        ("two\nlines\n\nhere", "two lines here"),
        ("cr\r\nlf", "cr\\\\u000d lf"),  # a carriage return is a control: shown, not acted on
        ("a|b", "a\\|b"),
        ("`code`", "&#96;code&#96;"),
        ("ping @octocat", "ping @\u200boctocat"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("[link](https://evil)", "\\[link\\](https:\u200b//evil)"),
        ("**bold** _em_", "\\*\\*bold\\*\\* \\_em\\_"),
        ("rtl\u202eevil", "rtl\\\\u202eevil"),
        ("zero\u200bwidth", "zerowidth"),
        ("a &amp; b", "a &amp;amp; b"),
    ],
)
def test_md_escape(raw: str, expected: str) -> None:
    assert md_escape(raw) == expected


def test_md_escape_bounds_length_without_a_dangling_escape() -> None:
    text = md_escape("|" * 1000, limit=51)
    assert len(text) <= 51 and text.endswith("…") and not text.endswith("\\…")


def _location(i: int) -> PointerLocation:
    return PointerLocation(f"evidence/r/s/sha256-{i:064x}.yaml", "r", "s")


def _row(i: int, hint: str = "") -> PointerRow:
    cause = FailureCause(FailureClass.REGISTRY_FORBIDDEN, "denied", hint, 403)
    record = PointerRecord(
        pointer=RejectedPointer(_location(i), "schema", "m", "h"),
        verdict=Rejected(steps=(), cause=cause),
    )
    verify = verify_cell(record)
    return PointerRow(
        "r", "r", "s", f"sha256-{i:064x}", record.path, verify, digest_cell(record, verify)
    )


def _report(rows: list[PointerRow]) -> Report:
    return Report(
        base="a" * 40,
        head="b" * 40,
        generated_at="2027-01-15T08:00:00Z",
        affected=Affected({"r": ("overlay changed",)}, False, ()),
        protected=("r",),
        rows=tuple(rows),
        other=(),
        orphans=(),
        removed=(),
        signers=(),
        board_rows=(),
        rollups=(),
    )


def test_rows_cap_at_80_with_more_row() -> None:
    text = render_markdown(_report([_row(i) for i in range(MAX_ROWS + 7)]))
    table = [line for line in text.splitlines() if line.startswith("| r |")]
    assert len(table) == MAX_ROWS
    assert "| +7 more |" in text


def test_comment_stays_under_github_limit() -> None:
    rows = [_row(i, hint="x" * 250 + " @team <b>") for i in range(MAX_ROWS)]
    report = _report(rows)
    report = Report(
        **{**report.__dict__, "other": tuple(f"recipe-{i:04d}" * 20 for i in range(400))}
    )
    text = render_markdown(report)
    assert len(text) <= MAX_CHARS < 65_536
    assert "Report truncated" in text  # this one had to be cut
    assert text.startswith(MARKER)
    assert "@team" not in text and "<b>" not in text


def test_truncate_closes_details_and_cuts_at_lines() -> None:
    body = "\n".join(["<details><summary>x</summary>", *(f"- line {i}" for i in range(5000))])
    cut = truncate(body, limit=2000)
    assert len(cut) <= 2000
    assert "</details>" in cut and "truncated" in cut
    original = set(body.splitlines())
    added = [line for line in cut.splitlines() if line not in original]
    assert (
        added
        == [
            "",
            "</details>",
            "",
            "_Report truncated at 2000 characters; the JSON report has every row._",
        ][-len(added) :]
    )


def test_invalid_cell_has_class_status_and_hint() -> None:
    row = _row(1, hint="make the fork's aicr-evidence package public")
    assert isinstance(row.verify, VerifyInvalid)
    assert verify_md(row.verify) == (
        ":x: invalid — registry-forbidden (HTTP 403): denied (next step: make the fork's "
        "aicr-evidence package public)"
    )
    # a broken bundle warns once: Verify, not also Digest match
    assert isinstance(row.digest, DigestSkipped) and not row.digest.warning
    assert row.warnings == 1


def test_no_verdict_is_a_verify_error() -> None:
    record = PointerRecord(
        pointer=RejectedPointer(_location(2), "schema", "m", "h"),
        verdict=NoVerdict(steps=(), cause=FailureCause(FailureClass.TRANSIENT, "timeout", "")),
    )
    cell = verify_cell(record)
    assert isinstance(cell, VerifyError)
    assert verify_md(cell) == ":x: verify error (result exit 3) — transient"
    assert verify_cell(PointerRecord(pointer=record.pointer)).text == (
        ":x: verify error (result exit 3)"
    )


def test_stale_cell_shows_only_hex_prefixes() -> None:
    cell = DigestStale(signed="5d582e1f1749" + "0" * 52, current="`|<12e0bffa1c88" + "1" * 52)
    assert cell.text == ":warning: stale (`5d582e1f1749…` vs current `12e0bffa1c88…`)"
    assert FreshnessInfo(Freshness.STALE).state is Freshness.STALE


@pytest.mark.parametrize(
    ("mode", "fails"),
    [(FailOn.NONE, False), (FailOn.INVALID, True), (FailOn.STALE, False), (FailOn.ANY, True)],
)
def test_fail_on_modes(mode: FailOn, fails: bool) -> None:
    assert _report([_row(1)]).fails(mode) is fails
