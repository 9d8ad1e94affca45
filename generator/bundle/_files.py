"""Bounded reads of an OCI layout's files: regular files only, never through a final symlink, under
a byte cap, and the JSON objects an index lists (a blob that is not one is skipped, not fatal).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from generator import strictjson
from generator.limits import LISTING_LIMITS

from .types import (
    cap_error,
    integrity_error,
    transient_error,
)

_STORAGE_FAULTS = {errno.EIO, errno.ESTALE, errno.EACCES, errno.EPERM, errno.ENXIO, errno.ETIMEDOUT}


def read_capped(path: Path, cap: int, cap_name: str, what: str) -> bytes | None:
    """Read a regular file without following a final symlink; None if it does not exist.

    Storage faults (EIO, EACCES, ...) are transient; a symlink or non-regular file is refused.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise integrity_error(
                f"{what} is a symbolic link", where=str(path), expected="a regular file"
            ) from exc
        if exc.errno in _STORAGE_FAULTS:
            raise transient_error(f"cannot read {what}", url=str(path), found=str(exc)) from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise integrity_error(
                f"{what} is not a regular file", where=str(path), expected="a regular file"
            )
        if info.st_size > cap:
            raise cap_error(what, cap_name, cap, where=str(path), found=f"{info.st_size} bytes")
        chunks: list[bytes] = []
        remaining = cap + 1
        # The whole file in one read of its size (a 1 MiB read buffer costs more than small
        # blobs do), its end in a small one; a file that grew meanwhile in 1 MiB reads.
        size = info.st_size + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, size))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            size = 4096 if len(chunks) == 1 else 1024 * 1024
        data = b"".join(chunks)
    except OSError as exc:
        raise transient_error(f"cannot read {what}", url=str(path), found=str(exc)) from exc
    finally:
        os.close(fd)
    if len(data) > cap:
        raise cap_error(what, cap_name, cap, where=str(path), found="a file that grew while read")
    return data


def _json_object(data: bytes, where: str) -> dict[str, Any]:
    """The top-level `index.json`, read under `LISTING_LIMITS` (it lists every bundle)."""
    try:
        value = strictjson.loads(data, LISTING_LIMITS)
    except (UnicodeDecodeError, ValueError) as exc:
        over = isinstance(exc, strictjson.JsonLimitError)
        raise integrity_error(
            f"index {strictjson.problem(exc)}" if over else "index is not valid JSON",
            where=where,
            expected="a JSON object",
            found=f"{type(exc).__name__}: {exc}",
        ) from exc
    if not isinstance(value, dict):
        raise integrity_error(
            "index is not a JSON object",
            where=where,
            expected="a JSON object",
            found=type(value).__name__,
        )
    return value


def _json_object_or_none(data: bytes) -> dict[str, Any] | None:
    """A listed blob's JSON object, or None when it is none (not JSON, over a parse limit).

    Indexing only learns which blobs are referrers and nested indexes; a blob that cannot be
    read is neither, and must not make the whole layout unusable (one contributor's bad blob
    would take every other bundle down). A pointer that names such a blob is refused when its
    bundle is read, with the reason.
    """
    try:
        value = strictjson.loads(data)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None
