"""Write a file inside a trusted folder without following a symbolic link below it.

A checkout can carry a committed symlink (`pkg/evidence/index -> /etc`) that turns a routine
`index --write` into a write outside the repository. `write_below` walks down from `root`
one folder at a time with directory descriptors (`openat` with O_NOFOLLOW), so no component
below `root` is ever followed; a link anywhere on the way, or as the file itself, is refused
with `WriteRefusedError` (exit 2) naming the link. The content goes to a new temporary file in
the same folder and is renamed over the target, so readers see the old file or the new one,
never half of it. `root` itself and the folders above it are the caller's choice and trusted.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from generator.errors import InputError, Location

__all__ = ["WriteRefusedError", "write_below"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class WriteRefusedError(InputError):
    """A write was refused because its path is not a plain path of folders below the root."""


def _refuse_link(shown: Path, what: str) -> WriteRefusedError:
    return WriteRefusedError(
        f"refusing to write through a symbolic link ({what})",
        location=Location(str(shown)),
        expected="a real folder or file below the repository root",
        found="a symbolic link",
        hint="replace the link with a real folder or file (or remove it), then run again",
    )


def _relative_parts(root: Path, target: Path) -> tuple[str, ...]:
    """`target`'s components below `root` (both made absolute, not resolved)."""
    root_abs = Path(os.path.abspath(root))
    target_abs = Path(os.path.abspath(target))
    try:
        parts = target_abs.relative_to(root_abs).parts
    except ValueError:
        parts = ()
    if not parts:
        raise WriteRefusedError(
            "the file to write is not below the repository root",
            location=Location(str(target)),
            expected=f"a path inside {root_abs}",
            found=str(target_abs),
            hint="write the file inside the repository (pass a path below it)",
        )
    return parts


def _open_folder(parent_fd: int, name: str, shown: Path) -> int:
    """Open (creating if missing) the folder `name` under `parent_fd` without following it."""
    for _attempt in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            try:
                os.mkdir(name, 0o777, dir_fd=parent_fd)
            except FileExistsError:
                pass  # made meanwhile: open it on the next attempt
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                info = os.lstat(name, dir_fd=parent_fd)
                if stat.S_ISLNK(info.st_mode):
                    raise _refuse_link(shown, "a folder on the way is a link") from exc
                raise WriteRefusedError(
                    "a component of the path is not a folder",
                    location=Location(str(shown)),
                    expected="a folder",
                    found="a file",
                    hint="move the file away or write somewhere else",
                ) from exc
            raise
    raise WriteRefusedError(
        "a folder on the way keeps changing",
        location=Location(str(shown)),
        expected="a stable folder",
        found="a folder created and removed",
        hint="run again when nothing else writes there",
    )


def write_below(root: Path, target: Path, data: bytes, *, mode: int = 0o644) -> Path:
    """Write `data` to `target` (which must lie below `root`) atomically and without following
    any symbolic link below `root`; missing folders are created. Returns `target`."""
    parts = _relative_parts(root, target)
    shown = Path(os.path.abspath(root))
    fd = os.open(shown, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for name in parts[:-1]:
            shown = shown / name
            child = _open_folder(fd, name, shown)
            os.close(fd)
            fd = child
        name = parts[-1]
        shown = shown / name
        try:
            info = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise _refuse_link(shown, "the file itself is a link")
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise WriteRefusedError(
                "the file to write is not a regular file",
                location=Location(str(shown)),
                expected="a regular file",
                found="a folder or special file",
                hint="remove it or write somewhere else",
            )
        _replace(fd, name, data, mode)
    finally:
        os.close(fd)
    return target


def _replace(folder_fd: int, name: str, data: bytes, mode: int) -> None:
    """A new temporary file in the folder, then rename over `name` (rename never follows a
    link at the destination: it replaces the entry itself)."""
    tmp = f".{name}.tmp-{secrets.token_hex(6)}"
    out_fd = os.open(tmp, _NEW_FILE_FLAGS, mode, dir_fd=folder_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out_fd, view) :]
            os.fsync(out_fd)
        finally:
            os.close(out_fd)
        os.replace(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder_fd)
        except OSError:
            pass
        raise
