"""The big data documents, written by a helper process while the build goes on to the site.

data/pointers.json and data/index.json are hundreds of MB at 10,000 attestations, and making
their text (`generator.data.gojson`) is about a second of one core, while the other core idles.
A subtree's text is made in two steps: its layout (orjson, fast) and then Go's numbers, the
indent and the escaping (`finish_layout`, most of the cost). `DeferredWrite` walks each
document's top levels itself (`go_json_plan`), spools the text of those levels and the layout of
each subtree into a spool file beside the output, and hands it to a fresh interpreter
(`python -m generator.data.spool`, not forked, see `generator.site.pagehelper`) that runs the
second step on every layout and writes the document. Both steps are the functions the build
itself would run, in the same order, so the text is the build's byte for byte.

A helper that fails, hangs or answers anything but the digest of its document costs speed only:
`finish` writes that document in the build, from the same document.

The spools are hundreds of MB that live for a second: on a memory file system (`/dev/shm`)
when it has room for them (`spool_folder`), they cost the disk nothing (a one-change build at
10,000 attestations was a quarter of a second faster), else they go beside the output. A spool
that cannot be written (the memory file system filled up meanwhile) is not handed to the
helper: the build writes that document itself.

A spool is a series of records, each a kind byte, an 8-byte length and its payload: `T` text,
`L` a subtree's layout (a 2-byte indent length, the indent, the layout), `S` a laid-out pointer
entry whose text the build did not read (the indent as for `L`, then one byte of its number
steps, 255 when not known, then the text's offset and length, 8 bytes each, its sha256 and its
file's path: `generator.data.laidout.Span`), `F` a pointer entry's finished text, stored with
its layout (`LaidOutEntry.finished`: its offset, length, sha256 and file's path, copied as it
is: most of a one-change build's pointers.json). The helper reads that text itself and checks
it against its sha256. The helper reads `P` records (a spool's path, then its document's) on its
standard input and answers the sha256 (hex) of each document it wrote, a line each, in order.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from generator.cacheauth import open_cache_entry
from generator.data.gojson import (
    WALKED_DEPTH,
    Subtree,
    finish_layout,
    go_json_plan,
    subtree_layout,
    write_go_json,
)
from generator.data.gonumbers import STEPS
from generator.data.laidout import ENTRY_PAD, LaidOutEntry
from generator.helperio import helper_env, read_record, write_record
from generator.pids import dead_folders

__all__ = ["MIN_SPOOLED_POINTERS", "SPOOL_NAME", "DeferredWrite", "spool_folder"]

SPOOL_NAME = ".data-spool"
"""The stem of the spool files' names in the build's staging folder."""
_UNKNOWN_STEPS = 255
"""An `S` record's number steps byte when the steps are not known (all searches run)."""
MIN_SPOOLED_POINTERS = 1000
"""Below this many pointers the documents are a few MB: starting processes costs more."""
MEMORY_ROOTS: tuple[str, ...] = ("/dev/shm",)
"""Memory file systems a private spool folder may be made in, the first with room."""
SPOOL_BYTES_PER_POINTER = 64 << 10
"""Room asked of a memory file system per pointer (the spools take about 25 KB each)."""
_FOLDER_PREFIX = "evidence-dashboard-spool-"
_PATIENCE_S = 300.0
"""A helper still writing after this long is given up (the build writes its document)."""


def spool_folder(pointers: int, beside: Path) -> tuple[Path, bool]:
    """Where the spools of a build of `pointers` pointers go: a new private folder on the first
    memory file system (`MEMORY_ROOTS`) with room for them, else `beside` (the build's staging
    folder); and whether the folder is the spool's own (removed when done). Folders left there
    by killed builds are removed first."""
    wanted = pointers * SPOOL_BYTES_PER_POINTER
    if not (hasattr(os, "statvfs") and hasattr(os, "getuid")):
        return beside, False  # not a POSIX system: no memory file system to look for
    for root in MEMORY_ROOTS:
        try:
            room = os.statvfs(root)
            if room.f_bavail * room.f_frsize < wanted or not os.access(root, os.W_OK | os.X_OK):
                continue
            _sweep_dead(Path(root))
            return Path(tempfile.mkdtemp(prefix=f"{_FOLDER_PREFIX}{os.getpid()}-", dir=root)), True
        except OSError:
            continue
    return beside, False


def _sweep_dead(root: Path) -> None:
    """Remove this user's spool folders under `root` whose build no longer runs."""
    for folder in dead_folders(root, _FOLDER_PREFIX):
        if folder.lstat().st_uid == os.getuid():
            shutil.rmtree(folder, ignore_errors=True)


