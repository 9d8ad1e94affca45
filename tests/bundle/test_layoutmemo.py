"""generator.bundle.layoutmemo: a layout's index is kept only for the same `index.json`,
`oci-layout` file, blobs folder and limits, and what is read back is checked: a kept index
that was tampered with, moved under another key or of another shape is a miss (the layout is
indexed again), never a different index."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from generator.bundle.layout import LayoutReader, OciLayoutSource
from generator.bundle.layoutmemo import LayoutIndexMemo, _index_from
from generator.bundle.prefetch import IndexPrefetch
from generator.bundle.types import Limits
from generator.cacheauth import CacheAuth, Purpose, failures, reset_failures
from tests.bundle.test_layout import layout

AUTH = CacheAuth(b"l" * 40)
DIGEST = "sha256:" + "a" * 64


def _memo(tmp_path: Path) -> LayoutIndexMemo:
    return LayoutIndexMemo(tmp_path / "cache", AUTH)


def _layout_and_memo(
    tmp_path: Path, sample: Any, *, tag_schema: bool = False
) -> tuple[Path, LayoutIndexMemo]:
    """A layout of `sample` under `tmp_path`, and an empty memo beside it."""
    root = tmp_path / "layout"
    layout(root, sample, tag_schema=tag_schema)
    return root, _memo(tmp_path)


def _prefetched(root: Path, memo: LayoutIndexMemo) -> tuple[Any, IndexPrefetch]:
    prefetch = IndexPrefetch([root], Limits(), memo)
    try:
        return prefetch.get(root), prefetch
    finally:
        prefetch.close()


def test_an_index_is_kept_and_the_next_build_reads_it_instead_of_indexing(
    tmp_path: Path, sample: Any
) -> None:
    root, memo = _layout_and_memo(tmp_path, sample, tag_schema=True)
    made, first = _prefetched(root, memo)
    assert not first.all_kept()
    assert made == LayoutReader(root, Limits()).index()
    kept, second = _prefetched(root, memo)
    assert second.all_kept() and second._process is None  # no child indexed it
    assert kept == made
    source = OciLayoutSource(root, Limits(), index=kept)
    assert source.fetch(sample.ref()).digest == sample.digest


def _changed_index(root: Path) -> None:
    index = root / "index.json"
    doc = orjson.loads(index.read_bytes())
    doc["manifests"] = doc["manifests"][:-1]
    index.write_bytes(orjson.dumps(doc))


def _blob_added(root: Path) -> None:
    time.sleep(0.01)  # a new modification time for the blobs folder
    (root / "blobs" / "sha256" / ("b" * 64)).write_bytes(b"{}")


def _blob_removed(root: Path) -> None:
    time.sleep(0.01)
    blobs = root / "blobs" / "sha256"
    os.unlink(sorted(blobs.iterdir())[0])


@pytest.mark.parametrize(
    "change", [_changed_index, _blob_added, _blob_removed], ids=["index", "added", "removed"]
)
def test_a_changed_layout_is_indexed_again(tmp_path: Path, sample: Any, change: Any) -> None:
    root, memo = _layout_and_memo(tmp_path, sample, tag_schema=True)
    before = memo.key(root, Limits())
    _prefetched(root, memo)
    change(root)
    assert memo.key(root, Limits()) != before
    _, again = _prefetched(root, memo)
    assert not again.all_kept()


def test_other_limits_are_another_key(tmp_path: Path, sample: Any) -> None:
    root, memo = _layout_and_memo(tmp_path, sample)
    assert memo.key(root, Limits()) != memo.key(root, Limits(manifest_json=1234))


def test_a_tampered_index_is_a_counted_miss_and_the_layout_is_indexed(
    tmp_path: Path, sample: Any
) -> None:
    root, memo = _layout_and_memo(tmp_path, sample, tag_schema=True)
    made, _ = _prefetched(root, memo)
    key = memo.key(root, Limits())
    assert key is not None
    stored = memo._file(key)
    data = bytearray(stored.read_bytes())
    data[-2] ^= 0x01
    stored.write_bytes(bytes(data))
    reset_failures()
    assert memo.load(key) is None
    assert f"layout index {key}" in failures()
    assert not stored.exists()  # removed: the next build indexes the layout and keeps it
    kept, prefetch = _prefetched(root, memo)
    assert not prefetch.all_kept() and kept == made
    assert stored.exists()


def test_an_index_kept_under_another_key_is_a_miss(tmp_path: Path, sample: Any) -> None:
    root, memo = _layout_and_memo(tmp_path, sample)
    _prefetched(root, memo)
    key = memo.key(root, Limits())
    assert key is not None
    other = "c" * 64
    memo._file(key).rename(memo._file(other))
    assert memo.load(other) is None


def test_a_kept_index_that_is_a_link_is_not_followed(tmp_path: Path, sample: Any) -> None:
    root, memo = _layout_and_memo(tmp_path, sample)
    _prefetched(root, memo)
    key = memo.key(root, Limits())
    assert key is not None
    elsewhere = tmp_path / "elsewhere.json"
    memo._file(key).rename(elsewhere)
    memo._file(key).symlink_to(elsewhere)
    assert memo.load(key) is None


@pytest.mark.parametrize(
    "doc",
    [
        {"referrers": {}, "tags": {}, "annotations": {}},
        {"referrers": {"sha256:AB": []}, "tags": {}, "annotations": {}, "listed": []},
        {"referrers": {DIGEST: ["not a digest"]}, "tags": {}, "annotations": {}, "listed": []},
        {"referrers": {}, "tags": {"t": 1}, "annotations": {}, "listed": []},
        {"referrers": {}, "tags": {}, "annotations": {DIGEST: {"k": 1}}, "listed": []},
        {"referrers": {}, "tags": {}, "annotations": {}, "listed": {}},
        {"referrers": [], "tags": {}, "annotations": {}, "listed": []},
        {"referrers": {}, "tags": {}, "annotations": {}, "listed": [], "extra": 1},
        [],
    ],
    ids=[
        "no-listed",
        "upper-case-digest",
        "referrer-not-a-digest",
        "tag-not-a-digest",
        "annotation-not-text",
        "listed-not-a-list",
        "referrers-not-an-object",
        "extra-field",
        "not-an-object",
    ],
)
def test_a_kept_index_of_another_shape_is_a_miss(tmp_path: Path, doc: Any) -> None:
    """Authentic bytes still have to be exactly the shape `store` writes."""
    with pytest.raises((ValueError, TypeError)):
        _index_from(doc)
    memo = _memo(tmp_path)
    key = "d" * 64
    memo.root.mkdir(parents=True)
    AUTH.write_sealed(memo._file(key), Purpose.LAYOUT, orjson.dumps(doc), key.encode())
    assert memo.load(key) is None


def test_keep_only_leaves_the_indexes_of_this_build(tmp_path: Path, sample: Any) -> None:
    root, memo = _layout_and_memo(tmp_path, sample)
    memo.root.mkdir(parents=True)
    (memo.root / ("e" * 64 + ".json")).write_bytes(b"stale")
    _prefetched(root, memo)
    key = memo.key(root, Limits())
    assert sorted(p.name for p in memo.root.iterdir()) == [f"{key}.json"]
