"""A tree with deep and bomb-shaped documents among the good ones, built by the real CLI.

Every JSON document of a signed bundle (CTRF report, in-toto statement and its predicate,
`manifest.json`, the BOM, the Sigstore bundle, the OCI manifest) and every YAML document (a
pointer, `recipe.yaml`) is made 65 and 10,000 levels deep, or an alias bomb, in its own bundle.
The build must exit 0, keep every demo recipe in the state it has without them (the confirmed
ones stay confirmed), and report each hostile pointer in `data/pointers.json` as rejected with a
reason naming the limit. A CTRF report exactly 64 deep is accepted: its bundle verifies.

Python's json used to raise RecursionError on ~1,000 levels, which stopped the whole build.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pytest

from generator.bundle.layout_writer import LayoutWriter
from generator.bundle.oci import INDEX_TYPE, MANIFEST_TYPE
from generator.model import Phase
from generator.testing.authority import TestAuthority
from generator.testing.bundles import (
    BuiltBundle,
    TestSpec,
    build_bundle,
    gzip_deterministic,
    layer_tar,
    manifest_json,
    referrer_manifest,
    statement_bytes,
)
from tests.hostile.conftest import (
    HOSTILE_SIGNER,
    Sandbox,
    assert_demo_unchanged,
    assert_rejected,
    hostile_spec,
    new_sandbox,
    repack,
)

pytestmark = pytest.mark.slow
SLUG = str(HOSTILE_SIGNER.slug)
DEEP = 10_000
LIMIT_WORDS = ("parse limit", "nested more than 64 deep")


def deep_json(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def deep_object(depth: int) -> bytes:
    """A JSON object nested `depth` deep in all."""
    return b'{"k": ' + deep_json(depth - 1) + b"}"


def ctrf_with_extra(extra: bytes) -> bytes:
    """A valid CTRF report whose one test's `extra` is `extra` (4 levels above it)."""
    return (
        b'{"reportFormat": "CTRF", "specVersion": "0.0.1", "results": {"tool": {"name": '
        b'"aicr"}, "summary": {"tests": 1, "passed": 1, "failed": 0}, "tests": [{"name": '
        b'"seed", "status": "passed", "duration": 1, "extra": ' + extra + b"}]}}"
    )


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def with_files(
    built: BuiltBundle, changes: Mapping[str, bytes], authority: TestAuthority
) -> BuiltBundle:
    """`built` with files replaced and everything that names them (manifest.json, the
    predicate's digests, the signature) made consistent: only the replaced content is hostile."""
    files = {k: v for k, v in built.files.items() if k != "statement.intoto.json"}
    files.update(changes)
    if "manifest.json" not in changes:
        files["manifest.json"] = manifest_json(files)
    predicate = json.loads(json.dumps(dict(built.predicate)))
    for phase, entry in predicate["phases"].items():
        entry["ctrfDigest"] = _sha(files[f"ctrf/{phase}.json"])
    predicate["bom"]["digest"] = _sha(files["bom.cdx.json"])
    predicate["manifest"] = {"digest": _sha(files["manifest.json"]), "fileCount": len(files) - 1}
    files["statement.intoto.json"] = statement_bytes(
        f"recipe:{built.recipe_name}",
        built.recipe_digest,
        built.spec.predicate_type.value,
        predicate,
    )
    tar = layer_tar(files)
    updated = dataclasses.replace(built, files=files, predicate=predicate)
    return repack(updated, gzip_deterministic(tar), authority, tar_digest=_sha(tar))


def with_deep_predicate(built: BuiltBundle, depth: int, authority: TestAuthority) -> BuiltBundle:
    """`built` whose signed in-toto statement carries a predicate field nested `depth` deep
    (spliced into the bytes: no JSON encoder writes 10,000 levels)."""
    assert built.statement is not None and built.pointer.signer is not None
    marker = b'"predicate":{'
    assert marker in built.statement
    payload = built.statement.replace(marker, marker + b'"deep":' + deep_json(depth - 2) + b",", 1)
    sig = authority.sign_dsse(
        payload, signer=built.pointer.signer, signed_at=built.spec.attested_at
    )
    index = int(json.loads(sig)["verificationMaterial"]["tlogEntries"][0]["logIndex"])
    return dataclasses.replace(
        built,
        statement=payload,
        sigstore_bundle=sig,
        referrer_manifest=referrer_manifest(sig, built.manifest, built.spec.predicate_type.value),
        pointer=dataclasses.replace(built.pointer, rekor_log_index=index),
    )