class _Helped:
    """One document handed to the helper: its spool and what became of it."""

    def __init__(self, path: Path, doc: Any, spool: Path, walk: int) -> None:
        self.path, self.doc, self.spool, self.walk = path, doc, spool, walk
        self.handed = False
        """Whether the helper was told to write it (its spool was written whole)."""
        self.answer: str | None = None
        """The digest the helper answered (None: it did not write the document)."""
        self.digest: str | None = None
        """The digest of the document as written (by the helper or the build)."""


class DeferredWrite:
    """Documents spooled and handed to one helper (`take`), waited for (`finish`).

    The helper is started with the first document and told each spool as it is complete
    (over its standard input), so it writes the first while the build spools the next. It
    answers one digest per document, in order. `folder` holds the spools; `command` is the
    helper's command line (the default runs this module)."""

    def __init__(
        self, folder: Path, command: Sequence[str] | None = None, *, owned: bool = False
    ) -> None:
        self.folder = folder
        self.owned = owned
        """Whether `folder` is the spools' own (`spool_folder`): removed once done."""
        self.command = list(command) if command is not None else [sys.executable, "-m", __name__]
        self._docs: list[_Helped] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._joined = False
        self._written = threading.Event()
        self._complete = False

    def take(self, path: Path, doc: Any, walk: int = WALKED_DEPTH) -> None:
        """Spool `doc`, to be written at `path` (absolute), and hand it to the helper (`walk`:
        see `go_json_plan`)."""
        helped = _Helped(path, doc, self.folder / f"{SPOOL_NAME}-{len(self._docs)}", walk)
        self._docs.append(helped)
        try:
            _spool(helped.spool, doc, walk)
        except OSError:
            helped.spool.unlink(missing_ok=True)  # no room left: `finish` writes it here
            return
        helped.handed = True
        proc = self._proc if self._proc is not None else self._start()
        if proc is not None and proc.stdin is not None:
            try:
                for name in (helped.spool, path):
                    write_record(proc.stdin, b"P", os.fsencode(name))
                proc.stdin.flush()
            except OSError:
                pass  # the helper is gone: the build writes what it did not

    def _start(self) -> subprocess.Popen[bytes] | None:
        with contextlib.suppress(OSError):
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=helper_env(),
            )
        return self._proc

    def helper_digests(self) -> dict[Path, str] | None:
        """Wait for the helper (no work is done here, so a thread may wait); the digest of
        every document, or None when it did not write them all (then `finish` writes)."""
        with self._lock:
            if not self._joined:
                answers = _join(self._proc)
                handed = [helped for helped in self._docs if helped.handed]
                for helped, answer in zip(handed, answers, strict=False):
                    helped.answer = answer
                self._joined = True
            digests = {h.path: h.answer for h in self._docs}
        return None if None in digests.values() else digests  # type: ignore[return-value]

    def finish(self, hashed: Callable[[Path, str], None] | None = None) -> None:
        """Wait for the helper; write here what it did not write; tell `hashed` each
        document's sha256, then release `wait_written`. Idempotent."""
        self.helper_digests()
        with self._lock:
            for helped in self._docs:
                if helped.digest is None:
                    helped.digest = helped.answer or _write_here(
                        helped.path, helped.doc, helped.walk
                    )
                with contextlib.suppress(OSError):
                    helped.spool.unlink()
            self._remove_folder()
            self._complete = True
        if hashed is not None:
            for helped in self._docs:
                hashed(helped.path, str(helped.digest))
        self._written.set()

    def wait_written(self) -> bool:
        """Block until `finish` (or `abandon`) ran; whether the documents are complete."""
        self._written.wait()
        return self._complete

    def abandon(self) -> None:
        """Stop the helper and release whoever waits (the build failed before `finish`)."""
        if self._proc is not None:
            with contextlib.suppress(OSError):
                self._proc.kill()
            with contextlib.suppress(OSError, ValueError, subprocess.SubprocessError):
                self._proc.wait(timeout=10)  # it no longer reads a spool that goes next
        self._remove_folder()
        self._written.set()

    def _remove_folder(self) -> None:
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)


