"""`evidence-dashboard report`: exit codes (0 report, 1 --fail-on triggered, 2 errors) and the
"nothing affected" report, through click in-process over real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from tests.report.conftest import EPOCH, PrRepo, commit, git, init_repo, write


def args_for(recipes: Path, cache: Path, base: str, head: str, *extra: str) -> list[str]:
    return [
        "report",
        "--base",
        base,
        "--head",
        head,
        "--recipes",
        str(recipes),
        "--offline",
        "--oci-layout",
        str(recipes / "bundles"),
        "--quiet",
        "--trust-root",
        str(recipes / "trust" / "trusted_root.json"),
        "--cache",
        str(cache),
        *extra,
    ]


@pytest.fixture()
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    return CliRunner()


@pytest.mark.parametrize(
    ("fail_on", "code"), [(None, 0), ("none", 0), ("invalid", 1), ("stale", 1), ("any", 1)]
)
def test_fail_on_gate(
    pr_repo: PrRepo, runner: CliRunner, tmp_path: Path, fail_on: str | None, code: int
) -> None:
    extra = ("--fail-on", fail_on) if fail_on else ()
    result = runner.invoke(
        main, args_for(pr_repo.recipes, tmp_path, pr_repo.base, pr_repo.head, *extra)
    )
    assert result.exit_code == code, (result.stderr, repr(result.exception))
    assert result.stdout.startswith("<!-- recipe-evidence-gate -->"), result.stderr


def test_json_format_carries_exit(pr_repo: PrRepo, runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        main,
        args_for(
            pr_repo.recipes,
            tmp_path,
            pr_repo.base,
            pr_repo.head,
            "--format",
            "json",
            "--fail-on",
            "any",
        ),
    )
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["exit"] == 1 and doc["warnings"]["total"] > 0


def test_bad_revision_is_exit_2(pr_repo: PrRepo, runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        main, args_for(pr_repo.recipes, tmp_path, "no-such-branch", pr_repo.head)
    )
    assert result.exit_code == 2
    option_like = runner.invoke(
        main, args_for(pr_repo.recipes, tmp_path, "--output=x", pr_repo.head)
    )
    assert option_like.exit_code == 2


def test_outside_a_checkout_is_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    (recipes / "evidence").mkdir(parents=True)
    (recipes / "bundles").mkdir()
    (recipes / "trust").mkdir()
    (recipes / "trust" / "trusted_root.json").write_text("{}", encoding="utf-8")
    result = runner.invoke(
        main, args_for(recipes, tmp_path / "c", "HEAD~1", "HEAD", "--format", "json")
    )
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["exit"] == 2 and "git" in doc["message"]


def test_change_outside_recipes_affects_nothing(runner: CliRunner, tmp_path: Path) -> None:
    repo = init_repo(tmp_path)
    base = commit(repo, "base")
    write(repo / "README.md", "changed\n")
    head = commit(repo, "docs only")
    result = runner.invoke(
        main, args_for(repo / "recipes", tmp_path / "c", base, head, "--fail-on", "any")
    )
    assert result.exit_code == 0, result.output
    assert "No leaf overlays affected by this PR." in result.stdout
    assert "How to refresh evidence" not in result.stdout


def test_base_yaml_promotes_every_leaf(runner: CliRunner, tmp_path: Path) -> None:
    repo = init_repo(tmp_path)
    base = commit(repo, "base")
    write(
        repo / "recipes" / "overlays" / "base.yaml",
        "kind: RecipeMetadata\nmetadata:\n  name: base\nspec: {}\n",
    )
    head = commit(repo, "base.yaml")
    result = runner.invoke(
        main, args_for(repo / "recipes", tmp_path / "c", base, head, "--format", "json")
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["broadImpact"] is True
    leaves = {p.stem for p in (repo / "recipes" / "overlays").glob("*.yaml")} - {
        "base",
        "eks",
        "gb300-any",
    }
    assert {a["recipe"] for a in doc["affected"]} == leaves
    assert git(repo, "status", "--porcelain") == ""  # the report never touches the checkout


def test_three_dot_diff_ignores_changes_on_the_base_branch(
    runner: CliRunner, tmp_path: Path
) -> None:
    repo = init_repo(tmp_path)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    write(repo / "recipes" / "mixins" / "os-ubuntu.yaml", "kind: RecipeMixin\nspec: {}\n")
    commit(repo, "pr: mixin")
    git(repo, "checkout", "-q", "main")
    k0s = repo / "recipes" / "overlays" / "h200-k0s-ubuntu-training.yaml"
    k0s.write_text(k0s.read_text(encoding="utf-8") + "extra: true\n", encoding="utf-8")
    commit(repo, "main moved on")
    result = runner.invoke(
        main, args_for(repo / "recipes", tmp_path / "c", "main", "pr", "--format", "json")
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["mergeBase"] != doc["base"]
    assert [a["recipe"] for a in doc["affected"]] == ["h100-eks-ubuntu-inference"]
