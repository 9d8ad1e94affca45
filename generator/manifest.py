"""The site manifest: every file of a built site with its sha256 and size, plus what shaped it.

`data/manifest.json` is written once at the end of a staging build (before the atomic swap), so a
published site can be checked file by file (`evidence-dashboard verify-site`) and, with the
options it records, rebuilt and compared byte for byte. The manifest lists every regular file of
the site except itself and its Sigstore bundle (`data/manifest.json.sigstore.json`, written after
it). The site marker `.evidence-dashboard-site` is written before the manifest and so is listed.
The document is deterministic: sorted paths, no timestamp except the recorded SOURCE_DATE_EPOCH.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator import __version__
from generator.data.gojson import go_json_bytes
from generator.errors import InputError, Location
from generator.wholefile import write_whole

if TYPE_CHECKING:
    from generator.model import SignerIdentity

__all__ = [
    "MANIFEST_PATH",
    "MANIFEST_PREDICATE",
    "MANIFEST_SCHEMA",
    "SIGNATURE_PATH",
    "UNLISTED",
    "FileEntry",
    "Manifest",
    "ManifestOptions",
    "file_entries",
    "parse_manifest",
    "recorded_sha256",
    "Written",
    "sign_manifest_dsse",
    "write_manifest",
]

MANIFEST_PATH = "data/manifest.json"
SIGNATURE_PATH = "data/manifest.json.sigstore.json"
UNLISTED = frozenset({MANIFEST_PATH, SIGNATURE_PATH})
"""The only files a site may hold that its manifest does not list."""
MANIFEST_PREDICATE = "https://evidence-dashboard.dev/site-manifest/v1"
"""The in-toto predicate type of the statement a publisher signs over the manifest."""
MANIFEST_SCHEMA = "evidence-dashboard/site-manifest/v1"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileEntry:
    """One file of the site: its POSIX path relative to the site root, sha256 (hex) and size."""

    path: str
    sha256: str
    size: int

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size": self.size}


@dataclass(frozen=True)
class ManifestOptions:
    """The build options that shape the output, recorded so a rebuild can use the same ones."""

    trust_mode: str = "production"
    trust_root_digest: str | None = None
    """sha256 of the `--trust-root` file; None when the public-good root of `trust_mode` was used."""
    trusted_registries: tuple[str, ...] | None = None
    source_date_epoch: int | None = None
    preview: bool = False
    source_url: str | None = None
    site_url: str | None = None
    data_only: bool = False
    publisher: tuple[str, str] | None = None
    """(identity, issuer) given with `build --publisher-identity`, shown on the site."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "publisher": None
            if self.publisher is None
            else {"identity": self.publisher[0], "issuer": self.publisher[1]},
            "trust": {"mode": self.trust_mode, "rootDigest": self.trust_root_digest},
            "trustedRegistries": None
            if self.trusted_registries is None
            else list(self.trusted_registries),
            "sourceDateEpoch": self.source_date_epoch,
            "preview": self.preview,
            "sourceUrl": self.source_url,
            "siteUrl": self.site_url,
            "dataOnly": self.data_only,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ManifestOptions:
        trust = raw.get("trust") or {}
        registries = raw.get("trustedRegistries")
        epoch = raw.get("sourceDateEpoch")
        return cls(
            trust_mode=str(trust.get("mode") or "production"),
            trust_root_digest=trust.get("rootDigest"),
            trusted_registries=None if registries is None else tuple(str(r) for r in registries),
            source_date_epoch=None if epoch is None else int(epoch),
            preview=bool(raw.get("preview")),
            source_url=raw.get("sourceUrl"),
            site_url=raw.get("siteUrl"),
            data_only=bool(raw.get("dataOnly")),
            publisher=None
            if not isinstance(raw.get("publisher"), dict)
            else (str(raw["publisher"].get("identity")), str(raw["publisher"].get("issuer"))),
        )


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest."""

    commit: str | None
    generator_version: str
    options: ManifestOptions
    files: tuple[FileEntry, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": MANIFEST_SCHEMA,
            "generator": {"name": "evidence-dashboard", "version": self.generator_version},
            "commit": self.commit,
            "options": self.options.as_dict(),
            "files": [f.as_dict() for f in self.files],
        }

    def to_bytes(self) -> bytes:
        """In the layout of every other data file (Go's MarshalIndent, 2 spaces, a newline)."""
        return go_json_bytes(self.as_dict())


def _listed(site: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every non-folder entry under `site` as (its POSIX path in the site, its entry): links
    included (to folders too), never followed; a folder that cannot be read is left out."""
    stack = [("", str(site))]
    while stack:
        prefix, folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                found = list(entries)
        except OSError:
            continue
        for entry in found:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append((rel + "/", entry.path))
            else:
                yield rel, entry


def _digest(path: str | Path) -> tuple[str, int]:
    with open(path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256")
        size = fh.tell()
    return digest.hexdigest(), size


def file_entries(site: Path, known: Mapping[str, Written] | None = None) -> tuple[FileEntry, ...]:
    """Every regular file of `site` except `UNLISTED`, sorted by path. A symlink is hashed as
    the text of its target so it can never pass for the file it points at.

    A file in `known` (by its path in the site) that is still the file recorded there
    (`Written.still`) is not read again. Small files are hashed here (handing one to a thread
    costs more than hashing it); large ones on a few threads, as reading and sha256 release
    the GIL and at 10,000 attestations the site is hundreds of MB."""
    known = known or {}
    entries: list[FileEntry] = []
    large: list[tuple[str, str]] = []
    for rel, entry in _listed(site):
        if rel in UNLISTED:
            continue
        info = entry.stat(follow_symlinks=False)
        record = known.get(rel)
        if record is not None and record.still(info):
            entries.append(FileEntry(rel, record.sha256, record.size))
        elif not stat.S_ISREG(info.st_mode):
            target = os.readlink(entry.path).encode() if stat.S_ISLNK(info.st_mode) else b""
            entries.append(FileEntry(rel, "link:" + hashlib.sha256(target).hexdigest(), -1))
        elif info.st_size > _INLINE_BYTES:
            large.append((rel, entry.path))
        else:
            with open(entry.path, "rb") as fh:
                data = fh.read()
            entries.append(FileEntry(rel, hashlib.sha256(data).hexdigest(), len(data)))
    with ThreadPoolExecutor(max_workers=_HASH_THREADS) as pool:
        entries.extend(pool.map(lambda item: FileEntry(item[0], *_digest(item[1])), large))
    return tuple(sorted(entries, key=lambda e: e.path))


@dataclass(frozen=True)
class Written:
    """A file this build wrote and hashed as it wrote it: its sha256 (hex) and what its
    `lstat` said once it was closed. Whoever rewrites such a file drops its record: a
    rewrite within one tick of the file system's clock can keep its size and time."""

    sha256: str
    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, path: Path, sha256: str) -> Written:
        info = os.lstat(path)
        return cls(sha256, info.st_size, info.st_mtime_ns, info.st_ino)

    def still(self, info: os.stat_result) -> bool:
        """Whether `info` is the same regular file, unwritten since (size, time and inode)."""
        return (
            stat.S_ISREG(info.st_mode)
            and info.st_size == self.size
            and info.st_mtime_ns == self.mtime_ns
            and info.st_ino == self.inode
        )


def recorded_sha256(known: Mapping[str, Written], name: str, path: Path) -> str | None:
    """The sha256 recorded under `name` while `path` is still the file recorded, else None
    (then it is read)."""
    record = known.get(name)
    if record is None:
        return None
    try:
        return record.sha256 if record.still(os.lstat(path)) else None
    except OSError:
        return None


_HASH_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads hashing the site's large files (more than the cores buys nothing)."""
_INLINE_BYTES = 1 << 20
"""Files up to this size are hashed on the calling thread."""


def write_manifest(
    site: Path,
    *,
    commit: str | None,
    options: ManifestOptions,
    version: str = __version__,
    known: Mapping[str, Written] | None = None,
) -> Manifest:
    """Hash every file of `site` (but those `known` still holds) and write
    `data/manifest.json`; returns the manifest."""
    manifest = Manifest(
        commit=commit,
        generator_version=version,
        options=options,
        files=file_entries(site, known),
    )
    write_whole(site / MANIFEST_PATH, manifest.to_bytes(), mode=0o644)
    return manifest


def _bad(file: str, message: str, *, expected: str, found: str) -> InputError:
    return InputError(
        f"the site manifest is malformed: {message}",
        location=Location(file),
        expected=expected,
        found=found,
        hint="rebuild the site with evidence-dashboard build; a manifest is never edited by hand",
    )


def parse_manifest(data: bytes, *, file: str) -> Manifest:
    """Parse and check a manifest: schema, unique sorted relative paths, hex digests."""
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(file, "not JSON", expected="a JSON object", found=str(exc)) from exc
    if not isinstance(raw, dict) or raw.get("schema") != MANIFEST_SCHEMA:
        found = raw.get("schema") if isinstance(raw, dict) else type(raw).__name__
        raise _bad(file, "unknown schema", expected=MANIFEST_SCHEMA, found=repr(found))
    files_raw = raw.get("files")
    if not isinstance(files_raw, list):
        raise _bad(file, "no file list", expected="files: a list", found=repr(type(files_raw)))
    files: list[FileEntry] = []
    for item in files_raw:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("path"), str)
            and isinstance(item.get("sha256"), str)
            and isinstance(item.get("size"), int)
        ):
            raise _bad(
                file,
                "a file entry is malformed",
                expected="{path, sha256, size}",
                found=repr(item)[:200],
            )
        path = item["path"]
        parts = path.split("/")
        if not path or path.startswith("/") or any(p in {"", ".", ".."} for p in parts):
            raise _bad(
                file, "a path is not a plain relative path", expected="a/b/c.html", found=repr(path)
            )
        files.append(FileEntry(path, item["sha256"], item["size"]))
    paths = [f.path for f in files]
    if paths != sorted(set(paths)):
        raise _bad(
            file,
            "paths are not sorted and unique",
            expected="sorted unique paths",
            found="duplicates or an unsorted list",
        )
    generator = raw.get("generator") or {}
    options = raw.get("options") or {}
    if not isinstance(options, dict) or not isinstance(generator, dict):
        raise _bad(
            file,
            "options or generator is not an object",
            expected="objects",
            found=repr(type(options)),
        )
    commit = raw.get("commit")
    return Manifest(
        commit=None if commit is None else str(commit),
        generator_version=str(generator.get("version") or ""),
        options=ManifestOptions.from_dict(options),
        files=tuple(files),
    )


def sign_manifest_dsse(
    site: Path, authority: Any, signer: SignerIdentity, signed_at: datetime
) -> Path:
    """Sign the site's manifest with a test authority (DSSE, in-toto statement over its sha256)
    and write the bundle next to it; for local builds and offline tests."""
    data = (site / MANIFEST_PATH).read_bytes()
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [
            {"name": MANIFEST_PATH, "digest": {"sha256": hashlib.sha256(data).hexdigest()}}
        ],
        "predicateType": MANIFEST_PREDICATE,
        "predicate": {},
    }
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    bundle = authority.sign_dsse(payload, signer=signer, signed_at=signed_at)
    target = site / SIGNATURE_PATH
    target.write_bytes(bundle)
    return target
