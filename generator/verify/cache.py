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
import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
import sigstore

import generator
from generator.model import Pointer, PointerLocation, Verdict
from generator.verify.serialize import (
    VerdictFormatError,
    loads_decoded,
    verdict_from_json,
    verdict_to_json,
)
from generator.verify.trust import Trust

KEY_VERSION = "verdict-cache/v1"
_HEX = frozenset("0123456789abcdef")


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
        self._root_text = str(root)
        self._shared: dict[Any, Any] = {}
        """Equal steps of the verdicts read, shared (`verdict_from_json(shared=...)`)."""
        self._claims_of: dict[str, tuple[Pointer, PointerLocation]] = {}
        self._verifier = verifier_version()

    def key(
        self, pointer: Pointer, location: PointerLocation, trust: Trust, allowlist_digest: str
    ) -> str:
        """The full cache key of one verification (remembered with its claims key for `put`)."""
        key = _hash({
            "v": KEY_VERSION,
            "claims": _claims(pointer, location),
            "trust": trust.digest,
            "allowlist": allowlist_digest,
            "verifier": self._verifier,
        })
        self._claims_of[key] = (pointer, location)  # its claims key is computed by `put`
        return key

    def claims_key(self, pointer: Pointer, location: PointerLocation) -> str:
        """The key of the "last verified" index: bundle digest and claims only."""
        return _hash({"v": KEY_VERSION, "claims": _claims(pointer, location)})

    def get(self, key: str) -> tuple[Verdict, str] | None:
        """The cached verdict and the time it was recorded, or None."""
        return self._read(self._path("verdicts", key), self._shared)

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
        # Compact: a warm build reads every entry back, and whitespace is a third of the bytes.
        try:
            data = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # what orjson does not write (an integer beyond 64 bits, ...)
            data = (json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                    + "\n").encode()
        verdict_path = self._path("verdicts", key)
        self._write(verdict_path, data)
        if claims_key is None and key in self._claims_of:
            claims_key = self.claims_key(*self._claims_of[key])
        if claims_key is not None:
            self._write(self._path("claims", claims_key), data, same_as=verdict_path)

    def last_recorded(
        self, pointer: Pointer, location: PointerLocation
    ) -> tuple[Verdict, str] | None:
        """The latest verdict recorded for this bundle and these claims, under any trust root,
        allowlist or verifier version (for the "verified at <time>" fallback)."""
        return self._read(self._path("claims", self.claims_key(pointer, location)))

    # ------------------------------------------------------------------ files

    def _path(self, kind: str, key: str) -> Path:
        if len(key) != 64 or not _HEX.issuperset(key):
            raise ValueError(f"not a cache key: {key!r}")
        return Path(f"{self._root_text}/{kind}/{key[:2]}/{key}.json")

    @staticmethod
    def _read(path: Path, shared: dict[Any, Any] | None = None) -> tuple[Verdict, str] | None:
        """The entry at `path`, or None when it is absent or cannot be read back.

        Tagged values are decoded while parsing (`loads_decoded`); should that fail on some
        odd entry, the entry is read again the plain way, which decides."""
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            doc = loads_decoded(data)
            verdict = verdict_from_json(doc["verdict"], plain=True, shared=shared)
            return verdict, str(doc["recordedAt"])
        except (ValueError, KeyError, TypeError, VerdictFormatError):
            pass
        try:
            doc = json.loads(data)
            return verdict_from_json(doc["verdict"]), str(doc["recordedAt"])
        except (ValueError, KeyError, TypeError, VerdictFormatError):
            return None

    @staticmethod
    def _write(path: Path, data: bytes, *, same_as: Path | None = None) -> None:
        """Write to a temporary file and rename it into place: readers see the old entry or
        the new one, never half of one. No fsync: after a power loss an entry may be empty or
        missing, which a read treats as a miss (the bundle is verified again), and syncing
        every entry cost as much as verifying it.

        `same_as` names an entry just written with the same bytes: the temporary file is then
        a hard link to it (entries are only ever replaced, never rewritten in place, so the
        two names never diverge by accident), and the bytes are written only where links are
        not available. The folder is created only when the first attempt finds it missing."""
        if same_as is not None:
            tmp = _temp_name(path)
            try:
                os.link(same_as, tmp)
            except FileNotFoundError:
                path.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(same_as, tmp)
                except OSError:
                    tmp = ""
            except OSError:
                tmp = ""
            if tmp:
                try:
                    os.replace(tmp, path)
                except BaseException:
                    _unlink(tmp)
                    raise
                return
        fd, tmp = _create_temp(path)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            _unlink(tmp)
            raise


_TEMP_SERIAL = itertools.count()
"""Numbers the temporary files of this process (with its pid, so forked workers differ)."""


def _temp_name(path: Path) -> str:
    """A fresh temporary name next to `path` (`.tmp-<pid>-<n>.json`, as cheap as a counter)."""
    return f"{path.parent}/.tmp-{os.getpid()}-{next(_TEMP_SERIAL)}.json"


def _create_temp(path: Path) -> tuple[int, str]:
    """Create a new temporary file next to `path` (mode 0600, like `tempfile.mkstemp`), making
    the folder only when it is missing; a name left over by a crashed run is skipped."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for attempt in range(100):
        tmp = _temp_name(path)
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            if attempt:
                raise
            path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
    return fd, tmp


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
