"""The evidence bundle factory: aicr-shaped summary bundles, OCI artifacts, signatures, pointers.

`build_bundle(spec, authority)` turns a `BundleSpec` into a `BuiltBundle` holding every artefact
aicr would produce (evidence-format.md 3, 4, 8, 9): the payload files with their exact bytes,
`manifest.json`, the unsigned statement, the deterministic gzip tar layer, the OCI image manifest
and its digest (the bundle digest), the signed statement and its Sigstore bundle (from a
`TestAuthority`), the signature referrer manifest, and the pointer YAML with its tree path.
`write_to_layout` stores it in an OCI image layout. The `tamper_*` helpers return altered copies
for negative tests; each names the check that must catch it.

Same spec and same authority state give the same bytes: the layer and the bundle digest depend
only on the spec (no wall clock, no randomness).
"""

from __future__ import annotations

import json

from generator.bundle.layout_writer import INDEX_MEDIA_TYPE, LayoutWriter
from generator.testing._bundle_assembly import _assemble, _payload
from generator.testing._bundle_documents import (
    bom_document,
    criteria_match_for,
    ctrf_report,
    default_fingerprint,
    default_snapshot,
    go_json,
    profile_selection,
    recipe_name_for,
    recipe_yaml_and_digest,
    snapshot_document,
)
from generator.testing._bundle_oci import (
    gzip_deterministic,
    layer_tar,
    manifest_json,
    oci_manifest,
    referrer_manifest,
    statement_bytes,
)
from generator.testing._bundle_spec import (
    AICR_ARTIFACT_TYPE,
    EMPTY_CONFIG,
    EMPTY_POLICY_IDENTITY,
    LAYER_MEDIA_TYPE,
    OCI_EMPTY_MEDIA_TYPE,
    OCI_MANIFEST_MEDIA_TYPE,
    STATEMENT_TYPE,
    BuiltBundle,
    BundleSpec,
    PointerFields,
    TestSpec,
    make_recipe,
    nccl_test,
    render_pointer,
)
from generator.testing._bundle_tamper import (
    tamper_add_file,
    tamper_attested_at,
    tamper_ctrf,
    tamper_foreign_authority,
    tamper_modify_file,
    tamper_pointer_log_index,
    tamper_predicate_type,
    tamper_recipe_name,
    tamper_resign,
    tamper_statement,
    tamper_subject,
    tamper_unsigned_claims_signer,
)
from generator.testing.authority import BUNDLE_MEDIA_TYPE, TestAuthority

__all__ = [
    "AICR_ARTIFACT_TYPE",
    "EMPTY_CONFIG",
    "EMPTY_POLICY_IDENTITY",
    "LAYER_MEDIA_TYPE",
    "OCI_EMPTY_MEDIA_TYPE",
    "OCI_MANIFEST_MEDIA_TYPE",
    "STATEMENT_TYPE",
    "BuiltBundle",
    "BundleSpec",
    "PointerFields",
    "TestSpec",
    "bom_document",
    "build_bundle",
    "criteria_match_for",
    "ctrf_report",
    "default_fingerprint",
    "default_snapshot",
    "go_json",
    "gzip_deterministic",
    "layer_tar",
    "make_recipe",
    "manifest_json",
    "nccl_test",
    "oci_manifest",
    "profile_selection",
    "recipe_name_for",
    "recipe_yaml_and_digest",
    "referrer_manifest",
    "render_pointer",
    "snapshot_document",
    "statement_bytes",
    "tamper_add_file",
    "tamper_attested_at",
    "tamper_ctrf",
    "tamper_foreign_authority",
    "tamper_modify_file",
    "tamper_pointer_log_index",
    "tamper_predicate_type",
    "tamper_recipe_name",
    "tamper_resign",
    "tamper_statement",
    "tamper_subject",
    "tamper_unsigned_claims_signer",
    "write_to_layout",
]


def build_bundle(spec: BundleSpec, authority: TestAuthority | None = None) -> BuiltBundle:
    """Build every artefact of the evidence bundle `spec` describes; sign it with `authority`."""
    files, name, digest, predicate = _payload(spec)
    return _assemble(spec, files, name, digest, predicate, authority=authority, signer=spec.signer)


def write_to_layout(built: BuiltBundle, writer: LayoutWriter) -> None:
    """Store the bundle in an OCI layout: config, layer, the manifest (ref = tag), and if signed
    the Sigstore bundle blob, the referrer manifest and the `sha256-<hex>` referrers tag index."""
    writer.put_blob(EMPTY_CONFIG)
    writer.put_blob(built.layer)
    writer.add_manifest(
        built.manifest,
        OCI_MANIFEST_MEDIA_TYPE,
        artifact_type=AICR_ARTIFACT_TYPE,
        ref_name=built.tag,
    )
    if built.sigstore_bundle is None or built.referrer_manifest is None:
        return
    writer.put_blob(built.sigstore_bundle)
    ref_digest = writer.add_manifest(
        built.referrer_manifest, OCI_MANIFEST_MEDIA_TYPE, artifact_type=BUNDLE_MEDIA_TYPE
    )
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [
            {
                "mediaType": OCI_MANIFEST_MEDIA_TYPE,
                "digest": ref_digest,
                "size": len(built.referrer_manifest),
                "artifactType": BUNDLE_MEDIA_TYPE,
                "annotations": json.loads(built.referrer_manifest)["annotations"],
            }
        ],
    }
    writer.add_manifest(
        go_json(index, indent=None),
        INDEX_MEDIA_TYPE,
        ref_name="sha256-" + built.digest.removeprefix("sha256:"),
    )
