"""Digests and identifiers: `NewType` strings, and the signer slug and id of an identity."""

from __future__ import annotations

import hashlib
from typing import NewType

Sha256Hex = NewType("Sha256Hex", str)
"""64 lowercase hex characters, no prefix (predicate.recipe.digest, statement subject)."""

OciDigest = NewType("OciDigest", str)
"""`sha256:` + 64 lowercase hex (pointer bundle.digest, manifest/ctrf/bom digests)."""

SourceSlug = NewType("SourceSlug", str)
"""First 32 hex of sha256(issuer + "\\n" + identity): pointer folders and allowlist `source`."""

SourceId = NewType("SourceId", str)
"""Full 64-hex sha256(issuer + "\\n" + identity): aicr's canonical public source ID."""

RecipeName = NewType("RecipeName", str)
"""A full recipe name such as `gb200-gke-cos-training-slurm-gpustack-bundle-installer`."""


def source_slug(issuer: str, identity: str) -> SourceSlug:
    """The 32-hex source slug of a signer (spec 6). Both parts must be non-empty."""
    if not issuer or not identity:
        raise ValueError("source slug needs a non-empty issuer and identity")
    return SourceSlug(hashlib.sha256(f"{issuer}\n{identity}".encode()).hexdigest()[:32])


def source_id(issuer: str, identity: str) -> SourceId:
    """The full 64-hex canonical source ID of a signer (aicr-dashboard 1.4)."""
    if not issuer or not identity:
        raise ValueError("source id needs a non-empty issuer and identity")
    return SourceId(hashlib.sha256(f"{issuer}\n{identity}".encode()).hexdigest())
