"""Supply-chain hygiene of the workflows: zizmor (offline) finds nothing unexplained, and
Dependabot watches the SHA-pinned actions and the pip dependencies."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.workflows._workflows import PINNED_USES, REPO, WORKFLOWS

DEPENDABOT = REPO / ".github" / "dependabot.yml"
IGNORE = re.compile(r"#\s*zizmor:\s*ignore\[(?P<rules>[\w,\s-]+)\](?P<reason>.*)$")


def _dependabot() -> dict[str, Any]:
    doc = yaml.safe_load(DEPENDABOT.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def test_dependabot_watches_actions_and_pip() -> None:
    doc = _dependabot()
    assert doc["version"] == 2
    updates = {u["package-ecosystem"]: u for u in doc["updates"]}
    assert set(updates) == {"github-actions", "pip"}
    for update in updates.values():
        assert update["directory"] == "/"
        assert update["schedule"]["interval"] in {"daily", "weekly", "monthly"}


def test_every_action_dependabot_watches_is_sha_pinned() -> None:
    """Dependabot bumps SHA pins and their version comments only when both are present."""
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.match(r"^\s*(?:-\s+)?uses:\s*[\w.-]+/", line):
                assert PINNED_USES.match(line), f"{path.name}: {line.strip()}"


def test_every_zizmor_ignore_names_a_rule_and_a_reason() -> None:
    found = 0
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "zizmor:" not in line:
                continue
            match = IGNORE.search(line)
            assert match, f"{path.name}: malformed zizmor comment: {line.strip()}"
            assert len(match["reason"].strip()) >= 10, f"{path.name}: no reason: {line.strip()}"
            found += 1
    assert found == 1  # dangerous-triggers on the workflow_run comment workflow, explained


def _zizmor() -> str:
    """The lint extra's zizmor (beside this interpreter), else one on PATH. Under CI=true a
    missing zizmor fails: the lint extra installs it."""
    beside = Path(sys.executable).parent / "zizmor"
    found = str(beside) if beside.is_file() else shutil.which("zizmor")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("zizmor is missing: `make venv` installs it with the lint extra")
        pytest.skip("zizmor is not installed (pip install zizmor; it runs offline)")
    return found


@pytest.mark.parametrize(
    "target",
    [WORKFLOWS, REPO / "docs" / "templates" / "evidence-repo-pages.yml"],
    ids=["workflows", "template"],
)
def test_zizmor_offline_reports_nothing(target: Path) -> None:
    done = subprocess.run(
        [_zizmor(), "--offline", "--format", "plain", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr
