"""The big data documents, written by a helper process while the build goes on to the site.

data/index.json and data/pointers.json are hundreds of MB at 10,000 attestations, and making
their text (`generator.data.gojson`) is about a second of one core, while the other core idles.
`DeferredWrite` walks each document's top levels itself (`go_json_plan`), spools the subtrees it
would encode whole as compact JSON (orjson writes that several times faster than the Go text)
into a spool file beside the output, and starts a fresh interpreter (`python -m
generator.data.spool`, not forked, see `generator.site.pagehelper`) that reads the spool back
and writes each document's text, subtree by subtree, exactly as `go_json_parts` would: the
compact JSON of a subtree reads back as the same value to the encoder (floats round-trip
exactly, tuples become the lists they are written as, NaN and infinities are null either way),
and a subtree orjson refuses (an integer beyond 64 bits, a key that is not a string, a lone
surrogate, a dataclass) is encoded by the build and spooled as text.

A helper that fails, hangs or answers with anything but one digest per document costs speed
only: `finish` writes the documents in the build, from the same documents.

The spool is a series of records, each a kind byte, an 8-byte length and its payload: `F` a
document's path, `T` text, `J` a subtree (a 2-byte indent length, the indent, compact JSON), `E`
the end of the document. The helper answers the sha256 of each document it wrote.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from generator.data.gojson import Subtree, go_json_parts, go_json_plan, subtree_text

__all__ = ["MIN_SPOOLED_POINTERS", "SPOOL_NAME", "DeferredWrite"]

SPOOL_NAME = ".data-spool"
"""The spool file's name in the build's staging folder."""

MIN_SPOOLED_POINTERS = 1000
"""Below this many pointers the documents are a few MB: starting a process costs more."""
_PATIENCE_S = 300.0
"""A helper still writing after this long is given up (the build writes the documents)."""
_SPOOL_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""What the encoder refuses, orjson refuses too (else it would write it as a dict or a string)."""
_HEADER = 8


def _record(out: IO[bytes], kind: bytes, payload: bytes) -> None:
    out.write(kind + len(payload).to_bytes(_HEADER, "big"))
    out.write(payload)


