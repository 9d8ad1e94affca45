"""Writing a site's many small files: one `open`, `write` and `close` each.

A site at 10,000 attestations holds thousands of small files (badges, feeds, pages) written
anew by every build; `Path.write_text` wraps each in a buffered text stream, which costs
about as much as the file system's own work. The file gets the mode `open()` gives (0o666
less the umask) and is truncated first, as `Path.write_bytes` does.
"""

from __future__ import annotations

import os

__all__ = ["write_file"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def write_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` as the whole content of `path` (created or truncated)."""
    fd = os.open(path, _FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
