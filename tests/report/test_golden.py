"""Golden Markdown and JSON reports over a real git repository built from the demo tree.

The head adds, changes and removes pointers and overlays and edits the allowlist; verification
is real (offline, the copied OCI layout, the demo trust root). Regenerate the goldens only with
`UPDATE_GOLDEN=1`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from generator.report import MARKER, Report, render_json, render_markdown, run_report
from generator.report.core import PointerRow, RemovedRow
from tests.report.conftest import ORPHAN, PrRepo, options_for

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="module")
def report(pr_repo: PrRepo, tmp_path_factory: pytest.TempPathFactory) -> Report:
    cache = tmp_path_factory.mktemp("cache")
    return run_report(options_for(pr_repo.recipes, cache).evaluation, pr_repo.base, pr_repo.head)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing golden {name}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


def test_markdown_matches_golden(report: Report) -> None:
    check_golden("pr-report.md", render_markdown(report))


def test_json_matches_golden(report: Report) -> None:
    check_golden("pr-report.json", render_json(report, fail_on="none", exit_code=0))


def test_report_is_stable_across_runs(pr_repo: PrRepo, report: Report, tmp_path: Path) -> None:
    again = run_report(
        options_for(pr_repo.recipes, tmp_path / "cache").evaluation, pr_repo.base, pr_repo.head
    )
    assert render_markdown(again) == render_markdown(report)


def test_comment_starts_with_marker_and_names_no_machine_path(report: Report) -> None:
    text = render_markdown(report)
    assert text.startswith(MARKER + "\n")
    document = render_json(report, fail_on="none", exit_code=0)
    for rendered in (text, document):
        assert str(Path.home()) not in rendered
        assert "evidence-report-" not in rendered  # the temporary materialised trees


def test_board_diff_shows_consensus_changes(report: Report) -> None:
    changes = {(c.recipe, c.name): (c.before, c.after) for c in report.board_rows}
    # acme-cloud/nightly left the allowlist: its corroboration is gone
    assert changes[("gb300-eks-ubuntu-inference-dynamo", "operator-health")] == (
        "CONFIRMED",
        "SINGLE",
    )
    # the drive-by signer was allowlisted: its failing NCCL run now contests the row
    assert changes[("h100-eks-ubuntu-training-kubeflow", "nccl-all-reduce-bw-net")] == (
        "CONFIRMED",
        "CONTESTED",
    )
    rollups = {r.recipe: (r.before, r.after) for r in report.rollups}
    assert rollups["gb300-generic-ubuntu-training"] == ("UNTESTED", "PARTIAL")
    assert rollups["vr200-rke2-ubuntu-training-kubeflow"][1] is None


def test_protected_rows_use_aicr_vocabulary(report: Report) -> None:
    rows = [r for r in report.rows if isinstance(r, PointerRow)]
    k0s = next(r for r in rows if r.recipe == "h200-k0s-ubuntu-training")
    assert k0s.digest.kind == "stale"  # the PR edited its overlay after signing
    assert k0s.digest.text.startswith(":warning: stale (`")
    kinds = {r.verify.kind for r in rows}
    assert {"passed", "phase-failures", "invalid"} <= kinds
    pending = next(r for r in rows if r.source == "(flat)")
    assert pending.verify.text == ":hourglass: pending signature"
    removed = [r for r in report.rows if isinstance(r, RemovedRow)]
    assert [r.directory for r in removed] == ["vr200-rke2-ubuntu-training-kubeflow"]


def test_orphans_removed_pointers_and_allowlist(report: Report) -> None:
    assert [o.path for o in report.orphans] == [ORPHAN]
    assert len(report.removed) == 2
    changes = {s.label.split(" ")[0]: s.change for s in report.signers}
    assert changes == {
        "gpulab-partner": "moved",
        "drive-by": "added",
        "acme-cloud/nightly": "removed",
    }
    assert "h100-eks-ubuntu-inference" in report.other  # values file of a spec.base chain


def test_json_counts_agree_with_markdown(report: Report) -> None:
    doc = json.loads(render_json(report, fail_on="stale", exit_code=1))
    counts = report.warnings
    assert doc["warnings"] == {
        "total": counts.total,
        "invalid": counts.invalid,
        "stale": counts.stale,
        "other": counts.other,
    }
    assert f"_{counts.total} warnings" in render_markdown(report)
    assert doc["exit"] == 1 and doc["failOn"] == "stale"


def test_the_json_report_renders_the_same_comment_through_render_report(
    report: Report, tmp_path: Path
) -> None:
    """Round trip: `report --format json` -> `render-report` -> the direct Markdown, byte for
    byte (the comment workflow's path gives the comment a direct run gives)."""
    from click.testing import CliRunner

    from generator.cli import main
    from generator.report.schema import validate_report

    text = render_json(report, fail_on="invalid", exit_code=1)
    validate_report(json.loads(text), display="report.json")
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["render-report", str(path)])
    assert result.exit_code == 0, (result.stderr, repr(result.exception))
    assert result.stdout == render_markdown(report)
    assert result.stdout == (GOLDEN / "pr-report.md").read_text(encoding="utf-8")
