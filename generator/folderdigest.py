"""Digests and listings of whole folders: what the caches and `--out` are compared by.

A folder is walked in name order without following links; an OCI layout's `blobs/` is left
out (its files are named by their own digest, so they cannot change unseen)."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["file_sha256", "listing", "streamed_digest", "tree_digest", "walk"]


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def walk(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under `root` (sorted, not following links), skipping OCI layouts' blobs."""
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=_name)
        except OSError:
            continue
        if any(e.name == "oci-layout" for e in entries):
            entries = [e for e in entries if e.name != "blobs"]  # immutable, by digest
        for entry in reversed(entries):
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                stack.append(entry.path)
            yield entry.path, info


def tree_digest(
    root: Path,
    known: Mapping[str, tuple[int, bytes]] | None = None,
    *,
    hashed: dict[str, str] | None = None,
) -> str:
    """A digest of every file (name, type, bytes) under `root`, OCI layout blobs excepted.

    `known` maps a file's POSIX path under `root` to its size and sha256 when the caller has
    just hashed it (a published site's manifest): a file of that size is not read again.
    `hashed`, when given, is told the sha256 (hex) of every regular file read, by its path as
    walked (`root` joined with the names under it): a later reader of the same files in this
    build need not read them again."""
    known = known or {}
    h = hashlib.sha256()
    base = len(str(root))
    for path, info in walk(root):
        name = path[base:]
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
        if stat.S_ISREG(info.st_mode):
            h.update(b"f%d\0" % info.st_size)
            size_and_digest = known.get(name[1:].replace(os.sep, "/"))
            if size_and_digest is not None and size_and_digest[0] == info.st_size:
                h.update(size_and_digest[1])
                continue
            try:
                file_digest = file_sha256(path)
            except OSError:
                h.update(b"unreadable")
                continue
            h.update(file_digest)
            if hashed is not None:
                hashed[path] = file_digest.hex()
        elif stat.S_ISLNK(info.st_mode):
            h.update(b"l" + os.readlink(path).encode("utf-8", "surrogateescape"))
        else:
            h.update(b"o%o" % stat.S_IFMT(info.st_mode))
    return h.hexdigest()


_CHUNK = 1 << 20
"""How much of a file is read at a time."""


_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO put in place since the walk must not block
)


def file_sha256(path: str) -> bytes:
    """The sha256 of a file read a chunk at a time: a tree may hold a file of any size (a
    contributor's, under the evidence tree), never read whole. What was put in place since the
    walk (a link, a FIFO) is not followed or read: OSError. (`hashlib.file_digest` over a file
    object costs twice as much for the tree's thousands of small files.)"""
    digest = hashlib.sha256()
    fd = os.open(path, _READ_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is no longer a regular file")
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.digest()


def listing(root: Path) -> list[str]:
    """Every file under `root` (relative POSIX names, sorted); anything else than a regular
    file or a folder (a link) is listed under a name no digest matches."""
    names = []
    for path, info in walk(root):
        if stat.S_ISREG(info.st_mode):
            names.append(Path(path).relative_to(root).as_posix())
        elif not stat.S_ISDIR(info.st_mode):
            names.append(Path(path).relative_to(root).as_posix() + "\0not-a-file")
    return sorted(names)


def streamed_digest(path: Path) -> str:
    """`file_digest` of a file read in chunks: data files are hundreds of MB at 10,000
    attestations, and this runs on a thread while the site is built."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
