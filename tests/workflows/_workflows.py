"""Helpers for the workflow tests: load a workflow's YAML and raw text, find jobs and steps.

PyYAML reads YAML 1.1, where the bare key `on` is the boolean True; `triggers()` accepts both.
A folded `run: >-` block is one line after parsing, so `build_commands()` splits it with shlex.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
TEMPLATE = REPO / "docs" / "templates" / "evidence-repo-pages.yml"

#: `uses: owner/repo[/path]@<40 hex> # v1.2.3` (the comment names the release the SHA is).
PINNED_USES = re.compile(
    r"^\s*(?:-\s+)?uses:\s*(?P<action>[\w.-]+/[\w.-]+(?:/[\w./-]+)?)@(?P<sha>[0-9a-f]{40})"
    r"\s+#\s*(?P<version>v\d+(?:\.\d+){0,2})\s*$"
)
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*\S")


@dataclass(frozen=True)
class Workflow:
    """One workflow file: its path, raw text and parsed document."""

    path: Path
    text: str
    doc: dict[Any, Any]

    @property
    def name(self) -> str:
        return str(self.doc.get("name", ""))

    def triggers(self) -> dict[str, Any]:
        """The `on:` mapping (a bare string or list becomes a mapping of None values)."""
        raw = self.doc.get("on", self.doc.get(True))
        if isinstance(raw, str):
            return {raw: None}
        if isinstance(raw, list):
            return {str(item): None for item in raw}
        assert isinstance(raw, dict), f"{self.path.name}: `on:` is missing or not a mapping"
        return {str(key): value for key, value in raw.items()}

    def jobs(self) -> dict[str, dict[str, Any]]:
        jobs = self.doc.get("jobs")
        assert isinstance(jobs, dict) and jobs, f"{self.path.name}: no jobs"
        return jobs

    def job(self, name: str) -> dict[str, Any]:
        return self.jobs()[name]

    def steps(self, job: str) -> list[dict[str, Any]]:
        steps = self.job(job).get("steps")
        assert isinstance(steps, list), f"{self.path.name}: job {job} has no steps"
        return steps


def load(path: Path) -> Workflow:
    text = path.read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict), f"{path.name} is not a YAML mapping"
    return Workflow(path=path, text=text, doc=doc)


def workflow_files() -> list[Path]:
    """Every workflow this repository runs, plus the documented template."""
    return sorted(WORKFLOWS.glob("*.yml")) + sorted(WORKFLOWS.glob("*.yaml")) + [TEMPLATE]


def uses_of(step: dict[str, Any]) -> str:
    return str(step.get("uses", ""))


def action_of(step: dict[str, Any]) -> str:
    """`actions/cache/restore@<sha>` -> `actions/cache/restore`."""
    return uses_of(step).split("@", 1)[0]


def build_commands(run: str) -> list[list[str]]:
    """Every `evidence-dashboard build ...` command of a run script, as argv lists."""
    joined = run.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        if "evidence-dashboard build" not in line:
            continue
        argv = shlex.split(line, comments=True)
        start = argv.index("evidence-dashboard")
        commands.append(argv[start:])
    return commands


def option(argv: list[str], name: str) -> str | None:
    """The value after `name` in argv, or None."""
    for index, arg in enumerate(argv[:-1]):
        if arg == name:
            return argv[index + 1]
    return None
