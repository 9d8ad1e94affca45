"""Bounded, no-follow file reads for untrusted tree files (spec 5.8).

Every pointer, the allowlist and other small inputs are read through `read_bounded`: the final path
component is opened with O_NOFOLLOW (a symlink is refused, never followed) and O_NONBLOCK (a FIFO
cannot block the build), the *opened descriptor* must be a regular file within the limit, and
`limit + 1` bytes are read so a file that grew after the check is still caught.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

from generator.errors import InputError, Location

MIB = 1024 * 1024
POINTER_LIMIT = MIB
"""Cap for pointer files (aicr `MaxRecipePOSTBytes`-sized reads)."""
ALLOWLIST_LIMIT = MIB
"""Cap for `allowlist.yaml`."""

RefusalReason = Literal["symlink", "not-regular", "oversize", "unreadable"]


class FileRefusedError(InputError):
    """`read_bounded` refused a file. `reason` says why, so callers can name the rule."""

    def __init__(
        self,
        message: str,
        *,
        reason: RefusalReason,
        display: str,
        expected: str,
        found: str,
        hint: str,
    ) -> None:
        super().__init__(
            message, location=Location(display), expected=expected, found=found, hint=hint
        )
        self.reason: RefusalReason = reason


def _kind(mode: int) -> str:
    """A short human name for a file type, for `found:` lines."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a non-regular file"


def read_bounded(path: Path | str, limit: int, *, display: str) -> bytes:
    """Read at most `limit` bytes of the regular file `path`, refusing symlinks and specials.

    `display` is the path shown in errors (relative to the recipes root), never the machine path.
    Raises `FileRefusedError` (an `InputError`) with expected/found/hint.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _not_opened(exc, display) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefusedError(
                "not a regular file",
                reason="not-regular",
                display=display,
                expected="a regular file",
                found=_kind(info.st_mode),
                hint="only regular files are read; remove or replace this entry",
            )
        if info.st_size > limit:
            raise _oversize(display, limit, f"{info.st_size} bytes")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            try:
                chunk = os.read(fd, limit + 1 - total)
            except OSError as exc:
                raise FileRefusedError(
                    "cannot read the file",
                    reason="unreadable",
                    display=display,
                    expected="a readable regular file",
                    found=exc.strerror or type(exc).__name__,
                    hint="check the file's permissions and the disk",
                ) from exc
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise _oversize(display, limit, "more bytes than that (the file grew while read)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _not_opened(exc: OSError, display: str) -> FileRefusedError:
    """Why `os.open` refused: a symbolic link (O_NOFOLLOW's ELOOP) or another OS error."""
    if exc.errno == errno.ELOOP:
        return FileRefusedError(
            "refusing to follow a symbolic link",
            reason="symlink",
            display=display,
            expected="a regular file",
            found="a symbolic link",
            hint="replace the link with the file itself; links are never followed",
        )
    return FileRefusedError(
        "cannot open the file",
        reason="unreadable",
        display=display,
        expected="a readable regular file",
        found=exc.strerror or type(exc).__name__,
        hint="check that the file exists and is readable",
    )


def _oversize(display: str, limit: int, found: str) -> FileRefusedError:
    return FileRefusedError(
        "file is larger than allowed",
        reason="oversize",
        display=display,
        expected=f"at most {limit} bytes",
        found=found,
        hint="pointer and allowlist files are small; check that this is the right file",
    )
