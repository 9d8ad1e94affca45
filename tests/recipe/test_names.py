"""Recipe names, profile grammar, board coordinates and registry order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.errors import InputError, InternalError
from generator.recipe.names import (
    ACCELERATOR_ORDER,
    INTENT_ORDER,
    OS_ORDER,
    PLATFORM_ORDER,
    SERVICE_ORDER,
    Coordinate,
    CoordinateError,
    ProfileError,
    coordinate_for,
    criteria_from_coordinate,
    parse_profile,
    profile_segment,
    profile_selection_for,
    recipe_name_for,
    sort_key,
)

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
_GOLDEN = FIXTURES / "aicr-tree" / "testdata" / "golden-coordinates.json"


def _golden() -> list[Any]:
    if not _GOLDEN.is_file():
        return [pytest.param(None, id="golden-missing")]
    vectors = json.loads(_GOLDEN.read_text(encoding="utf-8"))["vectors"]
    return [pytest.param(vector, id=vector["name"]) for vector in vectors]


# --------------------------------------------------------------------------- profiles


@pytest.mark.parametrize(
    ("selection", "parsed"),
    [
        ("gpuStack=bundle-installer", ("gpuStack", "bundle-installer")),
        ("gpuStack=operator-managed", ("gpuStack", "operator-managed")),
        ("a=b", ("a", "b")),
        ("A.b_c-9=X.y_z-0", ("A.b_c-9", "X.y_z-0")),
        ("gpu-stack=operator", ("gpu-stack", "operator")),
        ("", None),
        ("gpuStack", None),
        ("=value", None),
        ("name=", None),
        ("a=b=c", None),
        (" a=b", None),
        ("a=b ", None),
        ("a =b", None),
        ("a= b", None),
        ("a=b\n", None),
        ("a/b=c", None),
        ("a=b:c", None),
        ("gpuStack=büNDLE", None),
    ],
)
def test_profile_grammar(selection: str, parsed: tuple[str, str] | None) -> None:
    if parsed is None:
        with pytest.raises(ProfileError) as caught:
            parse_profile(selection)
        assert isinstance(caught.value, InputError)
        with pytest.raises(ProfileError):
            profile_segment(selection)
    else:
        assert parse_profile(selection) == parsed
        assert profile_segment(selection) == f"{parsed[0].lower()}-{parsed[1].lower()}"


def test_segments_are_lossy_and_can_collide() -> None:
    assert profile_segment("gpu-stack=operator") == profile_segment("gpu=stack-operator")
    assert profile_segment("GpuStack=Operator") == profile_segment("gpustack=operator")


# --------------------------------------------------------------------------- names

_GB200 = {
    "accelerator": "gb200",
    "service": "gke",
    "os": "cos",
    "intent": "training",
    "platform": "slurm",
}


def _recipe(criteria: dict[str, Any] | None, profile: Any = None, **extra: Any) -> dict[str, Any]:
    recipe: dict[str, Any] = {"kind": "RecipeResult", **extra}
    if criteria is not None:
        recipe["criteria"] = criteria
    if profile is not None:
        recipe["metadata"] = {"version": "v0.9.0", "selectedProfile": profile}
    return recipe


@pytest.mark.parametrize(
    ("recipe", "name"),
    [
        (
            _recipe(_GB200, {"name": "gpuStack", "value": "bundle-installer"}),
            "gb200-gke-cos-training-slurm-gpustack-bundle-installer",
        ),
        (
            _recipe(
                {"accelerator": "gb300", "service": "generic", "os": "ubuntu", "intent": "training"}
            ),
            "gb300-generic-ubuntu-training",
        ),
        (
            _recipe(
                {"accelerator": "h100", "service": "aks", "os": "ubuntu", "intent": "training"},
                {"name": "gpuStack", "value": "operator-managed", "advertiser": ""},
            ),
            "h100-aks-ubuntu-training-gpustack-operator-managed",
        ),
        (
            _recipe(
                {"service": "eks", "intent": "training", "os": "ubuntu", "accelerator": "h100"}
            ),
            "h100-eks-ubuntu-training",
        ),
        (_recipe({"accelerator": "a100", "service": "any", "os": "any", "intent": "any"}), "a100"),
        (
            _recipe(
                {
                    "accelerator": "h100",
                    "service": "kind",
                    "os": "",
                    "intent": "training",
                    "platform": "any",
                }
            ),
            "h100-kind-training",
        ),
        (_recipe({}), "recipe"),
        (_recipe({"accelerator": "any", "platform": ""}), "recipe"),
        (_recipe({}, {"name": "gpuStack", "value": "x"}), "recipe-gpustack-x"),
        (_recipe(None), ""),
        (_recipe(None, {"name": "gpuStack", "value": "x"}), ""),
        (_recipe(_GB200, {"name": "gpu Stack", "value": "x"}), ""),
        (_recipe(_GB200, {"name": "gpuStack"}), ""),
        (_recipe(_GB200, {}), ""),
        (_recipe(_GB200, "gpuStack=x"), ""),
        ({"criteria": "h100"}, ""),
    ],
)
def test_recipe_name_for(recipe: dict[str, Any], name: str) -> None:
    assert recipe_name_for(recipe) == name


@pytest.mark.parametrize(
    ("recipe", "selection"),
    [
        (
            _recipe(_GB200, {"name": "gpuStack", "value": "Bundle-Installer"}),
            "gpuStack=Bundle-Installer",
        ),
        (_recipe(_GB200), ""),
        ({"metadata": {"version": "v1"}}, ""),
        ({"metadata": None}, ""),
        ({"metadata": {"selectedProfile": None}}, ""),
    ],
)
def test_profile_selection_for(recipe: dict[str, Any], selection: str) -> None:
    assert profile_selection_for(recipe) == selection


# --------------------------------------------------------------------------- coordinates


@pytest.mark.fixtures
@pytest.mark.parametrize("vector", _golden())
def test_golden_coordinates(vector: dict[str, Any] | None) -> None:
    if vector is None:
        pytest.skip("golden-coordinates.json is not available")
    coordinate = coordinate_for(vector["criteria"])
    assert coordinate == Coordinate(**vector["coordinate"])
    assert coordinate.path == vector["path"]
    assert vector["url"].endswith("#/" + coordinate.path)
    back = criteria_from_coordinate(coordinate, None)
    assert coordinate_for(back) == coordinate


@pytest.mark.parametrize(
    ("criteria", "segment", "path"),
    [
        (
            {"service": "eks", "accelerator": "rtx-pro-6000", "os": "ubuntu", "intent": "training"},
            None,
            "eks/rtx-pro-6000-ubuntu/training",
        ),
        (
            {
                "service": "eks",
                "accelerator": "h200",
                "os": "any",
                "intent": "training",
                "platform": "kubeflow",
            },
            None,
            "eks/h200-any/training-kubeflow",
        ),
        (
            {"service": "kind", "accelerator": "h100", "intent": "training"},
            None,
            "kind/h100-any/training",
        ),
        (
            {"service": "aks", "accelerator": "h100", "os": "ubuntu", "intent": "training"},
            "gpustack-operator-managed",
            "aks/h100-ubuntu/training-gpustack-operator-managed",
        ),
        (
            {
                "service": "gke",
                "accelerator": "h100",
                "os": "cos",
                "intent": "inference",
                "platform": "dynamo",
            },
            "gpustack-gcp-managed",
            "gke/h100-cos/inference-dynamo-gpustack-gcp-managed",
        ),
        (
            {
                "service": "gke",
                "accelerator": "gb200",
                "os": "cos",
                "intent": "training",
                "platform": "any",
            },
            None,
            "gke/gb200-cos/training",
        ),
    ],
)
def test_coordinate_for(criteria: dict[str, str], segment: str | None, path: str) -> None:
    assert coordinate_for(criteria, segment).path == path


@pytest.mark.parametrize(
    ("criteria", "dimension"),
    [
        ({"service": "any", "accelerator": "a100", "intent": "training"}, "service"),
        ({"service": "", "accelerator": "a100", "intent": "training"}, "service"),
        ({"accelerator": "a100", "intent": "training"}, "service"),
        ({"service": "eks", "accelerator": "any", "intent": "training"}, "accelerator"),
        ({"service": "eks", "accelerator": "h100", "intent": "any"}, "intent"),
        ({"service": "eks", "accelerator": "h100", "intent": ""}, "intent"),
        ({"service": "e/ks", "accelerator": "h100", "intent": "training"}, "service"),
        ({"service": "eks", "accelerator": "h100", "os": "ubu/ntu", "intent": "training"}, "os"),
        (
            {"service": "eks", "accelerator": "h100", "intent": "training", "platform": "a/b"},
            "platform",
        ),
    ],
)
def test_coordinate_for_fails_closed(criteria: dict[str, str], dimension: str) -> None:
    with pytest.raises(CoordinateError) as caught:
        coordinate_for(criteria)
    assert dimension in caught.value.message
    assert caught.value.location is not None and caught.value.location.key == dimension


def test_profile_segment_with_slash_fails_closed() -> None:
    with pytest.raises(CoordinateError, match="profile"):
        coordinate_for({"service": "eks", "accelerator": "h100", "intent": "training"}, "a/b")


_ROUND_TRIP = [
    {
        "service": service,
        "accelerator": accelerator,
        "os": os_name,
        "intent": intent,
        "platform": platform,
    }
    for service in ("eks", "kind", "lke")
    for accelerator in ("h100", "rtx-pro-6000", "gb300")
    for os_name in ("ubuntu", "any", "cos", "amazonlinux")
    for intent in INTENT_ORDER
    for platform in ("", "kubeflow", "dynamo")
]


@pytest.mark.parametrize("segment", [None, "gpustack-operator-managed", "a-b"])
@pytest.mark.parametrize(
    "criteria", _ROUND_TRIP, ids=lambda c: "-".join(v or "_" for v in c.values())
)
def test_inverse_round_trip(criteria: dict[str, str], segment: str | None) -> None:
    coordinate = coordinate_for(criteria, segment)
    assert criteria_from_coordinate(coordinate, segment) == criteria


@pytest.mark.parametrize(
    ("coordinate", "criteria"),
    [
        # Unknown OS: split on the last hyphen; unknown intent: split on the first hyphen.
        (
            Coordinate("eks", "h100-flatcar", "training"),
            {
                "service": "eks",
                "accelerator": "h100",
                "os": "flatcar",
                "intent": "training",
                "platform": "",
            },
        ),
        (
            Coordinate("eks", "rtx-pro-6000-ubuntu", "serving-kserve"),
            {
                "service": "eks",
                "accelerator": "rtx-pro-6000",
                "os": "ubuntu",
                "intent": "serving",
                "platform": "kserve",
            },
        ),
        (
            Coordinate("eks", "h100-ubuntu", "training-run-ai"),
            {
                "service": "eks",
                "accelerator": "h100",
                "os": "ubuntu",
                "intent": "training",
                "platform": "run-ai",
            },
        ),
    ],
)
def test_inverse_fallbacks(coordinate: Coordinate, criteria: dict[str, str]) -> None:
    assert criteria_from_coordinate(coordinate, None) == criteria


@pytest.mark.parametrize(
    ("coordinate", "segment"),
    [
        (Coordinate("eks", "h100-ubuntu", "training"), "gpustack-x"),
        (Coordinate("eks", "h100-ubuntu", "gpustack-x"), "gpustack-x"),
        (Coordinate("eks", "h100", "training"), None),
        (Coordinate("eks", "h100-ubuntu", "any"), None),
        (Coordinate("any", "h100-ubuntu", "training"), None),
        (Coordinate("eks", "h100-ubuntu", "training-any"), None),
    ],
)
def test_inverse_rejects_what_does_not_round_trip(
    coordinate: Coordinate, segment: str | None
) -> None:
    with pytest.raises(CoordinateError):
        criteria_from_coordinate(coordinate, segment)


# --------------------------------------------------------------------------- registry order


@pytest.mark.parametrize(
    "order", [SERVICE_ORDER, ACCELERATOR_ORDER, OS_ORDER, INTENT_ORDER, PLATFORM_ORDER]
)
def test_registry_lists_are_alphabetical_and_unique(order: tuple[str, ...]) -> None:
    assert list(order) == sorted(set(order))
    assert "any" not in order


@pytest.mark.parametrize(
    ("axis", "values"),
    [
        (
            "service",
            ["aks", "bcm", "eks", "generic", "gke", "k0s", "kind", "lke", "metal3", "oke", "rke2"],
        ),
        (
            "accelerator",
            [
                "a100",
                "b200",
                "gb200",
                "gb300",
                "h100",
                "h200",
                "l40",
                "l40s",
                "rtx-pro-6000",
                "vr200",
            ],
        ),
        ("os", ["amazonlinux", "cos", "oraclelinux", "rhel", "talos", "ubuntu"]),
        ("intent", ["inference", "training"]),
        ("platform", ["dynamo", "kubeflow", "slurm"]),
    ],
)
def test_registry_knows_spec_values(axis: str, values: list[str]) -> None:
    keys = [sort_key(axis, value) for value in values]
    assert all(key[1] == "" for key in keys)
    assert keys == sorted(keys)


def test_sort_key_puts_extras_after_known_values_alphabetically() -> None:
    values = ["zeta", "gke", "alpha", "aks", "eks"]
    assert sorted(values, key=lambda v: sort_key("service", v)) == [
        "aks",
        "eks",
        "gke",
        "alpha",
        "zeta",
    ]


def test_sort_key_rejects_unknown_axis() -> None:
    with pytest.raises(InternalError):
        sort_key("nodes", "1")


@pytest.mark.fixtures
def test_registry_covers_every_overlay_value() -> None:
    import yaml

    root = FIXTURES / "aicr-tree"
    if not root.is_dir():
        pytest.skip("aicr-tree fixture is not available")
    seen: dict[str, set[str]] = {}
    for path in root.rglob("overlays/*.yaml"):
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        criteria = (document.get("spec") or {}).get("criteria") or {}
        for axis in ("service", "accelerator", "os", "intent", "platform"):
            value = criteria.get(axis)
            if isinstance(value, str) and value not in ("", "any"):
                seen.setdefault(axis, set()).add(value)
    assert seen, "no overlay criteria found"
    for axis, values in seen.items():
        assert all(sort_key(axis, value)[1] == "" for value in values), (axis, values)
