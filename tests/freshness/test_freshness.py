"""Digest freshness: fresh, stale and unknown for each provider, per predicate type and profile."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.freshness import (
    AicrProvider,
    DigestsFileProvider,
    NativeProvider,
    canonical_diff,
    compare,
    git_commits_since,
    providers_for,
)
from generator.model import Canonicalizer, Freshness, PredicateType
from generator.recipe.canonical import recipe_digest

RECIPE = b"""apiVersion: aicr.run/v1
kind: RecipeResult
criteria:
    accelerator: h100
    intent: training
    service: eks
metadata:
    version: v0.14.2
componentRefs:
    - name: gpu-operator
      version: v25.3.0
"""
NAME = "h100-eks-training"


def _overlays(tmp_path: Path, text: bytes = RECIPE, name: str = NAME) -> Path:
    overlays = tmp_path / "overlays"
    overlays.mkdir(exist_ok=True)
    (overlays / f"{name}.yaml").write_bytes(text)
    return overlays


@pytest.mark.parametrize("ptype", list(PredicateType))
def test_native_fresh_and_stale_per_predicate_type(tmp_path: Path, ptype: PredicateType) -> None:
    overlays = _overlays(tmp_path)
    signed = recipe_digest(RECIPE, ptype.canonicalizer)
    fresh = compare(signed, ptype, NAME, None, [NativeProvider(overlays)])
    assert fresh.state is Freshness.FRESH and fresh.provider == "native"
    assert fresh.describe() == "fresh"
    changed = RECIPE.replace(b"v25.3.0", b"v25.10.0")
    _overlays(tmp_path, changed)
    stale = compare(signed, ptype, NAME, None, [NativeProvider(overlays)])
    assert stale.state is Freshness.STALE
    assert stale.current == recipe_digest(changed, ptype.canonicalizer)
    assert stale.describe() == f"stale ({signed[:12]}… vs current {stale.current[:12]}…)"


def test_v3_ignores_metadata_version_but_legacy_does_not(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path, RECIPE.replace(b"v0.14.2", b"v0.15.0"))
    legacy_signed = recipe_digest(RECIPE, Canonicalizer.LEGACY)
    v3_signed = recipe_digest(RECIPE, Canonicalizer.V3)
    provider = [NativeProvider(overlays)]
    assert compare(v3_signed, PredicateType.V3, NAME, None, provider).state is Freshness.FRESH
    assert compare(legacy_signed, PredicateType.V1, NAME, None, provider).state is Freshness.STALE


def test_native_needs_a_hydrated_recipe_result(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path, RECIPE.replace(b"RecipeResult", b"RecipeMetadata"))
    result = compare("a" * 64, PredicateType.V3, NAME, None, [NativeProvider(overlays)])
    assert result.state is Freshness.UNKNOWN and result.provider is None
    assert result.describe() == "unknown"


@pytest.mark.parametrize("recipe", ["../escape", "a/b", "", ".."])
def test_native_never_builds_a_path_from_a_bad_name(tmp_path: Path, recipe: str) -> None:
    assert NativeProvider(_overlays(tmp_path)).current(recipe, None, Canonicalizer.V3) is None


def test_missing_overlay_is_unknown_never_fresh(tmp_path: Path) -> None:
    result = compare("b" * 64, PredicateType.V3, "nope", None, [NativeProvider(tmp_path)])
    assert result.state is Freshness.UNKNOWN


def test_digests_file_beats_native(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    signed = recipe_digest(RECIPE, Canonicalizer.V3)
    table = tmp_path / "digests.json"
    table.write_text(json.dumps({NAME: {"legacy": "c" * 64, "v3": signed}}))
    providers = [DigestsFileProvider.load(table), NativeProvider(overlays)]
    v3 = compare(signed, PredicateType.V3, NAME, None, providers)
    assert (v3.state, v3.provider) == (Freshness.FRESH, "digests-file")
    legacy = compare(
        recipe_digest(RECIPE, Canonicalizer.LEGACY), PredicateType.V1, NAME, None, providers
    )
    assert (legacy.state, legacy.current) == (Freshness.STALE, "c" * 64)


def test_digests_file_yaml_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "d.yaml"
    good.write_text(f"{NAME}:\n  v3: {'d' * 64}\n")
    assert DigestsFileProvider.load(good).current(NAME, None, Canonicalizer.V3) == "d" * 64
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"{NAME}:\n  v3: not-hex\n")
    with pytest.raises(InputError) as err:
        DigestsFileProvider.load(bad)
    assert f"{NAME}.v3" in err.value.diagnostics()


def _fake_aicr(tmp_path: Path, digest: str, log: Path) -> Path:
    script = tmp_path / "bin" / "aicr"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\necho "$@" >> {log}\necho {digest}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_aicr_provider_strips_the_profile_suffix_and_passes_the_profile(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path, name="gb200-gke-cos-training")
    log = tmp_path / "calls.txt"
    aicr = _fake_aicr(tmp_path, "e" * 64, log)
    recipe = "gb200-gke-cos-training-gpustack-bundle-installer"
    result = compare(
        "e" * 64,
        PredicateType.V3,
        recipe,
        "gpuStack=bundle-installer",
        [AicrProvider(aicr, overlays)],
    )
    assert (result.state, result.provider) == (Freshness.FRESH, "aicr")
    call = log.read_text()
    assert "evidence digest -r" in call and "gb200-gke-cos-training.yaml" in call
    assert "--profile gpuStack=bundle-installer" in call


def test_aicr_provider_on_path_and_wrong_suffix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlays = _overlays(tmp_path, name="h100-eks-training")
    aicr = _fake_aicr(tmp_path, "f" * 64, tmp_path / "log")
    monkeypatch.setenv("PATH", f"{aicr.parent}{os.pathsep}{os.environ['PATH']}")
    provider = AicrProvider(aicr, overlays)
    assert provider.current(NAME, "gpuStack=x", Canonicalizer.V3) is None  # suffix absent
    assert provider.current(NAME, None, Canonicalizer.LEGACY) is None  # aicr digests are v3
    assert provider.current(NAME, None, Canonicalizer.V3) == "f" * 64
    chain = providers_for(tmp_path, digests=None, aicr=aicr)
    assert [p.name for p in chain] == ["aicr", "native"]


def test_aicr_provider_failure_is_unknown(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    broken = _fake_aicr(tmp_path, "not-a-digest", tmp_path / "log")
    assert AicrProvider(broken, overlays).current(NAME, None, Canonicalizer.V3) is None


def test_canonical_diff_names_the_change() -> None:
    lines = canonical_diff(RECIPE, RECIPE.replace(b"v25.3.0", b"v25.10.0"), Canonicalizer.V3)
    assert any(line.startswith("-") and "v25.3.0" in line for line in lines)
    assert any(line.startswith("+") and "v25.10.0" in line for line in lines)


def test_git_commits_since(tmp_path: Path) -> None:
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args],
            check=True,
            capture_output=True,
            text=True,
            env={
                **os.environ,
                "GIT_AUTHOR_NAME": "t",
                "GIT_AUTHOR_EMAIL": "t@e",
                "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@e",
            },
        ).stdout

    git("init", "-q")
    (tmp_path / "r.yaml").write_text("a: 1\n")
    git("add", ".")
    git("commit", "-qm", "first")
    base = git("rev-parse", "HEAD").strip()
    (tmp_path / "r.yaml").write_text("a: 2\n")
    (tmp_path / "other.yaml").write_text("b: 1\n")
    git("add", ".")
    git("commit", "-qm", "bump the recipe")
    commits = git_commits_since(tmp_path, base, ["r.yaml"])
    assert commits is not None and len(commits) == 1 and commits[0].endswith("bump the recipe")
    assert git_commits_since(tmp_path, "0" * 40, ["r.yaml"]) is None
    assert git_commits_since(tmp_path, "not-hex", ["r.yaml"]) is None
