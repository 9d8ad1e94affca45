"""The verdict cache: a verdict is reused only for the exact same question asked the same way.

The key is a sha256 over the bundle digest, everything the pointer claims (and where it sits,
since the file name is checked), the trust root digest, the verifier
(`generator.__version__`, `sigstore.__version__` and a digest of the verifier's sources) and
the policy options that reach a verdict (`policy`, e.g. the trusted registries). Change any of
them and the bundle is verified again, and no earlier verdict stands in for it: the "verified
at <time>" fallback used when a bundle cannot be read this time (`remembered`) answers by the
same full key, so a verdict judged under another trust root, verifier or policy is never
reused. The allowlist is not part of it: no step of verification reads it (it only decides what
a verified signer counts for, after the verdict, `generator.evaluate.assess`), so editing it
costs no bundle a second verification.

Entries are stored in packs (`packs/<time>-<pid>-<n>.jsonl`): a header line listing each
entry's key and claims key, then one line per entry: its HMAC tag (`generator.cacheauth`,
over the entry's JSON bytes as written), a space, and the compact JSON (key, claims key, trust
root digest, recording time, verdict). A line whose tag does not check is a miss, counted as
an authentication failure; the header is only a map (a lookup checks the key the entry itself
names). Creating a file costs more here than anything else a cache write does (hundreds of
microseconds of kernel time on a journalling file system), so a build writes one pack per
batch of verdicts, not one file per verdict. A pack is written whole (a temporary file, then
`os.replace`), never changed, and a later pack answers for a key before an earlier one. The
headers are read on the first lookup; an unreadable pack or entry reads as a miss.

What a key is made of (the claims, the verifier, the policy) is in `_cache_keys`.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from generator.cacheauth import (
    TAG_LENGTH,
    CacheAuth,
    Purpose,
    is_sha256_hex,
    note_failure,
    read_cache_file,
)
from generator.model import Pointer, PointerLocation, Verdict
from generator.verify._cache_keys import (
    _claims,
    _hash,
    verdict_policy,
    verifier_code_digest,
    verifier_version,
)
from generator.verify.packindex import KEEP_AFTER, keep_index, kept_index
from generator.verify.serialize import (
    VerdictFormatError,
    loads_decoded,
    verdict_from_json,
    verdict_to_json,
)
from generator.verify.trust import Trust

__all__ = [
    "KEY_VERSION",
    "PACK_ENTRIES",
    "PACK_VERSION",
    "Remembered",
    "VerdictCache",
    "verdict_policy",
    "verifier_code_digest",
    "verifier_version",
]

KEY_VERSION = "verdict-cache/v3"
PACK_VERSION = "verdict-pack/v2"
PACK_ENTRIES = 256
"""A batch writes a pack when it holds this many entries (and at its end)."""
MAX_PACK_BYTES = 1 << 30
"""A pack larger than this is not read (its entries are misses): `PACK_ENTRIES` verdicts are
a few MB; a planted file of any size, a link or a FIFO never takes a build down."""
MAX_HEADER_BYTES = 16 << 20
"""A pack's first line (its keys) must end within this many bytes."""
_HEADER_GUESS = 64 << 10
"""What is read first for a header: `PACK_ENTRIES` keys are about 35 KB."""
_PACKS_READ = 4
"""Packs whose lines are kept after a lookup (lookups come in about the order of writing)."""


@dataclass(frozen=True)
class Remembered:
    """A verdict recorded by an earlier verification: when, and under which trust root."""

    verdict: Verdict
    recorded_at: str
    trust_root: str | None


