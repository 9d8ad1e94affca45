"""What the build's helper processes share: how they are started and the records they read.

A helper is a fresh interpreter (`python -m <module>`), never a forked copy of the build: a
forked child keeps every memory page of the build that the build changes while the child runs
(`generator.cachewriter`). It finds this package on `PYTHONPATH` (`helper_env`) and reads
records from its standard input, each a kind byte, an 8-byte length and its payload.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

__all__ = ["helper_env", "read_record", "record_head", "write_record"]

_LENGTH_BYTES = 8


def helper_env() -> dict[str, str]:
    """This process's environment with this package's root first on `PYTHONPATH`."""
    package_root = str(Path(__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (package_root, path)))}


def record_head(kind: bytes, payload: bytes) -> bytes:
    """A record's first bytes: `kind` (one byte) and the payload's length."""
    return kind + len(payload).to_bytes(_LENGTH_BYTES, "big")


def write_record(out: IO[bytes], kind: bytes, payload: bytes) -> None:
    """Write one record: its head (`record_head`), then the payload."""
    out.write(record_head(kind, payload))
    out.write(payload)


def read_record(inp: IO[bytes], what: str = "helper") -> tuple[bytes, bytes] | None:
    """The next record's kind and payload; None at the end of the stream, ValueError for a
    record cut short (`what` names the stream's kind in its message)."""
    head = inp.read(1 + _LENGTH_BYTES)
    if not head:
        return None
    if len(head) != 1 + _LENGTH_BYTES:
        raise ValueError(f"a {what} record cut short")
    size = int.from_bytes(head[1:], "big")
    payload = inp.read(size)
    if len(payload) != size:
        raise ValueError(f"a {what} record cut short")
    return head[:1], payload
