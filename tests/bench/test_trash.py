"""The benchmark's trash: what an earlier run left is moved aside, never deleted while builds are
measured (on ext4 without a journal, a deletion slows the file creations of the next minute)."""

from __future__ import annotations

import os
from pathlib import Path

from bench.run import Trash


def _folder(root: Path, name: str, files: int = 3) -> Path:
    folder = root / name
    (folder / "inner").mkdir(parents=True)
    for n in range(files):
        (folder / "inner" / f"f{n}").write_text(str(n), encoding="utf-8")
    return folder


def test_a_discarded_folder_keeps_its_files_until_the_trash_is_emptied(tmp_path: Path) -> None:
    """Discarding frees no file: the same inodes stay, under the trash, until `empty`."""
    run = _folder(tmp_path, "run-10")
    inode = os.stat(run / "inner" / "f0").st_ino
    trash = Trash(tmp_path)
    trash.discard(run)
    assert not run.exists()
    kept = list(trash.folder.rglob("f0"))
    assert [os.stat(p).st_ino for p in kept] == [inode]
    trash.empty()
    assert not trash.folder.exists()


def test_one_name_can_be_discarded_again_and_nothing_is_a_no_op(tmp_path: Path) -> None:
    trash = Trash(tmp_path)
    trash.discard(_folder(tmp_path, "site", 1))
    trash.discard(_folder(tmp_path, "site", 2))
    trash.discard(tmp_path / "never-made")
    assert sorted(len(list(p.rglob("f*"))) for p in trash.folder.iterdir()) == [1, 2]


def test_a_killed_runs_trash_is_taken_over_and_emptied_with_this_runs(tmp_path: Path) -> None:
    """The breaking case: a trash folder left by a killed run is not deleted at start (that
    would free its files just before the first build), but moved into the new trash."""
    old = Trash(tmp_path)
    old.discard(_folder(tmp_path, "run-100"))
    inode = os.stat(next(old.folder.rglob("f0"))).st_ino
    new = Trash(tmp_path)
    assert [os.stat(p).st_ino for p in new.folder.rglob("f0")] == [inode]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".trash"]
    new.empty()
    assert list(tmp_path.iterdir()) == []
