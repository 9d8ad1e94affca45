"""A validated pointer as a flat JSON list and back, for the pointer memo
(`generator.evaluate.pointermemo`).

A record read back is hostile until checked: one of another length, or with a value of another
type or outside its enum, gives None (a miss), never a pointer it did not describe.
"""

from __future__ import annotations

from typing import Any

from generator.model import (
    BundleRef,
    ClaimedSigner,
    OciDigest,
    Pointer,
    PredicateType,
    RecipeName,
    SignerIdentity,
)

__all__ = ["pointer_from_record", "pointer_record"]

_PREDICATES = {p.value: p for p in PredicateType}


def pointer_record(pointer: Pointer) -> list[Any]:
    """`pointer` as `[schema, recipe, profile, oci, digest, predicate, signer, attestedAt]`,
    where `signer` is null or `[issuer, identity, rekorLogIndex]`."""
    signer = pointer.signer
    return [
        pointer.schema_version,
        str(pointer.recipe),
        pointer.profile,
        pointer.bundle.oci,
        None if pointer.bundle.digest is None else str(pointer.bundle.digest),
        pointer.bundle.predicate_type.value,
        None
        if signer is None
        else [signer.identity.issuer, signer.identity.identity, signer.rekor_log_index],
        pointer.attested_at,
    ]


def _text(value: object) -> bool:
    return type(value) is str


def _text_or_none(value: object) -> bool:
    return value is None or type(value) is str


def _signer(value: object) -> ClaimedSigner | None | bool:
    """The claimed signer of a record, None for none, False when the value is not one."""
    if value is None:
        return None
    if type(value) is not list or len(value) != 3:
        return False
    issuer, identity, index = value
    if not (_text(issuer) and _text(identity)):
        return False
    if index is not None and type(index) is not int:
        return False
    return ClaimedSigner(SignerIdentity(issuer, identity), index)


def pointer_from_record(record: object) -> Pointer | None:
    """The pointer `pointer_record` made `record` from, or None when it is not such a record."""
    if type(record) is not list or len(record) != 8:
        return None
    schema, recipe, profile, oci, digest, predicate, signer_value, attested = record
    if not (_text(schema) and _text(recipe) and _text(oci) and _text(attested)):
        return None
    if not (_text_or_none(profile) and _text_or_none(digest)):
        return None
    predicate_type = _PREDICATES.get(predicate) if _text(predicate) else None
    signer = _signer(signer_value)
    if predicate_type is None or signer is False:
        return None
    return Pointer(
        schema_version=schema,
        recipe=RecipeName(recipe),
        profile=profile,
        bundle=BundleRef(
            oci=oci,
            digest=None if digest is None else OciDigest(digest),
            predicate_type=predicate_type,
        ),
        signer=signer if isinstance(signer, ClaimedSigner) else None,
        attested_at=attested,
    )
