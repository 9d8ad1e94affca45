"""The recipe folders of a replaced output, emptied and given to the next build's site.

Every build stages a whole new site and swaps it in (`generator.site.swap`), so each build
makes a folder per recipe (a thousand at 10,000 attestations) and the replaced output's are
deleted. On ext4 without a journal, making an inode skips every inode freed in the last 30 s
one by one (`find_inode_bit`, `recently_deleted`): a build right after another spent a third
of a second of its main process making those folders. So the replaced output's `recipes/`
folder is not deleted with the rest (`spare`): its files are removed, its folders kept, and it
is left beside the output (`spare_path`); the next build takes it (`claim`, one rename) and
moves each recipe's emptied folder into its staging site (`place`) instead of making one.

A spare folder is only ever a place to put files: `place` uses a moved folder only when it is
a real folder (not a link) that is empty, else removes what was moved and makes the folder
afresh. Whatever the build does not use goes with its work folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

from generator.outdir import old_path

__all__ = ["claim", "place", "spare", "spare_path"]


def spare_path(out: Path) -> Path:
    """Where the emptied recipe folders of `out`'s replaced outputs wait for the next build
    (beside the name a replaced output is swapped out to, `old_path`)."""
    return _beside(old_path(out))


def _beside(swapped: Path) -> Path:
    return swapped.with_name(f"{swapped.name}.spare")


def spare(old: Path, swapped: Path) -> None:
    """Empty the recipe folders of `old` (a replaced output, already renamed away from
    `swapped`, the name `publish_atomically` swapped it out to) and leave its `recipes/`
    folder as the spare folders; when there already are some, or anything fails, nothing is
    kept (the caller deletes `old` anyway)."""
    recipes = old / "recipes"
    try:
        if not stat.S_ISDIR(os.lstat(recipes).st_mode):
            return
        with os.scandir(recipes) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    _empty(Path(entry.path))
                else:
                    os.unlink(entry.path)
        os.rename(recipes, _beside(swapped))
    except OSError:
        return


def _empty(folder: Path) -> None:
    """Remove everything in `folder`, keeping the folder itself."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def claim(out: Path, work: Path) -> Path | None:
    """Take `out`'s spare folders for this build (moved into `work`, which the build deletes
    when done); None when there are none (or another build took them first)."""
    mine = work / "spare-recipe-folders"
    try:
        os.rename(spare_path(out), mine)
    except OSError:
        return None
    return mine


def place(folder: Path, spare_folders: Path | None) -> None:
    """Make `folder` (a recipe's folder in the staging site): a spare folder of the same
    name moved into place when there is one and it is an empty real folder, else a new one."""
    if spare_folders is not None and not os.path.lexists(folder):
        with contextlib.suppress(OSError):
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.rename(spare_folders / folder.name, folder)
        if _usable(folder):
            return  # the spare folder, in place
        if os.path.isdir(folder) and not os.path.islink(folder):
            shutil.rmtree(folder, ignore_errors=True)
        elif os.path.lexists(folder):
            with contextlib.suppress(OSError):
                os.unlink(folder)  # a link or a file moved in
    folder.mkdir(parents=True, exist_ok=True)


def _usable(folder: Path) -> bool:
    """Whether `folder` is a real folder (not a link) with nothing in it."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError:
        return False
