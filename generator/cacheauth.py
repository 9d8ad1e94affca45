"""Cache authentication: nothing read back from `--cache` is trusted on its own word.

The cache folder may be shared (a CI cache restored into a pull request's build, a folder
other users can write), so whatever a build reads back from it and could change a verdict, a
board state or a published byte carries an HMAC-SHA256 made with a key that is never stored
in the cache: `EVIDENCE_DASHBOARD_CACHE_KEY` when set, else a key file created with mode 0600
in the user's config folder (`platformdirs.user_config_dir`). An entry whose tag does not
check is a miss: it is counted (`failures()`, reported in build-info.json and the build
summary) and computed again, never an error. A cache written under one key reads, under
another, as all misses.

Each use of the key (`Purpose`) gets its own derived key, so a tag made for one kind of entry
never checks as another kind. Tags are hex text, prefixed to the bytes they cover.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from generator.errors import Location, UsageError
from generator.wholefile import write_whole

__all__ = [
    "CACHE_KEY_ENV",
    "TAG_LENGTH",
    "CacheAuth",
    "CacheKeyError",
    "Purpose",
    "adopt_failures",
    "failures",
    "file_digest",
    "is_sha256_hex",
    "keep_only_entries",
    "keyed_entry",
    "key_file_path",
    "load_key",
    "note_failure",
    "cache_file_size",
    "open_cache_entry",
    "read_cache_file",
    "reset_failures",
]

CACHE_KEY_ENV = "EVIDENCE_DASHBOARD_CACHE_KEY"
APP_NAME = "evidence-dashboard"
KEY_FILE = "cache.key"
MIN_KEY_CHARS = 32
"""A key shorter than this (from the environment or the key file) is refused."""
TAG_LENGTH = 64
"""Length of a tag: hex of an HMAC-SHA256."""
_LABEL = b"evidence-dashboard cache key/v1\0"


class CacheKeyError(UsageError):
    """The cache key cannot be used (too short, a key file that is a link or readable by
    others): exit 2, nothing is built."""


class Purpose(StrEnum):
    """What a tag covers; each purpose has its own derived key."""

    VERDICT = "verdict"
    VERDICT_INDEX = "verdict-index"
    MEMO = "memo"
    PAGE = "page"
    TEMPLATE = "template"
    BUNDLE = "bundle"
    FRESHNESS = "freshness"
    RECIPE = "recipe"
    POINTER = "pointer"
    TRUST = "trust"
    TAB = "tab"
    LAYOUT = "layout"


@dataclass(frozen=True)
class CacheAuth:
    """Tags and checks cache entries with keys derived from one secret."""

    secret: bytes = field(repr=False)
    _derived: dict[Purpose, bytes] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for purpose in Purpose:
            self._derived[purpose] = hmac.digest(self.secret, _LABEL + purpose.encode(), "sha256")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> CacheAuth:
        """The build's cache authentication (see `load_key`)."""
        return cls(load_key(environ))

    def tag(self, purpose: Purpose, data: bytes, name: bytes = b"") -> bytes:
        """The hex tag of `data` (ASCII bytes, `TAG_LENGTH` long), bound to `name` when given
        (the entry's name in the cache, so an authentic entry cannot stand in for another)."""
        if not name:
            return hmac.digest(self._derived[purpose], data, "sha256").hex().encode("ascii")
        mac = hmac.new(self._derived[purpose], name, "sha256")
        mac.update(b"\0")
        mac.update(data)
        return mac.hexdigest().encode("ascii")

    def check_parts(
        self, purpose: Purpose, parts: tuple[bytes, ...], tag: bytes, name: bytes
    ) -> bool:
        """Whether `tag` is the tag of the concatenation of `parts` (and `name`): the data of
        an entry checked against its stored tag without copying it into one buffer."""
        mac = hmac.new(self._derived[purpose], name, "sha256")
        mac.update(b"\0")
        for part in parts:
            mac.update(part)
        return hmac.compare_digest(mac.hexdigest().encode("ascii"), tag)

    def check(self, purpose: Purpose, data: bytes, tag: bytes, name: bytes = b"") -> bool:
        """Whether `tag` is the tag of `data` (and `name`), compared in constant time."""
        return hmac.compare_digest(self.tag(purpose, data, name), tag)

    def seal(self, purpose: Purpose, data: bytes, name: bytes = b"") -> bytes:
        """`data` with its tag in front (`<tag>\\n<data>`), as stored."""
        return self.tag(purpose, data, name) + b"\n" + data

    def write_sealed(self, path: Path, purpose: Purpose, data: bytes, name: bytes = b"") -> None:
        """Store `data` sealed at `path`: written whole beside it, then renamed into place, so
        a reader never sees half an entry. Raises `OSError`."""
        write_whole(path, self.seal(purpose, data, name))

    def unseal(self, purpose: Purpose, stored: bytes, name: bytes = b"") -> bytes | None:
        """The data of a `seal`ed entry, or None when its tag does not check."""
        if len(stored) <= TAG_LENGTH or stored[TAG_LENGTH : TAG_LENGTH + 1] != b"\n":
            return None
        data = stored[TAG_LENGTH + 1 :]
        return data if self.check(purpose, data, stored[:TAG_LENGTH], name) else None

    def open(self, purpose: Purpose, stored: bytes, name: bytes, entry: str) -> bytes | None:
        """`unseal`, counting a failed tag as an authentication failure of `entry` (a miss,
        never an error: the count reaches build-info.json and the summary)."""
        data = self.unseal(purpose, stored, name)
        if data is None:
            note_failure(entry)
        return data


