"""The affected-recipe walk (aicr-dashboard 4.2, 4.3) as a truth table over small overlay sets,
and over the real aicr overlays with their spec.base chains, mixins and values files."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.report.affected import (
    Overlay,
    affected_recipes,
    ancestors,
    overlay_from_doc,
    pointer_overlay,
)
from generator.report.run import load_overlays
from tests._support import fixtures_dir


def ov(
    name: str,
    base: str | None = None,
    *,
    service: str = "eks",
    accelerator: str = "h100",
    mixins: tuple[str, ...] = (),
    values: tuple[str, ...] = (),
) -> Overlay:
    return Overlay(name, base, mixins, values, service, accelerator)


OVERLAYS = {
    o.name: o
    for o in (
        ov("base", service="", accelerator=""),
        ov("eks", accelerator="", values=("components/efa/values.yaml",)),
        ov("eks-training", "eks", accelerator="", mixins=("os-ubuntu",)),
        ov("h100-eks-training", "eks-training"),
        ov("h100-eks-ubuntu-training-kubeflow", "h100-eks-training", mixins=("platform-kubeflow",)),
        ov("gb300-any", service="any", accelerator="gb300"),
        ov("aks-h100", service="aks", values=("components/aks/values.yaml",)),
    )
}
LEAVES_BELOW_EKS = {"h100-eks-training", "h100-eks-ubuntu-training-kubeflow"}


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        ("overlays/h100-eks-ubuntu-training-kubeflow.yaml", {"h100-eks-ubuntu-training-kubeflow"}),
        ("overlays/h100-eks-training.yaml", LEAVES_BELOW_EKS),
        ("overlays/eks.yaml", LEAVES_BELOW_EKS),
        ("mixins/os-ubuntu.yaml", LEAVES_BELOW_EKS),
        ("mixins/platform-kubeflow.yaml", {"h100-eks-ubuntu-training-kubeflow"}),
        ("components/efa/values.yaml", LEAVES_BELOW_EKS),
        ("components/aks/values.yaml", {"aks-h100"}),
        ("overlays/base.yaml", LEAVES_BELOW_EKS | {"aks-h100"}),
        ("overlays/gb300-any.yaml", set()),
        ("registry.yaml", set()),
        ("components/unused/values.yaml", set()),
    ],
)
def test_walk_truth_table(changed: str, expected: set[str]) -> None:
    result = affected_recipes([changed], OVERLAYS, OVERLAYS, {})
    assert set(result.recipes) == expected
    assert result.broad is (changed == "overlays/base.yaml")
    covered = not any(path == changed for path, _ in result.not_covered)
    assert covered is bool(expected)


def test_pointer_and_allowlist_rules() -> None:
    result = affected_recipes(
        ["evidence/aks-h100/abc/sha256-1.yaml"],
        OVERLAYS,
        OVERLAYS,
        {"evidence/aks-h100/abc/sha256-1.yaml": "aks-h100"},
        {"h100-eks-training": ["x added as partner"]},
    )
    assert result.reasons == {
        "aks-h100": ("evidence pointer changed",),
        "h100-eks-training": ("allowlist: x added as partner",),
    }
    assert result.not_covered == ()


def test_deleted_leaf_is_still_affected() -> None:
    head = {k: v for k, v in OVERLAYS.items() if k != "aks-h100"}
    result = affected_recipes(["overlays/aks-h100.yaml"], head, OVERLAYS, {})
    assert result.reasons == {"aks-h100": ("overlay removed",)}


def test_cycle_guard() -> None:
    loop = {"a": ov("a", "b"), "b": ov("b", "a")}
    assert ancestors("a", loop) == ("b",)
    assert set(affected_recipes(["overlays/b.yaml"], loop, loop, {}).recipes) == {"a", "b"}


@pytest.mark.parametrize(
    ("path", "profile", "expected"),
    [
        ("evidence/h100-eks/src/sha256-1.yaml", None, ("h100-eks", True)),
        ("evidence/h100-eks.yaml", None, ("h100-eks", True)),
        (
            "evidence/gb200-gke-gpustack-bundle-installer/s/f.yaml",
            "gpuStack=bundle-installer",
            ("gb200-gke", True),
        ),
        (
            "evidence/gb200-gke-gpustack-bundle-installer/s/f.yaml",
            "gpuStack=other",
            ("gb200-gke-gpustack-bundle-installer", False),
        ),
        ("evidence/h100-gke/s/f.yaml", None, ("h100-gke", False)),
    ],
)
def test_pointer_maps_back_through_profile(
    path: str, profile: str | None, expected: tuple[str, bool]
) -> None:
    assert pointer_overlay(path, profile, ["h100-eks", "gb200-gke"]) == expected


def test_recipe_result_has_no_chain_but_is_a_leaf() -> None:
    doc = {
        "kind": "RecipeResult",
        "criteria": {"service": "eks", "accelerator": "h100"},
        "componentRefs": [{"name": "x", "valuesFile": "./components/x/values.yaml"}],
    }
    overlay = overlay_from_doc("h100-eks", doc)
    assert overlay.leaf and overlay.base is None
    assert overlay.values_files == ("components/x/values.yaml",)


@pytest.mark.fixtures
def test_real_aicr_overlays() -> None:
    root = fixtures_dir()
    if root is None:
        pytest.skip("../shared/fixtures is absent")
    recipes = root / "aicr-tree" / "upstream" / "recipes"
    overlays = load_overlays(recipes)
    assert not overlays["gb300-any"].leaf and not overlays["base"].leaf
    chain = ancestors("h100-eks-ubuntu-inference-dynamo", overlays)
    assert chain[0] == "h100-eks-ubuntu-inference" and "eks" in chain
    mixin = affected_recipes(["mixins/platform-kubeflow.yaml"], overlays, overlays, {})
    assert "h100-aks-ubuntu-training-kubeflow" in mixin.recipes
    assert all(overlays[r].leaf for r in mixin.recipes)
    values = affected_recipes(["components/aws-efa/values.yaml"], overlays, overlays, {})
    assert values.recipes and all(overlays[r].service == "eks" for r in values.recipes)
    broad = affected_recipes(["overlays/base.yaml"], overlays, overlays, {})
    assert set(broad.recipes) == {n for n, o in overlays.items() if o.leaf}
    # every per-digest upstream pointer folder maps back to an overlay or is reported orphan
    for folder in sorted(p for p in (recipes / "evidence").iterdir() if p.is_dir()):
        name, _exists = pointer_overlay(
            f"evidence/{folder.name}/s/f.yaml", "gpuStack=bundle-installer", overlays
        )
        assert name and "/" not in name


def test_overlays_loader_skips_broken_yaml(tmp_path: Path) -> None:
    (tmp_path / "overlays").mkdir()
    (tmp_path / "overlays" / "bad.yaml").write_text("a: [\n", encoding="utf-8")
    (tmp_path / "overlays" / "ok.yaml").write_text(
        "spec:\n  criteria: {service: eks, accelerator: h100}\n", encoding="utf-8"
    )
    found = load_overlays(tmp_path)
    assert found["ok"].leaf and not found["bad"].leaf
