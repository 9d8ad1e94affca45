"""The payload documents of a test bundle: the recipe and its digest, fingerprint, criteria,
snapshot, CTRF reports and the CycloneDX BOM, serialised as aicr writes them."""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from generator.model import (
    Canonicalizer,
    OciDigest,
    Phase,
    PredicateType,
    Sha256Hex,
)
from generator.testing import yamlemit
from generator.testing._bundle_spec import (
    _COUNT,
    _PROFILE,
    _RUNTIME_SOURCES,
    _SKIP_REASONS,
    BundleSpec,
    TestSpec,
)

# --------------------------------------------------------------------------- serializers


def go_json(data: Any, *, indent: int | None = 2) -> bytes:
    """JSON as Go's encoding/json writes it: `<`, `>`, `&` escaped; indented output ends in `\\n`."""
    if indent is None:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    else:
        text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


def _sha(data: bytes) -> OciDigest:
    return OciDigest("sha256:" + hashlib.sha256(data).hexdigest())


def _rfc3339(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("attested_at must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def recipe_name_for(recipe: Mapping[str, Any]) -> str:
    """aicr `RecipeNameFor` (evidence-format 3.6)."""
    criteria = recipe.get("criteria")
    if not isinstance(criteria, Mapping):
        return ""
    parts = [
        str(criteria.get(k) or "") for k in ("accelerator", "service", "os", "intent", "platform")
    ]
    name = "-".join(p for p in parts if p and p != "any") or "recipe"
    selection = profile_selection(recipe)
    if selection is None:
        return name
    if not _PROFILE.match(selection):
        return ""
    key, value = selection.split("=", 1)
    return f"{name}-{key.lower()}-{value.lower()}"


def profile_selection(recipe: Mapping[str, Any]) -> str | None:
    """`name=value` of `metadata.selectedProfile`, or None when unprofiled."""
    metadata = recipe.get("metadata")
    selected = metadata.get("selectedProfile") if isinstance(metadata, Mapping) else None
    if not isinstance(selected, Mapping):
        return None
    return f"{selected.get('name', '')}={selected.get('value', '')}"


def _strip_version(recipe: Mapping[str, Any]) -> dict[str, Any]:
    doc = dict(recipe)
    metadata = doc.get("metadata")
    if isinstance(metadata, Mapping) and "version" in metadata:
        rest = {k: v for k, v in metadata.items() if k != "version"}
        if rest:
            doc["metadata"] = rest
        else:
            del doc["metadata"]
    return doc


def recipe_yaml_and_digest(
    recipe: Mapping[str, Any], predicate_type: PredicateType
) -> tuple[bytes, Sha256Hex]:
    """`recipe.yaml` bytes (legacy-canonical) and the predicate's recipe digest for the type.

    Uses `generator.recipe.canonical` when it is importable; otherwise the stand-in emitter,
    whose output is already sorted and yaml.v3-shaped for simple documents.
    """
    emitted = yamlemit.emit(recipe)
    try:
        canonical = importlib.import_module("generator.recipe.canonical")
    except ImportError:
        if predicate_type.canonicalizer is Canonicalizer.V3:
            return emitted, Sha256Hex(
                hashlib.sha256(yamlemit.emit(_strip_version(recipe))).hexdigest()
            )
        return emitted, Sha256Hex(hashlib.sha256(emitted).hexdigest())
    data: bytes = canonical.canonicalize(emitted, Canonicalizer.LEGACY)
    digest: str = canonical.digest_for_predicate_type(data, predicate_type)
    return data, Sha256Hex(digest)


# --------------------------------------------------------------------------- content builders


def default_fingerprint(recipe: Mapping[str, Any]) -> dict[str, Any]:
    """A fingerprint matching the recipe's criteria (every key present, as Go emits it)."""
    c = recipe.get("criteria") or {}
    service = str(c.get("service") or "")
    accelerator = str(c.get("accelerator") or "")
    return {
        "service": {"value": service, "source": "k8s.node.provider"},
        "accelerator": {
            "value": accelerator,
            "source": "nodeTopology.label.nvidia.com/gpu.product",
        },
        "gpuModel": {"value": accelerator, "source": "gpu.hardware.model"},
        "os": {"value": str(c.get("os") or ""), "version": "22.04", "source": "os.release"},
        "k8sVersion": {"value": "1.33.4", "source": "k8s.server.version"},
        "region": {"value": "us-east-1"},
        "nodeCount": {"value": 4, "source": "nodeTopology.summary.node-count"},
        "gpuNodeCount": {"value": 2},
    }


def criteria_match_for(recipe: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """`criteriaMatch` in the newer list shape, by aicr's rules (evidence-format 3.7)."""
    c = recipe.get("criteria") or {}
    rows: list[dict[str, Any]] = []
    for dim in ("service", "accelerator", "os", "intent", "platform"):
        want = str(c.get(dim) or "")
        row: dict[str, Any] = {"dimension": dim}
        if want:
            row["recipeRequires"] = want
        have = ""
        if dim in ("service", "accelerator", "os"):
            have = str((fingerprint.get(dim) or {}).get("value") or "")
            if have:
                row["fingerprintProvides"] = have
        if want in ("", "any"):
            row["match"] = "matched"
        elif dim in ("intent", "platform") or not have:
            row["match"] = "unknown"
        else:
            row["match"] = "matched" if want == have else "mismatched"
        rows.append(row)
    nodes = int(c.get("nodes") or 0)
    rows.append({"dimension": "nodes", "match": "matched" if nodes == 0 else "unknown"})
    matched = all(r["match"] != "mismatched" for r in rows)
    return {"matched": matched, "perDimension": rows}


def default_snapshot(
    fingerprint: Mapping[str, Any], attested_at: str, *, full: bool
) -> dict[str, Any]:
    """A snapshot (evidence-format 9.2): the minimal allowlisted subtypes, plus `--full` extras."""

    def value(key: str) -> Any:
        return (fingerprint.get(key) or {}).get("value", "")

    k8s, gpu, topology = _minimal_subtypes(value)
    if full:
        _add_full_subtypes(k8s, gpu, topology)
    header: dict[str, Any] = {"timestamp": attested_at, "version": "v1"}
    if full:
        header["source-node"] = "node-1"
    release = {"ID": value("os"), "VERSION_ID": "22.04", "NAME": "Ubuntu"}
    return snapshot_document(header, k8s=k8s, gpu=gpu, release=release, topology=topology)


def _minimal_subtypes(
    value: Callable[[str], Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The allowlisted K8s, GPU and topology subtypes every snapshot has."""
    k8s = [
        {
            "subtype": "server",
            "data": {
                "version": f"v{value('k8sVersion')}",
                "platform": "linux/amd64",
                "goVersion": "go1.24.4",
            },
        },
        {
            "subtype": "node",
            "data": {
                "provider": value("service"),
                "kubelet-version": f"v{value('k8sVersion')}",
                "kernel-version": "6.8.0-1021",
                "operating-system": "linux",
                "os-image": "Ubuntu 22.04.5 LTS",
                "container-runtime-name": "containerd",
                "container-runtime-version": "1.7.27",
            },
        },
    ]
    gpu = [
        {
            "subtype": "hardware",
            "data": {
                "gpu-present": True,
                "gpu-count": 8,
                "driver-loaded": True,
                "detection-source": "pci",
                "model": value("accelerator"),
            },
        }
    ]
    topology = [
        {
            "subtype": "summary",
            "data": {"node-count": value("nodeCount"), "taint-count": 2, "label-count": 40},
        }
    ]
    return k8s, gpu, topology


def _add_full_subtypes(
    k8s: list[dict[str, Any]], gpu: list[dict[str, Any]], topology: list[dict[str, Any]]
) -> None:
    """The subtypes aicr adds with `--full`."""
    k8s.append(
        {"subtype": "image", "data": {"gpu-operator": "nvcr.io/nvidia/gpu-operator:v25.3.0"}}
    )
    gpu.append(
        {
            "subtype": "smi",
            "data": {
                "driver": "570.148.08",
                "cuda-version": "12.8",
                "gpu-count": 8,
                "gpu.model": "NVIDIA H100 80GB HBM3",
            },
        }
    )
    topology.append(
        {
            "subtype": "label",
            "data": {"node.kubernetes.io/instance-type": "p5.48xlarge|node-1,node-2"},
        }
    )


def snapshot_document(
    header: Mapping[str, Any],
    *,
    k8s: Sequence[Mapping[str, Any]],
    gpu: Sequence[Mapping[str, Any]],
    release: Mapping[str, Any],
    topology: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The `snapshot.yaml` envelope (spec 9.2) around the K8s, GPU, OS and topology subtypes."""
    return {
        "kind": "Snapshot",
        "apiVersion": "aicr.run/v1",
        "metadata": dict(header),
        "measurements": [
            {"type": "K8s", "subtypes": list(k8s)},
            {"type": "GPU", "subtypes": list(gpu)},
            {"type": "OS", "subtypes": [{"subtype": "release", "data": dict(release)}]},
            {"type": "NodeTopology", "subtypes": list(topology)},
        ],
    }


def _redact_extra(extra: Mapping[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, val in extra.items():
        text = str(val)
        if (
            (key in ("nodesValidated", "nodesTotal") and _COUNT.match(text))
            or (key == "skipReason" and text in _SKIP_REASONS)
            or (key == "runtimeSource" and text in _RUNTIME_SOURCES)
        ):
            kept[key] = val
    return kept


def ctrf_report(phase: Phase, tests: Sequence[TestSpec], *, spec: BundleSpec) -> bytes:
    """`ctrf/<phase>.json`: CTRF 0.0.1, 2-space JSON plus newline; redacted unless `spec.full`."""
    start = int(spec.attested_at.timestamp() * 1000) - 60_000
    entries: list[dict[str, Any]] = []
    for t in tests:
        entry: dict[str, Any] = {
            "name": t.name,
            "status": t.status,
            "duration": t.duration_ms,
            "suite": [phase.value],
        }
        if spec.full and t.message is not None:
            entry["message"] = t.message
        if spec.full and t.trace is not None:
            entry["trace"] = t.trace
        if spec.full and t.stdout:
            entry["stdout"] = list(t.stdout)
        extra = dict(t.extra) if spec.full else _redact_extra(t.extra)
        if extra:
            entry["extra"] = extra
        entries.append(entry)
    counts = {
        s: sum(1 for t in tests if t.status == s)
        for s in ("passed", "failed", "skipped", "pending", "other")
    }
    report = {
        "reportFormat": "CTRF",
        "specVersion": "0.0.1",
        "timestamp": _rfc3339(spec.attested_at),
        "generatedBy": "aicr",
        "results": {
            "tool": {"name": "aicr", "version": spec.aicr_version},
            "summary": {"tests": len(tests), **counts, "start": start, "stop": start + 60_000},
            "tests": entries,
        },
    }
    return go_json(report)


def bom_document(
    recipe_name: str, recipe: Mapping[str, Any], spec: BundleSpec, snapshot: Mapping[str, Any]
) -> dict[str, Any]:
    """CycloneDX 1.6: recipe components, validator images and observed snapshot images."""
    components: list[dict[str, Any]] = []
    for ref in recipe.get("componentRefs") or []:
        name = str(ref.get("name", ""))
        components.append(
            {
                "bom-ref": f"{recipe_name}/{name}",
                "type": "application",
                "name": name,
                "version": str(ref.get("version", "")),
                "properties": [
                    {"name": "aicr:component:type", "value": str(ref.get("type", "Helm"))},
                    {"name": "aicr:helm:chart", "value": str(ref.get("chart", name))},
                ],
            }
        )
    components.extend(
        {"bom-ref": f"validators/{image}", "type": "container", "name": image}
        for image in spec.validator_images
    )
    for m in snapshot.get("measurements") or []:
        for sub in m.get("subtypes") or []:
            if m.get("type") == "K8s" and sub.get("subtype") == "image":
                for ref_text in sorted(str(v) for v in (sub.get("data") or {}).values()):
                    short = (
                        ref_text.split("/", 1)[-1] if "." in ref_text.split("/", 1)[0] else ref_text
                    )
                    components.append(
                        {"bom-ref": f"observed-images/{short}", "type": "container", "name": short}
                    )
    serial = hashlib.sha256(f"{recipe_name}\n{_rfc3339(spec.attested_at)}".encode()).hexdigest()
    return {
        "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": f"urn:uuid:{serial[:8]}-{serial[8:12]}-{serial[12:16]}-{serial[16:20]}-{serial[20:32]}",
        "version": 1,
        "metadata": {
            "timestamp": _rfc3339(spec.attested_at),
            "tools": {
                "components": [
                    {"type": "application", "name": "aicr", "version": spec.aicr_version}
                ]
            },
            "component": {
                "bom-ref": recipe_name,
                "type": "application",
                "name": recipe_name,
                "version": spec.aicr_version,
            },
        },
        "components": components,
        "dependencies": [{"ref": recipe_name, "dependsOn": [c["bom-ref"] for c in components]}],
    }
