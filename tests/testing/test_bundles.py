"""The evidence bundle factory: self-consistent digests, deterministic layers, real signatures,
the OCI layout, the pointer, and that each tamper helper breaks exactly what it claims to."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from sigstore.errors import CertValidationError, VerificationError
from sigstore.models import Bundle
from sigstore.verify import Verifier
from sigstore.verify.policy import Identity

from generator.bundle.layout_writer import LayoutWriter
from generator.model import Phase, PredicateType, SignerIdentity
from generator.testing import yamlemit
from generator.testing.authority import TestAuthority
from generator.testing.bundles import (
    BuiltBundle,
    BundleSpec,
    PointerFields,
    TestSpec,
    build_bundle,
    make_recipe,
    nccl_test,
    recipe_name_for,
    render_pointer,
    tamper_add_file,
    tamper_attested_at,
    tamper_ctrf,
    tamper_foreign_authority,
    tamper_modify_file,
    tamper_pointer_log_index,
    tamper_predicate_type,
    tamper_recipe_name,
    tamper_resign,
    tamper_subject,
    tamper_unsigned_claims_signer,
    write_to_layout,
)
from tests.testing.conftest import EMAIL, SHARD, WORKFLOW

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"

TESTS: dict[Phase, list[TestSpec]] = {
    Phase.DEPLOYMENT: [
        TestSpec("operator-health"),
        TestSpec("expected-resources", "failed", message="missing pod"),
    ],
    Phase.PERFORMANCE: [nccl_test("nccl-all-reduce-bw-net", 376.40)],
    Phase.CONFORMANCE: [
        TestSpec("dra-support"),
        TestSpec("gang-scheduling", "skipped", extra={"skipReason": "no-gpu-nodes", "secret": "x"}),
    ],
}


def spec(**kw: Any) -> BundleSpec:
    base: dict[str, Any] = {"recipe": make_recipe(), "signer": EMAIL, "tests": TESTS}
    base.update(kw)
    return BundleSpec(**base)


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def verified_statement(
    verifier: Verifier, built: BuiltBundle, signer: SignerIdentity = EMAIL
) -> dict[str, Any]:
    assert built.sigstore_bundle is not None
    _, payload = verifier.verify_dsse(
        Bundle.from_json(built.sigstore_bundle),
        Identity(identity=signer.identity, issuer=signer.issuer),
    )
    result: dict[str, Any] = json.loads(payload)
    return result


def untar(layer: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(layer))) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


# --------------------------------------------------------------------------- self-consistency


@pytest.mark.parametrize("ptype", list(PredicateType))
def test_digests_are_self_consistent(authority: TestAuthority, ptype: PredicateType) -> None:
    profile = None if ptype is PredicateType.V1 else ("gpuStack", "bundle-installer")
    built = build_bundle(spec(recipe=make_recipe(profile=profile), predicate_type=ptype), authority)
    manifest = json.loads(built.files["manifest.json"])
    listed = {f["path"] for f in manifest["files"]}
    assert listed == set(built.files) - {"manifest.json", "statement.intoto.json"}
    for f in manifest["files"]:
        assert f["sha256"] == sha(built.files[f["path"]]) and f["size"] == len(
            built.files[f["path"]]
        )
    pred = built.predicate
    assert pred["manifest"] == {
        "digest": sha(built.files["manifest.json"]),
        "fileCount": len(manifest["files"]),
    }
    for phase, entry in pred["phases"].items():
        assert entry["ctrfDigest"] == sha(built.files[f"ctrf/{phase}.json"])
    bom = json.loads(built.files["bom.cdx.json"])
    assert pred["bom"]["digest"] == sha(built.files["bom.cdx.json"])
    assert pred["bom"]["imageCount"] == len(bom["components"]) and bom["specVersion"] == "1.6"
    assert pred["phases"]["deployment"] == {
        **pred["phases"]["deployment"],
        "passed": 1,
        "failed": 1,
        "skipped": 0,
    }
    assert ("profile" in pred) is (ptype is not PredicateType.V1)
    assert pred["recipe"]["name"] == recipe_name_for(built.spec.recipe) == built.recipe_name


def test_recipe_digest_uses_the_type_canonicalizer(authority: TestAuthority) -> None:
    legacy = build_bundle(spec(predicate_type=PredicateType.V1), authority)
    v3 = build_bundle(spec(predicate_type=PredicateType.V3), authority)
    assert legacy.recipe_digest == hashlib.sha256(legacy.files["recipe.yaml"]).hexdigest()
    assert v3.files["recipe.yaml"] == legacy.files["recipe.yaml"]
    assert v3.recipe_digest != legacy.recipe_digest  # metadata.version is stripped for v3
    unversioned = dict(make_recipe())
    unversioned["metadata"] = {}
    stripped = build_bundle(
        spec(recipe={k: v for k, v in unversioned.items() if k != "metadata"}), authority
    )
    assert v3.recipe_digest == stripped.recipe_digest


def test_oci_manifest_layer_and_annotations(authority: TestAuthority) -> None:
    built = build_bundle(spec(), authority)
    manifest = json.loads(built.manifest)
    assert built.digest == sha(built.manifest)
    assert manifest["artifactType"] == "application/vnd.nvidia.aicr.artifact"
    (layer,) = manifest["layers"]
    assert layer["digest"] == sha(built.layer) and layer["size"] == len(built.layer)
    assert layer["annotations"]["io.deis.oras.content.digest"] == sha(gzip.decompress(built.layer))
    assert layer["annotations"]["io.deis.oras.content.unpack"] == "true"
    assert manifest["annotations"]["org.opencontainers.image.created"] == "1970-01-01T00:00:00Z"
    assert manifest["annotations"]["org.opencontainers.image.version"] == built.spec.aicr_version
    assert untar(built.layer) == dict(built.files)
    assert built.layer[9] == 255 and built.layer[4:8] == b"\0\0\0\0"  # OS byte, zero mtime


def test_tar_prefix_puts_files_under_summary_bundle(authority: TestAuthority) -> None:
    built = build_bundle(spec(tar_prefix="summary-bundle/"), authority)
    assert set(untar(built.layer)) == {"summary-bundle/" + p for p in built.files}


def test_layer_is_deterministic() -> None:
    one = build_bundle(spec(), TestAuthority("det", shard_offset=SHARD))
    two = build_bundle(spec(), TestAuthority("det", shard_offset=SHARD))
    assert one.layer == two.layer and one.digest == two.digest and one.manifest == two.manifest
    assert one.sigstore_bundle == two.sigstore_bundle
    other = build_bundle(spec(aicr_version="v0.15.0"), TestAuthority("det", shard_offset=SHARD))
    assert other.digest != one.digest


def test_signed_statement_subject_is_the_bundle_digest(
    authority: TestAuthority, verifier: Verifier
) -> None:
    built = build_bundle(
        spec(predicate_type=PredicateType.V2, recipe=make_recipe(profile=("gpuStack", "x"))),
        authority,
    )
    statement = verified_statement(verifier, built)
    assert statement["subject"] == [
        {"name": built.oci_ref, "digest": {"sha256": built.digest.removeprefix("sha256:")}}
    ]
    assert statement["predicateType"] == PredicateType.V2.value
    assert statement["predicate"] == dict(built.predicate)
    unsigned = json.loads(built.files["statement.intoto.json"])
    assert unsigned["subject"] == [
        {"name": f"recipe:{built.recipe_name}", "digest": {"sha256": built.recipe_digest}}
    ]
    assert unsigned["predicate"] == statement["predicate"]


def test_rekor_v2_bundle_verifies(authority: TestAuthority, verifier: Verifier) -> None:
    built = build_bundle(spec(rekor_v2=True, signer=WORKFLOW), authority)
    assert (
        verified_statement(verifier, built, WORKFLOW)["subject"][0]["digest"]["sha256"]
        == built.digest[7:]
    )


def test_minimal_and_full_redaction(authority: TestAuthority) -> None:
    minimal = build_bundle(spec(), authority)
    full = build_bundle(spec(full=True), authority)
    perf_min = json.loads(minimal.files["ctrf/performance.json"])["results"]["tests"][0]
    perf_full = json.loads(full.files["ctrf/performance.json"])["results"]["tests"][0]
    assert "stdout" not in perf_min
    assert (
        perf_full["stdout"][0] == "NCCL All Reduce bandwidth (nccl-all-reduce-bw-net): 376.40 GB/s"
    )
    assert perf_full["stdout"][1] == "Constraint: >= 300 \u2192 true"
    assert b"\\u003e= 300" in full.files["ctrf/performance.json"]  # Go's JSON escaping
    skipped_min = json.loads(minimal.files["ctrf/conformance.json"])["results"]["tests"][1]
    assert skipped_min["extra"] == {"skipReason": "no-gpu-nodes"}
    assert "message" not in json.loads(minimal.files["ctrf/deployment.json"])["results"]["tests"][1]
    assert minimal.predicate["redaction"]["policy"] == "minimal"
    assert minimal.predicate["redaction"]["applied"] == sorted(
        minimal.predicate["redaction"]["applied"]
    )
    assert "redaction" not in full.predicate
    assert b"smi" in full.files["snapshot.yaml"] and b"smi" not in minimal.files["snapshot.yaml"]
    recipe = YAML(typ="safe").load(minimal.files["recipe.yaml"])
    assert recipe["validation"]["performance"]["constraints"][0]["value"] == ">= 300"


@pytest.mark.parametrize(
    ("gbps", "status"), [(376.4, "passed"), (270.0, "passed"), (269.9, "failed")]
)
def test_nccl_pass_rule_has_ten_percent_tolerance(gbps: float, status: str) -> None:
    assert nccl_test("nccl-all-reduce-bw", gbps, ">= 300").status == status


def test_pointer_yaml_and_path(authority: TestAuthority) -> None:
    built = build_bundle(
        spec(
            recipe=make_recipe(profile=("gpuStack", "bundle-installer")),
            predicate_type=PredicateType.V3,
        ),
        authority,
    )
    doc = YAML(typ="safe").load(built.pointer_yaml)
    (att,) = doc["attestations"]
    assert list(doc) == ["attestations", "profile", "recipe", "schemaVersion"]
    assert doc["schemaVersion"] == "1.0.0" and doc["profile"] == "gpuStack=bundle-installer"
    assert att["bundle"] == {
        "digest": built.digest,
        "oci": built.oci_ref,
        "predicateType": PredicateType.V3.value,
    }
    assert att["signer"]["rekorLogIndex"] == built.rekor_log_index
    assert built.rekor_log_index is not None and built.rekor_log_index > SHARD
    assert (
        built.pointer_path
        == f"evidence/{built.recipe_name}/{EMAIL.slug}/sha256-{built.digest[7:]}.yaml"
    )
    assert "  - attestedAt: 2026-09-01T12:00:00Z\n" in built.pointer_yaml
    unsigned = build_bundle(spec(signer=None))
    assert unsigned.pointer_path == f"evidence/{unsigned.recipe_name}.yaml" and not unsigned.signed
    assert "signer" not in YAML(typ="safe").load(unsigned.pointer_yaml)["attestations"][0]


@pytest.mark.fixtures
def test_pointer_rendering_matches_real_pointers() -> None:
    root = FIXTURES / "aicr-tree"
    if not root.is_dir():
        pytest.skip("shared fixtures are not available")
    files = sorted(root.glob("*/recipes/evidence/*/*/sha256-*.yaml"))
    assert files
    for path in files:
        raw = path.read_text(encoding="utf-8")
        doc = YAML(typ="base").load(raw)
        att = doc["attestations"][0]
        signer = att.get("signer")
        fields = PointerFields(
            recipe=doc["recipe"],
            profile=doc.get("profile"),
            oci=att["bundle"]["oci"],
            digest=att["bundle"]["digest"],
            predicate_type=att["bundle"]["predicateType"],
            attested_at=att["attestedAt"],
            signer=SignerIdentity(signer["issuer"], signer["identity"]) if signer else None,
            rekor_log_index=int(signer["rekorLogIndex"])
            if signer and "rekorLogIndex" in signer
            else None,
        )
        assert render_pointer(fields) == raw, path.name


@pytest.mark.fixtures
def test_stand_in_emitter_reproduces_aicr_recipe_yaml() -> None:
    path = FIXTURES / "aicr-tree" / "testdata" / "summary-bundle" / "recipe.yaml"
    if not path.is_file():
        pytest.skip("shared fixtures are not available")
    raw = path.read_bytes()
    assert yamlemit.emit(YAML(typ="safe").load(raw)) == raw


# --------------------------------------------------------------------------- OCI layout


def test_write_to_layout(authority: TestAuthority, tmp_path: Path) -> None:
    built = build_bundle(spec(), authority)
    writer = LayoutWriter(tmp_path)
    write_to_layout(built, writer)
    writer.close()
    index = json.loads((tmp_path / "index.json").read_text())
    by_name = {
        (m.get("annotations") or {}).get("org.opencontainers.image.ref.name"): m
        for m in index["manifests"]
    }
    assert by_name[built.tag]["digest"] == built.digest
    assert by_name[built.tag]["artifactType"] == "application/vnd.nvidia.aicr.artifact"
    referrer = next(
        m
        for m in index["manifests"]
        if m.get("artifactType") == "application/vnd.dev.sigstore.bundle.v0.3+json"
    )
    tag_index = json.loads(
        (
            tmp_path / "blobs/sha256" / by_name["sha256-" + built.digest[7:]]["digest"][7:]
        ).read_bytes()
    )
    assert [m["digest"] for m in tag_index["manifests"]] == [referrer["digest"]]
    ref_manifest = json.loads((tmp_path / "blobs/sha256" / referrer["digest"][7:]).read_bytes())
    assert ref_manifest["subject"] == {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": built.digest,
        "size": len(built.manifest),
    }
    (layer,) = ref_manifest["layers"]
    assert (tmp_path / "blobs/sha256" / layer["digest"][7:]).read_bytes() == built.sigstore_bundle
    for blob in (tmp_path / "blobs/sha256").iterdir():
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name


def test_building_100_signed_bundles_is_fast() -> None:
    a = TestAuthority("speed", shard_offset=SHARD)
    started = time.process_time()  # CPU time: the machine's load does not change it much
    for i in range(100):
        build_bundle(spec(attested_at=datetime(2026, 9, 1, 12, 0, i % 60, tzinfo=UTC)), a)
    cpu = time.process_time() - started
    assert cpu < 5.0, f"100 bundles took {cpu:.2f}s of CPU"


# --------------------------------------------------------------------------- tampers


def test_tamper_modify_file_breaks_only_the_inventory(
    authority: TestAuthority, verifier: Verifier
) -> None:
    built = build_bundle(spec(), authority)
    bad = tamper_modify_file(built, "snapshot.yaml", b"kind: Snapshot\n", authority)
    statement = verified_statement(verifier, bad)
    assert statement["subject"][0]["digest"]["sha256"] == bad.digest[7:] != built.digest[7:]
    listed = {f["path"]: f["sha256"] for f in json.loads(bad.files["manifest.json"])["files"]}
    assert listed["snapshot.yaml"] != sha(bad.files["snapshot.yaml"])
    assert untar(bad.layer)["snapshot.yaml"] == b"kind: Snapshot\n"


def test_tamper_add_file_is_unlisted(authority: TestAuthority, verifier: Verifier) -> None:
    bad = tamper_add_file(build_bundle(spec(), authority), "extra.txt", b"hi", authority)
    verified_statement(verifier, bad)
    assert "extra.txt" in untar(bad.layer)
    assert "extra.txt" not in {f["path"] for f in json.loads(bad.files["manifest.json"])["files"]}


def test_tamper_ctrf_leaves_only_the_phase_digest_stale(
    authority: TestAuthority, verifier: Verifier
) -> None:
    built = build_bundle(spec(), authority)
    bad = tamper_ctrf(built, Phase.DEPLOYMENT, b"{}\n", authority)
    pred = verified_statement(verifier, bad)["predicate"]
    assert pred["manifest"]["digest"] == sha(bad.files["manifest.json"])
    assert pred["phases"]["deployment"]["ctrfDigest"] != sha(bad.files["ctrf/deployment.json"])


def test_tamper_resign_keeps_the_claimed_signer(
    authority: TestAuthority, verifier: Verifier
) -> None:
    built = build_bundle(spec(), authority)
    bad = tamper_resign(built, WORKFLOW, authority)
    assert bad.pointer.signer == EMAIL
    with pytest.raises(VerificationError, match="OIDCIssuer does not match"):
        verified_statement(verifier, bad, EMAIL)
    verified_statement(verifier, bad, WORKFLOW)


def test_tamper_subject(authority: TestAuthority, verifier: Verifier) -> None:
    bad = tamper_subject(build_bundle(spec(), authority), authority)
    assert verified_statement(verifier, bad)["subject"][0]["digest"]["sha256"] != bad.digest[7:]


def test_tamper_predicate_type(authority: TestAuthority, verifier: Verifier) -> None:
    bad = tamper_predicate_type(build_bundle(spec(), authority), PredicateType.V3.value, authority)
    assert verified_statement(verifier, bad)["predicateType"] == PredicateType.V3.value
    assert bad.pointer.predicate_type == PredicateType.V1.value


def test_tamper_pointer_log_index(authority: TestAuthority) -> None:
    built = build_bundle(spec(), authority)
    bad = tamper_pointer_log_index(built)
    assert (
        YAML(typ="safe").load(bad.pointer_yaml)["attestations"][0]["signer"]["rekorLogIndex"]
        == built.rekor_log_index + 1
    )  # type: ignore[operator]


def test_tamper_unsigned_claims_signer(authority: TestAuthority) -> None:
    bad = tamper_unsigned_claims_signer(build_bundle(spec(signer=None)), EMAIL)
    assert not bad.signed and bad.referrer_manifest is None
    assert (
        YAML(typ="safe").load(bad.pointer_yaml)["attestations"][0]["signer"]["identity"]
        == EMAIL.identity
    )
    assert bad.pointer_path.startswith(f"evidence/{bad.recipe_name}/{EMAIL.slug}/")


def test_tamper_foreign_authority(authority: TestAuthority, verifier: Verifier) -> None:
    rogue = TestAuthority("rogue", name=authority.name)
    bad = tamper_foreign_authority(build_bundle(spec(), authority), rogue)
    with pytest.raises(CertValidationError):
        verified_statement(verifier, bad)


def test_tamper_recipe_name(authority: TestAuthority, verifier: Verifier) -> None:
    built = build_bundle(spec(), authority)
    in_pointer = tamper_recipe_name(built, "other-recipe")
    assert (
        in_pointer.pointer.recipe == "other-recipe"
        and in_pointer.predicate["recipe"]["name"] == built.recipe_name
    )
    in_predicate = tamper_recipe_name(built, "other-recipe", authority=authority)
    assert (
        verified_statement(verifier, in_predicate)["predicate"]["recipe"]["name"] == "other-recipe"
    )
    assert in_predicate.pointer.recipe == built.recipe_name


def test_tamper_attested_at(authority: TestAuthority) -> None:
    built = build_bundle(spec(), authority)
    bad = tamper_attested_at(built, datetime(2026, 9, 2, tzinfo=UTC))
    assert bad.pointer.attested_at != built.predicate["attestedAt"]
    assert bad.digest == built.digest and bad.sigstore_bundle == built.sigstore_bundle


def test_spec_is_frozen() -> None:
    s = spec()
    with pytest.raises(AttributeError):
        s.full = True  # type: ignore[misc]
    assert replace(s, full=True).full


@pytest.mark.parametrize("full", [False, True])
def test_recipe_yaml_is_already_canonical(authority: TestAuthority, full: bool) -> None:
    from generator.model import Canonicalizer
    from generator.recipe import canonical

    built = build_bundle(
        spec(full=full, recipe=make_recipe(profile=("gpuStack", "a.b"))), authority
    )
    assert (
        canonical.canonicalize(built.files["recipe.yaml"], Canonicalizer.LEGACY)
        == built.files["recipe.yaml"]
    )
    assert (
        canonical.canonicalize(built.files["snapshot.yaml"], Canonicalizer.LEGACY)
        == built.files["snapshot.yaml"]
    )
