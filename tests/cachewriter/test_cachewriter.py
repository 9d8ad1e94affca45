"""generator.cachewriter: the helper writes, removes and keeps only what it is told, inside its
one folder; it refuses any name that would reach outside it, stops once its build is gone,
and a stream that is not its records stops it (the build's `finish` then answers False)."""

from __future__ import annotations

import fcntl
import io
import os
from pathlib import Path

import pytest

from generator.cachewriter import PIPE_BYTES, CacheWriter, serve
from generator.helperio import read_record, write_record


def _stream(*records: tuple[bytes, bytes]) -> io.BytesIO:
    out = io.BytesIO()
    for kind, payload in records:
        write_record(out, kind, payload)
    out.seek(0)
    return out


def _write(name: bytes, data: bytes) -> tuple[bytes, bytes]:
    return b"W", len(name).to_bytes(2, "big") + name + data


def test_a_writer_writes_removes_and_keeps_only_what_it_is_told(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "old").write_bytes(b"old")
    (folder / "gone").write_bytes(b"gone")
    (folder / "kept").write_bytes(b"kept")
    writer = CacheWriter(folder)
    assert writer.write("new", b"new bytes")
    assert writer.write("kept", b"replaced")
    assert writer.remove("gone")
    assert writer.keep_only(["new", "kept"])
    assert writer.finish()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {
        "new": b"new bytes",
        "kept": b"replaced",
    }
    assert not writer.write("late", b"x")  # finished: it takes nothing more


@pytest.mark.parametrize("name", ["", ".", "..", "../escape", "a/b", "nul\0"])
def test_the_build_side_refuses_a_name_outside_the_folder(tmp_path: Path, name: str) -> None:
    writer = CacheWriter(tmp_path)
    try:
        with pytest.raises(ValueError, match="not a plain file name"):
            writer.write(name, b"x")
    finally:
        writer.abandon()


@pytest.mark.parametrize("name", [b"../escape", b"sub/escape", b".."])
def test_the_helper_refuses_a_record_naming_a_file_outside_its_folder(
    tmp_path: Path, name: bytes
) -> None:
    folder = tmp_path / "deep" / "cache"
    (folder / "sub").mkdir(parents=True)
    with pytest.raises(ValueError, match="not a plain file name"):
        serve(folder, _stream(_write(name, b"hostile")), os.getppid())
    assert not (tmp_path / "deep" / "escape").exists()
    assert not (folder / "sub" / "escape").exists()
    assert not (tmp_path / "escape").exists()


def test_the_helper_removes_nothing_outside_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    outside = tmp_path / "precious"
    outside.write_bytes(b"keep me")
    with pytest.raises(ValueError, match="not a plain file name"):
        serve(folder, _stream((b"U", b"../precious")), os.getppid())
    assert outside.read_bytes() == b"keep me"


def test_the_helper_of_a_build_that_is_gone_applies_nothing(tmp_path: Path) -> None:
    (tmp_path / "other").write_bytes(b"a later build's")
    stream = _stream(_write(b"new", b"x"), (b"K", b"new"))
    serve(tmp_path, stream, os.getppid() + 1_000_000)  # not its parent: that build is gone
    assert [p.name for p in tmp_path.iterdir()] == ["other"]


def test_a_record_cut_short_or_unknown_stops_the_helper(tmp_path: Path) -> None:
    whole = _stream(_write(b"first", b"x")).getvalue()
    with pytest.raises(ValueError, match="cut short"):
        serve(tmp_path, io.BytesIO(whole + whole[:5]), os.getppid())
    assert (tmp_path / "first").read_bytes() == b"x"  # what came before it is written
    with pytest.raises(ValueError, match="not a cache writer record"):
        serve(tmp_path, _stream((b"Z", b"")), os.getppid())
    short_name = b"W" + (5).to_bytes(8, "big") + (200).to_bytes(2, "big") + b"abc"
    with pytest.raises(ValueError, match="name is cut short"):
        serve(tmp_path, io.BytesIO(short_name), os.getppid())


def test_a_helper_fed_a_broken_stream_answers_false(tmp_path: Path) -> None:
    writer = CacheWriter(tmp_path)
    assert writer._send(b"Z", b"")
    assert writer.finish() is False


def test_records_read_back_as_written() -> None:
    stream = _stream((b"A", b""), (b"B", b"\0" * 70_000))
    assert read_record(stream) == (b"A", b"")
    assert read_record(stream) == (b"B", b"\0" * 70_000)
    assert read_record(stream) is None


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="no pipe sizes on this platform")
def test_the_build_hands_a_product_without_waiting_for_each_64_kib(tmp_path: Path) -> None:
    """The pipe to the helper holds `PIPE_BYTES` (where the system allows that much), so the
    build runs ahead of the helper's writes instead of in step with them."""
    writer = CacheWriter(tmp_path)
    try:
        size = fcntl.fcntl(writer._fd, fcntl.F_GETPIPE_SZ)
        allowed = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        assert size == min(PIPE_BYTES, max(allowed, 65536))
    finally:
        writer.abandon()