class DeferredWrite:
    """Documents spooled now (`take`), written by a helper (`start`) and waited for (`finish`).

    `command` is the helper's command line (the default runs this module)."""

    def __init__(self, spool: Path, command: Sequence[str] | None = None) -> None:
        self.spool = spool
        self.command = list(command) if command is not None else [sys.executable, "-m", __name__]
        self._docs: dict[Path, Any] = {}
        self._out: IO[bytes] | None = spool.open("wb")
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._joined = False
        self._helper: dict[Path, str] | None = None
        self._digests: dict[Path, str] | None = None
        self._written = threading.Event()

    def take(self, path: Path, doc: Any) -> None:
        """Spool `doc`, to be written at `path` (absolute) by the helper."""
        assert self._out is not None, "take after start"
        self._docs[path] = doc
        out = self._out
        _record(out, b"F", os.fsencode(path))
        for part in go_json_plan(doc):
            if type(part) is bytes:
                _record(out, b"T", part)
                continue
            assert isinstance(part, Subtree)
            try:
                data = orjson.dumps(part.value, option=_SPOOL_OPTIONS)
            except TypeError:  # what orjson does not write exactly: the text itself
                _record(out, b"T", subtree_text(part.value, part.pad))
                continue
            pad = part.pad.encode("ascii")
            _record(out, b"J", len(pad).to_bytes(2, "big") + pad + data)
        _record(out, b"E", b"")

    def start(self) -> None:
        """Close the spool and start the helper (when it cannot start, `finish` writes)."""
        if self._out is None:
            return
        self._out.close()
        self._out = None
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (package_root, path)))}
        with contextlib.suppress(OSError):
            self._proc = subprocess.Popen(
                [*self.command, str(self.spool)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                env=env,
            )

    def _join(self) -> dict[Path, str] | None:
        """The helper's digests, once it exited; None when it failed in any way."""
        proc = self._proc
        if proc is None:
            return None
        try:
            answer, _ = proc.communicate(timeout=_PATIENCE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return None
        if proc.returncode != 0:
            return None
        try:
            doc = orjson.loads(answer)
        except orjson.JSONDecodeError:
            return None
        wanted = {os.fsdecode(p): p for p in self._docs}
        if not isinstance(doc, dict) or set(doc) != set(wanted):
            return None
        if not all(isinstance(v, str) and len(v) == 64 for v in doc.values()):
            return None
        return {wanted[k]: v for k, v in doc.items()}

    def helper_digests(self) -> dict[Path, str] | None:
        """Wait for the helper (no work is done here, so a thread may wait); the digests of
        the documents it wrote, or None when it failed (then `finish` writes them)."""
        with self._lock:
            if not self._joined:
                self.start()
                self._helper = self._join()
                self._joined = True
            return self._helper

    def finish(self, hashed: Callable[[Path, str], None] | None = None) -> None:
        """Wait for the helper; write here whatever it did not write; tell `hashed` each
        document's sha256, then release `wait_written`. Idempotent."""
        digests = self.helper_digests()
        with self._lock:
            if digests is None:
                digests = self._digests or {p: _write_here(p, d) for p, d in self._docs.items()}
            self._digests = digests
        if hashed is not None:
            for path, digest in digests.items():
                hashed(path, digest)
        self._written.set()
        with contextlib.suppress(OSError):
            self.spool.unlink()

    def wait_written(self) -> bool:
        """Block until `finish` (or `abandon`) ran; whether the documents are complete."""
        self._written.wait()
        return self._digests is not None

    def abandon(self) -> None:
        """Stop the helper and release whoever waits (the build failed before `finish`)."""
        if self._out is not None:
            self._out.close()
            self._out = None
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()
        self._written.set()


def _write_here(path: Path, doc: Any) -> str:
    digest = hashlib.sha256()
    with path.open("wb") as fh:
        for part in go_json_parts(doc):
            digest.update(part)
            fh.write(part)
    return digest.hexdigest()


# ------------------------------------------------------------------------------ the helper
def _read_record(inp: IO[bytes]) -> tuple[bytes, bytes] | None:
    head = inp.read(1 + _HEADER)
    if not head:
        return None
    if len(head) != 1 + _HEADER:
        raise ValueError("a cut spool record")
    size = int.from_bytes(head[1:], "big")
    payload = inp.read(size)
    if len(payload) != size:
        raise ValueError("a cut spool record")
    return head[:1], payload


def serve(spool: Path) -> dict[str, str]:
    """Write every document of `spool`; the sha256 of each, by path."""
    digests: dict[str, str] = {}
    out: IO[bytes] | None = None
    digest: Any = None
    name = ""
    with spool.open("rb") as inp:
        while (record := _read_record(inp)) is not None:
            kind, payload = record
            if kind == b"F" and out is None:
                name = os.fsdecode(payload)
                out, digest = open(name, "wb"), hashlib.sha256()  # noqa: SIM115 - closed at E
                continue
            if out is None:
                raise ValueError(f"spool record {kind!r} outside a document")
            if kind == b"T":
                text = payload
            elif kind == b"J":
                size = int.from_bytes(payload[:2], "big")
                pad = payload[2 : 2 + size].decode("ascii")
                text = subtree_text(orjson.loads(payload[2 + size :]), pad)
            elif kind == b"E":
                out.close()
                out = None
                digests[name] = digest.hexdigest()
                continue
            else:
                raise ValueError(f"unknown spool record {kind!r}")
            digest.update(text)
            out.write(text)
    if out is not None:
        raise ValueError("the spool ends inside a document")
    return digests


if __name__ == "__main__":
    sys.stdout.buffer.write(orjson.dumps(serve(Path(sys.argv[1]))))
