"""Pointer validation (spec 2.3 and our additions): one truth table row per rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from generator.errors import PointerError
from generator.model import PredicateType
from generator.tree.pointer import RULES, normalise_rfc3339, parse_pointer

Mutation = Callable[[dict[str, Any]], None]


def _att(doc: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = doc["attestations"][0]
    return entry


def _set(path: str, value: Any) -> Mutation:
    """Set a dotted key below the document (`a.` prefix = inside attestations[0])."""

    def apply(doc: dict[str, Any]) -> None:
        target = doc
        parts = path.split(".")
        if parts[0] == "a":
            target = _att(doc)
            parts = parts[1:]
        for part in parts[:-1]:
            target = target[part]
        target[parts[-1]] = value

    return apply


def _drop(path: str) -> Mutation:
    def apply(doc: dict[str, Any]) -> None:
        target = doc
        parts = path.split(".")
        if parts[0] == "a":
            target = _att(doc)
            parts = parts[1:]
        for part in parts[:-1]:
            target = target[part]
        del target[parts[-1]]

    return apply


def _both(*muts: Mutation) -> Mutation:
    def apply(doc: dict[str, Any]) -> None:
        for m in muts:
            m(doc)

    return apply


PROFILED = "gb200-gke-cos-training-gpustack-bundle-installer"

# (id, recipe, predicate, profile, mutation, expected rule or None for valid)
CASES: list[tuple[str, str, str, str | None, Mutation, str | None]] = [
    ("valid-v1", "h100-eks", "v1", None, lambda d: None, None),
    ("valid-v2", PROFILED, "v2", "gpuStack=bundle-installer", lambda d: None, None),
    ("valid-v3-profile", PROFILED, "v3", "gpuStack=bundle-installer", lambda d: None, None),
    ("valid-v3-no-profile", "h100-eks", "v3", None, lambda d: None, None),
    ("schema-1.0", "h100-eks", "v1", None, _set("schemaVersion", "1.0"), None),
    ("schema-1.0.7", "h100-eks", "v1", None, _set("schemaVersion", "1.0.7"), None),
    ("schema-float-1.0", "h100-eks", "v1", None, _set("schemaVersion", 1.0), None),
    ("schema-1.1", "h100-eks", "v1", None, _set("schemaVersion", "1.1.0"), "schema-version"),
    ("schema-2", "h100-eks", "v1", None, _set("schemaVersion", "2.0.0"), "schema-version"),
    ("schema-1.00", "h100-eks", "v1", None, _set("schemaVersion", "1.00"), "schema-version"),
    ("schema-missing", "h100-eks", "v1", None, _drop("schemaVersion"), "schema-version"),
    ("schema-int", "h100-eks", "v1", None, _set("schemaVersion", 1), "schema-version"),
    ("recipe-empty", "h100-eks", "v1", None, _set("recipe", ""), "recipe-name"),
    ("recipe-missing", "h100-eks", "v1", None, _drop("recipe"), "recipe-name"),
    ("recipe-slash", "h100-eks", "v1", None, _set("recipe", "a/b"), "recipe-name"),
    ("recipe-dotdot", "h100-eks", "v1", None, _set("recipe", ".."), "recipe-name"),
    ("recipe-abs", "h100-eks", "v1", None, _set("recipe", "/etc"), "recipe-name"),
    ("recipe-backslash", "h100-eks", "v1", None, _set("recipe", "a\\b"), "recipe-name"),
    ("recipe-newline", "h100-eks", "v1", None, _set("recipe", "a\nb"), "recipe-name"),
    ("recipe-int", "h100-eks", "v1", None, _set("recipe", 7), "recipe-name"),
    ("profile-two-eq", PROFILED, "v2", "a=b=c", lambda d: None, "profile-grammar"),
    ("profile-no-eq", PROFILED, "v2", "gpuStack", lambda d: None, "profile-grammar"),
    ("profile-space", PROFILED, "v2", "gpuStack = x", lambda d: None, "profile-grammar"),
    ("profile-empty-side", PROFILED, "v2", "=x", lambda d: None, "profile-grammar"),
    ("profile-bad-char", PROFILED, "v2", "gpu/Stack=x", lambda d: None, "profile-grammar"),
    ("profile-not-str", PROFILED, "v2", None, _set("profile", 5), "profile-grammar"),
    (
        "profile-suffix",
        "h100-eks",
        "v2",
        "gpuStack=bundle-installer",
        lambda d: None,
        "profile-suffix",
    ),
    (
        "profile-suffix-partial",
        "x-gpustack-bundle",
        "v2",
        "gpuStack=bundle-installer",
        lambda d: None,
        "profile-suffix",
    ),
    ("profile-empty-is-none", "h100-eks", "v1", None, _set("profile", ""), None),
    ("attestations-zero", "h100-eks", "v1", None, _set("attestations", []), "attestation-count"),
    ("attestations-missing", "h100-eks", "v1", None, _drop("attestations"), "attestation-count"),
    (
        "attestations-two",
        "h100-eks",
        "v1",
        None,
        lambda d: d["attestations"].append(dict(d["attestations"][0])),
        "attestation-count",
    ),
    (
        "attestations-not-list",
        "h100-eks",
        "v1",
        None,
        _set("attestations", {"a": 1}),
        "pointer-shape",
    ),
    (
        "retired-domain",
        "h100-eks",
        "v1",
        None,
        _set("a.bundle.predicateType", "https://aicr.nvidia.com/recipe-evidence/v1"),
        "retired-domain",
    ),
    (
        "predicate-v4",
        "h100-eks",
        "v1",
        None,
        _set("a.bundle.predicateType", "https://aicr.run/recipe-evidence/v4"),
        "predicate-type",
    ),
    (
        "predicate-missing",
        "h100-eks",
        "v1",
        None,
        _drop("a.bundle.predicateType"),
        "predicate-type",
    ),
    (
        "predicate-http",
        "h100-eks",
        "v1",
        None,
        _set("a.bundle.predicateType", "http://aicr.run/recipe-evidence/v1"),
        "predicate-type",
    ),
    (
        "v1-with-profile",
        PROFILED,
        "v1",
        "gpuStack=bundle-installer",
        lambda d: None,
        "profile-type",
    ),
    ("v2-without-profile", "h100-eks", "v2", None, lambda d: None, "profile-type"),
    (
        "digest-no-prefix",
        "h100-eks",
        "v1",
        None,
        _set("a.bundle.digest", "ab" * 32),
        "digest-format",
    ),
    (
        "digest-upper",
        "h100-eks",
        "v1",
        None,
        _set("a.bundle.digest", "sha256:" + "AB" * 32),
        "digest-format",
    ),
    (
        "digest-short",
        "h100-eks",
        "v1",
        None,
        _set("a.bundle.digest", "sha256:abc"),
        "digest-format",
    ),
    (
        "digest-sha512",
        "h100-eks",
        "v1",
        None,
        _set("a.bundle.digest", "sha512:" + "a" * 128),
        "digest-format",
    ),
    ("digest-empty-with-oci", "h100-eks", "v1", None, _set("a.bundle.digest", ""), "digest-format"),
    ("digest-not-str", "h100-eks", "v1", None, _set("a.bundle.digest", 5), "digest-format"),
    (
        "unpushed-both-empty",
        "h100-eks",
        "v1",
        None,
        _both(_set("a.bundle.digest", ""), _set("a.bundle.oci", "")),
        None,
    ),
    (
        "signer-empty-identity",
        "h100-eks",
        "v1",
        None,
        _set("a.signer.identity", ""),
        "signer-fields",
    ),
    ("signer-missing-issuer", "h100-eks", "v1", None, _drop("a.signer.issuer"), "signer-fields"),
    (
        "signer-newline",
        "h100-eks",
        "v1",
        None,
        _set("a.signer.identity", "a@b.c\nx"),
        "signer-fields",
    ),
    ("signer-cr", "h100-eks", "v1", None, _set("a.signer.issuer", "https://x\r"), "signer-fields"),
    ("signer-not-map", "h100-eks", "v1", None, _set("a.signer", "me"), "signer-fields"),
    ("signer-empty-map", "h100-eks", "v1", None, _set("a.signer", {}), "signer-fields"),
    ("signer-null-is-unsigned", "h100-eks", "v1", None, _set("a.signer", None), None),
    (
        "rekor-negative",
        "h100-eks",
        "v1",
        None,
        _set("a.signer.rekorLogIndex", -1),
        "rekor-log-index",
    ),
    (
        "rekor-string",
        "h100-eks",
        "v1",
        None,
        _set("a.signer.rekorLogIndex", "12"),
        "rekor-log-index",
    ),
    ("rekor-bool", "h100-eks", "v1", None, _set("a.signer.rekorLogIndex", True), "rekor-log-index"),
    ("rekor-float", "h100-eks", "v1", None, _set("a.signer.rekorLogIndex", 1.5), "rekor-log-index"),
    ("rekor-absent", "h100-eks", "v1", None, _drop("a.signer.rekorLogIndex"), None),
    ("attested-missing", "h100-eks", "v1", None, _drop("a.attestedAt"), "attested-at"),
    (
        "attested-date-only",
        "h100-eks",
        "v1",
        None,
        _set("a.attestedAt", "2026-09-09"),
        "attested-at",
    ),
    (
        "attested-no-zone",
        "h100-eks",
        "v1",
        None,
        _set("a.attestedAt", "2026-09-09T13:31:02"),
        "attested-at",
    ),
    (
        "attested-bad-month",
        "h100-eks",
        "v1",
        None,
        _set("a.attestedAt", "2026-13-09T13:31:02Z"),
        "attested-at",
    ),
    ("attested-int", "h100-eks", "v1", None, _set("a.attestedAt", 1), "attested-at"),
    (
        "unknown-keys-ignored",
        "h100-eks",
        "v1",
        None,
        _both(_set("fingerprint", {"x": 1}), _set("a.extra", 1)),
        None,
    ),
    ("bundle-not-map", "h100-eks", "v1", None, _set("a.bundle", "x"), "pointer-shape"),
    ("entry-not-map", "h100-eks", "v1", None, _set("attestations", ["x"]), "pointer-shape"),
]


@pytest.mark.parametrize(
    ("recipe", "predicate", "profile", "mutate", "rule"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_pointer_rules(
    kit: Any, recipe: str, predicate: str, profile: str | None, mutate: Mutation, rule: str | None
) -> None:
    doc = kit.pointer_doc(recipe, predicate=predicate, profile=profile)
    mutate(doc)
    data = kit.dump(doc)
    if rule is None:
        pointer = parse_pointer(data, file="evidence/p.yaml")
        assert pointer.recipe == doc["recipe"]
        return
    with pytest.raises(PointerError) as info:
        parse_pointer(data, file="evidence/p.yaml")
    error = info.value
    assert error.rule == rule
    assert rule in RULES
    assert error.location is not None and error.location.file == "evidence/p.yaml"
    assert error.expected and error.hint


def test_every_rule_id_has_a_case() -> None:
    covered = {c[-1] for c in CASES} | {"yaml"}
    assert set(RULES) <= covered


def test_valid_pointer_fields(kit: Any) -> None:
    doc = kit.pointer_doc(PROFILED, predicate="v2", profile="gpuStack=bundle-installer")
    pointer = parse_pointer(kit.dump(doc), file="p.yaml")
    assert pointer.profile == "gpuStack=bundle-installer"
    assert pointer.bundle.predicate_type is PredicateType.V2
    assert pointer.bundle.digest == doc["attestations"][0]["bundle"]["digest"]
    assert pointer.signer is not None
    assert pointer.signer.identity.identity == kit.PERSON
    assert pointer.signer.rekor_log_index == 102847934
    assert not pointer.pending


def test_unsigned_is_pending(kit: Any) -> None:
    pointer = parse_pointer(kit.dump(kit.pointer_doc(identity=None)), file="p.yaml")
    assert pointer.pending and pointer.signer is None


def test_rekor_zero_reads_as_absent(kit: Any) -> None:
    doc = kit.pointer_doc()
    doc["attestations"][0]["signer"]["rekorLogIndex"] = 0
    pointer = parse_pointer(kit.dump(doc), file="p.yaml")
    assert pointer.signer is not None and pointer.signer.rekor_log_index is None


def test_unpushed_digest_is_none(kit: Any) -> None:
    doc = kit.pointer_doc(identity=None)
    doc["attestations"][0]["bundle"].update(digest="", oci="")
    assert parse_pointer(kit.dump(doc), file="p.yaml").bundle.digest is None


def test_plain_yaml_timestamp_stays_text_and_is_normalised() -> None:
    text = b"""schemaVersion: 1.0.0
