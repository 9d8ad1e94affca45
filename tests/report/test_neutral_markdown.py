"""The PR comment says only what this code says: contributor strings are inert GitHub Markdown,
and a JSON report is rendered only when it matches the report schema.

A report whose every contributor string (recipe and pointer names, signer label and key, test
names, failure class and hint, reasons, paths, trust root) holds a mention, issue references,
bare and `www.` URLs, `$math$`, a literal "✅ passed", an emoji shortcode, pipes, backticks,
HTML, bidi and control characters is rendered; the raw Markdown must carry none of them as
active syntax. The same structure with plain strings is the yardstick for table shape.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import InputError
from generator.model import ConsensusState, Phase, SignerClass
from generator.report.affected import Affected
from generator.report.cells import DigestSkipped, VerifyError, VerifyInvalid
from generator.report.core import Orphan, PointerRow, Report, RollupChange, RowChange, SignerChange
from generator.report.render import md_escape, render_document, render_json, render_markdown
from generator.report.schema import load_report, validate_report

GOLDEN = Path(__file__).resolve().parent / "golden" / "pr-report.json"
HOSTILE = (
    "hi @octocat see #1 and org/repo#2 GH-3 at https://evil.example or "
    "WWW.evil.example $x$ ✅ passed ❌ ⚠️ :white_check_mark: a | b `code` "
    "<b>bold</b> rtl\u202eevil nul\x00 esc\x1b"
)


def _report(s: str) -> Report:
    row = PointerRow(
        s, s, s, s, f"evidence/{s}", VerifyInvalid(s, 403, s), DigestSkipped(warning=True)
    )
    error_row = PointerRow(
        s, s, s, s, f"evidence/{s}/2", VerifyError(3, s), DigestSkipped(warning=True)
    )
    return Report(
        base="a" * 40,
        head="b" * 40,
        generated_at="2027-01-15T08:00:00Z",
        affected=Affected({s: (s, s), f"o{s}": (s,)}, False, ((s, s),)),
        protected=(s,),
        rows=(row, error_row),
        other=(f"o{s}",),
        orphans=(Orphan(s, s, s, VerifyInvalid(s, None, s)),),
        removed=(s,),
        signers=(SignerChange(s, s, "added", None, SignerClass.PARTNER, (s,)),),
        board_rows=(
            RowChange(s, Phase.DEPLOYMENT, s, ConsensusState.CONFIRMED, ConsensusState.FAILING),
        ),
        rollups=(RollupChange(s, ConsensusState.CONFIRMED, ConsensusState.FAILING),),
        trust=s,
    )


def _outside_code(markdown: str) -> str:
    return re.sub(r"`[^`\n]*`", "", markdown)


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


@pytest.fixture(scope="module")
def hostile() -> str:
    return render_markdown(_report(HOSTILE))


@pytest.fixture(scope="module")
def plain() -> str:
    return render_markdown(_report("plain"))


def test_the_hostile_report_mentions_and_references_nothing(hostile: str) -> None:
    assert HOSTILE.split()[1] not in hostile  # "@octocat" never stands as written
    assert re.search(r"(^|[\s(>|*_])@[A-Za-z0-9]", hostile, re.MULTILINE) is None
    assert re.search(r"(?<!&)#\d", hostile) is None  # no #1, no org/repo#2 (&#96; is an entity)
    assert re.search(r"gh-\d", hostile, re.IGNORECASE) is None


def test_the_hostile_report_links_nothing(hostile: str) -> None:
    text = _outside_code(hostile)
    assert "://" not in text
    assert re.search(r"www\.", text, re.IGNORECASE) is None
    assert "<b>" not in hostile and "<a" not in hostile


def test_the_hostile_report_has_no_math_emoji_or_status_marks(hostile: str) -> None:
    assert re.search(r"(?<!\\)\$", hostile) is None
    for mark in ("✅", "❌", "⚠", ":white_check_mark:", ":white\\_check\\_mark:"):
        assert mark not in hostile, mark
    # the only status marks are the report's own, one per fixed cell
    assert hostile.count(":x:") == 3 and hostile.count(":warning:") == 2
    assert "\\\\u2705 passed" in hostile  # shown, visibly escaped


def test_the_hostile_report_keeps_the_table_shape(hostile: str, plain: str) -> None:
    assert hostile.count("`") == plain.count("`")
    lines, yard = hostile.split("\n"), plain.split("\n")
    assert len(lines) == len(yard)
    for line, ref in zip(lines, yard, strict=True):
        if ref.startswith("|"):
            assert _unescaped_pipes(line) == _unescaped_pipes(ref), line


def test_the_hostile_report_shows_controls_as_visible_escapes(hostile: str) -> None:
    assert "\u202e" not in hostile and "\x00" not in hostile and "\x1b" not in hostile
    assert "rtl\\\\u202eevil nul\\\\u0000 esc\\\\u001b" in hostile


@pytest.mark.parametrize(
    ("raw", "active"),
    [
        ("@octocat", r"@[a-z]"),
        ("#12", r"(?<!&)#\d"),
        ("org/repo#2", r"(?<!&)#\d"),
        ("GH-7", r"GH-\d"),
        ("https://evil.example", "://"),
        ("http://evil.example", "://"),
        ("www.evil.example", r"www\."),
        ("$x$", r"(?<!\\)\$"),
        # a shortcode stays one even with its `_` backslash-escaped
        (":white_check_mark:", r":[\w\\+\-]+:"),
        (":+1:", r":[\w\\+\-]+:"),
        ("✅", "✅"),
        ("`x`", "`"),
        ("a|b", r"(?<!\\)\|"),
        ("<script>", "<"),
    ],
)
def test_md_escape_leaves_no_active_syntax(raw: str, active: str) -> None:
    assert re.search(active, md_escape(f"x {raw} y")) is None


def test_the_json_round_trip_gives_the_same_hostile_comment() -> None:
    report = _report(HOSTILE)
    doc = json.loads(render_json(report, fail_on="none", exit_code=0))
    validate_report(doc, display="report.json")
    assert render_document(doc) == render_markdown(report)


# --------------------------------------------------------------------------- the schema


def _golden() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return doc


def test_the_golden_json_report_is_valid() -> None:
    validate_report(_golden(), display="pr-report.json")


def _inject_top(doc: dict[str, Any]) -> None:
    doc["comment"] = "✅ passed @octocat"


def _inject_row(doc: dict[str, Any]) -> None:
    doc["protected"][0]["markdown"] = "| x | ✅ passed |"


def _inject_verify(doc: dict[str, Any]) -> None:
    doc["protected"][0]["verify"]["note"] = "@octocat"


def _forge_text(doc: dict[str, Any]) -> None:
    doc["protected"][0]["verify"]["text"] = "✅ passed, approved by @octocat"


def _forge_state(doc: dict[str, Any]) -> None:
    doc["board"]["rows"][0]["head"] = "CONFIRMED ✅"


def _forge_phase(doc: dict[str, Any]) -> None:
    doc["board"]["rows"][0]["phase"] = "## heading"


@pytest.mark.parametrize(
    "change", [_inject_top, _inject_row, _inject_verify, _forge_text, _forge_state, _forge_phase]
)
def test_the_schema_rejects_injected_or_forged_fields(change: Any) -> None:
    doc = copy.deepcopy(_golden())
    change(doc)
    with pytest.raises(InputError) as caught:
        validate_report(doc, display="report.json")
    text = caught.value.diagnostics()
    assert "report.json" in text and "expected:" in text and "next step:" in text


def test_render_report_refuses_an_injected_field_and_prints_nothing(tmp_path: Path) -> None:
    doc = _golden()
    _inject_row(doc)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(main, ["render-report", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "report.json: protected/0" in result.stderr and "additionalProperties" in result.stderr


def test_render_report_refuses_duplicate_keys_and_non_json(tmp_path: Path) -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    duplicated = text.replace('"base": ', '"base": "x", "base": ', 1)
    for name, body in (
        ("dup.json", duplicated),
        ("nan.json", text.replace("false", "NaN", 1)),
        ("bad.json", "not json"),
    ):
        path = tmp_path / name
        path.write_text(body, encoding="utf-8")
        with pytest.raises(InputError) as caught:
            load_report(path)
        assert name in caught.value.diagnostics()
