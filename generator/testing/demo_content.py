"""Realistic, deterministic content for the demo bundles: recipes, fingerprints, snapshots, CTRF.

Every value that is not stated by the scenario is derived from its seed and the run's identity
(never from the clock or randomness), and stays consistent across the files of one bundle: the
fingerprint, the criteria match, the snapshot and the CTRF tell the same story about one cluster.
All identities, hosts and numbers are made up; names, shapes and floors mirror aicr's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from generator.model import Phase
from generator.testing._demo_cluster import (
    _CHARTS,
    _FAILURES,
    _IMAGES,
    _NET_PLUGINS,
    Cluster,
    cluster_for,
    stable_hex,
    stable_int,
)
from generator.testing.bundles import (
    TestSpec,
    criteria_match_for,
    make_recipe,
    nccl_test,
    snapshot_document,
)
from generator.testing.demo_scenario import Measured, Outcome, RecipeDecl, RunDecl

__all__ = [
    "Cluster",
    "cluster_for",
    "criteria_match",
    "fingerprint_for",
    "policy_identity",
    "recipe_document",
    "snapshot_for",
    "stable_hex",
    "stable_int",
    "tests_for",
]


# --------------------------------------------------------------------------- recipes


def recipe_document(decl: RecipeDecl, *, version: str, current: bool = False) -> dict[str, Any]:
    """The hydrated RecipeResult for `decl` as aicr `version` writes it (signed or current)."""
    components = decl.current_components if current and decl.current_components else decl.components
    c = decl.criteria
    recipe = make_recipe(
        accelerator=c.get("accelerator", ""),
        service=c.get("service", ""),
        os=c.get("os", ""),
        intent=c.get("intent", ""),
        platform=c.get("platform"),
        version=version,
        profile=decl.profile,
        components=components,
        nccl_floors={check: f">= {floor:g}" for check, floor in decl.floors.items()},
    )
    for ref in recipe["componentRefs"]:
        chart, namespace, source = _CHARTS.get(ref["name"], (ref["name"], ref["name"], ""))
        ref.update(chart=chart, namespace=namespace, source=source)
    return recipe


def policy_identity(decl: RecipeDecl) -> str:
    """`policyDescriptorIdentity` over the descriptor entries the recipe's components bring."""
    lines = ""
    if any(name == "gpu-operator" for name, _ in decl.components):
        lines += "gpu-operator:devicePlugin.enabled\n"
    return hashlib.sha256(lines.encode()).hexdigest()


def fingerprint_for(cluster: Cluster) -> dict[str, Any]:
    """`predicate.fingerprint` (every key present, as Go emits it)."""
    provided = cluster.service if cluster.service != "generic" else ""
    service: dict[str, Any] = {"value": provided}
    if provided:
        service["source"] = "k8s.node.provider"
    region: dict[str, Any] = {"value": cluster.region}
    if cluster.region:
        region["source"] = "nodeTopology.label.topology.kubernetes.io/region"
    return {
        "service": service,
        "accelerator": {
            "value": cluster.accelerator,
            "source": "nodeTopology.label.nvidia.com/gpu.product",
        },
        "gpuModel": {"value": cluster.accelerator, "source": "gpu.hardware.model"},
        "os": {"value": cluster.os, "version": cluster.os_version, "source": "os.release"},
        "k8sVersion": {"value": cluster.k8s_version, "source": "k8s.server.version"},
        "region": region,
        "nodeCount": {"value": cluster.node_count, "source": "nodeTopology.summary.node-count"},
        "gpuNodeCount": {
            "value": cluster.gpu_node_count,
            "source": "nodeTopology.label.nvidia.com/gpu.product",
        },
    }


