"""Writing a site's many small files: a link, or one `open`, `write` and `close` each.

A site at 10,000 attestations holds thousands of small files (badges, feeds, pages) written
anew by every build; `Path.write_text` wraps each in a buffered text stream, which costs
about as much as the file system's own work. A new file gets the mode `open()` gives (0o666
less the umask).

Most of those files come out of a build byte for byte as the output it replaces holds them.
`write_or_link` then links the replaced output's file instead of writing a new one: a new
file costs the file system an inode, and the replaced one, deleted once the new output is
in place, frees one (on ext4 without a journal, an inode allocation skips every inode freed
in the last minutes, one by one; a build that deleted and created 8,000 files spent about a
second there). A file is only linked when it is a regular file that no other name shares,
the new name is checked to be that very file, and, read once linked, it holds exactly the
bytes the build would write; anything else is written afresh. A name `write_or_link` is
given is unlinked first, never opened for writing, so no write reaches a linked file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

__all__ = ["link_checked", "write_or_link"]

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
_READ |= getattr(os, "O_CLOEXEC", 0)
"""Never through a symbolic link, never waiting on a FIFO (a regular file ignores O_NONBLOCK)."""


def write_or_link(
    path: str | os.PathLike[str], data: bytes, previous: str | os.PathLike[str] | None
) -> bool:
    """Make `path` a new name holding exactly `data`: a link to `previous` (the same file
    in the output this build replaces) when that holds exactly `data`, else a new file.
    Whatever was at `path` is unlinked first, never written into. True when linked."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    if previous is not None and link_checked(previous, path, len(data), data.__eq__):
        return True
    _write(os.open(path, _NEW, 0o666), data)
    return False


def link_checked(
    previous: str | os.PathLike[str],
    path: str | os.PathLike[str],
    size: int,
    holds: Callable[[bytes], bool],
) -> bool:
    """Link `previous` as the new name `path` when it is a regular file of one name and
    `size` bytes whose bytes, read once linked (through the descriptor the link was checked
    against), satisfy `holds`; False, with nothing left at `path`, otherwise."""
    try:
        fd = os.open(previous, _READ)
    except OSError:
        return False  # absent, a symbolic link (O_NOFOLLOW), unreadable
    linked = same = False
    try:
        info = os.fstat(fd)
        if _sole_regular(info, size):
            os.link(previous, path, follow_symlinks=False)
            linked = True
            named = os.lstat(path)
            same = (named.st_dev, named.st_ino) == (info.st_dev, info.st_ino)
            if same:
                got = _read_all(fd, size)
                same = len(got) == size and holds(got)
    except (OSError, NotImplementedError):  # no links here, or none without following
        same = False
    finally:
        os.close(fd)
    if linked and not same:
        os.unlink(path)  # another file took its name, or it holds other bytes
    return same


def _sole_regular(info: os.stat_result, size: int) -> bool:
    """A regular file of `size` bytes, which no other name links."""
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_size == size


def _read_all(fd: int, size: int) -> bytes:
    """Up to `size` + 1 bytes of `fd` (one more than expected shows a longer file)."""
    parts: list[bytes] = []
    left = size + 1
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _write(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
