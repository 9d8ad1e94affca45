"""The evidence tree's digest, worked out on the other core while the build imports its code.

A build's first step is the digest of the whole evidence tree (the evaluation memo's key) and
the sha256 of each of its files, which spares the tree's later readers: at 10,000 attestations
about 0.17 s of walking, reading and hashing 17,000 entries, done before anything else can
start. The command line asks for it (`prefetched_tree`) before it imports the build, about a
quarter of a second of Python imports: a forked child walks the tree meanwhile and the
fingerprint takes its answer when it gets there (`take`).

The child runs `tree_digest` itself, so its answer is the one the build would have worked out;
it reads the tree a fraction of a second earlier, as any build reads it at some moment. The
answer travels over a private pipe from this process's own child (no cache is involved), and
anything but a complete answer for that very root (the child failed or died, wrote something
else) is no answer: the build digests the tree itself. No child is forked where `fork` is not
the plain POSIX call (only Linux) or while this process runs other threads.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.folderdigest import tree_digest

__all__ = ["prefetched_tree", "take"]

_MAX_ANSWER = 1 << 30
"""An answer longer than this is no answer (a tree's listing is a few MB at 10,000
attestations)."""


@dataclass
class _Child:
    """A forked child digesting `root`, and the read end of its pipe."""

    root: str
    pid: int
    fd: int
    reaped: bool = False

    def answer(self) -> tuple[str, dict[str, str]] | None:
        """The child's digest and file digests, or None when it gave no complete answer."""
        chunks: list[bytes] = []
        size = 0
        try:
            while chunk := os.read(self.fd, 1 << 20):
                size += len(chunk)
                if size > _MAX_ANSWER:
                    return None
                chunks.append(chunk)
        except OSError:
            return None
        if not self._exited_cleanly():
            return None
        return parse_answer(b"".join(chunks), self.root)

    def _exited_cleanly(self) -> bool:
        try:
            _pid, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return False
        self.reaped = True
        return os.waitstatus_to_exitcode(status) == 0

    def close(self) -> None:
        """Stop the child if it still runs (its answer was not taken), reap it, close the pipe."""
        try:
            os.close(self.fd)
        except OSError:
            pass
        if self.reaped:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.reaped = True


def parse_answer(data: bytes, root: str) -> tuple[str, dict[str, str]] | None:
    """A child's answer for `root`: the tree digest and each file's sha256 by its path; None
    for anything else (another root, another shape, a digest that is not 64 hex digits)."""
    try:
        doc: Any = json.loads(data)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("root") != root:
        return None
    digest, hashed = doc.get("digest"), doc.get("hashed")
    if not _is_hex64(digest) or not isinstance(hashed, dict):
        return None
    files: dict[str, str] = {}
    for path, value in hashed.items():
        if not isinstance(path, str) or not _is_hex64(value):
            return None
        files[path] = value
    return str(digest), files


_HEX = frozenset("0123456789abcdef")


def _is_hex64(value: Any) -> bool:
    return type(value) is str and len(value) == 64 and _HEX.issuperset(value)


def _forkable() -> bool:
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _start(root: Path) -> _Child | None:
    """Fork a child that writes `tree_digest(root)`'s answer into a pipe (None: no child)."""
    if not _forkable():
        return None
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # pragma: no cover - the child, which leaves by os._exit (coverage never sees it)
        os.close(read_end)
        _child(root, write_end)
    os.close(write_end)
    return _Child(str(root), pid, read_end)


def _child(root: Path, fd: int) -> None:  # pragma: no cover - runs in the forked child
    """Digest the tree, write the answer, and leave without running the parent's exit code."""
    code = 1
    try:
        hashed: dict[str, str] = {}
        digest = tree_digest(root, hashed=hashed)
        view = memoryview(
            json.dumps({"root": str(root), "digest": digest, "hashed": hashed}).encode()
        )
        while view:
            view = view[os.write(fd, view) :]
        code = 0
    except BaseException:  # noqa: BLE001 - any failure is simply no answer
        code = 1
    finally:
        os._exit(code)


_PENDING: dict[str, _Child] = {}
"""The children started by `prefetched_tree` whose answers no build has taken, by root."""


@contextmanager
def prefetched_tree(root: Path) -> Iterator[None]:
    """While the block runs, a child digests `root` for the build's `take` (unless one already
    does). On leaving, a child whose answer was not taken is stopped."""
    key = str(root)
    child = None if key in _PENDING else _start(root)
    if child is not None:
        _PENDING[key] = child
    try:
        yield
    finally:
        if child is not None:
            if _PENDING.get(key) is child:
                del _PENDING[key]
            child.close()


def take(root: Path) -> tuple[str, dict[str, str]] | None:
    """The digest of `root` and the sha256 of each of its files (`tree_digest` with `hashed`),
    as a child started by `prefetched_tree` worked them out; None when there is no such
    child or it gave no complete answer. An answer is taken once."""
    child = _PENDING.pop(str(root), None)
    if child is None:
        return None
    try:
        return child.answer()
    finally:
        child.close()
