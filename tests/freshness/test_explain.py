"""Why stale evidence is stale: the capped canonical diff and the overlay's commits since then."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from generator.freshness import StaleExplainer, git_toplevel, overlay_file
from generator.model import Canonicalizer

SIGNED = b"""apiVersion: aicr.run/v1
kind: RecipeResult
criteria:
    service: eks
componentRefs:
    - name: gpu-operator
      version: v25.3.0
"""
CURRENT = SIGNED.replace(b"v25.3.0", b"v25.10.0")
NAME = "h100-eks-training"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose overlay changed after the first commit; returns (recipes, first)."""
    recipes = tmp_path / "repo" / "recipes"
    (recipes / "overlays").mkdir(parents=True)
    overlay = recipes / "overlays" / f"{NAME}.yaml"
    overlay.write_bytes(SIGNED)
    _git(recipes, "init", "-q")
    _git(recipes, "add", ".")
    _git(recipes, "commit", "-q", "-m", "add recipe")
    first = _git(recipes, "rev-parse", "HEAD")
    (recipes / "README").write_text("unrelated\n")
    _git(recipes, "add", ".")
    _git(recipes, "commit", "-q", "-m", "unrelated change")
    overlay.write_bytes(CURRENT)
    _git(recipes, "commit", "-q", "-am", "bump gpu-operator")
    return recipes, first


def test_diff_names_the_changed_lines(tmp_path: Path) -> None:
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    (overlays / f"{NAME}.yaml").write_bytes(CURRENT)
    why = StaleExplainer(overlays).explain(NAME, None, SIGNED, Canonicalizer.V3, None)
    assert any(line.startswith("-") and "v25.3.0" in line for line in why.diff)
    assert any(line.startswith("+") and "v25.10.0" in line for line in why.diff)
    assert why.commits is None and not why.truncated


def test_diff_is_capped(tmp_path: Path) -> None:
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    (overlays / f"{NAME}.yaml").write_bytes(CURRENT)
    why = StaleExplainer(overlays, limit=3).explain(NAME, None, SIGNED, Canonicalizer.V3, None)
    assert len(why.diff) == 3 and why.truncated


def test_the_default_cap_is_200_lines_and_a_diff_at_its_cap_is_whole(tmp_path: Path) -> None:
    """A hostile overlay can make the diff as long as it likes; the page shows 200 lines."""
    parts = [b"apiVersion: aicr.run/v1\nkind: RecipeResult\ncomponentRefs:\n"]
    parts += [b"    - name: c%d\n      version: v1.%d.0\n" % (n, n) for n in range(150)]
    signed = b"".join(parts)
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    (overlays / f"{NAME}.yaml").write_bytes(signed.replace(b".0\n", b".9\n"))

    def explain(**limit: int) -> tuple[int, bool]:
        why = StaleExplainer(overlays, **limit).explain(NAME, None, signed, Canonicalizer.V3, None)
        return len(why.diff), why.truncated

    whole, cut = explain(limit=100_000)
    assert whole > 201 and not cut
    assert explain() == (200, True)
    assert explain(limit=whole) == (whole, False)
    assert explain(limit=whole - 1) == (whole - 1, True)


@pytest.mark.parametrize(
    ("files", "profile", "expect"),
    [
        (
            ["r-gpustack-oci-managed.yaml", "r.yaml"],
            "gpuStack=oci-managed",
            "r-gpustack-oci-managed.yaml",
        ),
        (["r.yaml"], "gpuStack=oci-managed", "r.yaml"),
        (["r.yaml"], None, None),
        ([], None, None),
    ],
)
def test_overlay_file_prefers_the_profiled_name(
    tmp_path: Path, files: list[str], profile: str | None, expect: str | None
) -> None:
    for name in files:
        (tmp_path / name).write_bytes(SIGNED)
    recipe = "r-gpustack-oci-managed"
    found = overlay_file(tmp_path, recipe, profile)
    assert (found.name if found else None) == expect


def test_missing_or_unreadable_overlay_gives_an_empty_diff(tmp_path: Path) -> None:
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    assert StaleExplainer(overlays).explain(NAME, None, SIGNED, Canonicalizer.V3, "ab").diff == ()
    (overlays / f"{NAME}.yaml").write_bytes(b"a: [unclosed\n")
    assert StaleExplainer(overlays).explain(NAME, None, SIGNED, Canonicalizer.V3, None).diff == ()


@needs_git
def test_commits_since_the_attested_commit_touch_the_overlay(tmp_path: Path) -> None:
    recipes, first = _repo(tmp_path)
    explainer = StaleExplainer.for_recipes(recipes)
    assert explainer.repo is not None
    why = explainer.explain(NAME, None, SIGNED, Canonicalizer.V3, first)
    assert why.commits is not None and len(why.commits) == 1
    assert why.commits[0].endswith("bump gpu-operator")


@needs_git
@pytest.mark.parametrize("commit", ["0" * 40, "not-a-sha", ""])
def test_commit_outside_history_gives_none(tmp_path: Path, commit: str) -> None:
    recipes, _ = _repo(tmp_path)
    why = StaleExplainer.for_recipes(recipes).explain(
        NAME, None, SIGNED, Canonicalizer.V3, commit or None
    )
    assert why.commits is None and why.diff


@needs_git
def test_no_repository_means_no_commits(tmp_path: Path) -> None:
    assert git_toplevel(tmp_path) is None or not (tmp_path / ".git").exists()
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    (overlays / f"{NAME}.yaml").write_bytes(CURRENT)
    why = StaleExplainer(overlays, repo=None).explain(NAME, None, SIGNED, Canonicalizer.V3, "ab")
    assert why.commits is None


@pytest.mark.parametrize("commits", [None, ("abc1234 bump gpu-operator",)])
def test_explanation_in_pointers_json_matches_the_schema(commits: tuple[str, ...] | None) -> None:
    import json

    import jsonschema

    from generator.data import (
        FreshnessExplanation,
        FreshnessInfo,
        PointerRecord,
        pointers_document,
        schema_text,
    )
    from generator.model import Freshness, PointerLocation, RejectedPointer

    why = FreshnessExplanation(diff=("--- signed", "+++ current", "-a", "+b"), commits=commits)
    record = PointerRecord(
        RejectedPointer(PointerLocation("evidence/r/s/sha256-1.yaml", "r", "s"), "x", "m", "h"),
        freshness=FreshnessInfo(Freshness.STALE, "a" * 64, "b" * 64, "native", why),
    )
    doc = pointers_document(
        [
            record,
            PointerRecord(
                RejectedPointer(
                    PointerLocation("evidence/r/s/sha256-2.yaml", "r", "s"), "x", "m", "h"
                )
            ),
        ]
    )
    jsonschema.Draft202012Validator(json.loads(schema_text("pointers.schema.json"))).validate(doc)
    first, second = (p["freshness"] for p in doc["pointers"])
    assert first["explanation"] == {
        "diff": list(why.diff),
        "truncated": False,
        "commits": None if commits is None else list(commits),
    }
    assert second["explanation"] is None
