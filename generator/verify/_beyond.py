"""The checks aicr does not make (spec 11), as rows marked `beyond_aicr`, and the `Evidence`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator import strictjson
from generator.ctrf import parse_ctrf
from generator.errors import EvidenceDashError
from generator.model import (
    PHASE_ORDER,
    Evidence,
    OciDigest,
    Phase,
    Pointer,
    PointerLocation,
    PredicateType,
    SubRow,
)
from generator.tree.yamlio import load_yaml
from generator.verify._fields import (
    _get,
    _normalize_time,
    _num_eq,
    _posix_parts,
    _schema_version_ok,
    _sha,
)

Rows = list[tuple[SubRow, bool]]
"""Spec 11 results in order: each row, and whether it fails the bundle."""


def _row(out: Rows, key: str, value: str, failed: bool) -> None:
    out.append((SubRow(key, value, beyond_aicr=True), failed))


def _beyond_aicr(
    pointer: Pointer,
    location: PointerLocation,
    files: Mapping[str, bytes],
    ptype: PredicateType,
    predicate: Mapping[str, Any],
    recipe: Mapping[str, Any],
    recipe_bytes: bytes,
    entries: list[Any],
) -> tuple[Rows, Evidence | None]:
    """Spec 11 checks as (row, failed) pairs, and the Evidence when every file parses."""
    out: Rows = []
    bom = _bom_rows(out, files, predicate)
    _claim_rows(out, pointer, location, predicate, entries)
    ctrf = _parse_ctrf(out, files)
    snapshot_ok, snapshot = _parse_snapshot(out, files)
    if ctrf is None or not snapshot_ok:
        return out, None
    evidence = Evidence(
        bundle_digest=OciDigest(str(pointer.bundle.digest)),
        evidence_ref=pointer.bundle.pinned_ref,
        predicate_type=ptype,
        predicate=predicate,
        recipe=recipe,
        recipe_yaml=recipe_bytes,
        snapshot=snapshot,
        ctrf=ctrf,
        bom=bom,
    )
    return out, evidence


def _bom_rows(
    out: Rows, files: Mapping[str, bytes], predicate: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """BOM digest and image count against the predicate's claim; the parsed BOM, if any."""
    bom_claim = predicate.get("bom")
    bom_bytes = files.get("bom.cdx.json")
    bom: Mapping[str, Any] | None = None
    if bom_bytes is not None:
        try:
            doc = strictjson.loads(bom_bytes)
            bom = doc if isinstance(doc, dict) else None
        except strictjson.JsonLimitError as exc:
            _row(out, "bom.cdx.json", strictjson.problem(exc), True)
        except (ValueError, UnicodeDecodeError):
            bom = None
    if not isinstance(bom_claim, dict):
        _row(out, "bom.digest", "no bom in predicate", bom_claim is not None)
        return bom
    if bom_bytes is None:
        _row(out, "bom.digest", "bom.cdx.json missing from bundle", True)
        return bom
    want = bom_claim.get("digest")
    got = _sha(bom_bytes)
    _row(
        out,
        "bom.digest",
        "matches" if got == want else f"mismatch (got {got}, want {want})",
        got != want,
    )
    count = bom_claim.get("imageCount")
    components = bom.get("components") if bom is not None else None
    actual = len(components) if isinstance(components, list) else None
    same = actual is not None and _num_eq(count, actual)
    _row(
        out,
        "bom.imageCount",
        f"{actual}" if same else f"mismatch (predicate {count!r}, bom.cdx.json {actual!r})",
        not same,
    )
    return bom


