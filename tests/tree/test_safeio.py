"""Bounded reads: regular files only, no symlinks, no FIFOs, a hard size cap."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.tree.safeio import FileRefusedError, read_bounded


def test_reads_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"abc")
    assert read_bounded(path, 3, display="evidence/p.yaml") == b"abc"


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_bytes(b"")
    assert read_bounded(path, 10, display="e.yaml") == b""


def _refused(path: Path, limit: int = 100) -> FileRefusedError:
    with pytest.raises(FileRefusedError) as info:
        read_bounded(path, limit, display="evidence/x/y.yaml")
    error = info.value
    assert isinstance(error, InputError)
    assert error.location is not None and error.location.file == "evidence/x/y.yaml"
    assert error.expected and error.found and error.hint
    return error


def test_oversize_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"x" * 101)
    assert _refused(path).reason == "oversize"
    assert read_bounded(path, 101, display="big.yaml") == b"x" * 101


def test_symlink_is_refused_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_bytes(b"secret")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    error = _refused(link)
    assert error.reason == "symlink"
    assert "secret" not in error.diagnostics()


def test_dangling_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "link.yaml"
    link.symlink_to(tmp_path / "missing")
    assert _refused(link).reason == "symlink"


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    error = _refused(fifo)
    assert error.reason == "not-regular"
    assert "FIFO" in (error.found or "")


def test_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "d.yaml"
    folder.mkdir()
    assert _refused(folder).reason == "not-regular"


def test_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(path))
        except OSError:
            pytest.skip("cannot bind a unix socket here")
        assert _refused(path).reason in ("not-regular", "unreadable")


def test_device_is_refused() -> None:
    dev = Path("/dev/zero")
    if not dev.exists():
        pytest.skip("no /dev/zero")
    with pytest.raises(FileRefusedError) as info:
        read_bounded(dev, 10, display="zero")
    assert info.value.reason == "not-regular"


def test_missing_file(tmp_path: Path) -> None:
    """The reason is the system's own words (`strerror`), not the exception's class name."""
    error = _refused(tmp_path / "nope.yaml")
    assert error.reason == "unreadable"
    assert error.found == os.strerror(2)
