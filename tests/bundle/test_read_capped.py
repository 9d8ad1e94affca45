"""`read_capped` (every OCI layout blob goes through it) at its edges: exactly the cap, one
byte over, a file that grows between its size check and its read, short reads, and a file
whose size is reported as zero. The first read asks for the file's size and one byte more."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from generator.bundle import _files
from generator.bundle._files import read_capped
from generator.bundle.types import BundleFetchError
from tests._support import GrowingFile


def _read(path: Path, cap: int) -> bytes | None:
    return read_capped(path, cap, "compressed_layer", "bundle layer")


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 1 << 20, (1 << 20) + 1])
def test_a_blob_of_exactly_the_cap_is_read_whole_one_byte_more_is_refused(
    tmp_path: Path, size: int
) -> None:
    path = tmp_path / "blob"
    data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    path.write_bytes(data)
    assert _read(path, size) == data
    assert _read(path, size + 5) == data
    if size:
        with pytest.raises(BundleFetchError) as info:
            _read(path, size - 1)
        assert info.value.found == f"{size} bytes"


def test_an_absent_blob_is_none(tmp_path: Path) -> None:
    assert _read(tmp_path / "missing", 10) is None


@pytest.mark.parametrize("piece", [1, 7, 1 << 20])
@pytest.mark.parametrize("extra", [1, 4097, (1 << 20) + 3])
@pytest.mark.parametrize("over", [True, False])
def test_a_blob_that_grows_while_read_is_refused_past_the_cap_and_read_whole_up_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int, extra: int, over: bool
) -> None:
    path = tmp_path / "blob"
    path.write_bytes(b"x" * 10)
    fake = GrowingFile(path, extra=extra, piece=piece)
    monkeypatch.setattr(_files, "os", fake)
    cap = 10 + extra - over
    if over:
        with pytest.raises(BundleFetchError) as info:
            _read(path, cap)
        assert "grew while read" in (info.value.found or "")
    else:
        assert _read(path, cap) == b"x" * 10 + b"g" * extra
    given = 0
    for n, got in fake.reads:
        assert n <= cap + 1 - given  # what is left of cap + 1, never more
        given += got
    if piece > 10:
        assert fake.reads[0][0] == 11  # the size it was stat'ed at, and one byte for the end


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
def test_a_file_whose_size_is_reported_as_zero_is_still_read_and_capped() -> None:
    """procfs files stat as 0 bytes but have content: only the read bound can catch them."""
    proc = Path("/proc/self/cmdline")
    content = proc.read_bytes()
    assert len(content) > 2 and os.stat(proc).st_size == 0
    assert _read(proc, len(content)) == content
    with pytest.raises(BundleFetchError) as info:
        _read(proc, len(content) - 1)
    assert "grew while read" in (info.value.found or "")
