"""Hardware and cluster facts of one bundle, each with the place its value came from.

Order of trust: the signed `predicate.fingerprint` first, then `snapshot.yaml` (readings from
the node the agent ran on, partly redacted in minimal bundles), then the recipe's criteria. A
fact nobody reports stays None ("not reported"); nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.facts.models import FINGERPRINT, RECIPE, SNAPSHOT, HardwareFact
from generator.model import Evidence

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def _text(value: Any) -> str | None:
    """A scalar as display text; empty strings, zero-free None and containers are absent."""
    if type(value) is str:  # the common case, first
        return value.strip() or None
    if value is None or isinstance(value, Mapping | list | tuple):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None


def _count(value: Any) -> str | None:
    """A positive count as text; 0 (aicr's "not captured") and non-numbers are absent."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if number <= 0 or not number.is_integer():
        return None
    return str(int(number))


def _fingerprint(evidence: Evidence, key: str) -> Mapping[str, Any]:
    fp = evidence.predicate.get("fingerprint")
    entry = fp.get(key) if isinstance(fp, Mapping) else None
    return entry if isinstance(entry, Mapping) else {}


def snapshot_data(
    snapshot: Mapping[str, Any] | None, mtype: str, subtype: str
) -> Mapping[str, Any]:
    """The `data` map of `measurements[type].subtypes[subtype]`, or empty when absent."""
    if not isinstance(snapshot, Mapping):
        return {}
    measurements = snapshot.get("measurements")
    if not isinstance(measurements, list):
        return {}
    for measurement in measurements:
        if not isinstance(measurement, Mapping) or measurement.get("type") != mtype:
            continue
        subtypes = measurement.get("subtypes")
        for sub in subtypes if isinstance(subtypes, list) else []:
            if isinstance(sub, Mapping) and sub.get("subtype") == subtype:
                data = sub.get("data")
                return data if isinstance(data, Mapping) else {}
    return {}


def _snapshot_index(snapshot: Mapping[str, Any] | None) -> dict[tuple[str, str], Mapping[str, Any]]:
    """Every `snapshot_data(snapshot, type, subtype)` answer at once, keyed (type, subtype).

    One pass over the measurements instead of one per fact; the first match wins, as there.
    """
    index: dict[tuple[str, str], Mapping[str, Any]] = {}
    measurements = snapshot.get("measurements") if isinstance(snapshot, Mapping) else None
    if not isinstance(measurements, list):
        return index
    for measurement in measurements:
        if not isinstance(measurement, Mapping):
            continue
        mtype = measurement.get("type")
        subtypes = measurement.get("subtypes")
        if not isinstance(mtype, str) or not isinstance(subtypes, list):
            continue
        for sub in subtypes:
            if isinstance(sub, Mapping):
                name = sub.get("subtype")
                if isinstance(name, str) and (mtype, name) not in index:
                    data = sub.get("data")
                    index[(mtype, name)] = data if isinstance(data, Mapping) else {}
    return index


def _fp_detail(entry: Mapping[str, Any], fallback: str) -> str:
    parts = [str(entry.get("source") or fallback)]
    if entry.get("note"):
        parts.append(f"note: {entry['note']}")
    return "; ".join(parts)


def _recipe_criterion(evidence: Evidence, axis: str) -> str | None:
    crit = evidence.recipe.get("criteria")
    value = _text(crit.get(axis)) if isinstance(crit, Mapping) else None
    return None if value in (None, "any") else value


def _from_fingerprint_or(
    evidence: Evidence,
    key: str,
    label: str,
    fp_key: str,
    fallbacks: list[tuple[str | None, str, str]],
) -> HardwareFact:
    entry = _fingerprint(evidence, fp_key)
    value = _text(entry.get("value"))
    if value is not None:
        return HardwareFact(
            key, label, value, FINGERPRINT, _fp_detail(entry, f"fingerprint.{fp_key}")
        )
    for candidate, source, detail in fallbacks:
        if candidate is not None:
            return HardwareFact(key, label, candidate, source, detail)
    note = entry.get("note")
    return HardwareFact(key, label, None, None, f"note: {note}" if note else None)


def _instance_types(labels: Mapping[str, Any]) -> HardwareFact:
    """Instance types from `NodeTopology/label` (its `data`; full bundles only).

    Values are encoded `"<value>|<node1,node2>"`; a label with differing values appears as
    keys `<label>.<value>`.
    """
    found: dict[str, int] = {}
    for key, raw in labels.items():
        key_text = str(key)
        if key_text == INSTANCE_TYPE_LABEL:
            value, _, nodes = str(raw).partition("|")
        elif key_text.startswith(INSTANCE_TYPE_LABEL + "."):
            value = key_text[len(INSTANCE_TYPE_LABEL) + 1 :]
            nodes = str(raw).partition("|")[2] if "|" in str(raw) else str(raw)
        else:
            continue
        value = value.strip()
        if value:
            found[value] = found.get(value, 0) + len([n for n in nodes.split(",") if n.strip()])
    if not found:
        return HardwareFact("instanceTypes", "Instance types", None, None, None)
    names = sorted(found)
    detail = ", ".join(f"{n}: {found[n]} node(s)" if found[n] else n for n in names)
    return HardwareFact(
        "instanceTypes",
        "Instance types",
        ", ".join(names),
        SNAPSHOT,
        f"NodeTopology/label {INSTANCE_TYPE_LABEL} ({detail})",
    )


def _joined(*parts: str | None) -> str | None:
    present = [p for p in parts if p]
    return " ".join(present) if present else None


def hardware_facts(evidence: Evidence) -> tuple[HardwareFact, ...]:
    """Every hardware fact the pages show, in display order, with its source."""
    snap = evidence.snapshot
    index = _snapshot_index(snap)
    empty: Mapping[str, Any] = {}
    node = index.get(("K8s", "node"), empty)
    server = index.get(("K8s", "server"), empty)
    gpu_hw = index.get(("GPU", "hardware"), empty)
    smi = index.get(("GPU", "smi"), empty)
    release = index.get(("OS", "release"), empty)
    topo = index.get(("NodeTopology", "summary"), empty)

    facts: list[HardwareFact] = [
        _from_fingerprint_or(
            evidence,
            "service",
            "Service",
            "service",
            [
                (_recipe_criterion(evidence, "service"), RECIPE, "recipe criteria.service"),
            ],
        ),
        _from_fingerprint_or(
            evidence,
            "accelerator",
            "Accelerator",
            "accelerator",
            [
                (_recipe_criterion(evidence, "accelerator"), RECIPE, "recipe criteria.accelerator"),
            ],
        ),
        _from_fingerprint_or(
            evidence,
            "gpuModel",
            "GPU model",
            "gpuModel",
            [
                (_text(smi.get("gpu.model")), SNAPSHOT, "GPU/smi gpu.model (agent node)"),
                (_text(gpu_hw.get("model")), SNAPSHOT, "GPU/hardware model (agent node)"),
            ],
        ),
    ]
    smi_count = _count(smi.get("gpu-count"))
    hw_count = _count(gpu_hw.get("gpu-count"))
    if smi_count is not None:
        facts.append(
            HardwareFact(
                "gpuCount", "GPU count", smi_count, SNAPSHOT, "GPU/smi gpu-count (agent node)"
            )
        )
    elif hw_count is not None:
        facts.append(
            HardwareFact(
                "gpuCount", "GPU count", hw_count, SNAPSHOT, "GPU/hardware gpu-count (agent node)"
            )
        )
    else:
        facts.append(HardwareFact("gpuCount", "GPU count", None, None, None))

    for key, label, fp_key, snap_value, snap_detail in (
        (
            "nodeCount",
            "Node count",
            "nodeCount",
            _count(topo.get("node-count")),
            "NodeTopology/summary node-count",
        ),
        ("gpuNodeCount", "GPU node count", "gpuNodeCount", None, ""),
    ):
        entry = _fingerprint(evidence, fp_key)
        value = _count(entry.get("value"))
        if value is not None:
            facts.append(
                HardwareFact(
                    key, label, value, FINGERPRINT, _fp_detail(entry, f"fingerprint.{fp_key}")
                )
            )
        elif snap_value is not None:
            facts.append(HardwareFact(key, label, snap_value, SNAPSHOT, snap_detail))
        else:
            facts.append(HardwareFact(key, label, None, None, None))

    facts.append(_instance_types(index.get(("NodeTopology", "label"), empty)))

    k8s_entry = _fingerprint(evidence, "k8sVersion")
    k8s = _text(k8s_entry.get("value"))
    if k8s is not None:
        facts.append(
            HardwareFact(
                "k8sVersion",
                "Kubernetes version",
                k8s.removeprefix("v"),
                FINGERPRINT,
                _fp_detail(k8s_entry, "fingerprint.k8sVersion"),
            )
        )
    elif _text(server.get("version")) is not None:
        facts.append(
            HardwareFact(
                "k8sVersion",
                "Kubernetes version",
                str(_text(server.get("version"))).removeprefix("v"),
                SNAPSHOT,
                "K8s/server version",
            )
        )
    else:
        facts.append(HardwareFact("k8sVersion", "Kubernetes version", None, None, None))

    os_entry = _fingerprint(evidence, "os")
    os_kind = _text(os_entry.get("value"))
    if os_kind is not None:
        facts.append(
            HardwareFact(
                "os",
                "OS",
                _joined(os_kind, _text(os_entry.get("version"))),
                FINGERPRINT,
                _fp_detail(os_entry, "fingerprint.os"),
            )
        )
    elif _text(release.get("ID")) is not None:
        facts.append(
            HardwareFact(
                "os",
                "OS",
                _joined(_text(release.get("ID")), _text(release.get("VERSION_ID"))),
                SNAPSHOT,
                "OS/release ID, VERSION_ID (agent node)",
            )
        )
    else:
        recipe_os = _recipe_criterion(evidence, "os")
        facts.append(
            HardwareFact(
                "os",
                "OS",
                recipe_os,
                RECIPE if recipe_os else None,
                "recipe criteria.os" if recipe_os else None,
            )
        )

    kernel = _text(node.get("kernel-version"))
    facts.append(
        HardwareFact(
            "kernel",
            "Kernel",
            kernel,
            SNAPSHOT if kernel else None,
            "K8s/node kernel-version (agent node)" if kernel else None,
        )
    )
    runtime = _joined(
        _text(node.get("container-runtime-name")), _text(node.get("container-runtime-version"))
    )
    facts.append(
        HardwareFact(
            "containerRuntime",
            "Container runtime",
            runtime,
            SNAPSHOT if runtime else None,
            "K8s/node container-runtime-name, container-runtime-version (agent node)"
            if runtime
            else None,
        )
    )
    facts.append(_from_fingerprint_or(evidence, "region", "Region", "region", []))
    for key, label, smi_key in (("driver", "Driver", "driver"), ("cuda", "CUDA", "cuda-version")):
        value = _text(smi.get(smi_key))
        facts.append(
            HardwareFact(
                key,
                label,
                value,
                SNAPSHOT if value else None,
                f"GPU/smi {smi_key} (agent node)" if value else None,
            )
        )
    return tuple(facts)