# --------------------------------------------------------------------------- the key


def key_file_path(environ: Mapping[str, str] | None = None) -> Path:
    """`<user config dir>/evidence-dashboard/cache.key` (honours `XDG_CONFIG_HOME`)."""
    import platformdirs

    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    if base and Path(base).is_absolute():
        return Path(base) / APP_NAME / KEY_FILE
    return Path(platformdirs.user_config_dir(APP_NAME)) / KEY_FILE


def load_key(environ: Mapping[str, str] | None = None) -> bytes:
    """The cache key: `EVIDENCE_DASHBOARD_CACHE_KEY` when set, else the key file, created
    (32 random bytes, hex, mode 0600) when missing. Raises `CacheKeyError` for a key that is
    too short or a key file that is a link, not a regular file, not ours or readable by
    others."""
    env = os.environ if environ is None else environ
    given = env.get(CACHE_KEY_ENV, "")
    if given:
        if len(given.strip()) < MIN_KEY_CHARS:
            raise CacheKeyError(
                f"{CACHE_KEY_ENV} is too short to authenticate the cache",
                expected=f"at least {MIN_KEY_CHARS} characters (for example "
                "`openssl rand -hex 32`)",
                found=f"{len(given.strip())} characters",
                hint=f"set {CACHE_KEY_ENV} to a long random value, or unset it to use a key "
                "file in your config folder",
            )
        return given.strip().encode("utf-8")
    path = key_file_path(env)
    text = _read_key_file(path)
    if text is None:
        text = _create_key_file(path)
    if len(text) < MIN_KEY_CHARS:
        raise CacheKeyError(
            "the cache key file holds too short a key",
            location=Location(str(path)),
            expected=f"at least {MIN_KEY_CHARS} characters",
            found=f"{len(text)} characters",
            hint="delete the file: the next build creates a new key (and rebuilds its cache)",
        )
    return text.encode("utf-8")


def _refuse(path: Path, problem: str, found: str, hint: str) -> CacheKeyError:
    return CacheKeyError(
        f"refusing the cache key file: {problem}",
        location=Location(str(path)),
        expected="a regular file owned by you with mode 0600",
        found=found,
        hint=hint,
    )


def _read_key_file(path: Path) -> str | None:
    """The key file's text, or None when there is none; refuses an unsafe file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(
            path,
            "it is a symbolic link",
            f"a link to {os.readlink(path)}",
            f"replace the link with the key file itself (mode 0600), or set {CACHE_KEY_ENV}",
        )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _refuse(
            path,
            "it cannot be opened",
            f"{type(exc).__name__}: {exc}",
            "fix its permissions, or delete it to have a new key made",
        ) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(
                path,
                "it is not a regular file",
                stat.filemode(info.st_mode),
                "remove it; the next build creates a key file",
            )
        if info.st_mode & 0o077:
            raise _refuse(
                path,
                "other users may read or change it",
                f"mode {stat.S_IMODE(info.st_mode):04o}",
                f"run `chmod 600 {path}` (and consider a new key: delete the file)",
            )
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise _refuse(
                path,
                "another user owns it",
                f"owner uid {info.st_uid}",
                "delete it; the next build creates a key file of your own",
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(4096)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").strip()


def _create_key_file(path: Path) -> str:
    """Create the key file, whole or not at all: the key is written to a private temporary
    file (mode 0600) that is then hard-linked into place, so a concurrent build sees either
    no file or the finished one; when another build's file won, its key is used."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = secrets.token_hex(32)
    tmp = path.parent / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        os.link(tmp, path)
    except FileExistsError:
        found = _read_key_file(path)
        if found is None:  # removed again meanwhile: try once more
            return _create_key_file(path)
        return found
    finally:
        tmp.unlink(missing_ok=True)
    return text


