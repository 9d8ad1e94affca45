"""Assembly of a test bundle: the payload files and predicate from a spec, then the layer,
manifest, signature and pointer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from generator.model import (
    PHASE_ORDER,
    PredicateType,
    Sha256Hex,
    SignerIdentity,
)
from generator.testing import yamlemit
from generator.testing._bundle_documents import (
    _rfc3339,
    _sha,
    bom_document,
    criteria_match_for,
    ctrf_report,
    default_fingerprint,
    default_snapshot,
    go_json,
    profile_selection,
    recipe_name_for,
    recipe_yaml_and_digest,
)
from generator.testing._bundle_oci import (
    gzip_deterministic,
    layer_tar,
    manifest_json,
    oci_manifest,
    referrer_manifest,
    statement_bytes,
)
from generator.testing._bundle_spec import BuiltBundle, BundleSpec, PointerFields
from generator.testing.authority import TestAuthority


def _payload(spec: BundleSpec) -> tuple[dict[str, bytes], str, Sha256Hex, dict[str, Any]]:
    """The payload files (no manifest/statement yet), recipe name and digest, and the predicate."""
    recipe = spec.recipe
    name = recipe_name_for(recipe)
    recipe_yaml, recipe_digest = recipe_yaml_and_digest(recipe, spec.predicate_type)
    attested = _rfc3339(spec.attested_at)
    fingerprint = (
        dict(spec.fingerprint) if spec.fingerprint is not None else default_fingerprint(recipe)
    )
    snapshot = (
        spec.snapshot
        if spec.snapshot is not None
        else default_snapshot(fingerprint, attested, full=spec.full)
    )
    files: dict[str, bytes] = {"recipe.yaml": recipe_yaml, "snapshot.yaml": yamlemit.emit(snapshot)}
    bom = go_json(bom_document(name, recipe, spec, snapshot))
    files["bom.cdx.json"] = bom
    phases = _phase_reports(spec, files)
    manifest = manifest_json(files)
    predicate = _predicate(spec, name, recipe_digest, attested, fingerprint, phases, bom, manifest)
    files["manifest.json"] = manifest
    return files, name, recipe_digest, predicate


def _phase_reports(spec: BundleSpec, files: dict[str, bytes]) -> dict[str, Any]:
    """Add each tested phase's CTRF report to `files`; the predicate's per-phase counts."""
    phases: dict[str, Any] = {}
    for phase in PHASE_ORDER:
        if phase not in spec.tests:
            continue
        tests = list(spec.tests[phase])
        data = ctrf_report(phase, tests, spec=spec)
        files[f"ctrf/{phase.value}.json"] = data
        phases[phase.value] = {
            "passed": sum(1 for t in tests if t.status == "passed"),
            "failed": sum(1 for t in tests if t.status == "failed"),
            "skipped": sum(1 for t in tests if t.status == "skipped"),
            "ctrfDigest": _sha(data),
        }
    return phases


def _predicate(
    spec: BundleSpec,
    name: str,
    recipe_digest: Sha256Hex,
    attested: str,
    fingerprint: dict[str, Any],
    phases: dict[str, Any],
    bom: bytes,
    manifest: bytes,
) -> dict[str, Any]:
    """The summary predicate (evidence-format 4) over the payload's digests."""
    recipe = spec.recipe
    predicate: dict[str, Any] = {
        "schemaVersion": "1.0.0",
        "attestedAt": attested,
        "aicrVersion": spec.aicr_version,
    }
    if spec.aicr_commit:
        predicate["aicrCommit"] = spec.aicr_commit
    predicate.update(
        {
            "validatorCatalogVersion": "1.0.0",
            "validatorImages": [{"image": i, "digest": ""} for i in sorted(spec.validator_images)]
            or None,
            "recipe": {"name": name, "digest": recipe_digest},
            "fingerprint": fingerprint,
            "criteriaMatch": dict(spec.criteria_match)
            if spec.criteria_match is not None
            else criteria_match_for(recipe, fingerprint),
            "phases": phases,
            "bom": {
                "format": "CycloneDX",
                "version": "1.6",
                "digest": _sha(bom),
                "imageCount": len(json.loads(bom)["components"]),
            },
            "manifest": {"digest": _sha(manifest), "fileCount": len(json.loads(manifest)["files"])},
        }
    )
    if not spec.full:
        applied = ["snapshot.header.allowlist", "snapshot.measurements.allowlist"]
        if spec.tests:
            applied += ["ctrf.tests.omit:message", "ctrf.tests.omit:stdout"]
        predicate["redaction"] = {"policy": "minimal", "version": "v3", "applied": sorted(applied)}
    selection = profile_selection(recipe)
    if selection is not None and spec.predicate_type is not PredicateType.V1:
        profile: dict[str, Any] = {"selection": selection}
        advertiser = ((recipe.get("metadata") or {}).get("selectedProfile") or {}).get("advertiser")
        if advertiser:
            profile["advertiser"] = advertiser
        profile["policyDescriptorIdentity"] = spec.policy_descriptor_identity
        predicate["profile"] = profile
    return predicate


