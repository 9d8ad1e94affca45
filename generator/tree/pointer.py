"""Parse and validate one pointer file (spec 2.1-2.3) into the shared `Pointer` model.

aicr's `validatePointer` rules run in aicr's order; this project's stricter rules are added where
they fit (digest format, retired predicate domain, RFC 3339 `attestedAt`, safe recipe segment,
identity hygiene, `rekorLogIndex` type). Unknown keys are ignored, as aicr's lenient read does.
Every failure is a `PointerError` whose `rule` is one of `RULES`. The field grammar (times,
profiles, schema versions) lives in `_pointer_fields`.
"""

from __future__ import annotations

import re
from typing import Any

from generator.errors import PointerError, YamlError
from generator.model import (
    BundleRef,
    OciDigest,
    Pointer,
    PredicateType,
    RecipeName,
)
from generator.tree._pointer_fields import (
    _fail,
    _show,
    _signer,
    _string,
    normalise_rfc3339,
    parse_profile,
    profile_segment,
    schema_version_ok,
)
from generator.tree.yamlio import load_yaml

__all__ = [
    "RETIRED_DOMAIN",
    "RULES",
    "load_pointer_doc",
    "normalise_rfc3339",
    "parse_pointer",
    "parse_profile",
    "profile_segment",
    "schema_version_ok",
    "validate_pointer",
]

RULES: dict[str, str] = {
    "yaml": "the file is valid YAML (one document, plain data)",
    "pointer-shape": "the document and its blocks are mappings/lists of the right type",
    "schema-version": "schemaVersion is 1.0 or 1.0.x",
    "recipe-name": "recipe is a non-empty, single safe path segment of at most 200 characters",
    "profile-grammar": "profile is name=value, each side [A-Za-z0-9._-]+",
    "profile-suffix": "recipe ends with -<lower(name)>-<lower(value)> of the profile",
    "attestation-count": "attestations holds exactly one entry",
    "retired-domain": "predicateType does not use the retired aicr.nvidia.com domain",
    "predicate-type": "predicateType is recipe-evidence v1, v2 or v3 on aicr.run",
    "profile-type": "v1 has no profile and v2 has one",
    "digest-format": "bundle.digest is sha256: + 64 lowercase hex when set or when oci is set",
    "signer-fields": "signer identity and issuer are non-empty single-line strings",
    "rekor-log-index": "signer.rekorLogIndex is a non-negative integer",
    "attested-at": "attestedAt is an RFC 3339 timestamp",
}
"""Rule id -> what the rule requires (also the documentation of the ids)."""

