"""Safe in-memory extraction of evidence layers: what is accepted and every refusal."""

from __future__ import annotations

import dataclasses
import gzip
import io
import tarfile

import pytest

from generator.bundle.artifact import build_layer
from generator.bundle.extract import extract_layer
from generator.bundle.types import BundleFetchError, Limits
from generator.model import FailureClass

MARKERS = {"recipe.yaml": b"kind: RecipeResult\n", "manifest.json": b'{"files": []}\n'}


def tar_gz(*members: tuple[tarfile.TarInfo, bytes | None], markers: bool = True) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if markers:
            for name, marker in MARKERS.items():
                header = tarfile.TarInfo(name)
                header.size = len(marker)
                tar.addfile(header, io.BytesIO(marker))
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(raw.getvalue())


def regular(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def refused(blob: bytes, limits: Limits | None = None) -> BundleFetchError:
    with pytest.raises(BundleFetchError) as caught:
        extract_layer(blob, limits or Limits())
    error = caught.value
    assert error.failure_class is FailureClass.INTEGRITY
    assert error.transient is False
    return error


def test_files_at_the_root_are_returned_sorted() -> None:
    files = {**MARKERS, "ctrf/deployment.json": b"{}", "snapshot.yaml": b"a: 1\n"}
    out = extract_layer(build_layer(files), Limits())
    assert out == files
    assert list(out) == sorted(files)


def test_summary_bundle_prefix_is_resolved() -> None:
    files = {**MARKERS, "ctrf/conformance.json": b"{}"}
    out = extract_layer(build_layer(files, prefix="summary-bundle"), Limits())
    assert out == files


def test_dot_slash_names_are_normalised() -> None:
    out = extract_layer(tar_gz(regular("./snapshot.yaml", b"s")), Limits())
    assert out["snapshot.yaml"] == b"s"


def test_files_outside_the_prefix_are_refused() -> None:
    blob = build_layer({**{f"summary-bundle/{k}": v for k, v in MARKERS.items()}, "stray": b"x"})
    assert "outside summary-bundle/" in refused(blob).message


def test_a_layer_without_bundle_markers_is_refused() -> None:
    error = refused(build_layer({"recipe.yaml": b"x"}))
    assert "no evidence bundle" in error.message


@pytest.mark.parametrize(
    ("member", "needle"),
    [
        (regular("/etc/passwd"), "absolute path"),
        (regular("../escape.txt"), "'..'"),
        (regular("ctrf/../../escape.txt"), "'..'"),
        (special("link", tarfile.SYMTYPE, "recipe.yaml"), "symbolic link"),
        (special("hard", tarfile.LNKTYPE, "recipe.yaml"), "hard link"),
        (special("tty", tarfile.CHRTYPE), "character device"),
        (special("disk", tarfile.BLKTYPE), "block device"),
        (special("pipe", tarfile.FIFOTYPE), "FIFO"),
    ],
    ids=[
        "absolute",
        "dotdot",
        "nested-dotdot",
        "symlink",
        "hardlink",
        "chardev",
        "blockdev",
        "fifo",
    ],
)
def test_unsafe_members_are_refused(
    member: tuple[tarfile.TarInfo, bytes | None], needle: str
) -> None:
    assert needle in refused(tar_gz(member)).message


def test_duplicate_members_are_refused() -> None:
    error = refused(tar_gz(regular("recipe.yaml", b"second")))
    assert "duplicate" in error.message


def test_a_file_that_is_also_a_directory_is_refused() -> None:
    error = refused(tar_gz(regular("ctrf", b"x"), regular("ctrf/deployment.json", b"{}")))
    assert "also a directory" in error.message


def test_too_many_entries_stop_at_the_cap() -> None:
    members = [regular(f"extra/{n}.txt") for n in range(6)]
    error = refused(tar_gz(*members), Limits(tar_entries=5))
    assert "tar_entries" in error.message


def test_declared_sizes_over_the_unpacked_total_are_refused_at_the_header() -> None:
    info = tarfile.TarInfo("huge.bin")
    info.size = 300 * 1024 * 1024
    header = info.tobuf(tarfile.PAX_FORMAT)
    blob = gzip.compress(header + b"\0" * 1024)
    error = refused(blob)
    assert "unpacked_total" in error.message


def test_a_gzip_bomb_stops_on_the_ratio_cap() -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in MARKERS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("zeros.bin")
        info.size = 32 * 1024 * 1024
        tar.addfile(info, io.BytesIO(bytes(info.size)))
    blob = gzip.compress(raw.getvalue(), compresslevel=9)
    assert len(blob) * 200 < info.size
    error = refused(blob)
    assert "unpack_ratio" in error.message
    assert extract_layer(blob, Limits(unpack_ratio=10_000))["zeros.bin"] == bytes(info.size)


def test_the_streamed_total_cap_applies_to_the_decompressed_bytes() -> None:
    blob = build_layer({**MARKERS, "big.txt": b"y" * 200_000})
    error = refused(blob, Limits(unpacked_total=100_000))
    assert "unpacked_total" in error.message


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("recipe.yaml", "recipe_yaml"),
        ("manifest.json", "manifest_file"),
        ("ctrf/performance.json", "ctrf_file"),
    ],
)
def test_per_file_caps_name_the_cap(path: str, field: str) -> None:
    files = {**MARKERS, path: b"z" * 64}
    limits = dataclasses.replace(Limits(), **{field: 32})
    assert field in refused(build_layer(files), limits).message
    assert extract_layer(build_layer(files), Limits())[path] == b"z" * 64


@pytest.mark.parametrize(
    "blob",
    [b"", b"not gzip at all", gzip.compress(b"not a tar" * 100)],
    ids=["empty", "garbage", "gzip-of-garbage"],
)
def test_broken_archives_are_integrity_failures(blob: bytes) -> None:
    refused(blob)
