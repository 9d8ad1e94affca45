"""`write_or_link`: a new name holding exactly the bytes, linked from the replaced output only
when that is safe, else written: the whole content, the mode `open()` gives."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

import generator.quickwrite as quickwrite
from generator.quickwrite import write_or_link

DATA = b"<svg>unchanged badge</svg>\n"


@pytest.mark.parametrize("size", [0, 1, 4096, 3 << 20])
def test_a_written_file_holds_exactly_the_bytes(tmp_path: Path, size: int) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old content that is longer" * 1000)
    data = os.urandom(size)
    assert write_or_link(target, data, None) is False
    assert target.read_bytes() == data


def test_a_written_file_gets_the_mode_open_gives(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_or_link(ours, b"x", None)
    theirs.write_bytes(b"x")
    assert stat.S_IMODE(ours.stat().st_mode) == stat.S_IMODE(theirs.stat().st_mode)


def test_a_file_in_a_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_or_link(tmp_path / "missing" / "f", b"x", None)


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    return old, new


def test_an_unchanged_file_is_linked(tmp_path: Path) -> None:
    old, new = _folders(tmp_path)
    (old / "f").write_bytes(DATA)
    assert write_or_link(new / "f", DATA, old / "f") is True
    assert (new / "f").stat().st_ino == (old / "f").stat().st_ino
    assert (new / "f").read_bytes() == DATA


def _same_size_other_bytes(old: Path) -> None:
    (old / "f").write_bytes(DATA.replace(b"unchanged", b"different"))


def _longer(old: Path) -> None:
    (old / "f").write_bytes(DATA + b"more")


def _shorter(old: Path) -> None:
    (old / "f").write_bytes(DATA[:-1])


def _absent(old: Path) -> None:
    pass


def _symbolic_link(old: Path) -> None:
    (old / "target").write_bytes(DATA)
    (old / "f").symlink_to(old / "target")


def _second_name(old: Path) -> None:
    (old / "f").write_bytes(DATA)
    os.link(old / "f", old / "elsewhere")


def _folder(old: Path) -> None:
    (old / "f").mkdir()


def _fifo(old: Path) -> None:
    os.mkfifo(old / "f")


@pytest.mark.parametrize(
    "previous",
    [
        _same_size_other_bytes,
        _longer,
        _shorter,
        _absent,
        _symbolic_link,
        _second_name,
        _folder,
        _fifo,
    ],
)
def test_anything_but_a_sole_identical_regular_file_is_written_afresh(
    tmp_path: Path, previous: Callable[[Path], None]
) -> None:
    old, new = _folders(tmp_path)
    previous(old)
    before = {p.name: p.lstat() for p in old.iterdir()}
    assert write_or_link(new / "f", DATA, old / "f") is False
    made = (new / "f").lstat()
    assert (new / "f").read_bytes() == DATA
    assert made.st_nlink == 1  # a file of its own
    assert all(made.st_ino != info.st_ino for info in before.values())
    assert {p.name: p.lstat().st_ino for p in old.iterdir()} == {
        n: i.st_ino for n, i in before.items()
    }


def test_no_previous_writes_a_new_file(tmp_path: Path) -> None:
    assert write_or_link(tmp_path / "f", DATA, None) is False
    assert (tmp_path / "f").read_bytes() == DATA


def test_a_name_already_linked_to_the_old_output_is_replaced_never_written_into(
    tmp_path: Path,
) -> None:
    """A page written twice: the second write must not reach the old output's file."""
    old, new = _folders(tmp_path)
    (old / "f").write_bytes(DATA)
    assert write_or_link(new / "f", DATA, old / "f") is True
    write_or_link(new / "f", b"changed", old / "f")
    assert (new / "f").read_bytes() == b"changed"
    assert (old / "f").read_bytes() == DATA


def _racing_link(monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[str], None]) -> None:
    """`os.link` as seen by `write_or_link`, with `meanwhile` run on the source first: what
    another process could do between the checks and the link."""
    real = os.link

    def link(src: str, dst: str, **kwargs: object) -> None:
        meanwhile(src)
        real(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(quickwrite.os, "link", link)


def test_a_file_swapped_in_before_the_link_is_not_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = _folders(tmp_path)
    (old / "f").write_bytes(DATA)
    (tmp_path / "other").write_bytes(DATA)

    _racing_link(monkeypatch, lambda src: os.replace(tmp_path / "other", src))
    assert write_or_link(new / "f", DATA, old / "f") is False
    assert (new / "f").stat().st_ino != (old / "f").stat().st_ino
    assert (new / "f").read_bytes() == DATA


def test_a_file_rewritten_before_the_link_is_not_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = _folders(tmp_path)
    (old / "f").write_bytes(DATA)
    other = DATA.replace(b"unchanged", b"rewritten")

    def rewrite(src: str) -> None:
        with open(src, "r+b") as fh:  # noqa: PTH123 - in place, same inode, same size
            fh.write(other)

    _racing_link(monkeypatch, rewrite)
    assert write_or_link(new / "f", DATA, old / "f") is False
    assert (new / "f").read_bytes() == DATA
    assert (old / "f").read_bytes() == other
    assert (new / "f").stat().st_ino != (old / "f").stat().st_ino


@pytest.mark.parametrize(
    "refusal",
    [OSError(18, "Invalid cross-device link"), NotImplementedError("follow_symlinks")],
)
def test_a_link_that_fails_writes_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: Exception
) -> None:
    """Another file system, links not allowed, or a platform that cannot link without
    following a symbolic link: the file is written."""
    old, new = _folders(tmp_path)
    (old / "f").write_bytes(DATA)

    def refuse(src: str) -> None:
        raise refusal

    _racing_link(monkeypatch, refuse)
    assert write_or_link(new / "f", DATA, old / "f") is False
    assert (new / "f").read_bytes() == DATA
    assert (new / "f").stat().st_ino != (old / "f").stat().st_ino