RETIRED_DOMAIN = "aicr.nvidia.com"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_RECIPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""At most 200 characters: the name becomes `series/<recipe>.json` and `recipes/<recipe>.md`
(the corroboration board's slug bound), which must stay under the file system's 255."""


def parse_pointer(data: bytes, *, file: str) -> Pointer:
    """Parse pointer bytes and validate every pointer rule; raise `PointerError(rule=...)`.

    `file` names the pointer in messages (relative to the recipes root).
    """
    return validate_pointer(load_pointer_doc(data, file=file), file=file)


def load_pointer_doc(data: bytes, *, file: str) -> dict[str, Any]:
    """The first half of `parse_pointer`: the bytes as a YAML mapping, not yet validated
    (`validate_pointer` reads it and never changes it). Raises `PointerError`."""
    try:
        doc = load_yaml(data, file=file)
    except YamlError as exc:
        raise PointerError(
            exc.message,
            rule="yaml",
            location=exc.location,
            expected=exc.expected,
            found=exc.found,
            hint=exc.hint,
        ) from exc
    if not isinstance(doc, dict):
        raise _fail(
            "pointer-shape",
            "pointer is not a mapping",
            file,
            None,
            expected="a YAML mapping with schemaVersion, recipe and attestations",
            found=_show(doc),
            hint="start from a pointer written by aicr",
        )
    return doc


def validate_pointer(doc: dict[str, Any], *, file: str) -> Pointer:
    """Validate an already loaded pointer mapping (see `parse_pointer`), rule by rule."""
    version = schema_version_ok(doc.get("schemaVersion"))
    if version is None:
        raise _fail(
            "schema-version",
            "unsupported pointer schemaVersion",
            file,
            "schemaVersion",
            expected="1.0 or 1.0.x (the verifier supports 1.0.x)",
            found=_show(doc.get("schemaVersion")),
            hint="regenerate the pointer with a current aicr",
        )
    recipe = _recipe(doc, file)
    profile = _profile(doc, recipe, file)
    entry, bundle = _attestation(doc, file)
    predicate_type = _predicate_type(bundle, profile, file)
    oci, digest = _bundle_location(bundle, file)
    signer = _signer(entry, file)
    normalised = _attested_at(entry, file)
    return Pointer(
        schema_version=version,
        recipe=RecipeName(recipe),
        profile=profile,
        bundle=BundleRef(oci=oci, digest=digest, predicate_type=predicate_type),
        signer=signer,
        attested_at=normalised,
    )


def _recipe(doc: dict[str, Any], file: str) -> str:
    """`recipe`: a non-empty, single safe path segment."""
    recipe = _string(doc, "recipe")
    if not isinstance(recipe, str) or not recipe:
        raise _fail(
            "recipe-name",
            "pointer has no recipe name",
            file,
            "recipe",
            expected="a non-empty recipe name",
            found=_show(doc.get("recipe")),
            hint="set recipe: to the recipe's name",
        )
    if not _RECIPE.fullmatch(recipe):
        raise _fail(
            "recipe-name",
            "recipe is not a single safe path segment",
            file,
            "recipe",
            expected="at most 200 letters, digits, '.', '_' and '-', starting with a "
            "letter or digit (no '/', no '..')",
            found=_show(recipe),
            hint="use the recipe name aicr derives from criteria",
        )
    return recipe


def _profile(doc: dict[str, Any], recipe: str, file: str) -> str | None:
    """`profile`: absent, or `name=value` that the recipe name carries as its suffix."""
    profile_raw = _string(doc, "profile")
    profile: str | None = None
    if not isinstance(profile_raw, str):
        raise _fail(
            "profile-grammar",
            "profile is not a string",
            file,
            "profile",
            expected="name=value",
            found=_show(profile_raw),
            hint="quote the profile or remove it",
        )
    if profile_raw:
        parts = parse_profile(profile_raw)
        if parts is None:
            raise _fail(
                "profile-grammar",
                "profile does not match the name=value grammar",
                file,
                "profile",
                expected="exactly one '=', each side [A-Za-z0-9._-]+, no spaces",
                found=_show(profile_raw),
                hint="copy metadata.selectedProfile from the recipe",
            )
        segment = profile_segment(*parts)
        if not recipe.endswith(f"-{segment}"):
            raise _fail(
                "profile-suffix",
                "recipe name does not carry the profile suffix",
                file,
                "recipe",
                expected=f"a recipe name ending in -{segment}",
                found=_show(recipe),
                hint="pointers of profile-bearing recipes use the suffixed recipe name",
            )
        profile = profile_raw
    return profile


def _attestation(doc: dict[str, Any], file: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one attestation entry and its `bundle` mapping (schema 2.0 lists are refused)."""
    attestations = doc.get("attestations")
    if attestations is None:
        attestations = []
    if not isinstance(attestations, list):
        raise _fail(
            "pointer-shape",
            "attestations is not a list",
            file,
            "attestations",
            expected="a list with one entry",
            found=_show(attestations),
            hint="attestations: is a YAML sequence",
        )
    if len(attestations) != 1:
        more = len(attestations) > 1
        raise _fail(
            "attestation-count",
            "pointer schema 2.0 (several attestations) is not yet supported"
            if more
            else "pointer has no attestation",
            file,
            "attestations",
            expected="exactly one attestation",
            found=f"{len(attestations)} entries",
            hint="commit one pointer per signed run",
        )
    entry = attestations[0]
    if not isinstance(entry, dict):
        raise _fail(
            "pointer-shape",
            "attestation is not a mapping",
            file,
            "attestations[0]",
            expected="a mapping with bundle, signer and attestedAt",
            found=_show(entry),
            hint="start from a pointer written by aicr",
        )
    bundle = entry.get("bundle")
    if bundle is None:
        bundle = {}
    if not isinstance(bundle, dict):
        raise _fail(
            "pointer-shape",
            "bundle is not a mapping",
            file,
            "attestations[0].bundle",
            expected="a mapping with oci, digest and predicateType",
            found=_show(bundle),
            hint="start from a pointer written by aicr",
        )
    return entry, bundle


def _predicate_type(bundle: dict[str, Any], profile: str | None, file: str) -> PredicateType:
    """`bundle.predicateType`: a current aicr.run type that agrees with the profile."""
    key_type = "attestations[0].bundle.predicateType"
    raw_type = _string(bundle, "predicateType")
    if isinstance(raw_type, str) and RETIRED_DOMAIN in raw_type.split("/")[2:3]:
        raise _fail(
            "retired-domain",
            "predicateType uses the retired aicr.nvidia.com domain",
            file,
            key_type,
            expected="https://aicr.run/recipe-evidence/v1, v2 or v3",
            found=_show(raw_type),
            hint="aicr moved to aicr.run with no dual-accept window (ADR-013); "
            "re-attest the run with a current aicr",
        )
    try:
        predicate_type = PredicateType(raw_type)
    except ValueError:
        raise _fail(
            "predicate-type",
            "unexpected predicateType",
            file,
            key_type,
            expected="https://aicr.run/recipe-evidence/v1, v2 or v3",
            found=_show(raw_type),
            hint="regenerate the pointer with a current aicr",
        ) from None
    if predicate_type is PredicateType.V1 and profile is not None:
        raise _fail(
            "profile-type",
            "a pointer with a profile must be v2 or v3",
            file,
            key_type,
            expected="recipe-evidence/v2 (or v3) when profile is set",
            found=predicate_type.value,
            hint="v1 is for unprofiled recipes only",
        )
    if predicate_type is PredicateType.V2 and profile is None:
        raise _fail(
            "profile-type",
            "a v2 pointer must carry a profile",
            file,
            "profile",
            expected="profile: name=value for recipe-evidence/v2",
            found="no profile",
            hint="add the profile or use v1/v3",
        )
    return predicate_type


def _bundle_location(bundle: dict[str, Any], file: str) -> tuple[str, OciDigest | None]:
    """`bundle.oci` (one line) and `bundle.digest` (sha256 when either is set)."""
    oci = _string(bundle, "oci")
    if not isinstance(oci, str) or "\n" in oci:
        raise _fail(
            "pointer-shape",
            "bundle.oci is not a single-line string",
            file,
            "attestations[0].bundle.oci",
            expected="an OCI reference such as ghcr.io/owner/aicr-evidence:<tag>",
            found=_show(oci),
            hint="set oci: to the pushed artifact reference",
        )
    digest_raw = _string(bundle, "digest")
    key_digest = "attestations[0].bundle.digest"
    if not isinstance(digest_raw, str):
        raise _fail(
            "digest-format",
            "bundle.digest is not a string",
            file,
            key_digest,
            expected="sha256: + 64 lowercase hex",
            found=_show(digest_raw),
            hint="quote the digest",
        )
    if (oci or digest_raw) and not _DIGEST.fullmatch(digest_raw):
        raise _fail(
            "digest-format",
            "bundle.digest is not a sha256 OCI digest",
            file,
            key_digest,
            expected="sha256: + 64 lowercase hex characters",
            found=_show(digest_raw) if digest_raw else "an empty digest with an oci ref",
            hint="use the manifest digest printed by the push, with the sha256: prefix",
        )
    digest = OciDigest(digest_raw) if digest_raw else None
    return oci, digest


def _attested_at(entry: dict[str, Any], file: str) -> str:
    """`attestedAt` as a normalised RFC 3339 UTC timestamp."""
    raw_time = entry.get("attestedAt")
    normalised = normalise_rfc3339(raw_time) if isinstance(raw_time, str) else None
    if normalised is None:
        raise _fail(
            "attested-at",
            "attestedAt is not an RFC 3339 timestamp",
            file,
            "attestations[0].attestedAt",
            expected="e.g. 2026-09-09T13:31:02Z",
            found=_show(raw_time),
            hint="copy predicate.attestedAt",
        )
    return normalised
