"""read_bounded at its edges: exactly the limit, one byte over, a file that grows while read,
and reads that the kernel answers in short pieces."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from generator.tree import safeio
from generator.tree.safeio import FileRefusedError, read_bounded
from tests._support import GrowingFile


@pytest.mark.parametrize("size", [0, 1, 4096, 65536])
def test_a_file_of_exactly_the_limit_is_read_whole(tmp_path: Path, size: int) -> None:
    path = tmp_path / "p.yaml"
    data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    path.write_bytes(data)
    assert read_bounded(path, size, display="p.yaml") == data


@pytest.mark.parametrize("size", [1, 4096, 65536])
def test_one_byte_over_the_limit_is_refused(tmp_path: Path, size: int) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"x" * (size + 1))
    with pytest.raises(FileRefusedError) as info:
        read_bounded(path, size, display="evidence/p.yaml")
    assert info.value.reason == "oversize"
    assert info.value.expected == f"at most {size} bytes"
    assert info.value.found == f"{size + 1} bytes"


@pytest.mark.parametrize("piece", [1, 7, 1 << 20])
def test_a_file_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"x" * 10)
    monkeypatch.setattr(safeio, "os", GrowingFile(path, extra=1, piece=piece))
    with pytest.raises(FileRefusedError) as info:
        read_bounded(path, 10, display="evidence/p.yaml")
    assert info.value.reason == "oversize"
    assert "grew while read" in (info.value.found or "")


@pytest.mark.parametrize("piece", [1, 3, 1 << 20])
def test_a_file_that_grows_up_to_the_limit_while_read_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"x" * 8)
    fake = GrowingFile(path, extra=2, piece=piece)
    monkeypatch.setattr(safeio, "os", fake)
    assert read_bounded(path, 10, display="p.yaml") == b"x" * 8 + b"gg"
    # each read asks for what is left of limit + 1 bytes, never more
    got = 0
    for n, given in fake.reads:
        assert n == 11 - got
        got += given


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
def test_a_regular_file_whose_size_is_reported_as_zero_is_still_bounded() -> None:
    """procfs files stat as 0 bytes but have content: only the read bound can catch them."""
    proc = Path("/proc/self/cmdline")
    content = proc.read_bytes()
    assert len(content) > 2 and os.stat(proc).st_size == 0
    assert read_bounded(proc, len(content), display="cmdline") == content
    with pytest.raises(FileRefusedError) as info:
        read_bounded(proc, len(content) - 1, display="cmdline")
    assert info.value.reason == "oversize"
    assert "grew while read" in (info.value.found or "")


def test_a_read_error_is_refused_as_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"abc")

    def failing_read(fd: int, n: int) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(
        safeio,
        "os",
        SimpleNamespace(
            **{name: getattr(os, name) for name in dir(os) if not name.startswith("__")}
            | {"read": failing_read}
        ),
    )
    with pytest.raises(FileRefusedError) as info:
        read_bounded(path, 10, display="evidence/p.yaml")
    assert info.value.reason == "unreadable"
    assert info.value.found == "Input/output error"


@pytest.mark.parametrize("limit_name", ["POINTER_LIMIT", "ALLOWLIST_LIMIT"])
def test_pointer_and_allowlist_files_may_be_exactly_one_mib(
    tmp_path: Path, limit_name: str
) -> None:
    """aicr reads pointers with a 1 MiB cap: 1,048,576 bytes pass, one more is refused."""
    limit = getattr(safeio, limit_name)
    path = tmp_path / "p.yaml"
    path.write_bytes(b"#" * 1_048_576)
    assert len(read_bounded(path, limit, display="p.yaml")) == 1_048_576
    path.write_bytes(b"#" * 1_048_577)
    with pytest.raises(FileRefusedError) as info:
        read_bounded(path, limit, display="p.yaml")
    assert info.value.reason == "oversize"


def test_a_refused_special_file_is_named_by_its_kind(tmp_path: Path) -> None:
    """The `found:` line says what the entry is, so the contributor knows what to replace."""
    folder = tmp_path / "d.yaml"
    folder.mkdir()
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    cases = [(folder, "a directory"), (fifo, "a FIFO (named pipe)")]
    if Path("/dev/null").exists():
        cases.append((Path("/dev/null"), "a device file"))
    for path, kind in cases:
        with pytest.raises(FileRefusedError) as info:
            read_bounded(path, 10, display="x.yaml")
        assert (info.value.reason, info.value.found) == ("not-regular", kind), path
