"""The workflows' inline scripts, run for real: the clock step in bash, the comment in Node.

The comment script runs against fakes of github-script's `github`, `context` and `core`, so
the sticky-comment, PR-resolution and truncation rules are checked as behaviour.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.workflows._workflows import TEMPLATE, WORKFLOWS, action_of, load

BASH = shutil.which("bash")
NODE = shutil.which("node")
MARKER = "<!-- recipe-evidence-gate -->"


# --------------------------------------------------------------------------- the clock step


def _run_clock(path: Path, tmp_path: Path, **env: str) -> tuple[int, dict[str, str]]:
    if BASH is None:
        pytest.skip("bash is not installed")
    step = next(s for s in load(path).steps("build") if s.get("id") == "clock")
    out = tmp_path / "github_output"
    out.write_text("")
    full = {
        "PATH": os.environ.get("PATH", ""),
        "GITHUB_OUTPUT": str(out),
        "GITHUB_REPOSITORY": "Some-Org/some-repo",
        "GITHUB_REPOSITORY_OWNER": "Some-Org",
        **env,
    }
    done = subprocess.run(
        [BASH, "-e", "-c", step["run"]], env=full, capture_output=True, text=True, check=False
    )
    values = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    return done.returncode, values


@pytest.mark.parametrize("path", [WORKFLOWS / "pages.yml", TEMPLATE], ids=["pages", "template"])
def test_clock_is_todays_midnight_utc(path: Path, tmp_path: Path) -> None:
    before = int(time.time())
    code, values = _run_clock(path, tmp_path)
    after = int(time.time())
    assert code == 0
    epoch = int(values["epoch"])
    assert epoch % 86400 == 0
    assert epoch <= before and after < epoch + 86400 + (after - before) + 1
    assert values["site_url"] == "https://some-org.github.io/some-repo/"


def test_clock_takes_a_dispatched_epoch_and_a_configured_url(tmp_path: Path) -> None:
    code, values = _run_clock(
        WORKFLOWS / "pages.yml",
        tmp_path,
        INPUT_EPOCH="1795132800",
        PAGES_SITE_URL="https://example.org/dash/",
    )
    assert code == 0
    assert values == {"epoch": "1795132800", "site_url": "https://example.org/dash/"}


@pytest.mark.parametrize("bad", ["12abc", "-5", "1.5", "$(id)"])
def test_clock_refuses_a_dispatched_epoch_that_is_not_seconds(bad: str, tmp_path: Path) -> None:
    code, values = _run_clock(WORKFLOWS / "pages.yml", tmp_path, INPUT_EPOCH=bad)
    assert code == 2
    assert "epoch" not in values


# --------------------------------------------------------------------------- the comment script

HARNESS = r"""
const fs = require('fs');
const scenario = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const script = fs.readFileSync(process.argv[3], 'utf8');
const calls = [];
let nextId = 900;
const github = {
  paginate: async (fn, args) => fn(args),
  rest: {
    repos: { listPullRequestsAssociatedWithCommit: async (args) => {
      calls.push(['listPulls', args.commit_sha]); return scenario.pulls; } },
    issues: {
      listComments: async (args) => { calls.push(['listComments', args.issue_number]);
                                      return scenario.comments; },
      updateComment: async (args) => { calls.push(['update', args.comment_id, args.body]); return {}; },
      createComment: async (args) => { calls.push(['create', args.issue_number, args.body]);
                                       return { data: { id: nextId++ } }; },
    },
  },
};
const context = { repo: { owner: 'o', repo: 'r' }, payload: { workflow_run: scenario.run } };
const core = { notice: (m) => calls.push(['notice', m]), info: () => {} };
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
new AsyncFunction('require', 'github', 'context', 'core', script)(require, github, context, core)
  .then(() => { process.stdout.write(JSON.stringify(calls)); })
  .catch((e) => { console.error(e); process.exit(1); });