class VerdictCache:
    """Verdicts on disk under `root`, in packs (see the module docstring)."""

    def __init__(self, root: Path, auth: CacheAuth | None = None) -> None:
        self.root = root
        self.auth = auth if auth is not None else CacheAuth.from_environment()
        self._root_text = str(root)
        self._shared: dict[Any, Any] = {}
        """Equal steps of the verdicts read, shared (`verdict_from_json(shared=...)`)."""
        self._claims_of: dict[str, tuple[Pointer, PointerLocation]] = {}
        self._verifier = verifier_version()
        self._by_key: dict[str, tuple[str, int]] | None = None
        """Where each key's latest entry is: (pack path, entry number); read on first use."""
        self._seen: set[str] = set()
        """Packs whose headers are in the index."""
        self._lines: OrderedDict[str, list[bytes]] = OrderedDict()
        self._pending: list[tuple[str, str | None, bytes]] | None = None
        """Entries of the open batch (`batched`), written as one pack."""

    def key(
        self,
        pointer: Pointer,
        location: PointerLocation,
        trust: Trust,
        policy: str = "",
    ) -> str:
        """The full cache key of one verification (remembered with its claims key for `put`).
        `policy` stands for the options that reach a verdict besides the trust root."""
        key = _hash(
            {
                "v": KEY_VERSION,
                "claims": _claims(pointer, location),
                "trust": trust.digest,
                "verifier": self._verifier,
                "policy": policy,
            }
        )
        self._claims_of[key] = (pointer, location)  # its claims key is computed by `put`
        return key

    def claims_key(self, pointer: Pointer, location: PointerLocation) -> str:
        """The key of the "last verified" index: bundle digest and claims only."""
        return _hash({"v": KEY_VERSION, "claims": _claims(pointer, location)})

    def get(self, key: str) -> tuple[Verdict, str] | None:
        """The cached verdict and the time it was recorded, or None."""
        _check_key(key)
        where = self._index().get(key)
        found = self._entry(where, key, self._shared) if where else None
        return None if found is None else (found.verdict, found.recorded_at)

    def remembered(self, key: str) -> Remembered | None:
        """The verdict an earlier verification recorded under this full `key` (same claims,
        trust root, verifier and policy), with when and under which root, for the
        "verified at <time>" fallback; packs written since the index was read (by another
        build or worker) are looked at too. None under any other trust root."""
        _check_key(key)
        self._refresh()
        where = self._index().get(key)
        return self._entry(where, key) if where else None

    def put(
        self,
        key: str,
        verdict: Verdict,
        recorded_at: str,
        *,
        claims_key: str | None = None,
        trust_root: str | None = None,
    ) -> None:
        """Store a verdict, and index it under its bundle and claims (`claims_key`, by default
        the one remembered when `key()` made `key`). Within `batched()` it is written with the
        batch; otherwise at once, as a pack of one."""
        _check_key(key)
        if claims_key is None and key in self._claims_of:
            claims_key = self.claims_key(*self._claims_of[key])
        if claims_key is not None:
            _check_key(claims_key)
        doc = {
            "key": key,
            "claims": claims_key,
            "trustRoot": trust_root,
            "recordedAt": recorded_at,
            "verdict": verdict_to_json(verdict),
        }
        # Compact: a warm build reads every entry back, and whitespace is a third of the bytes.
        try:
            body = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # what orjson does not write (an integer beyond 64 bits, ...)
            body = json.dumps(
                doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False
            ).encode()
        entry = (key, claims_key, self.auth.tag(Purpose.VERDICT, body) + b" " + body)
        if self._pending is None:
            self._write_pack([entry])
            return
        self._pending.append(entry)
        if len(self._pending) >= PACK_ENTRIES:
            self.flush()

    @contextmanager
    def batched(self) -> Iterator[None]:
        """Collect the `put`s of the block into packs of up to `PACK_ENTRIES` (one file each,
        written at the end of the block); nested blocks join the outer one."""
        if self._pending is not None:
            yield
            return
        self._pending = []
        try:
            yield
        finally:
            try:
                self.flush()
            finally:
                self._pending = None

    def flush(self) -> None:
        """Write the open batch's entries now, as one pack."""
        if self._pending:
            entries, self._pending = self._pending, []
            self._write_pack(entries)

    # ------------------------------------------------------------------ packs

    def _packs(self) -> Path:
        return Path(f"{self._root_text}/packs")

    def _index(self) -> dict[str, tuple[str, int]]:
        """Read every pack's header once (in name order: later packs win), but those of the
        packs the kept index covers (`generator.verify.packindex`), which is kept again when
        many were not."""
        if self._by_key is None:
            names, packs = self._pack_names(), str(self._packs())
            covered, self._by_key = kept_index(self.root, self.auth, names, packs)
            self._seen.update(f"{packs}/{name}" for name in names[:covered])
            self._read_headers(names[covered:])
            if len(names) - covered >= KEEP_AFTER:
                keep_index(self.root, self.auth, names, self._by_key, packs)
        return self._by_key

    def _pack_names(self) -> list[str]:
        """The packs folder's pack names, sorted (none when it cannot be listed)."""
        try:
            listed = os.listdir(self._packs())
        except OSError:
            return []
        return sorted(n for n in listed if n.endswith(".jsonl") and not n.startswith("."))

    def _read_headers(self, names: list[str]) -> None:
        for name in names:
            path = f"{self._packs()}/{name}"
            self._seen.add(path)
            header = _read_header(path)
            if header is not None:
                self._remember(path, header)

    def _refresh(self) -> None:
        """Index the packs written since the index was read (each pack is named by its
        writing time, so the new ones sort after the old)."""
        if self._by_key is None:
            return
        names = self._pack_names()
        self._read_headers([n for n in names if f"{self._packs()}/{n}" not in self._seen])

    def _remember(self, path: str, header: list[tuple[str, str | None]]) -> None:
        assert self._by_key is not None
        self._seen.add(path)
        for n, (key, _claims_key) in enumerate(header):
            self._by_key[key] = (path, n)

    def _entry(
        self, where: tuple[str, int], key: str, shared: dict[Any, Any] | None = None
    ) -> Remembered | None:
        path, n = where
        if type(n) is not int or n < 0:
            return None  # not an entry number (a kept index is not checked entry by entry)
        lines = self._lines.get(path)
        if lines is None:
            data = read_cache_file(path, MAX_PACK_BYTES)
            if data is None:
                return None
            lines = data.split(b"\n")
            self._lines[path] = lines
            while len(self._lines) > _PACKS_READ:
                self._lines.popitem(last=False)
        else:
            self._lines.move_to_end(path)
        if n + 1 >= len(lines):
            return None
        line = lines[n + 1]
        body = line[TAG_LENGTH + 1 :]
        if line[TAG_LENGTH : TAG_LENGTH + 1] != b" " or not self.auth.check(
            Purpose.VERDICT, body, line[:TAG_LENGTH]
        ):
            note_failure(f"verdict {path}#{n}")
            return None
        return _decode(body, key, shared)

    def _write_pack(self, entries: list[tuple[str, str | None, bytes]]) -> None:
        header = orjson.dumps(
            {"v": PACK_VERSION, "entries": [[key, claims] for key, claims, _ in entries]}
        )
        data = b"\n".join([header, *(line for _, _, line in entries)]) + b"\n"
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_TEMP_SERIAL)}.jsonl"
        path = self._packs() / name
        self._write(path, data)
        if self._by_key is not None:  # an index already read learns of the new pack
            self._remember(str(path), [(key, claims) for key, claims, _ in entries])

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        """Write to a temporary file and rename it into place: readers see the whole file or
        none of it. No fsync: after a power loss a pack may be empty or missing, which reads
        as misses (the bundles are verified again), and syncing cost as much as verifying.
        The folder is created only when the first attempt finds it missing."""
        fd, tmp = _create_temp(path)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            _unlink(tmp)
            raise


