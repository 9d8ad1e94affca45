"""The evidence tree's commit, read from git when the tree is a checkout (no `--commit`).

A site built from a git checkout should name the commit it shows (footer, About page,
manifest) instead of "commit unknown". The commit is taken only when git answers and the
tree has no uncommitted or untracked change: a dirty tree is not that commit, so it keeps
no commit rather than a misleading one. Any failure (no git, not a checkout, a timeout)
also means no commit; it never stops a build.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

__all__ = ["tree_commit"]

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _git(tree: Path, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(tree), *args],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def tree_commit(tree: Path) -> str | None:
    """HEAD of the checkout holding `tree` when the tree is clean there, else None."""
    if not tree.is_dir():
        return None
    head = _git(tree, "rev-parse", "--verify", "--quiet", "HEAD")
    if head is None or not _SHA.fullmatch(head.strip()):
        return None
    status = _git(tree, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    if status is None or status.strip():
        return None
    return head.strip()
