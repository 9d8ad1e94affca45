"""The verdict cache: a verdict is reused only for the exact same question asked the same way.

The key is a sha256 over the bundle digest, everything the pointer claims (and where it sits,
since the file name is checked), the trust root digest, the allowlist digest and the verifier
version (`generator.__version__`, `sigstore.__version__`). Change any of them and the bundle is
verified again.

A second index, keyed by the bundle digest and the claims only, answers "when was this last
verified?" for the "verified at <time>" fallback when a registry is down; it ignores trust,
allowlist and version on purpose, and the caller must show its age.

Writes are atomic (a temporary file in the same folder, then `os.replace`); unreadable entries
read as misses.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import sigstore

import generator
from generator.model import Pointer, PointerLocation, Verdict
from generator.verify.serialize import VerdictFormatError, verdict_from_json, verdict_to_json
from generator.verify.trust import Trust

KEY_VERSION = "verdict-cache/v1"


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
        "signer": None if signer is None else {
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
    """The versions whose change invalidates every cached verdict."""
    return f"evidence-dashboard {generator.__version__}; sigstore {sigstore.__version__}"


class VerdictCache:
    """Verdicts on disk under `root`, one JSON file per key."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._claims_of: dict[str, str] = {}

    def key(
        self, pointer: Pointer, location: PointerLocation, trust: Trust, allowlist_digest: str
    ) -> str:
        """The full cache key of one verification (remembered with its claims key for `put`)."""
        key = _hash({
            "v": KEY_VERSION,
            "claims": _claims(pointer, location),
            "trust": trust.digest,
            "allowlist": allowlist_digest,
            "verifier": verifier_version(),
        })
        self._claims_of[key] = self.claims_key(pointer, location)
        return key

    def claims_key(self, pointer: Pointer, location: PointerLocation) -> str:
        """The key of the "last verified" index: bundle digest and claims only."""
        return _hash({"v": KEY_VERSION, "claims": _claims(pointer, location)})

    def get(self, key: str) -> tuple[Verdict, str] | None:
        """The cached verdict and the time it was recorded, or None."""
        return self._read(self._path("verdicts", key))

    def put(
        self,
        key: str,
        verdict: Verdict,
        recorded_at: str,
        *,
        claims_key: str | None = None,
    ) -> None:
        """Store a verdict (atomically) and update the "last verified" index of its bundle and
        claims (`claims_key`, by default the one remembered when `key()` made `key`)."""
        doc = {"key": key, "recordedAt": recorded_at, "verdict": verdict_to_json(verdict)}
        data = (json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()
        self._write(self._path("verdicts", key), data)
        claims_key = claims_key or self._claims_of.get(key)
        if claims_key is not None:
            self._write(self._path("claims", claims_key), data)

    def last_recorded(
        self, pointer: Pointer, location: PointerLocation
    ) -> tuple[Verdict, str] | None:
        """The latest verdict recorded for this bundle and these claims, under any trust root,
        allowlist or verifier version (for the "verified at <time>" fallback)."""
        return self._read(self._path("claims", self.claims_key(pointer, location)))

    # ------------------------------------------------------------------ files

    def _path(self, kind: str, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / kind / key[:2] / f"{key}.json"

    @staticmethod
    def _read(path: Path) -> tuple[Verdict, str] | None:
        try:
            doc = json.loads(path.read_bytes())
            return verdict_from_json(doc["verdict"]), str(doc["recordedAt"])
        except (OSError, ValueError, KeyError, TypeError, VerdictFormatError):
            return None

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
