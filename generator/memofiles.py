"""The evaluation memo's data files: copied into the memo (small unchanged ones linked from
the memo replaced), the big ones left in the site they were published in and restored from
there on a hit, and every one read back checked against the digest its sealed meta lists."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.cacheauth import file_digest, read_cache_file
from generator.folderdigest import streamed_digest
from generator.manifest import Written, recorded_sha256
from generator.quickwrite import write_or_link

__all__ = [
    "LINKED_BYTES",
    "MAX_DATA_FILE_BYTES",
    "Changed",
    "Checked",
    "big_files",
    "copied_digest",
    "linking_copy",
    "restored",
]

MAX_DATA_FILE_BYTES = 4 << 30
"""A memo data file larger than this is a miss (pointers.json is 160 MB at 10,000)."""
LINKED_BYTES = 1 << 20
"""Data files up to this size are linked from the memo replaced when unchanged (the series);
the few larger ones change with almost any change of the tree, and are left in the site they
are published in (meta `away`), when the build says where that is."""


def linking_copy(source: Path, replaced: Path | None) -> Any:
    """`copytree`'s copy function: a small file the memo being replaced (`replaced`, its
    data/) holds byte for byte is linked from it (`write_or_link`), any other copied. Both
    are the cache's: no file of the cache is ever linked into a site."""

    def copy(src: str, dst: str) -> str:
        if replaced is None or os.lstat(src).st_size > LINKED_BYTES:
            return str(shutil.copy2(src, dst))
        write_or_link(dst, Path(src).read_bytes(), replaced / Path(src).relative_to(source))
        return dst

    return copy


def big_files(data_dir: Path) -> list[str]:
    """The files directly in `data_dir` larger than `LINKED_BYTES` (sorted)."""
    return sorted(
        entry.name
        for entry in os.scandir(data_dir)
        if entry.is_file(follow_symlinks=False)
        and entry.stat(follow_symlinks=False).st_size > LINKED_BYTES
    )


def restored(data: Path, files: Mapping[str, Any], away: Any) -> bool:
    """Put the memo's big files (`away`: where they were published, which) back into its
    `data` folder, each read from the site as a cache entry and checked against its digest
    in `files`; False when one is missing, not a regular file, too big or changed there (a
    later build, or anyone, replaced it: a miss, not a forged cache)."""
    if away is None:
        return True
    site, names = Path(str(away["site"])), away["files"]
    if not isinstance(names, list):
        raise TypeError("memo away files")
    for name in names:
        if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
            raise ValueError(f"memo away file {name!r}")
        target = data / name
        if target.is_file() and not target.is_symlink():
            continue  # restored by an earlier hit (checked with every other file)
        content = read_cache_file(site / name, MAX_DATA_FILE_BYTES)
        if content is None or file_digest(content) != files.get(name):
            return False
        partial = data.parent / f".restoring-{os.getpid()}-{os.urandom(6).hex()}"
        # the mode every written file gets (0666 less the umask), as the site's own files
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        handle = os.open(partial, flags, 0o666)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(content)
            os.replace(partial, target)
        except OSError:
            partial.unlink(missing_ok=True)
            raise
    return True


def copied_digest(source: Path, copy: Path, name: str, written: Mapping[str, Written]) -> str:
    """The sha256 of the copy of `source/name`: the one recorded as it was written while the
    original is still that file, else read from the copy."""
    return recorded_sha256(written, f"data/{name}", source / name) or streamed_digest(copy / name)


class Changed(Exception):
    """A memo data file does not match the digest its sealed meta lists (the file's name)."""


class Checked:
    """Reads a memo's data files, each checked against its listed digest."""

    def __init__(self, data: Path, files: Mapping[str, Any]) -> None:
        self.data = data
        self.files = files
        self.read: set[str] = set()

    def bytes(self, name: str) -> bytes:
        content = read_cache_file(self.data / name, MAX_DATA_FILE_BYTES)
        if content is None or file_digest(content) != self.files.get(name):
            raise Changed(name)
        self.read.add(name)
        return content

    def json(self, name: str) -> Any:
        """A checked data file as a document. Python's parser, not orjson: the documents may
        hold integers beyond 64 bits (from bundles), which orjson reads back as floats."""
        return json.loads(self.bytes(name))

    def rest(self) -> None:
        """Check the files no document was read from (the schemas)."""
        for name in self.files:
            if name not in self.read:
                self.bytes(name)