def criteria_match(recipe: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """aicr's criteria match; a `generic` service is opt-in only, hence `not-inferable`."""
    match = criteria_match_for(recipe, fingerprint)
    for row in match["perDimension"]:
        if row["dimension"] == "service" and row.get("recipeRequires") == "generic":
            row["match"] = "not-inferable"
    return match


def _os_release(cluster: Cluster) -> dict[str, Any]:
    if cluster.os == "cos":
        return {
            "ID": "cos",
            "NAME": "Container-Optimized OS",
            "VERSION_ID": cluster.os_version,
            "PRETTY_NAME": "Container-Optimized OS from Google",
        }
    codename = "noble" if cluster.os_version == "24.04" else "jammy"
    return {
        "ID": cluster.os,
        "ID_LIKE": "debian",
        "NAME": "Ubuntu",
        "VERSION_ID": cluster.os_version,
        "VERSION_CODENAME": codename,
        "PRETTY_NAME": f"Ubuntu {cluster.os_version} LTS",
    }


def snapshot_for(
    cluster: Cluster, components: Sequence[tuple[str, str]], attested_at: str, *, full: bool
) -> dict[str, Any]:
    """`snapshot.yaml`: the minimal allowlisted subtypes, plus the `--full` extras."""
    release = _os_release(cluster)
    k8s, gpu, topology = _minimal_subtypes(cluster, release)
    header: dict[str, Any] = {"timestamp": attested_at, "version": "v1"}
    if full:
        header["source-node"] = "gpu-node-1"
        _add_full_subtypes(cluster, components, k8s, gpu, topology)
    return snapshot_document(header, k8s=k8s, gpu=gpu, release=release, topology=topology)


_Subtypes = list[dict[str, Any]]


def _minimal_subtypes(
    cluster: Cluster, release: Mapping[str, Any]
) -> tuple[_Subtypes, _Subtypes, _Subtypes]:
    """The allowlisted K8s, GPU and topology subtypes every snapshot has."""
    runtime = "2.0.5" if cluster.arch == "arm64" else "1.7.27"
    k8s: list[dict[str, Any]] = [
        {
            "subtype": "server",
            "data": {
                "version": f"v{cluster.k8s_version}",
                "platform": f"linux/{cluster.arch}",
                "goVersion": "go1.24.6",
            },
        },
        {
            "subtype": "node",
            "data": {
                "provider": cluster.service if cluster.service != "generic" else "",
                "kubelet-version": f"v{cluster.k8s_version}",
                "kernel-version": cluster.kernel,
                "operating-system": "linux",
                "os-image": release["PRETTY_NAME"],
                "container-runtime-name": "containerd",
                "container-runtime-version": runtime,
            },
        },
    ]
    gpu: list[dict[str, Any]] = [
        {
            "subtype": "hardware",
            "data": {
                "gpu-present": True,
                "gpu-count": cluster.gpus_per_node,
                "driver-loaded": True,
                "detection-source": "pci",
                "model": cluster.accelerator,
            },
        }
    ]
    topology: list[dict[str, Any]] = [
        {
            "subtype": "summary",
            "data": {
                "node-count": cluster.node_count,
                "taint-count": cluster.gpu_node_count,
                "label-count": 38 + 4 * cluster.node_count,
            },
        }
    ]
    return k8s, gpu, topology


def _add_full_subtypes(
    cluster: Cluster,
    components: Sequence[tuple[str, str]],
    k8s: _Subtypes,
    gpu: _Subtypes,
    topology: _Subtypes,
) -> None:
    """The image, SMI and label subtypes aicr adds with `--full`."""
    k8s.append(
        {
            "subtype": "image",
            "data": {
                name: f"{_IMAGES.get(name, 'registry.example/' + name)}:{version}"
                for name, version in components
            },
        }
    )
    gpu.append(
        {
            "subtype": "smi",
            "data": {
                "driver": cluster.driver,
                "cuda-version": cluster.cuda,
                "gpu-count": cluster.gpus_per_node,
                "gpu.model": cluster.product,
            },
        }
    )
    nodes = ",".join(f"gpu-node-{i + 1}" for i in range(cluster.gpu_node_count))
    labels = {
        "node.kubernetes.io/instance-type": f"{cluster.instance_type}|{nodes}",
        "nvidia.com/gpu.product": f"{cluster.product.replace(' ', '-')}|{nodes}",
    }
    if cluster.region:
        labels["topology.kubernetes.io/region"] = f"{cluster.region}|{nodes}"
    topology.append({"subtype": "label", "data": labels})


# --------------------------------------------------------------------------- CTRF tests


def _duration(seed: str, run: RunDecl, name: str, low: int, high: int) -> int:
    return low + stable_int(seed, "duration", run.index, name) % (high - low)


def _plain_test(seed: str, run: RunDecl, name: str, outcome: Outcome, *, slow: bool) -> TestSpec:
    duration = (
        _duration(seed, run, name, 20_000, 240_000)
        if slow
        else _duration(seed, run, name, 1_500, 30_000)
    )
    if outcome.status == "skipped":
        return TestSpec(
            name, "skipped", message=outcome.reason or f"{name} was not run", duration_ms=0
        )
    if outcome.status in ("failed", "other"):
        return TestSpec(
            name,
            outcome.status,
            message=outcome.reason or _FAILURES.get(name, f"{name}: check failed"),
            duration_ms=duration,
            trace=outcome.trace,
        )
    return TestSpec(name, "passed", duration_ms=duration)


def _transport(cluster: Cluster, check: str, seed: str, run: RunDecl) -> tuple[str, ...]:
    if check.endswith("-net"):
        return (f"NCCL INFO Using network {_NET_PLUGINS.get(cluster.service, 'IB')}",)
    if check.endswith("-nvls"):
        comm = stable_int(seed, "nvls-comm", run.index) % (1 << 40)
        return (f"NCCL INFO NVLS comm 0x{comm:010x} headRank 0 nHeads {cluster.gpus_per_node}",)
    return ()


def _nccl(
    seed: str,
    run: RunDecl,
    cluster: Cluster,
    check: str,
    value: Measured | Outcome,
    floors: Mapping[str, float],
) -> TestSpec:
    duration = _duration(seed, run, check, 240_000, 900_000)
    floor = floors.get(check)
    extra = {"runtimeSource": "delivered-artifact"}
    if isinstance(value, Outcome):
        if value.status == "skipped":
            return TestSpec(
                check, "skipped", message=value.reason or f"{check} was not run", duration_ms=0
            )
        message = (
            None if value.status == "passed" else f'{check}: constraint ">= {floor or 0:g}" not met'
        )
        return TestSpec(check, value.status, message=message, extra=extra, duration_ms=duration)
    if floor is None:
        return TestSpec(check, "skipped", message=f"no {check} constraint in recipe", duration_ms=0)
    test = nccl_test(check, value.gbps, f">= {floor:g}")
    return replace(
        test,
        stdout=_transport(cluster, check, seed, run) + test.stdout,
        extra=extra,
        duration_ms=duration,
    )


def tests_for(
    seed: str,
    run: RunDecl,
    cluster: Cluster,
    floors: Mapping[str, float],
    bandwidth: Mapping[str, Measured | Outcome] | None = None,
) -> dict[Phase, list[TestSpec]]:
    """CTRF tests per phase: the check set with overrides, NCCL checks from `bandwidth`."""
    measured = run.bandwidth if bandwidth is None else bandwidth
    out: dict[Phase, list[TestSpec]] = {}
    for phase in (Phase.DEPLOYMENT, Phase.PERFORMANCE, Phase.CONFORMANCE):
        tests: list[TestSpec] = []
        checks = dict(run.checks.get(phase, {}))
        if phase is Phase.PERFORMANCE:
            for check, value in measured.items():
                test = _nccl(seed, run, cluster, check, value, floors)
                override = checks.pop(check, None)
                if override is not None and override.status != test.status:
                    test = replace(
                        test,
                        status=override.status,
                        message=test.message or _FAILURES.get(check, f"{check}: check failed"),
                    )
                tests.append(test)
        for name, outcome in checks.items():
            tests.append(_plain_test(seed, run, name, outcome, slow=phase is Phase.CONFORMANCE))
        if tests:
            out[phase] = tests
    return out