"""

HEAD = "a" * 40
RUN = {
    "head_sha": HEAD,
    "head_repository": {"full_name": "fork/r"},
    "html_url": "https://github.com/o/r/actions/runs/1",
}


def _pr(
    number: int, *, sha: str = HEAD, repo: str = "fork/r", state: str = "open"
) -> dict[str, Any]:
    return {"number": number, "state": state, "head": {"sha": sha, "repo": {"full_name": repo}}}


def _comment(cid: int, body: str, login: str = "github-actions[bot]") -> dict[str, Any]:
    return {"id": cid, "body": body, "user": {"login": login, "type": "Bot"}}


def _run_comment(
    tmp_path: Path, *, pulls: list[Any], comments: list[Any], report: str | None
) -> list[list[Any]]:
    assert NODE is not None  # the `node` fixture (every caller uses it) skips first
    step = next(
        s
        for s in load(WORKFLOWS / "pr-comment.yml").steps("comment")
        if action_of(s) == "actions/github-script"
    )
    (tmp_path / "script.js").write_text(step["with"]["script"])
    (tmp_path / "harness.js").write_text(HARNESS)
    (tmp_path / "scenario.json").write_text(
        json.dumps({"pulls": pulls, "comments": comments, "run": RUN})
    )
    report_file = tmp_path / "report.md"
    if report is not None:
        report_file.write_text(report, encoding="utf-8")
    done = subprocess.run(
        [
            NODE,
            str(tmp_path / "harness.js"),
            str(tmp_path / "scenario.json"),
            str(tmp_path / "script.js"),
        ],
        env={"PATH": os.environ.get("PATH", ""), "REPORT_FILE": str(report_file)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    calls: list[list[Any]] = json.loads(done.stdout)
    return calls


def _writes(calls: list[list[Any]]) -> list[list[Any]]:
    return [c for c in calls if c[0] in ("create", "update")]


@pytest.mark.usefixtures("node")
def test_creates_one_comment_with_the_marker(tmp_path: Path) -> None:
    calls = _run_comment(
        tmp_path,
        pulls=[_pr(7)],
        comments=[_comment(1, "unrelated")],
        report="## Recipe evidence check\n\nall good\n",
    )
    writes = _writes(calls)
    assert len(writes) == 1 and writes[0][:2] == ["create", 7]
    assert writes[0][2].startswith(MARKER) and "all good" in writes[0][2]
    assert ["listPulls", HEAD] in calls


@pytest.mark.usefixtures("node")
def test_the_marker_appears_once_even_if_the_report_has_it(tmp_path: Path) -> None:
    report = f"{MARKER}\n## Recipe evidence check\n\nok\n"
    body = _writes(_run_comment(tmp_path, pulls=[_pr(7)], comments=[], report=report))[0][2]
    assert body.startswith(MARKER) and body.count(MARKER) == 1 and "ok" in body


@pytest.mark.usefixtures("node")
def test_updates_its_own_sticky_comment(tmp_path: Path) -> None:
    comments = [_comment(1, f"{MARKER}\nold", login="someone"), _comment(2, f"{MARKER}\nold")]
    writes = _writes(_run_comment(tmp_path, pulls=[_pr(7)], comments=comments, report="new\n"))
    assert len(writes) == 1 and writes[0][:2] == ["update", 2]
    assert "new" in writes[0][2]


@pytest.mark.parametrize(
    "pulls",
    [
        [],
        [_pr(7), _pr(8)],
        [_pr(7, state="closed")],
        [_pr(7, repo="attacker/r")],
        [_pr(7, sha="b" * 40)],
    ],
    ids=["none", "two", "closed", "other-head-repo", "other-head-sha"],
)
@pytest.mark.usefixtures("node")
def test_no_comment_unless_exactly_one_open_pr_matches_the_head(
    tmp_path: Path, pulls: list[Any]
) -> None:
    calls = _run_comment(tmp_path, pulls=pulls, comments=[], report="x\n")
    assert _writes(calls) == []
    assert any(c[0] == "notice" for c in calls)


@pytest.mark.usefixtures("node")
def test_a_missing_report_still_gives_a_comment_pointing_at_the_run(tmp_path: Path) -> None:
    writes = _writes(_run_comment(tmp_path, pulls=[_pr(7)], comments=[], report=None))
    assert len(writes) == 1 and RUN["html_url"] in writes[0][2]


@pytest.mark.usefixtures("node")
@pytest.mark.parametrize("size", [64_999, 70_000, 300_000])
def test_long_reports_are_truncated_below_github_s_limit(tmp_path: Path, size: int) -> None:
    report = ("| row | 😀 |\n" * (size // 12 + 1))[:size]
    body = _writes(_run_comment(tmp_path, pulls=[_pr(7)], comments=[], report=report))[0][2]
    assert len(body) < 65536
    assert body.startswith(MARKER)
    body.encode("utf-8")  # raises on a lone surrogate (a split pair)
    assert "truncated" in body
