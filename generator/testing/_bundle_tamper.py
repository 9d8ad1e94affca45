"""Altered copies of built bundles for negative tests; each names the check that must catch it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from generator.model import (
    Phase,
    SignerIdentity,
)
from generator.testing._bundle_assembly import _assemble
from generator.testing._bundle_documents import _rfc3339, _sha
from generator.testing._bundle_oci import manifest_json, referrer_manifest
from generator.testing._bundle_spec import _NOT_IN_MANIFEST, BuiltBundle
from generator.testing.authority import TestAuthority


def _payload_files(built: BuiltBundle) -> dict[str, bytes]:
    return {k: v for k, v in built.files.items() if k != "statement.intoto.json"}


def _rebuild(
    built: BuiltBundle,
    files: Mapping[str, bytes],
    predicate: Mapping[str, Any],
    authority: TestAuthority | None,
    **kwargs: Any,
) -> BuiltBundle:
    signer = kwargs.pop("signer", built.pointer.signer)
    return _assemble(
        built.spec,
        files,
        built.recipe_name,
        built.recipe_digest,
        predicate,
        authority=authority,
        signer=signer,
        **kwargs,
    )


def tamper_modify_file(
    built: BuiltBundle, path: str, data: bytes, authority: TestAuthority
) -> BuiltBundle:
    """A listed file changed after `manifest.json` was computed, repacked and re-signed.

    Signature and subject are valid; the manifest inventory check (step 4) must fail.
    """
    if path not in built.files or path in _NOT_IN_MANIFEST:
        raise ValueError(f"{path} is not a manifest-listed file of the bundle")
    files = _payload_files(built)
    files[path] = data
    return _rebuild(built, files, built.predicate, authority)


def tamper_add_file(
    built: BuiltBundle, path: str, data: bytes, authority: TestAuthority
) -> BuiltBundle:
    """A file not listed in `manifest.json`, repacked and re-signed: a stray-file failure (step 4)."""
    files = _payload_files(built)
    files[path] = data
    return _rebuild(built, files, built.predicate, authority)


def tamper_ctrf(
    built: BuiltBundle, phase: Phase, data: bytes, authority: TestAuthority
) -> BuiltBundle:
    """`ctrf/<phase>.json` replaced with the manifest and `predicate.manifest` updated to match,
    but `phases.<phase>.ctrfDigest` left stale: the phase-digest check (step 4.2) must fail."""
    path = f"ctrf/{phase.value}.json"
    if path not in built.files:
        raise ValueError(f"the bundle has no {path}")
    files = _payload_files(built)
    files[path] = data
    files["manifest.json"] = manifest_json(files)
    predicate = dict(built.predicate)
    predicate["manifest"] = {
        "digest": _sha(files["manifest.json"]),
        "fileCount": len(json.loads(files["manifest.json"])["files"]),
    }
    return _rebuild(built, files, predicate, authority)


def tamper_resign(
    built: BuiltBundle, other: SignerIdentity, authority: TestAuthority
) -> BuiltBundle:
    """The same artifact re-signed by `other` while the pointer still claims the original signer:
    the pointer/certificate cross-check (step 2) must fail."""
    again = _rebuild(built, _payload_files(built), built.predicate, authority, signer=other)
    return replace(again, pointer=replace(again.pointer, signer=built.pointer.signer))


def tamper_subject(
    built: BuiltBundle, authority: TestAuthority, subject_hex: str = "ab" * 32
) -> BuiltBundle:
    """A validly signed statement whose subject is another digest (artifact binding, step 2)."""
    return _rebuild(
        built, _payload_files(built), built.predicate, authority, subject_hex=subject_hex
    )


def tamper_predicate_type(
    built: BuiltBundle, predicate_type: str, authority: TestAuthority
) -> BuiltBundle:
    """The statement (signed and unsigned) carries `predicate_type` while the pointer and the
    recipe digest keep the original type: the type coherence / digest / Q2 checks must fail."""
    return _rebuild(
        built, _payload_files(built), built.predicate, authority, statement_type=predicate_type
    )


def tamper_pointer_log_index(built: BuiltBundle, delta: int = 1) -> BuiltBundle:
    """The pointer's `rekorLogIndex` differs from the bundle's tlog entry (step 2 cross-check)."""
    index = built.rekor_log_index
    if index is None:
        raise ValueError("an unsigned bundle has no log index to falsify")
    return replace(built, pointer=replace(built.pointer, rekor_log_index=index + delta))


def tamper_unsigned_claims_signer(built: BuiltBundle, signer: SignerIdentity) -> BuiltBundle:
    """An unsigned bundle (no referrer) whose pointer claims `signer` (step 2 must fail)."""
    bare = replace(built, statement=None, sigstore_bundle=None, referrer_manifest=None)
    return replace(bare, pointer=replace(built.pointer, signer=signer, rekor_log_index=None))


def tamper_foreign_authority(built: BuiltBundle, foreign: TestAuthority) -> BuiltBundle:
    """The same artifact signed through another TestAuthority (untrusted CA/CT/Rekor keys)."""
    signer = built.pointer.signer or built.spec.signer
    if signer is None:
        raise ValueError("an unsigned bundle has no signer to impersonate")
    return _rebuild(built, _payload_files(built), built.predicate, foreign, signer=signer)


def tamper_recipe_name(
    built: BuiltBundle, name: str, *, authority: TestAuthority | None = None
) -> BuiltBundle:
    """A recipe-name mismatch. Without `authority`: only the pointer names `name` (step 3 fast
    fail). With `authority`: the signed predicate's `recipe.name` is `name` (step 4 identity)."""
    if authority is None:
        return replace(built, pointer=replace(built.pointer, recipe=name))
    predicate = dict(built.predicate)
    predicate["recipe"] = {"name": name, "digest": built.recipe_digest}
    again = _rebuild(built, _payload_files(built), predicate, authority)
    return replace(again, pointer=replace(again.pointer, recipe=built.recipe_name))


def tamper_attested_at(built: BuiltBundle, attested_at: datetime) -> BuiltBundle:
    """The pointer's `attestedAt` differs from `predicate.attestedAt` (a beyond-aicr check)."""
    return replace(built, pointer=replace(built.pointer, attested_at=_rfc3339(attested_at)))


def tamper_statement(
    built: BuiltBundle, edit: Callable[[dict[str, Any]], None], authority: TestAuthority
) -> BuiltBundle:
    """Re-sign after `edit` mutates a copy of the signed statement (for one-off negative cases)."""
    if built.statement is None or built.pointer.signer is None:
        raise ValueError("an unsigned bundle has no statement to edit")
    doc = json.loads(built.statement)
    edit(doc)
    payload = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    sig = authority.sign_dsse(
        payload,
        signer=built.pointer.signer,
        signed_at=built.spec.attested_at,
        rekor_v2=built.spec.rekor_v2,
    )
    index = int(json.loads(sig)["verificationMaterial"]["tlogEntries"][0]["logIndex"])
    return replace(
        built,
        statement=payload,
        sigstore_bundle=sig,
        referrer_manifest=referrer_manifest(sig, built.manifest, str(doc.get("predicateType", ""))),
        pointer=replace(built.pointer, rekor_log_index=index),
    )