recipe: h100-eks
attestations:
  - attestedAt: 2026-09-09T15:31:02.75+02:00
    bundle:
      oci: ""
      digest: ""
      predicateType: https://aicr.run/recipe-evidence/v3
"""
    assert parse_pointer(text, file="p.yaml").attested_at == "2026-09-09T13:31:02Z"


def test_invalid_yaml_is_rule_yaml() -> None:
    with pytest.raises(PointerError) as info:
        parse_pointer(b"a: 1\na: 2\n", file="p.yaml")
    assert info.value.rule == "yaml"
    assert "duplicate" in info.value.message


@pytest.mark.parametrize("doc", [b"[]", b"just text", b"", b"42"])
def test_non_mapping_document(doc: bytes) -> None:
    with pytest.raises(PointerError) as info:
        parse_pointer(doc, file="p.yaml")
    assert info.value.rule == "pointer-shape"


def test_retired_domain_message_is_clear(kit: Any) -> None:
    doc = kit.pointer_doc()
    doc["attestations"][0]["bundle"]["predicateType"] = "https://aicr.nvidia.com/recipe-evidence/v1"
    with pytest.raises(PointerError) as info:
        parse_pointer(kit.dump(doc), file="p.yaml")
    assert "aicr.nvidia.com" in info.value.message
    assert "aicr.run" in (info.value.expected or "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-09-09T13:31:02Z", "2026-09-09T13:31:02Z"),
        ("2026-09-09t13:31:02z", "2026-09-09T13:31:02Z"),
        ("2026-09-09T13:31:02.999999999Z", "2026-09-09T13:31:02Z"),
        ("2026-09-09T13:31:02+00:00", "2026-09-09T13:31:02Z"),
        ("2026-09-09T01:00:00-05:30", "2026-09-09T06:30:00Z"),
        ("2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00Z"),
        ("2026-09-09 13:31:02Z", None),
        ("2026-02-30T00:00:00Z", None),
        ("2026-09-09T24:00:00Z", None),
        ("2026-09-09T13:31:60Z", None),
        ("2026-09-09T13:31:02+25:00", None),
        ("20260909T133102Z", None),
    ],
)
def test_rfc3339_normalisation(text: str, expected: str | None) -> None:
    assert normalise_rfc3339(text) == expected
