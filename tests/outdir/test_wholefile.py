"""`write_whole`: the one way the build writes a cache entry, memo, manifest or size record in
place: whole, atomically, private unless told otherwise, and without leftovers on failure."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from generator.wholefile import replace_whole, write_whole


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_holds_the_bytes_in_a_folder_it_makes(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "entry.json"
    write_whole(target, b"{}")
    assert target.read_bytes() == b"{}"
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry.json"]


def test_a_file_is_private_unless_a_mode_is_given(tmp_path: Path) -> None:
    private, public = tmp_path / "cache.bin", tmp_path / "manifest.json"
    write_whole(private, b"x")
    write_whole(public, b"x", mode=0o644)
    assert _mode(private) == 0o600
    assert _mode(public) == 0o644


def test_replacing_gives_a_new_file_and_never_writes_into_the_old_one(tmp_path: Path) -> None:
    """A reader holding the old file (or another name of it) keeps its bytes: the new bytes
    arrive under a new inode renamed over the name."""
    target, other_name = tmp_path / "entry", tmp_path / "other-name"
    target.write_bytes(b"old")
    os.link(target, other_name)
    write_whole(target, b"new")
    assert target.read_bytes() == b"new"
    assert other_name.read_bytes() == b"old"


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    """The breaking case: a name that cannot be replaced (a folder is there) raises, and
    nothing the write began is left behind."""
    target = tmp_path / "entry"
    target.mkdir()
    (target / "inside").write_bytes(b"kept")
    with pytest.raises(OSError):
        write_whole(target, b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry"]
    assert (target / "inside").read_bytes() == b"kept"


def test_a_write_that_fails_while_writing_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failing before the rename (here: the mode cannot be set) removes the temporary file."""

    def refuse(path: object, mode: int) -> None:
        raise PermissionError("chmod refused")

    monkeypatch.setattr(os, "chmod", refuse)
    with pytest.raises(PermissionError):
        write_whole(tmp_path / "entry", b"new", mode=0o644)
    assert list(tmp_path.iterdir()) == []


def test_a_replaced_file_is_a_new_file_holding_the_new_bytes(tmp_path: Path) -> None:
    """`replace_whole`: the path holds the new bytes in a new file (the old one's other names
    keep its bytes), nothing is left beside it, and a path with no file is written too."""
    target = tmp_path / "entry.json"
    target.write_bytes(b"old")
    os.link(target, tmp_path / "other-name")
    replace_whole(target, b"new")
    assert target.read_bytes() == b"new"
    assert (tmp_path / "other-name").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json", "other-name"]
    replace_whole(tmp_path / "absent.json", b"x")  # nothing to remove first: written all the same
    assert (tmp_path / "absent.json").read_bytes() == b"x"