def _check_key(key: str) -> None:
    if not is_sha256_hex(key):
        raise ValueError(f"not a cache key: {key!r}")


def _read_header(path: str) -> list[tuple[str, str | None]] | None:
    """A pack's entry keys and claims keys, or None when the header cannot be read."""
    head = read_cache_file(path, _HEADER_GUESS, head=True)  # the whole header, nearly always
    if head is not None and b"\n" not in head:
        head = read_cache_file(path, MAX_HEADER_BYTES, head=True)
    if head is None or b"\n" not in head:
        return None
    try:
        doc = orjson.loads(head[: head.index(b"\n")])
        if not isinstance(doc, dict) or doc.get("v") != PACK_VERSION:
            return None
        header = []
        for key, claims in doc["entries"]:
            if not (is_sha256_hex(key) and (claims is None or is_sha256_hex(claims))):
                return None
            header.append((key, claims))
        return header
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _decode(data: bytes, key: str, shared: dict[Any, Any] | None) -> Remembered | None:
    """One entry (its authenticated JSON) as a `Remembered`, or None when it cannot be read
    back (or holds another key than `key`).

    Tagged values are decoded while parsing (`loads_decoded`); should that fail on some odd
    entry, the entry is read again the plain way, which decides."""
    try:
        doc = loads_decoded(data)
        if doc.get("key") != key:
            return None
        verdict = verdict_from_json(doc["verdict"], plain=True, shared=shared)
        return Remembered(verdict, str(doc["recordedAt"]), _text(doc.get("trustRoot")))
    except (ValueError, KeyError, TypeError, AttributeError, VerdictFormatError):
        pass
    try:
        doc = json.loads(data)
        if doc.get("key") != key:
            return None
        return Remembered(
            verdict_from_json(doc["verdict"]), str(doc["recordedAt"]), _text(doc.get("trustRoot"))
        )
    except (ValueError, KeyError, TypeError, AttributeError, VerdictFormatError):
        return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


_TEMP_SERIAL = itertools.count()
"""Numbers the temporary files and packs of this process (with its pid, so forked workers
differ)."""


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
