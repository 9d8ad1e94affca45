"""`write_file`: the whole content, a file truncated first, the mode `open()` gives."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from generator.quickwrite import write_file


@pytest.mark.parametrize("size", [0, 1, 4096, 3 << 20])
def test_write_file_writes_exactly_the_bytes(tmp_path: Path, size: int) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old content that is longer" * 1000)
    data = os.urandom(size)
    write_file(target, data)
    assert target.read_bytes() == data


def test_write_file_gives_the_mode_open_gives(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_file(ours, b"x")
    theirs.write_bytes(b"x")
    assert stat.S_IMODE(ours.stat().st_mode) == stat.S_IMODE(theirs.stat().st_mode)


def test_write_file_into_a_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_file(tmp_path / "missing" / "f", b"x")
