"""Cache files written by a helper process while the build goes on (`CacheWriter`).

Storing a tree's recipe products is about 2,000 files and 300 MB at 10,000 attestations. The
build makes each file's bytes (it holds what they are made from) and hands them over a pipe
to a fresh interpreter (`python -m generator.cachewriter <folder> <build pid>`), which
writes each file whole, removes what it is told and, last, every file of its folder but
those the build names (`keep_only`). A forked child did this before, and held the build's
memory pages that the build changed while it wrote: in a build of 10,000 attestations that
evaluated every recipe, build and child peaked at 1,318 MiB between them; with the helper,
the build's processes peaked at 905 to 940 MiB.

The helper takes only plain file names, inside the one folder it was started for. It stops,
writing and removing nothing more, once the build that started it is gone: a build killed
meanwhile may be followed by another on the same cache, whose files this one's `keep_only`
does not name. A helper that fails or is killed costs misses only: each file is whole or
absent, and what the helper no longer takes (`write` answers False) the build writes itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

from generator.cacheauth import keep_only_entries
from generator.helperio import helper_env, read_record, record_head
from generator.wholefile import replace_whole

__all__ = ["PIPE_BYTES", "SEND_PATIENCE_S", "CacheWriter", "helper_command", "serve"]

_PATIENCE_S = 300.0
"""A helper still writing after this long is stopped (what it did not write is a miss)."""
SEND_PATIENCE_S = 60.0
"""A helper that takes nothing for this long is stopped: the build writes the files itself."""
_NAME_BYTES = 2
PIPE_BYTES = 1 << 20
"""The pipe's room asked for (Linux lets any process have 1 MiB): the build hands a product
and goes on while the helper writes the ones before, instead of waiting at each 64 KiB."""


class CacheWriter:
    """One helper writing files in `folder`, fed in order: `write`, `remove`, `keep_only`;
    `finish` waits for it. Each call answers False once the helper is gone (the caller then
    does that work itself)."""

    def __init__(self, folder: Path, command: Sequence[str] | None = None) -> None:
        """Start the helper; OSError when no process starts."""
        self.folder = folder
        self._proc = subprocess.Popen(
            command or helper_command(folder),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=helper_env(),
        )
        self._fd = self._proc.stdin.fileno() if self._proc.stdin is not None else -1
        with contextlib.suppress(OSError, AttributeError):  # else each write waits
            os.set_blocking(self._fd, False)  # a stuck helper times out (`_send`)
        with contextlib.suppress(OSError, AttributeError):  # Linux: the build runs ahead
            fcntl.fcntl(self._fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)

    @classmethod
    def start(cls, folder: Path) -> CacheWriter | None:
        """A writer for `folder`, or None when no helper starts (out of processes)."""
        try:
            return cls(folder)
        except OSError:
            return None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def write(self, name: str, data: bytes) -> bool:
        """Have the file `name` replaced by `data` (`generator.wholefile.replace_whole`)."""
        encoded = _plain_name(name)
        return self._send(b"W", len(encoded).to_bytes(_NAME_BYTES, "big") + encoded + data)

    def remove(self, name: str) -> bool:
        """Have the file `name` removed."""
        return self._send(b"U", _plain_name(name))

    def keep_only(self, names: Iterable[str]) -> bool:
        """Have every file of the folder removed but `names`, once all before is written."""
        return self._send(b"K", b"\0".join(_plain_name(n) for n in sorted(names)))

    def _send(self, kind: bytes, payload: bytes) -> bool:
        """Hand one record to the helper; False (and the helper stopped) when it is gone or
        takes nothing for `SEND_PATIENCE_S`."""
        stdin = self._proc.stdin
        if stdin is None or stdin.closed:
            return False
        try:
            for part in (record_head(kind, payload), payload):
                self._write_all(memoryview(part))
        except OSError:  # gone (a broken pipe) or stuck (TimeoutError)
            self.abandon()
            return False
        return True

    def _write_all(self, data: memoryview) -> None:
        deadline = time.monotonic() + SEND_PATIENCE_S
        while data:
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [self._fd], [], left)[1]:
                    raise TimeoutError("the cache writer took nothing") from None

    def finish(self, patience_s: float = _PATIENCE_S) -> bool:
        """Wait until the helper wrote all it was given; whether it did (exited cleanly)."""
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            return self._proc.wait(timeout=patience_s) == 0
        except subprocess.TimeoutExpired:
            self.abandon()
            return False

    def abandon(self) -> None:
        """Stop the helper now (what it did not write is a miss)."""
        with contextlib.suppress(OSError):
            self._proc.kill()
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        with contextlib.suppress(subprocess.SubprocessError):
            self._proc.wait(timeout=10)


def helper_command(folder: Path) -> list[str]:
    """The helper's command line: this interpreter running this module for `folder`, told
    this process's pid (the build it serves)."""
    return [sys.executable, "-m", __name__, str(folder), str(os.getpid())]


def _plain_name(name: str | bytes) -> bytes:
    """`name` as bytes when it names a file directly inside the folder (no separator, not
    `.` or `..`, no NUL), else ValueError: nothing outside the helper's folder is touched."""
    encoded = os.fsencode(name)
    if not encoded or encoded in (b".", b"..") or b"/" in encoded or b"\0" in encoded:
        raise ValueError(f"not a plain file name: {name!r}")
    if len(encoded) >= 1 << (8 * _NAME_BYTES):
        raise ValueError(f"a file name too long: {name!r}")
    return encoded


def serve(folder: Path, inp: IO[bytes], build: int) -> None:
    """The helper: apply each record of `inp` in `folder` while process `build` (its parent)
    runs. ValueError for a record that is not one (nothing after it is applied)."""
    while (record := read_record(inp)) is not None:
        if os.getppid() != build:
            return  # the build is gone: another may run on this cache now
        kind, payload = record
        if kind == b"W":
            size = int.from_bytes(payload[:_NAME_BYTES], "big")
            if len(payload) < _NAME_BYTES + size:
                raise ValueError("a cache writer record whose name is cut short")
            name = _plain_name(payload[_NAME_BYTES : _NAME_BYTES + size])
            with contextlib.suppress(OSError):
                replace_whole(folder / os.fsdecode(name), payload[_NAME_BYTES + size :])
        elif kind == b"U":
            with contextlib.suppress(OSError):
                os.unlink(folder / os.fsdecode(_plain_name(payload)))
        elif kind == b"K":
            wanted = payload.split(b"\0") if payload else []
            keep_only_entries(folder, {os.fsdecode(_plain_name(n)) for n in wanted})
        else:
            raise ValueError(f"not a cache writer record: {kind!r}")


if __name__ == "__main__":
    serve(Path(sys.argv[1]), sys.stdin.buffer, int(sys.argv[2]))
