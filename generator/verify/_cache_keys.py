"""What a verdict cache key is made of: the pointer's claims, the verifier (versions and a digest of
its sources) and the policy options that reach a verdict. Moved unchanged from `cache`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import sigstore

import generator
from generator.model import Pointer, PointerLocation
from generator.verify._rules import RULES_VERSION


def _claims(pointer: Pointer, location: PointerLocation) -> dict[str, Any]:
    signer = pointer.signer
    return {
        "bundleDigest": pointer.bundle.digest,
        "oci": pointer.bundle.oci,
        "predicateType": pointer.bundle.predicate_type.value,
        "recipe": pointer.recipe,
        "profile": pointer.profile,
        "schemaVersion": pointer.schema_version,
        "attestedAt": pointer.attested_at,
        "signer": None
        if signer is None
        else {
            "issuer": signer.identity.issuer,
            "identity": signer.identity.identity,
            "rekorLogIndex": signer.rekor_log_index,
        },
        "path": location.path,
        "folderRecipe": location.folder_recipe,
        "folderSource": location.folder_source,
    }


def _hash(doc: dict[str, Any]) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verifier_version() -> str:
    """The versions, the signature rules and the verifier code whose change invalidates every
    cached verdict."""
    return (
        f"evidence-dashboard {generator.__version__}; sigstore {sigstore.__version__}; "
        f"{RULES_VERSION}; code {verifier_code_digest()}"
    )


_VERIFIER_CODE = (
    "verify",
    "bundle",
    "model",
    "recipe",
    "ctrf",
    "strictjson.py",
    "tree/yamlio.py",
    "tree/_yaml_builder.py",
    "tree/_yaml_scalars.py",
)
"""The sources a verdict depends on (relative to the package), hashed into every key."""


@lru_cache(maxsize=1)
def verifier_code_digest() -> str:
    """sha256 over the verifier's sources: a verdict is reused only by the code that made it
    (a change without a version bump, too). Read once per process."""
    package = Path(generator.__file__).resolve().parent
    h = hashlib.sha256()
    for part in _VERIFIER_CODE:
        base = package / part
        files = sorted(base.rglob("*.py")) if base.is_dir() else [base]
        for path in files:
            h.update(path.relative_to(package).as_posix().encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def verdict_policy(
    trusted_registries: Sequence[str] | None, allow_private: Sequence[str] = ()
) -> str:
    """The policy options that reach a verdict besides the trust root (which
    registries a bundle may come from), as the `policy` part of a cache key."""
    return _hash(
        {
            "trustedRegistries": None if trusted_registries is None else sorted(trusted_registries),
            "allowPrivateRegistries": sorted(allow_private),
        }
    )
