"""The evidence tree's digest, worked out on the other core while the build imports its code.

A build's first step is the digest of the whole evidence tree (the evaluation memo's key) and
the sha256 of each of its files, which spares the tree's later readers: at 10,000 attestations
about 0.17 s of walking, reading and hashing 17,000 entries, done before anything else can
start. The command line asks for it (`prefetched_tree`) before it imports the build, about a
quarter of a second of Python imports: a forked child walks the tree meanwhile and the
fingerprint takes its answer when it gets there (`take`).

The child runs `tree_digest` itself, so its answer is the one the build would have worked out;
it reads the tree a fraction of a second earlier, as any build reads it at some moment. The
answer travels over a private pipe from this process's own child (`generator.forkedcall`; no
cache is involved), and anything but a complete answer for that very root (the child failed or
died, answered something else) is no answer: the build digests the tree itself. No child is
forked where `fork` is not the plain POSIX call (only Linux) or while this process runs other
threads (`generator.forkedcall.start_forked`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from generator.cacheauth import is_sha256_hex
from generator.folderdigest import tree_digest
from generator.forkedcall import ForkedCall, start_forked

__all__ = ["checked_answer", "prefetched_tree", "take"]

_MAX_ANSWER = 1 << 30
"""An answer longer than this (pickled) is no answer (a tree's listing is a few MB at 10,000
attestations)."""


def checked_answer(value: Any, root: str) -> tuple[str, dict[str, str]] | None:
    """A child's answer for `root`: the tree digest and each file's sha256 by its path; None
    for anything else (another root, another shape, a digest that is not 64 hex digits)."""
    if not isinstance(value, dict) or value.get("root") != root:
        return None
    digest, hashed = value.get("digest"), value.get("hashed")
    if not is_sha256_hex(digest) or not isinstance(hashed, dict):
        return None
    files: dict[str, str] = {}
    for path, sha in hashed.items():
        if not isinstance(path, str) or not is_sha256_hex(sha):
            return None
        files[path] = sha
    return str(digest), files


def _digest(root: Path) -> dict[str, Any]:
    """The child: `tree_digest(root)` with the sha256 of every file it read."""
    hashed: dict[str, str] = {}
    return {"root": str(root), "digest": tree_digest(root, hashed=hashed), "hashed": hashed}


_PENDING: dict[str, ForkedCall] = {}
"""The children started by `prefetched_tree` whose answers no build has taken, by root."""


@contextmanager
def prefetched_tree(root: Path) -> Iterator[None]:
    """While the block runs, a child digests `root` for the build's `take` (unless one already
    does). On leaving, a child whose answer was not taken is stopped."""
    key = str(root)
    child = None if key in _PENDING else start_forked(_digest, (root,))
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
    return checked_answer(child.result(_MAX_ANSWER), str(root))
