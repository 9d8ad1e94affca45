"""The fast layer reader agrees with the streaming `tarfile` reader on every layer it accepts.

`extract._read_plain_members` reads plain ustar/GNU layers without `tarfile`; for anything it
does not fully understand it returns None and `tarfile` decides. These tests feed both readers
the same layers and require the same files, directories or error.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.bundle import extract
from generator.bundle.artifact import build_layer
from generator.bundle.types import BundleFetchError, Limits

Member = tuple[str, bytes, bytes | None]
"""(name, tar type, data or None)."""


def _tar(members: list[Member], fmt: int) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "recipe.yaml"
            info.size = len(data) if data is not None else 0
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return raw.getvalue()


def _outcome(reader: object, blob: bytes, limits: Limits) -> object:
    try:
        return reader(blob, limits)  # type: ignore[operator]
    except BundleFetchError as exc:
        return ("error", exc.message, exc.found)


def _agree(blob: bytes, limits: Limits | None = None) -> object:
    """Both readers' outcome on `blob`, asserted equal; the fast one's raw result."""
    limits = limits or Limits()
    fast = _outcome(extract._read_plain_members, blob, limits)
    if fast is not None:
        assert fast == _outcome(extract._read_members_tarfile, blob, limits)
    assert _outcome(extract._read_members, blob, limits) == _outcome(
        extract._read_members_tarfile, blob, limits
    )
    return fast


def test_a_built_layer_takes_the_fast_path() -> None:
    files = {
        "recipe.yaml": b"kind: RecipeResult\n",
        "manifest.json": b"{}",
        "ctrf/deployment.json": b"x" * 1000,
    }
    fast = _agree(build_layer(files))
    assert fast is not None
    assert fast[0] == files  # type: ignore[index]


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_formats_agree(fmt: int) -> None:
    members: list[Member] = [
        ("summary-bundle", tarfile.DIRTYPE, None),
        ("summary-bundle/recipe.yaml", tarfile.REGTYPE, b"a: 1\n"),
        ("summary-bundle/ctrf/", tarfile.DIRTYPE, None),
        ("summary-bundle/" + "d" * 120 + "/x.json", tarfile.REGTYPE, b"{}"),
        ("./empty", tarfile.REGTYPE, b""),
    ]
    assert _agree(gzip.compress(_tar(members, fmt))) is not None or fmt != tarfile.USTAR_FORMAT


@pytest.mark.parametrize(
    "members",
    [
        [("a", tarfile.REGTYPE, b"1"), ("a", tarfile.REGTYPE, b"2")],
        [("a", tarfile.REGTYPE, b"1"), ("a/b", tarfile.REGTYPE, b"2")],
        [("../x", tarfile.REGTYPE, b"1")],
        [("/abs", tarfile.REGTYPE, b"1")],
        [("link", tarfile.SYMTYPE, None)],
        [("dev", tarfile.CHRTYPE, None)],
        [("é", tarfile.REGTYPE, b"1")],
        [],
    ],
)
def test_refusals_agree(members: list[Member]) -> None:
    for fmt in (tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        if fmt == tarfile.USTAR_FORMAT and any(not m[0].isascii() for m in members):
            continue
        _agree(gzip.compress(_tar(members, fmt)))


def test_damaged_streams_agree() -> None:
    tar = _tar([("recipe.yaml", tarfile.REGTYPE, b"a: 1\n" * 300)], tarfile.USTAR_FORMAT)
    good = gzip.compress(tar)
    cases = [
        good + b"\0" * 16,  # zero padding after the member
        good + gzip.compress(b"more"),  # a second gzip member
        good[:-4] + b"\0\0\0\0",  # wrong length in the trailer
        good[: len(good) // 2],  # truncated stream
        gzip.compress(tar[:700]),  # truncated tar
        gzip.compress(tar[:512]),  # header without its data
        gzip.compress(tar[:1024]),  # no end-of-archive block
        b"not gzip at all",
        zlib.compress(tar),  # zlib, not gzip
    ]
    corrupt = bytearray(tar)
    corrupt[150] ^= 1  # checksum no longer matches
    cases.append(gzip.compress(bytes(corrupt)))
    for blob in cases:
        _agree(blob)


def test_caps_agree() -> None:
    members: list[Member] = [(f"f{i}", tarfile.REGTYPE, b"x" * 100) for i in range(20)]
    blob = gzip.compress(_tar(members, tarfile.GNU_FORMAT))
    _agree(blob, Limits(tar_entries=5))
    _agree(blob, Limits(unpacked_total=1000))
    _agree(blob, Limits(unpacked_total=5000))
    bomb = gzip.compress(b"\0" * (4 * 1024 * 1024))
    _agree(bomb)
    _agree(bomb, Limits(unpack_ratio=2))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b/c", "b", "./d", "b/", "e//f", "..", "g/../h", "x" * 110]),
            st.sampled_from([tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE]),
            st.binary(max_size=700),
        ),
        max_size=6,
    ),
    st.sampled_from([tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]),
)
def test_random_layers_agree(raw: list[tuple[str, bytes, bytes]], fmt: int) -> None:
    members: list[Member] = [
        (name, kind, None if kind in (tarfile.DIRTYPE, tarfile.SYMTYPE) else data)
        for name, kind, data in raw
    ]
    try:
        tar = _tar(members, fmt)
    except ValueError:
        return  # a name the format cannot hold
    _agree(gzip.compress(tar))
