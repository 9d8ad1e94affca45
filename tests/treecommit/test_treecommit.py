"""The evidence tree's commit is read from git when the tree is a clean checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from generator.build import BuildOptions
from generator.treecommit import tree_commit


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _checkout(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    tree = repo / "recipes"
    (tree / "evidence").mkdir(parents=True)
    (tree / "evidence" / "allowlist.yaml").write_text("sources: []\n", encoding="utf-8")
    _git(repo.parent, "init", "-q", str(repo))
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "tree")
    return tree, _git(repo, "rev-parse", "HEAD")


def test_a_clean_checkout_names_its_head(tmp_path: Path) -> None:
    tree, head = _checkout(tmp_path)
    assert tree_commit(tree) == head
    options = BuildOptions.from_cli({"recipes": str(tree)})
    assert options.tree.commit == head


def test_an_explicit_commit_wins(tmp_path: Path) -> None:
    tree, _ = _checkout(tmp_path)
    options = BuildOptions.from_cli({"recipes": str(tree), "commit": "abc123"})
    assert options.tree.commit == "abc123"


def test_a_dirty_tree_or_no_checkout_has_no_commit(tmp_path: Path) -> None:
    tree, _ = _checkout(tmp_path)
    (tree / "evidence" / "new.yaml").write_text("x: 1\n", encoding="utf-8")
    assert tree_commit(tree) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert tree_commit(plain) is None
    assert tree_commit(tmp_path / "missing") is None
