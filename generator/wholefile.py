"""A file written whole: its bytes go to a new temporary file beside it, which is then renamed
over it, so a reader sees the old file or the new one, never half of either.

The cache entries, the freshness memo, the compiled templates, the manifest and the size record
of `build-info.json` are all written this way; a failed write leaves no temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["replace_whole", "write_whole"]


def write_whole(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` at `path` (making its folder), whole beside it and then renamed into place.
    The file is private to its owner (0600, as `tempfile.mkstemp` makes it) unless `mode` is
    given (a site file others read is 0644). Raises `OSError`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def replace_whole(path: Path, data: bytes) -> None:
    """`write_whole`, with the file at `path` removed first: renaming over a file makes ext4
    write the new one out at once (auto_da_alloc), half a second for a tree's recipe products.
    A reader in between finds no file. Raises `OSError`."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    write_whole(path, data)