def _claim_rows(
    out: Rows,
    pointer: Pointer,
    location: PointerLocation,
    predicate: Mapping[str, Any],
    entries: list[Any],
) -> None:
    """File count, schema version, attestedAt, pointer file name and criteriaMatch."""
    count = _get(predicate, "manifest", "fileCount")
    same = _num_eq(count, len(entries))
    _row(
        out,
        "manifest.fileCount",
        str(len(entries))
        if same
        else f"mismatch (predicate {count!r}, manifest.json {len(entries)})",
        not same,
    )
    version = predicate.get("schemaVersion")
    ok_version = _schema_version_ok(version) or version == "1.0.0"
    _row(
        out,
        "predicate.schemaVersion",
        str(version) if ok_version else f"{version!r} is not 1.0.x",
        not ok_version,
    )
    attested = _normalize_time(predicate.get("attestedAt"))
    same = attested is not None and attested == pointer.attested_at
    _row(
        out,
        "pointer attestedAt",
        pointer.attested_at
        if same
        else f"mismatch (pointer {pointer.attested_at}, predicate {predicate.get('attestedAt')!r})",
        not same,
    )
    if location.flat:
        _row(out, "pointer file name", "not applicable (flat pointer)", False)
    else:
        want_name = f"{str(pointer.bundle.digest).replace(':', '-')}.yaml"
        got_name = (_posix_parts(location.path) or [""])[-1]  # PurePosixPath(...).name
        _row(
            out,
            "pointer file name",
            got_name if got_name == want_name else f"mismatch ({got_name}, want {want_name})",
            got_name != want_name,
        )
    value, failed = _criteria_row(predicate.get("criteriaMatch"))
    _row(out, "criteriaMatch", value, failed)


def _parse_ctrf(out: Rows, files: Mapping[str, bytes]) -> dict[Phase, Any] | None:
    """Each phase's CTRF report as the engine reads it; None (rows recorded) when one fails."""
    ctrf = {}
    ctrf_ok = True
    for phase in PHASE_ORDER:
        data = files.get(f"ctrf/{phase}.json")
        if data is None:
            continue
        try:
            ctrf[phase] = parse_ctrf(data, phase, file=f"ctrf/{phase}.json")
        except EvidenceDashError as exc:
            _row(out, f"ctrf/{phase}.json", f"not a CTRF report: {exc.message}", True)
            ctrf_ok = False
    return ctrf if ctrf_ok else None


def _parse_snapshot(out: Rows, files: Mapping[str, bytes]) -> tuple[bool, Mapping[str, Any] | None]:
    """(parsed, snapshot.yaml as a mapping or None when absent or empty); a failure adds a row."""
    if "snapshot.yaml" not in files:
        return True, None
    try:
        snap = load_yaml(files["snapshot.yaml"], file="snapshot.yaml")
    except EvidenceDashError as exc:
        _row(out, "snapshot.yaml", f"cannot be decoded: {exc.message}", True)
        return False, None
    if snap is not None and not isinstance(snap, dict):
        _row(out, "snapshot.yaml", "is not a mapping", True)
        return False, None
    return True, snap


def _criteria_row(value: object) -> tuple[str, bool]:
    """criteriaMatch consistency: `matched` is false iff a dimension is `mismatched`."""
    if value is None:
        return "absent", False
    if not isinstance(value, dict) or not isinstance(value.get("matched"), bool):
        return "malformed (no boolean matched)", True
    per = value.get("perDimension")
    dims: list[tuple[str, object]] = []
    if isinstance(per, list):
        dims = [(str(d.get("dimension")), d.get("match")) for d in per if isinstance(d, dict)]
    elif isinstance(per, dict):
        dims = [(str(k), v.get("match") if isinstance(v, dict) else None) for k, v in per.items()]
    elif per is not None:
        return "malformed perDimension", True
    mismatched = [name for name, match in dims if match == "mismatched"]
    matched = value["matched"]
    if matched == bool(mismatched):
        return (
            f"inconsistent: matched={str(matched).lower()} but mismatched dimensions "
            f"{mismatched or '(none)'}"
        ), True
    if mismatched:
        return f"matched=false; mismatched: {', '.join(mismatched)} (flagged, not failed)", False
    return "matched=true", False