# --------------------------------------------------------------------------- failures


_FAILED: set[str] = set()
_LOCK = threading.Lock()


def note_failure(entry: str) -> None:
    """Count one cache entry that failed its check (`entry` names it; each counts once)."""
    with _LOCK:
        _FAILED.add(entry)


def failures() -> frozenset[str]:
    """The entries that failed their check in this process since `reset_failures`."""
    with _LOCK:
        return frozenset(_FAILED)


def adopt_failures(entries: Iterable[str]) -> None:
    """Count the failures another process noted (a verification worker's)."""
    with _LOCK:
        _FAILED.update(entries)


def reset_failures() -> None:
    """Start counting afresh (at the start of a build)."""
    with _LOCK:
        _FAILED.clear()


def file_digest(data: bytes) -> str:
    """sha256 hex of `data` (what a sealed manifest lists per file)."""
    return hashlib.sha256(data).hexdigest()


_ENTRY_FLAGS = (
    getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO planted as an entry must not block the open
)
_READ_FLAGS = os.O_RDONLY | _ENTRY_FLAGS
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | _ENTRY_FLAGS


def open_cache_entry(
    path: Path | str, *, append: bool = False
) -> tuple[int, os.stat_result] | None:
    """An open descriptor of a cache entry that is a regular file, never followed through a
    link and never blocking (a FIFO planted there is not waited on), with its status; None for
    anything else. `append`: opened to append to it, not to read. The caller closes it."""
    try:
        fd = os.open(path, _APPEND_FLAGS if append else _READ_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    return fd, info


def cache_file_size(path: Path | str) -> int | None:
    """The size of a cache entry that is a regular file (`open_cache_entry`); None for anything
    else."""
    opened = open_cache_entry(path)
    if opened is None:
        return None
    os.close(opened[0])
    return opened[1].st_size


def is_sha256_hex(value: object) -> bool:
    """Whether `value` is a sha256 as 64 lowercase hex digits (what every cache key is)."""
    return type(value) is str and len(value) == 64 and _HEX_DIGITS.issuperset(value)


_HEX_DIGITS = frozenset("0123456789abcdef")


def keyed_entry(folder: Path, key: str, suffix: str, kind: str) -> Path:
    """The path of the cache entry of `kind` (a product, a tab) stored under `key` in
    `folder`; ValueError unless `key` is 64 lowercase hex (a sha256), so no key names a path
    outside `folder`."""
    if not is_sha256_hex(key):
        raise ValueError(f"not a {kind} key: {key!r}")
    return folder / f"{key}{suffix}"


def keep_only_entries(folder: Path, wanted: set[str]) -> None:
    """Remove every entry of the cache folder `folder` but those named `wanted` (what the
    current build uses); what cannot be listed or removed is left (a speed-up only)."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries]
    except OSError:
        return
    for name in names:
        if name not in wanted:
            with contextlib.suppress(OSError):
                os.unlink(folder / name)


def read_cache_file(path: Path | str, limit: int, *, head: bool = False) -> bytes | None:
    """The bytes of a cache entry: a regular file (not followed through a link) of at most
    `limit` bytes; None for anything else (a miss, never an error). `head=True` reads the
    first `limit` bytes of a file of any size instead (a pack's header line)."""
    opened = open_cache_entry(path)
    if opened is None:
        return None
    fd, info = opened
    try:
        if info.st_size > limit and not head:
            return None
        wanted = min(info.st_size, limit)  # as much as fstat says: no buffer of `limit` bytes
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(wanted + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if head:
        return data[:limit]
    return data if len(data) == wanted else None  # grown while read: entries are renamed in
