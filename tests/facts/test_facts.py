"""Facts over hand-made evidence: hardware provenance, components, images, criteria match,
bandwidth numbers against floors, and skip reasons."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.facts import (
    FINGERPRINT,
    RECIPE,
    SNAPSHOT,
    bandwidth,
    components,
    criteria,
    criteria_match,
    hardware_facts,
    skip_reason,
    validator_images,
)
from generator.model import CtrfTest, Phase
from generator.model import TestResult as R

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
PERF = Phase.PERFORMANCE

FULL_SNAPSHOT: dict[str, Any] = {
    "measurements": [
        {
            "type": "K8s",
            "subtypes": [
                {"subtype": "server", "data": {"version": "v1.33.4"}},
                {
                    "subtype": "node",
                    "data": {
                        "kernel-version": "6.8.0-1015-aws",
                        "container-runtime-name": "containerd",
                        "container-runtime-version": "1.7.27",
                    },
                },
            ],
        },
        {
            "type": "GPU",
            "subtypes": [
                {"subtype": "hardware", "data": {"gpu-count": 8, "model": "h100"}},
                {
                    "subtype": "smi",
                    "data": {
                        "driver": "570.133.20",
                        "cuda-version": "12.8",
                        "gpu-count": 8,
                        "gpu.model": "NVIDIA H100 80GB HBM3",
                    },
                },
            ],
        },
        {
            "type": "OS",
            "subtypes": [{"subtype": "release", "data": {"ID": "ubuntu", "VERSION_ID": "22.04"}}],
        },
        {
            "type": "NodeTopology",
            "subtypes": [
                {"subtype": "summary", "data": {"node-count": 5}},
                {
                    "subtype": "label",
                    "data": {
                        "node.kubernetes.io/instance-type.p5.48xlarge": "p5.48xlarge|n1,n2",
                        "node.kubernetes.io/instance-type.m5.large": "m5.large|n3",
                        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3|n1,n2",
                    },
                },
            ],
        },
    ]
}

FINGERPRINT_FULL = {
    "service": {"value": "eks", "source": "k8s.node.provider"},
    "accelerator": {"value": "h100"},
    "gpuModel": {"value": "h100", "source": "gpu.hardware.model"},
    "os": {"value": "ubuntu", "version": "22.04", "source": "os.release"},
    "k8sVersion": {"value": "1.33.4", "source": "k8s.server.version"},
    "region": {"value": "", "note": "multi-region"},
    "nodeCount": {"value": 5.0},
    "gpuNodeCount": {"value": 2},
}


def facts_by_key(evidence: Any) -> dict[str, Any]:
    return {fact.key: fact for fact in hardware_facts(evidence)}


def test_full_bundle_hardware(f: type) -> None:
    ev = f.make_evidence(predicate={"fingerprint": FINGERPRINT_FULL}, snapshot=FULL_SNAPSHOT)
    got = facts_by_key(ev)
    assert (got["service"].value, got["service"].source) == ("eks", FINGERPRINT)
    assert got["service"].detail == "k8s.node.provider"
    assert (got["gpuModel"].value, got["gpuModel"].source) == ("h100", FINGERPRINT)
    assert (got["gpuCount"].value, got["gpuCount"].source) == ("8", SNAPSHOT)
    assert got["nodeCount"].value == "5" and got["gpuNodeCount"].value == "2"
    assert got["instanceTypes"].value == "m5.large, p5.48xlarge"
    assert "p5.48xlarge: 2 node(s)" in str(got["instanceTypes"].detail)
    assert got["os"].value == "ubuntu 22.04"
    assert got["kernel"].value == "6.8.0-1015-aws"
    assert got["containerRuntime"].value == "containerd 1.7.27"
    assert (got["driver"].value, got["cuda"].value) == ("570.133.20", "12.8")
    assert got["region"].value is None and got["region"].detail == "note: multi-region"


def test_minimal_bundle_reports_nothing_it_does_not_have(f: type) -> None:
    empty_fp = {k: {"value": 0 if "Count" in k else ""} for k in FINGERPRINT_FULL}
    ev = f.make_evidence(predicate={"fingerprint": empty_fp})
    got = facts_by_key(ev)
    for key in (
        "gpuModel",
        "gpuCount",
        "nodeCount",
        "gpuNodeCount",
        "instanceTypes",
        "k8sVersion",
        "kernel",
        "containerRuntime",
        "region",
        "driver",
        "cuda",
    ):
        assert got[key].value is None and got[key].source is None, key
    # the recipe says what it asks for, labelled as such
    assert (got["service"].value, got["service"].source) == ("eks", RECIPE)
    assert (got["os"].value, got["os"].source) == ("ubuntu", RECIPE)


def test_single_label_instance_type(f: type) -> None:
    snap = {
        "measurements": [
            {
                "type": "NodeTopology",
                "subtypes": [
                    {
                        "subtype": "label",
                        "data": {"node.kubernetes.io/instance-type": "a3-highgpu-8g|n1,n2,n3"},
                    }
                ],
            }
        ]
    }
    got = facts_by_key(f.make_evidence(snapshot=snap))
    assert got["instanceTypes"].value == "a3-highgpu-8g"
    assert got["instanceTypes"].source == SNAPSHOT


def test_components_and_images(f: type) -> None:
    ev = f.make_evidence(
        recipe={
            "componentRefs": [
                {"name": "gpu-operator", "version": "v25.3.0"},
                {"name": "cert-manager"},
                {"version": "x"},
            ]
        },
        predicate={
            "validatorImages": [
                {"image": "ghcr.io/nvidia/aicr-validators/deployment:v0.14.2", "digest": ""},
                {
                    "image": "ghcr.io/nvidia/aicr-validators/performance:v0.14.2",
                    "digest": "sha256:" + "c" * 64,
                },
                {"image": "ghcr.io/x/y@sha256:" + "d" * 64},
            ]
        },
    )
    assert [(c.name, c.version) for c in components(ev)] == [
        ("gpu-operator", "v25.3.0"),
        ("cert-manager", None),
    ]
    assert [v.mutable for v in validator_images(ev)] == [True, False, False]
    assert validator_images(f.make_evidence(predicate={"validatorImages": None})) == ()


def test_criteria_from_recipe(f: type) -> None:
    got = criteria(
        f.make_evidence(
            recipe={"criteria": {"service": "gke", "accelerator": "gb200", "intent": "inference"}}
        )
    )
    assert (got.service, got.accelerator, got.os, got.intent, got.platform) == (
        "gke",
        "gb200",
        "",
        "inference",
        "",
    )


LIST_SHAPE = {
    "matched": False,
    "perDimension": [
        {
            "dimension": "service",
            "recipeRequires": "eks",
            "fingerprintProvides": "gke",
            "match": "mismatched",
        },
        {"dimension": "intent", "recipeRequires": "training", "match": "unknown"},
    ],
}
MAP_SHAPE = {
    "matched": False,
    "perDimension": {
        "intent": {"recipeRequires": "training", "match": "unknown"},
        "service": {"recipeRequires": "eks", "fingerprintProvides": "gke", "match": "mismatched"},
    },
}


@pytest.mark.parametrize("shape", [LIST_SHAPE, MAP_SHAPE], ids=["list", "map"])
def test_criteria_match_shapes_normalise_alike(f: type, shape: dict[str, Any]) -> None:
    got = criteria_match(f.make_evidence(predicate={"criteriaMatch": shape}))
    assert got.matched is False
    assert [d.dimension for d in got.dimensions] == ["service", "intent"]
    assert got.mismatched == ("service",)
    assert got.dimensions[0].fingerprint_provides == "gke"
    assert got.dimensions[1].fingerprint_provides is None


def test_criteria_match_absent(f: type) -> None:
    got = criteria_match(f.make_evidence())
    assert got.matched is None and got.dimensions == ()


def nccl(check: str, status: str, *stdout: str, message: str | None = None) -> CtrfTest:
    from generator.ctrf import bucket_status

    return CtrfTest(check, status, bucket_status(status), message=message, stdout=stdout)


def floors(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {
        "validation": {"performance": {"constraints": [{"name": n, "value": v} for n, v in pairs]}}
    }


FULL = {"redaction": None}


@pytest.mark.parametrize(
    ("status", "line", "floor", "measured", "pass_line", "disagrees"),
    [
        (
            "passed",
            "NCCL All Reduce bandwidth (nccl-all-reduce-bw-net): 376.40 GB/s",
            ">= 300",
            376.4,
            270.0,
            False,
        ),
        (
            "passed",
            "NCCL All Reduce bandwidth (nccl-all-reduce-bw-net): 280.00 GB/s",
            ">= 300",
            280.0,
            270.0,
            False,
        ),  # inside the 10% tolerance
        (
            "passed",
            "NCCL All Reduce bandwidth (nccl-all-reduce-bw-net): 200.00 GB/s",
            ">= 300",
            200.0,
            270.0,
            True,
        ),
        (
            "failed",
            "NCCL All Reduce bandwidth (nccl-all-reduce-bw-net): 376.40 GB/s (runtime image: x)",
            ">= 300",
            376.4,
            270.0,
            True,
        ),
        (
            "failed",
            "NCCL All Reduce bandwidth (nccl-all-reduce-bw-net): 100.00 GB/s",
            ">=823",
            100.0,
            740.7,
            False,
        ),
    ],
)
def test_bandwidth_full_bundle(
    f: type, status: str, line: str, floor: str, measured: float, pass_line: float, disagrees: bool
) -> None:
    ev = f.make_evidence(
        recipe=floors(("nccl-all-reduce-bw-net", floor)),
        predicate=FULL,
        ctrf_reports={PERF: f.ctrf(PERF, nccl("nccl-all-reduce-bw-net", status, "noise", line))},
    )
    (reading,) = bandwidth(ev)
    assert (reading.measured, reading.pass_line, reading.disagrees) == (
        measured,
        pass_line,
        disagrees,
    )
    assert reading.floor == float(floor.lstrip(">= "))
    assert reading.status == status
    assert (reading.note is not None) == disagrees


def test_bandwidth_minimal_bundle_invents_nothing(f: type) -> None:
    ev = f.make_evidence(
        recipe=floors(("nccl-all-reduce-bw-nvls", ">= 250")),
        ctrf_reports={PERF: f.ctrf(PERF, ("nccl-all-reduce-bw-nvls", "passed"))},
    )
    (reading,) = bandwidth(ev)
    assert reading.measured is None and reading.floor == 250.0 and reading.pass_line == 225.0
    assert reading.result is R.PASS and not reading.disagrees
    assert "minimal bundle" in str(reading.note)


def test_bandwidth_from_failure_message_and_missing_floor(f: type) -> None:
    msg = 'NCCL bandwidth 123.45 GB/s does not satisfy constraint ">= 300"'
    ev = f.make_evidence(
        predicate=FULL,
        ctrf_reports={
            PERF: f.ctrf(
                PERF,
                nccl("nccl-cre-all-reduce-bw", "failed", message=msg),
                ("inference-perf", "passed"),
            )
        },
    )
    (reading,) = bandwidth(ev)
    assert reading.check == "nccl-cre-all-reduce-bw"
    assert reading.measured == 123.45 and reading.floor is None and not reading.disagrees
    assert "no floor" in str(reading.note)


def test_bandwidth_floor_without_run_and_wrong_check_line(f: type) -> None:
    line = "NCCL All Reduce bandwidth (nccl-all-reduce-bw-nvls): 900.00 GB/s"
    ev = f.make_evidence(
        recipe=floors(("nccl-all-reduce-bw", ">= 300"), ("nccl-all-reduce-bw-net", "< 5")),
        predicate=FULL,
        ctrf_reports={PERF: f.ctrf(PERF, nccl("nccl-all-reduce-bw", "passed", line))},
    )
    default, net = bandwidth(ev)
    assert default.measured is None and "no bandwidth line" in str(default.note)
    assert net.status is None and net.floor is None and "not a '>= N' floor" in str(net.note)


@pytest.mark.parametrize(
    ("status", "message", "extra", "expected"),
    [
        ("skipped", "requires at least 2 GPU nodes", {}, "requires at least 2 GPU nodes"),
        ("skipped", None, {"skipReason": "nodes-busy"}, "nodes-busy"),
        ("pending", None, {}, None),
        ("failed", "boom", {"skipReason": "nodes-busy"}, None),
        ("passed", None, {}, None),
    ],
)
def test_skip_reason(
    status: str, message: str | None, extra: dict[str, Any], expected: str | None
) -> None:
    from generator.ctrf import bucket_status

    test = CtrfTest("x", status, bucket_status(status), message=message, extra=extra)
    assert skip_reason(test) == expected


@pytest.mark.fixtures
def test_fixture_recipe_and_ctrf(f: type) -> None:
    testdata = FIXTURES / "aicr-tree" / "testdata"
    if not testdata.is_dir():
        pytest.skip("shared fixtures (aicr-tree) are not present")
    from generator.ctrf import parse_ctrf

    recipe = yaml.safe_load((testdata / "summary-bundle" / "recipe.yaml").read_text())
    ctrf_file = next((testdata / "corroborate-gcs").rglob("conformance.json"))
    report = parse_ctrf(ctrf_file.read_bytes(), Phase.CONFORMANCE, file=ctrf_file.name)
    import json

    statement = json.loads((testdata / "summary-bundle" / "statement.intoto.json").read_text())
    ev = f.make_evidence(
        recipe=recipe, predicate=statement["predicate"], ctrf_reports={Phase.CONFORMANCE: report}
    )
    assert [c.name for c in components(ev)] == [r["name"] for r in recipe["componentRefs"]]
    assert criteria(ev).service == recipe["criteria"]["service"]
    match = criteria_match(ev)
    assert match.matched is statement["predicate"]["criteriaMatch"]["matched"]
    assert len(match.dimensions) == len(statement["predicate"]["criteriaMatch"]["perDimension"])
    got = facts_by_key(ev)
    assert got["gpuModel"].value is None  # the fixture's fingerprint captured nothing
    assert got["accelerator"].source == RECIPE
