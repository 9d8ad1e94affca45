"""Git history: which commits touched an overlay since the commit evidence was signed at."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path


def _usable_commit(commit: str) -> bool:
    return bool(commit) and all(c in "0123456789abcdef" for c in commit.lower())


def git_commit_known(repo: Path, commit: str) -> bool:
    """True when `commit` is a commit in the history of `repo`."""
    if not _usable_commit(commit):
        return False
    try:
        known = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return known.returncode == 0


def git_commits_since(repo: Path, commit: str, paths: Sequence[str]) -> list[str] | None:
    """Commits since `commit` touching `paths` (`<short sha> <subject>`), None outside history."""
    if not git_commit_known(repo, commit):
        return None
    return _git_log_since(repo, commit, paths)


def _git_log_since(repo: Path, commit: str, paths: Sequence[str]) -> list[str] | None:
    """`git log` of `paths` since a commit already known to be in the history."""
    try:
        log = subprocess.run(
            ["git", "-C", str(repo), "log", "--format=%h %s", f"{commit}..HEAD", "--", *paths],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if log.returncode != 0:
        return None
    return [line for line in log.stdout.splitlines() if line.strip()]


def git_toplevel(path: Path) -> Path | None:
    """The work tree of the git repository containing `path`, or None outside one."""
    try:
        done = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None