def _spool(spool: Path, doc: Any, walk: int) -> None:
    """Write the spool of `doc`: the text of its walked levels, the layout of each subtree, or
    where a laid-out entry's text lies when it was not read."""
    with spool.open("wb") as out:
        for part in go_json_plan(doc, walk):
            if type(part) is bytes:
                write_record(out, b"T", part)
                continue
            assert isinstance(part, Subtree)
            value = part.value
            laid_out = type(value) is LaidOutEntry
            finished = value.finished if laid_out and part.pad == ENTRY_PAD else None
            if finished is not None:  # copied as it is: no indent, no steps
                where = finished.offset.to_bytes(8, "big") + finished.length.to_bytes(8, "big")
                write_record(out, b"F", where + finished.sha256 + os.fsencode(finished.file.path))
                continue
            pad = part.pad.encode("ascii")
            padded = len(pad).to_bytes(2, "big") + pad
            span = value.unread if laid_out else None
            if span is not None:
                where = span.offset.to_bytes(8, "big") + span.length.to_bytes(8, "big")
                place = where + span.sha256 + os.fsencode(span.file.path)
                steps = _UNKNOWN_STEPS if span.steps is None else span.steps
                write_record(out, b"S", padded + bytes((steps,)) + place)
            else:
                write_record(out, b"L", padded + subtree_layout(value))


def _join(proc: subprocess.Popen[bytes] | None) -> list[str | None]:
    """The digests a helper answered, in order, once it exited (its input closed); those after
    anything that is not a digest, or from a helper that failed, are None (not written)."""
    if proc is None:
        return []
    try:
        answer, _ = proc.communicate(timeout=_PATIENCE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return []
    except (OSError, ValueError):
        return []
    digests: list[str | None] = []
    for line in answer.decode("ascii", "replace").splitlines():
        if len(line) != 64 or not set(line) <= set("0123456789abcdef"):
            break
        digests.append(line)
    return digests if proc.returncode == 0 else []


def _write_here(path: Path, doc: Any, walk: int) -> str:
    with path.open("wb") as fh:
        return write_go_json(doc, fh, walk)


# ------------------------------------------------------------------------------ the helper
def _steps_of(byte: bytes) -> int | None:
    """An `S` record's number steps (None: not known); ValueError for anything else."""
    if byte == bytes((_UNKNOWN_STEPS,)):
        return None
    if len(byte) != 1 or byte[0] not in STEPS:
        raise ValueError(f"a spool record with number steps {byte!r}")
    return byte[0]


class _Spans:
    """The helper's reader of laid-out entries' text (`S` records): each span read from its
    file, never through a link, and checked against its sha256 (ValueError when it does not
    check: the build then writes the document itself, and finds the damage)."""

    def __init__(self) -> None:
        self._path = b""
        self._fd = -1

    def text(self, payload: bytes) -> bytes:
        offset = int.from_bytes(payload[:8], "big")
        length = int.from_bytes(payload[8:16], "big")
        sha256, path = payload[16:48], payload[48:]
        if path != self._path or self._fd < 0:
            self.close()
            opened = open_cache_entry(os.fsdecode(path))
            if opened is None:
                raise ValueError("a file of laid-out entries that is not a regular file")
            self._fd, self._path = opened[0], path
        text = os.pread(self._fd, length, offset)
        if len(text) != length or hashlib.sha256(text).digest() != sha256:
            raise ValueError("a laid-out entry that is not the text its digest names")
        return text

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._path = b""


def serve(spool: Path, target: Path) -> str:
    """Write the document of `spool` at `target`; its sha256 (hex)."""
    digest = hashlib.sha256()
    spans = _Spans()
    with spool.open("rb") as inp, target.open("wb") as out:
        try:
            while (record := read_record(inp, "spool")) is not None:
                kind, payload = record
                if kind == b"T":
                    text = payload
                    digest.update(text)
                    out.write(text)
                    continue
                if kind == b"F":
                    text = spans.text(payload)
                    digest.update(text)
                    out.write(text)
                    continue
                if kind not in (b"L", b"S"):
                    raise ValueError(f"unknown spool record {kind!r}")
                size = int.from_bytes(payload[:2], "big")
                pad = payload[2 : 2 + size].decode("ascii")
                rest = payload[2 + size :]
                if kind == b"S":
                    steps = _steps_of(rest[:1])
                    text = finish_layout(spans.text(rest[1:]), pad, steps)
                else:
                    text = finish_layout(rest, pad)
                digest.update(text)
                out.write(text)
        finally:
            spans.close()
    return digest.hexdigest()


def _serve_all(inp: IO[bytes], out: IO[bytes]) -> None:
    """The helper's loop: for each (spool, target) pair on `inp`, write the document and
    answer its digest (a line), until `inp` ends."""
    while (spool := read_record(inp, "spool")) is not None and (
        target := read_record(inp, "spool")
    ) is not None:
        digest = serve(Path(os.fsdecode(spool[1])), Path(os.fsdecode(target[1])))
        out.write(digest.encode("ascii") + b"\n")
        out.flush()


if __name__ == "__main__":
    _serve_all(sys.stdin.buffer, sys.stdout.buffer)
