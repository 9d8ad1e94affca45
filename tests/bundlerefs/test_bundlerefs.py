"""`--bundle-refs`: first-party runs without a pointer, and evidence that needed credentials."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from generator.build import BuildOptions, run_build
from generator.bundlerefs import parse_bundle_refs
from generator.cli import main
from generator.data.writers import schema_text, series_file_name
from generator.errors import InputError
from generator.model import (
    FailureCause,
    FailureClass,
    NoVerdict,
    Pending,
    Rejected,
    SignerIdentity,
    Verified,
)
from generator.testing.bundles import EMPTY_CONFIG, OCI_MANIFEST_MEDIA_TYPE, BuiltBundle
from generator.verify.serialize import verdict_from_json, verdict_to_json
from tests.bundle.conftest import FakeRegistry
from tests.bundlerefs.conftest import GITHUB, REPOSITORY, UAT, UAT_PATTERN, Tree

HEX = "ab" * 32
GOOD = {"ref": f"{REPOSITORY}@sha256:{HEX}", "issuer": GITHUB, "identityPattern": UAT_PATTERN}


def refs_file(tmp_path: Path, entries: list[dict[str, Any]], name: str = "refs.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def entry_for(bundle: BuiltBundle, **extra: Any) -> dict[str, Any]:
    return {"ref": bundle.pinned_ref, "issuer": GITHUB, "identityPattern": UAT_PATTERN, **extra}


def build(tree: Tree, tmp_path: Path, refs: Path, *layouts: Path, **more: Any) -> dict[str, Any]:
    out = tmp_path / "site"
    run_build(
        BuildOptions.flat(
            recipes=tree.recipes,
            out=out,
            oci_layouts=(*layouts, tree.recipes / "bundles"),
            trust_root=tree.recipes / "trust" / "trusted_root.json",
            cache=tmp_path / "cache",
            data_only=True,
            quiet=True,
            jobs=1,
            bundle_refs=refs,
            **more,
        )
    )
    data = out / "data"
    doc = json.loads((data / "pointers.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, json.loads(schema_text("pointers.schema.json")))
    return {
        "pointers": {p["path"]: p for p in doc["pointers"]},
        "index": json.loads((data / "index.json").read_text(encoding="utf-8")),
    }


# --------------------------------------------------------------------------- parsing


def test_yaml_and_json_files_give_the_same_entries() -> None:
    yaml_text = (
        f"- ref: {GOOD['ref']}\n  issuer: {GITHUB}\n"
        f"  identityPattern: '{UAT_PATTERN}'\n  recipe: demo-recipe\n"
    )
    from_yaml = parse_bundle_refs(yaml_text.encode(), file="refs.yaml")
    from_json = parse_bundle_refs(
        json.dumps([{**GOOD, "recipe": "demo-recipe"}]).encode(), file="refs.json"
    )
    assert from_yaml == from_json
    (entry,) = from_json
    assert entry.path == f"bundle-refs/0-sha256-{HEX}"
    assert entry.location.folder_source is None and entry.recipe == "demo-recipe"


@pytest.mark.parametrize(
    ("identity", "issuer", "matches"),
    [
        (UAT, GITHUB, True),
        (
            "https://github.com/NVIDIA/aicr/.github/workflows/uat-aws.yaml@refs/tags/v1",
            GITHUB,
            False,
        ),
        (UAT + "x", GITHUB, True),  # `.+` at the end of the pattern
        ("x" + UAT, GITHUB, False),  # a full match: nothing before the pattern
        (
            "https://github.com/NVIDIA/aicr/.github/workflows/uat-gcp.yaml@refs/heads/main",
            GITHUB,
            False,
        ),
        (UAT, GITHUB + "/", False),  # the issuer is compared exactly
    ],
)
def test_identity_is_a_full_re2_match_and_the_issuer_exact(
    identity: str, issuer: str, matches: bool
) -> None:
    pattern = UAT_PATTERN.removeprefix("^").removesuffix("$")  # fullmatch needs no anchors
    (entry,) = parse_bundle_refs(
        json.dumps([{**GOOD, "identityPattern": pattern}]).encode(), file="refs.json"
    )
    assert entry.matches(SignerIdentity(issuer, identity)) is matches


@pytest.mark.parametrize(
    ("document", "key"),
    [
        ([{**GOOD, "ref": f"{REPOSITORY}:latest"}], "[0].ref"),
        ([GOOD, {**GOOD, "ref": f"{REPOSITORY}@sha256:{HEX[:-2]}"}], "[1].ref"),
        ([{**GOOD, "ref": f"{REPOSITORY}@sha256:{HEX.upper()}"}], "[0].ref"),
        ([{k: v for k, v in GOOD.items() if k != "issuer"}], "[0].issuer"),
        ([{**GOOD, "identityPattern": "(unclosed"}], "[0].identityPattern"),
        ([{**GOOD, "identityPattern": ""}], "[0].identityPattern"),
        ([{**GOOD, "recipe": 7}], "[0].recipe"),
        ([{**GOOD, "path": "evidence/x.yaml"}], "[0].path"),
        ([GOOD, GOOD, "not a mapping"], "[2]"),
        ({"ref": GOOD["ref"]}, None),
    ],
)
def test_bad_entries_are_input_errors_naming_file_and_index(
    tmp_path: Path, document: Any, key: str | None
) -> None:
    with pytest.raises(InputError) as caught:
        parse_bundle_refs(json.dumps(document).encode(), file="first-party.json")
    location = caught.value.location
    assert location is not None and location.file == "first-party.json"
    assert location.key == key
    assert caught.value.exit_code == 2


def test_the_cli_takes_the_option_and_reports_a_bad_file_as_exit_2(tmp_path: Path) -> None:
    (tmp_path / "recipes" / "evidence").mkdir(parents=True)
    (tmp_path / "recipes" / "evidence" / "allowlist.yaml").write_text(
        "schemaVersion: 1.0.0\nfirstParty: []\ncommunity: []\npartner: []\n", encoding="utf-8"
    )
    bad = refs_file(tmp_path, [{**GOOD, "ref": "ghcr.io/x/y:tag"}])
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--recipes",
            str(tmp_path / "recipes"),
            "--out",
            str(tmp_path / "site"),
            "--offline",
            "--cache",
            str(tmp_path / "cache"),
            "--data-only",
            "--quiet",
            "--bundle-refs",
            str(bad),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 2, result.output
    error = json.loads(result.output)
    assert error["key"] == "[0].ref" and error["file"] == str(bad)


# --------------------------------------------------------------------------- end to end


def test_a_first_party_run_without_a_pointer_is_verified_and_counted(
    tree: Tree, tmp_path: Path
) -> None:
    bundle = tree.sign()
    layout = tree.layout(bundle)
    refs = refs_file(tmp_path, [entry_for(bundle)])
    data = build(tree, tmp_path, refs, layout)
    path = f"bundle-refs/0-{bundle.digest.replace(':', '-')}"
    record = data["pointers"][path]
    assert record["source"] is None
    assert record["recipe"] == bundle.recipe_name
    assert record["verify"]["exit"] == 0 and record["verify"]["failureCause"] is None
    assert record["verify"]["anonymous"] is True
    assert record["signer"]["verified"] == {"identity": UAT, "issuer": GITHUB}
    assert record["signer"]["class"] == "first-party" and record["signer"]["allowlisted"]
    assert record["bundle"]["digest"] == bundle.digest
    step2 = next(s for s in record["verify"]["steps"] if s["step"] == 2)
    assert any(r["key"] == "identityPattern" for r in step2["subRows"])
    sources = [s for s in data["index"]["sources"].values() if s["signerId"] == UAT]
    assert [(s["class"], s["allowlisted"]) for s in sources] == [("first-party", True)]
    series = tmp_path / "site" / "data" / "series" / series_file_name(bundle.recipe_name)
    builds = json.loads(series.read_text(encoding="utf-8"))["builds"]
    assert len(builds) == 1
    (column,) = next(iter(builds.values()))
    assert column["results"] == {"check-nvidia-smi": "pass"}
    assert column["evidenceRef"] == bundle.pinned_ref
    # every demo pointer is still there, unchanged in kind
    assert sum(1 for p in data["pointers"] if p.startswith("evidence/")) > 5


def test_a_run_signed_by_another_workflow_is_rejected_with_class_signature(
    tree: Tree, tmp_path: Path
) -> None:
    other = "https://github.com/NVIDIA/aicr/.github/workflows/uat-gcp.yaml@refs/heads/main"
    bundle = tree.sign(other, seed="b")
    refs = refs_file(tmp_path, [entry_for(bundle)])
    record = build(tree, tmp_path, refs, tree.layout(bundle))["pointers"][
        f"bundle-refs/0-{bundle.digest.replace(':', '-')}"
    ]
    assert record["verify"]["exit"] == 2
    assert record["verify"]["failureCause"]["class"] == "signature"
    assert "identityPattern" in record["verify"]["failureCause"]["detail"]
    assert record["verify"]["anonymous"] is None
    statuses = [s["status"] for s in record["verify"]["steps"]]
    assert statuses == ["passed", "failed", "skipped", "skipped", "informational"]


def test_a_recipe_given_in_the_entry_must_be_the_bundle_s(tree: Tree, tmp_path: Path) -> None:
    bundle = tree.sign(seed="c")
    refs = refs_file(tmp_path, [entry_for(bundle, recipe="some-other-recipe")])
    record = build(tree, tmp_path, refs, tree.layout(bundle))["pointers"][
        f"bundle-refs/0-{bundle.digest.replace(':', '-')}"
    ]
    assert record["verify"]["exit"] == 2
    assert record["verify"]["failureCause"]["class"] == "schema"  # step 3, as for a pointer
    assert "some-other-recipe" in record["verify"]["failureCause"]["detail"]
    assert record["recipe"] == "some-other-recipe"


def test_a_ref_outside_the_trusted_registries_is_not_fetched(tree: Tree, tmp_path: Path) -> None:
    bundle = tree.sign(seed="d")
    refs = refs_file(tmp_path, [entry_for(bundle)])
    record = build(
        tree, tmp_path, refs, tree.layout(bundle), trusted_registries=("ghcr.io/demo-evidence",)
    )["pointers"][f"bundle-refs/0-{bundle.digest.replace(':', '-')}"]
    assert record["verify"]["exit"] == 3
    assert record["verify"]["failureCause"]["class"] == "registry"


def test_a_ref_to_a_bundle_a_pointer_names_is_a_duplicate(tree: Tree, tmp_path: Path) -> None:
    first = build(tree, tmp_path / "one", refs_file(tmp_path, []))
    path, pointer = next(
        (p, r)
        for p, r in first["pointers"].items()
        if r["verify"]["exit"] == 0 and not r["verify"]["pending"]
    )
    ref = f"{pointer['bundle']['oci'].rsplit(':', 1)[0]}@{pointer['bundle']['digest']}"
    refs = refs_file(tmp_path, [{**GOOD, "ref": ref}])
    record = build(tree, tmp_path / "two", refs)["pointers"][
        f"bundle-refs/0-{pointer['bundle']['digest'].replace(':', '-')}"
    ]
    assert record["duplicateOf"] == path


# --------------------------------------------------------------------------- credentials


def serve(registry: FakeRegistry, bundle: BuiltBundle) -> None:
    """Put a built bundle and its signature referrer on the fake registry."""
    from generator.bundle.oci import sha256_digest

    repo = REPOSITORY.split("/", 1)[1]
    assert bundle.sigstore_bundle is not None and bundle.referrer_manifest is not None
    for blob in (EMPTY_CONFIG, bundle.layer, bundle.sigstore_bundle):
        registry.blobs[(repo, sha256_digest(blob))] = blob
    registry.manifests[(repo, bundle.digest)] = (bundle.manifest, OCI_MANIFEST_MEDIA_TYPE)
    registry.manifests[(repo, sha256_digest(bundle.referrer_manifest))] = (
        bundle.referrer_manifest,
        OCI_MANIFEST_MEDIA_TYPE,
    )


def auth_file(tmp_path: Path, registry: FakeRegistry) -> Path:
    path = tmp_path / "auth.json"
    host = registry.base_url.removeprefix("http://")
    token = base64.b64encode(b"user:secret").decode()
    path.write_text(json.dumps({"auths": {host: {"auth": token}}}), encoding="utf-8")
    return path


@pytest.mark.parametrize("auth", ["none", "credentials"])
def test_evidence_that_needed_credentials_is_not_anonymously_reproducible(
    tree: Tree, tmp_path: Path, fake_registry: FakeRegistry, auth: str
) -> None:
    bundle = tree.sign(seed="e")
    serve(fake_registry, bundle)
    fake_registry.auth = auth
    refs = refs_file(tmp_path, [entry_for(bundle)])
    data = build(
        tree,
        tmp_path,
        refs,
        registry_mirrors={"ghcr.io": fake_registry.base_url},
        registry_auth=auth_file(tmp_path, fake_registry),
    )
    record = data["pointers"][f"bundle-refs/0-{bundle.digest.replace(':', '-')}"]
    assert record["verify"]["exit"] == 0
    assert record["verify"]["anonymous"] is (auth == "none")
    step1 = record["verify"]["steps"][0]["subRows"]
    assert any(r["key"] == "registry access" for r in step1) is (auth == "credentials")
    assert any(entry[2] == "Bearer user-token" for entry in fake_registry.log) is (
        auth == "credentials"
    )
    # layout-served demo pointers needed none
    assert all(
        p["verify"]["anonymous"] in (True, None)
        for path, p in data["pointers"].items()
        if path.startswith("evidence/")
    )


def test_a_rebuild_from_the_caches_keeps_the_credentials_mark(
    tree: Tree, tmp_path: Path, fake_registry: FakeRegistry
) -> None:
    bundle = tree.sign(seed="f")
    serve(fake_registry, bundle)
    fake_registry.auth = "credentials"
    refs = refs_file(tmp_path, [entry_for(bundle)])
    options: dict[str, Any] = {
        "registry_mirrors": {"ghcr.io": fake_registry.base_url},
        "registry_auth": auth_file(tmp_path, fake_registry),
    }
    build(tree, tmp_path, refs, **options)
    again = build(tree, tmp_path, refs, offline=True)
    record = again["pointers"][f"bundle-refs/0-{bundle.digest.replace(':', '-')}"]
    assert record["verify"]["exit"] == 0 and record["verify"]["anonymous"] is False


def test_the_verdict_cache_round_trips_the_credentials_mark(tree: Tree, tmp_path: Path) -> None:
    from generator.bundle.layout import OciLayoutSource
    from generator.bundle.types import Limits
    from generator.bundlerefs import verify_bundle_ref
    from generator.verify.trust import load_trust

    bundle = tree.sign(seed="g")
    (entry,) = parse_bundle_refs(json.dumps([entry_for(bundle)]).encode(), file="refs.json")
    trust = load_trust(
        mode="production", root_file=tree.recipes / "trust" / "trusted_root.json", offline=True
    )
    _, verdict = verify_bundle_ref(entry, OciLayoutSource(tree.layout(bundle), Limits()), trust)
    assert isinstance(verdict, Verified) and not verdict.needed_credentials
    from dataclasses import replace

    for kept in (
        replace(verdict, needed_credentials=True),
        Pending(steps=verdict.steps, evidence=verdict.evidence, needed_credentials=True),
        verdict,
    ):
        assert verdict_from_json(verdict_to_json(kept)) == kept
    old = verdict_to_json(verdict)
    del old["neededCredentials"]  # a cache entry written before the field existed
    assert verdict_from_json(old) == verdict
    for other in (
        Rejected(steps=verdict.steps, cause=FailureCause(FailureClass.SIGNATURE, "x", "")),
        NoVerdict(steps=verdict.steps, cause=FailureCause(FailureClass.TRANSIENT, "", "")),
    ):
        assert "neededCredentials" not in verdict_to_json(other)