def _default_tag(name: str, recipe_digest: str) -> str:
    return f"{name}-{recipe_digest[:12]}"


def _assemble(
    spec: BundleSpec,
    files: Mapping[str, bytes],
    name: str,
    recipe_digest: Sha256Hex,
    predicate: Mapping[str, Any],
    *,
    authority: TestAuthority | None,
    signer: SignerIdentity | None,
    statement_type: str | None = None,
    subject_hex: str | None = None,
    write_statement: bool = True,
) -> BuiltBundle:
    """Pack `files` into the layer and manifest, then sign (if `signer`) and point at it."""
    ptype = statement_type or spec.predicate_type.value
    predicate = dict(predicate)
    layer_files = dict(files)
    if write_statement:
        layer_files["statement.intoto.json"] = statement_bytes(
            f"recipe:{name}", recipe_digest, ptype, predicate
        )
    tar = layer_tar(layer_files, spec.tar_prefix)
    layer = gzip_deterministic(tar)
    manifest = oci_manifest(layer, _sha(tar), aicr_version=spec.aicr_version, recipe_name=name)
    digest = _sha(manifest)
    tag = spec.tag or _default_tag(name, recipe_digest)
    oci = f"{spec.repository}:{tag}"
    statement = sig = referrer = None
    log_index: int | None = None
    if signer is not None:
        subject = subject_hex or digest.removeprefix("sha256:")
        statement = statement_bytes(oci, subject, ptype, predicate)
        sig, referrer, log_index = _sign(spec, statement, manifest, ptype, authority, signer)
    pointer = PointerFields(
        recipe=name,
        profile=profile_selection(spec.recipe),
        oci=oci,
        digest=digest,
        predicate_type=spec.predicate_type.value,
        attested_at=_rfc3339(spec.attested_at),
        signer=signer,
        rekor_log_index=log_index,
    )
    return BuiltBundle(
        spec=spec,
        recipe_name=name,
        recipe_digest=recipe_digest,
        predicate=MappingProxyType(dict(predicate)),
        files=MappingProxyType(layer_files),
        layer=layer,
        layer_tar_digest=_sha(tar),
        manifest=manifest,
        digest=digest,
        statement=statement,
        sigstore_bundle=sig,
        referrer_manifest=referrer,
        pointer=pointer,
    )


def _sign(
    spec: BundleSpec,
    statement: bytes,
    manifest: bytes,
    ptype: str,
    authority: TestAuthority | None,
    signer: SignerIdentity,
) -> tuple[bytes, bytes, int]:
    """The Sigstore bundle over `statement`, its referrer manifest and its tlog `logIndex`."""
    if authority is None:
        raise ValueError("a signed bundle needs a TestAuthority")
    sig = authority.sign_dsse(
        statement,
        signer=signer,
        signed_at=spec.attested_at,
        rekor_v2=spec.rekor_v2,
        options=spec.signing,
    )
    referrer = referrer_manifest(sig, manifest, ptype)
    entry = json.loads(sig)["verificationMaterial"]["tlogEntries"][0]
    return sig, referrer, int(entry["logIndex"])