def with_sigstore_bundle(built: BuiltBundle, body: bytes) -> BuiltBundle:
    """`built` whose signature referrer layer (the Sigstore bundle) is `body`."""
    return dataclasses.replace(
        built,
        sigstore_bundle=body,
        referrer_manifest=referrer_manifest(body, built.manifest, built.spec.predicate_type.value),
    )


def _honest(authority: TestAuthority, name: str) -> BuiltBundle:
    return build_bundle(
        hostile_spec(name, tests={Phase.CONFORMANCE: [TestSpec("seed")]}), authority
    )


def _bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return ("\n".join(lines) + "\n").encode()


# (case, klass, words): every hostile pointer and what its rejection must say
Case = tuple[str, str, tuple[str, ...]]


def _bundles(box: Sandbox, authority: TestAuthority) -> tuple[dict[str, str], dict[str, Case]]:
    """Store every hostile bundle; returns ({case: pointer path}, {case: expectation})."""
    made: dict[str, tuple[BuiltBundle, str, tuple[str, ...]]] = {}
    for depth in (65, DEEP):
        tag = f"d{depth}"
        made[f"ctrf-{depth}"] = (
            with_files(
                _honest(authority, f"c{tag}"),
                {"ctrf/conformance.json": ctrf_with_extra(deep_json(depth - 4))},
                authority,
            ),
            "integrity",
            ("ctrf/conformance.json", *LIMIT_WORDS),
        )
        made[f"manifest-json-{depth}"] = (
            with_files(
                _honest(authority, f"m{tag}"), {"manifest.json": deep_object(depth)}, authority
            ),
            "integrity",
            ("manifest.json", *LIMIT_WORDS),
        )
        made[f"bom-{depth}"] = (
            with_files(
                _honest(authority, f"b{tag}"), {"bom.cdx.json": deep_object(depth)}, authority
            ),
            "integrity",
            ("bom.cdx.json", *LIMIT_WORDS),
        )
        made[f"statement-{depth}"] = (
            with_deep_predicate(_honest(authority, f"s{tag}"), depth, authority),
            "signature",
            ("DSSE payload", *LIMIT_WORDS),
        )
        made[f"sigstore-bundle-{depth}"] = (
            with_sigstore_bundle(_honest(authority, f"g{tag}"), deep_object(depth)),
            "signature",
            ("sigstore bundle", *LIMIT_WORDS),
        )
    made["recipe-yaml-65"] = (
        with_files(
            _honest(authority, "ry65"),
            {"recipe.yaml": b"kind: RecipeResult\nspec: " + b"[" * 65 + b"]" * 65 + b"\n"},
            authority,
        ),
        "integrity",
        ("recipe.yaml", "nesting too deep"),
    )
    made["recipe-yaml-10000"] = (
        with_files(
            _honest(authority, "ryd"),
            {"recipe.yaml": b"kind: RecipeResult\nspec: " + b"[" * DEEP + b"]" * DEEP + b"\n"},
            authority,
        ),
        "integrity",
        ("recipe.yaml", "nesting too deep"),
    )
    made["recipe-yaml-bomb"] = (
        with_files(
            _honest(authority, "ryb"), {"recipe.yaml": b"kind: RecipeResult\n" + _bomb()}, authority
        ),
        "integrity",
        ("recipe.yaml", "too many"),
    )
    # exactly 64 levels in all: accepted, the bundle verifies
    made["ctrf-64"] = (
        with_files(
            _honest(authority, "c64"),
            {"ctrf/conformance.json": ctrf_with_extra(deep_json(60))},
            authority,
        ),
        "",
        (),
    )
    paths: dict[str, str] = {}
    expected: dict[str, Case] = {}
    for case, (built, klass, words) in made.items():
        paths[case] = box.add_bundle(built)
        expected[case] = (case, klass, words)
    # OCI manifests nested deep: one a pointer names, one listed as a nested index
    writer = LayoutWriter(box.layout)
    for depth in (65, DEEP):
        digest = writer.add_manifest(deep_object(depth), MANIFEST_TYPE, ref_name=f"deep-{depth}")
        writer.add_manifest(deep_object(depth) + b"\n", INDEX_TYPE)
        honest = _honest(authority, f"o{depth}")
        named = dataclasses.replace(
            honest, digest=digest, pointer=dataclasses.replace(honest.pointer, digest=digest)
        )
        paths[f"oci-manifest-{depth}"] = (
            box.add_pointer(named.pointer_path, named.pointer_yaml)
            .relative_to(box.recipes)
            .as_posix()
        )
        expected[f"oci-manifest-{depth}"] = (
            f"oci-manifest-{depth}",
            "integrity",
            ("bundle manifest", *LIMIT_WORDS),
        )
    writer.close()
    return paths, expected


