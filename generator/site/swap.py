"""Swap a freshly built site into place so readers never see a half-written one.

Three renames around `out` (siblings in one folder, so each is atomic on POSIX):

1. `out` -> `<out>.old`       (skipped when there is no previous output)
2. `staging` -> `out`
3. delete `<out>.old` (or hand it to `retire`, which moves it out of the way at once and may
   delete it while the build goes on)

Recovery states, checked first by every call (`recover`):

- `<out>.old` exists and `out` does not: killed between 1 and 2. The new site may be gone
  (its staging folder is temporary), so the previous output is moved back.
- `<out>.old` and `out` both exist: killed between 2 and 3. The new output is complete, so
  `<out>.old` is deleted.
- neither `<out>.old` nor a partial state: nothing to do.

A failed build never reaches step 1, so the previous output stays in place. Every published
folder carries the marker file of `generator.outdir` (a later build may replace only such a
folder, or an empty one).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from generator.errors import BuildError, Location
from generator.outdir import old_path, write_marker


def recover(out: Path) -> str:
    """Finish or roll back a swap a killed build left behind; returns what was done."""
    old = old_path(out)
    if not old.exists():
        return "clean"
    if out.exists():
        shutil.rmtree(old)
        return "finished"
    os.replace(old, out)
    return "rolled-back"


def publish_atomically(
    staging: Path, out: Path, retire: Callable[[Path], None] | None = None
) -> None:
    """Replace `out` with the complete folder `staging` (which must be on the same file system).

    The replaced folder is deleted here, or handed to `retire`, which must rename it before it
    returns (a later swap's `recover` must not find it) and may delete it on a thread."""
    if not staging.is_dir():
        raise BuildError(
            "the staged site is missing",
            location=Location(str(staging)),
            expected="a built site folder",
            found="nothing",
            hint="the site build did not finish; the previous output is unchanged",
        )
    write_marker(staging)
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out)
    old = old_path(out)
    if out.exists():
        if not out.is_dir():
            raise BuildError(
                "the output path is not a folder",
                location=Location(str(out)),
                expected="a folder (or nothing)",
                found="a file",
                hint="remove the file or pass another --out",
            )
        os.replace(out, old)
    os.replace(staging, out)
    if retire is not None and old.exists():
        retire(old)
    shutil.rmtree(old, ignore_errors=True)  # gone already when `retire` moved it
