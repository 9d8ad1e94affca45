"""Plain helpers that any test module imports: `from tests._support import fixtures_dir`.

Suite-wide helpers that are not fixtures live here rather than in tests/conftest.py, so that a test
module never has to import a conftest to reach them. Fixtures stay in conftest files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: The repo root's sibling `shared/fixtures` (real aicr trees, real Sigstore bundles).
SHARED_FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"


def fixtures_dir() -> Path | None:
    """The shared fixtures folder beside the repo root, or None when it is absent.

    Tests that read it are marked `fixtures` and skip when this is None (under `CI=true` that
    skip fails the run).
    """
    return SHARED_FIXTURES if SHARED_FIXTURES.is_dir() else None


class GrowingFile:
    """Stands in for a reader module's `os`: the real one, except that the file at `path`
    grows by `extra` bytes right after it is stat'ed (a writer appending between the size
    check and the read), and every read returns at most `piece` bytes (short reads are legal
    for any file). `reads` lists each read as (bytes asked for, bytes given)."""

    def __init__(self, path: Path, extra: int, piece: int) -> None:
        self._path, self._extra, self._piece = path, extra, piece
        self.reads: list[tuple[int, int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def fstat(self, fd: int) -> os.stat_result:
        info = os.fstat(fd)
        with self._path.open("ab") as out:
            out.write(b"g" * self._extra)
        return info

    def read(self, fd: int, n: int) -> bytes:
        data = os.read(fd, min(n, self._piece))
        self.reads.append((n, len(data)))
        return data


def demo_build(tree: Path, out: Path, cache: Path, **extra: Any) -> Any:
    """`BuildOptions` of an offline, quiet build of a copy of the embedded demo tree at `tree`
    (its own OCI layout and trust root) into `out` on `cache`; `extra` are more options."""
    from generator.build import BuildOptions

    return BuildOptions.flat(
        recipes=tree,
        out=out,
        cache=cache,
        offline=True,
        quiet=True,
        oci_layouts=(tree / "bundles",),
        trust_root=tree / "trust" / "trusted_root.json",
        **extra,
    )