POINTER_CASES = {
    "pointer-65": (b"recipe: " + b"[" * 65 + b"]" * 65 + b"\n", ("nesting too deep",)),
    "pointer-10000": (b"recipe: " + b"[" * DEEP + b"]" * DEEP + b"\n", ("nesting too deep",)),
    "pointer-block-65": (
        ("\n".join(" " * (2 * i) + "a:" for i in range(65)) + " 1\n").encode(),
        ("nesting too deep",),
    ),
    "pointer-bomb": (_bomb(), ("too many",)),
}


class Built:
    def __init__(
        self, box: Sandbox, result: Any, paths: dict[str, str], expected: dict[str, Case]
    ) -> None:
        self.box, self.result, self.paths, self.expected = box, result, paths, expected


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, authority: TestAuthority) -> Built:
    box = new_sandbox(tmp_path_factory.mktemp("bounded-tree"))
    paths, expected = _bundles(box, authority)
    for name, (data, words) in POINTER_CASES.items():
        relative = f"evidence/hostile-deep/{SLUG}/{name}.yaml"
        box.add_pointer(relative, data)
        paths[name] = relative
        expected[name] = (name, "schema", words)
    result = box.run(timeout=600)
    return Built(box, result, paths, expected)


def test_the_build_finishes_and_the_good_recipes_keep_their_state(
    built: Built, demo_states: dict[str, Any]
) -> None:
    assert built.result.returncode == 0, built.result.stdout + built.result.stderr
    assert json.loads(built.result.stdout)["exit"] == 0
    assert "RecursionError" not in built.result.stderr
    assert_demo_unchanged(built.box, demo_states)
    rollups = {state[0] for state in demo_states.values()}
    assert any("confirm" in str(r).lower() for r in rollups), rollups
    pointers = built.box.pointers()
    for path in built.paths.values():
        assert path in pointers, f"{path} is not reported in pointers.json"


CASES = [
    *(
        f"{kind}-{depth}"
        for depth in (65, DEEP)
        for kind in ("ctrf", "manifest-json", "bom", "statement", "sigstore-bundle", "oci-manifest")
    ),
    "recipe-yaml-65",
    "recipe-yaml-10000",
    "recipe-yaml-bomb",
    *POINTER_CASES,
]


@pytest.mark.parametrize("case", CASES)
def test_each_hostile_document_is_its_pointers_rejection_with_the_reason(
    built: Built, case: str
) -> None:
    _name, klass, words = built.expected[case]
    record = built.box.pointers()[built.paths[case]]
    detail = assert_rejected(record, klass=klass, words=words)
    assert "RecursionError" not in detail and "internal" not in detail.lower()


def test_a_report_exactly_64_deep_is_accepted(built: Built) -> None:
    record = built.box.pointers()[built.paths["ctrf-64"]]
    assert record["verify"]["exit"] == 0, record["verify"]
