"""Reading bundles and their Sigstore referrers from OCI image layouts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.bundle.artifact import (
    Artifact,
    build_layer,
    build_manifest,
    bundle_artifact,
    signature_artifact,
    write_to_layout,
)
from generator.bundle.layout import OciLayoutSource
from generator.bundle.layout_writer import LayoutWriter
from generator.bundle.oci import LAYER_TYPE, SIGSTORE_TYPE, referrers_tag, sha256_digest
from generator.bundle.types import MAX_SIGNATURES, BundleFetchError, Limits
from generator.errors import InputError
from generator.model import BundleRef, FailureClass, PredicateType


def layout(
    root: Path, sample: Any, *, tag_schema: bool = False, extra: tuple[Artifact, ...] = ()
) -> OciLayoutSource:
    writer = LayoutWriter(root)
    write_to_layout(
        writer, sample.bundle, (*sample.signatures, *extra), tag="demo", tag_schema=tag_schema
    )
    writer.close()
    return OciLayoutSource(root, Limits())


@pytest.mark.parametrize("tag_schema", [False, True], ids=["listed", "tag-schema"])
def test_a_bundle_and_its_signature_are_found(
    tmp_path: Path, sample: Any, tag_schema: bool
) -> None:
    source = layout(tmp_path, sample, tag_schema=tag_schema)
    got = source.fetch(sample.ref())
    assert got.digest == sample.digest
    assert got.origin == "layout"
    assert got.files == sample.files
    assert got.manifest == sample.bundle.manifest
    assert [s.referrer_digest for s in got.signatures] == [sample.signatures[0].digest]
    assert got.signatures[0].bundle_json == sample.signatures[0].blobs[-1]
    assert got.needed_credentials is False


def test_an_unsigned_bundle_has_no_candidates(
    tmp_path: Path, sample_factory: Callable[..., Any]
) -> None:
    unsigned = sample_factory(signatures=0)
    assert layout(tmp_path, unsigned).fetch(unsigned.ref()).signatures == ()


def test_a_digest_not_in_the_layout(
    tmp_path: Path, sample: Any, sample_factory: Callable[..., Any]
) -> None:
    source = layout(tmp_path, sample)
    other = sample_factory("other")
    assert source.find(other.ref()) is None
    with pytest.raises(BundleFetchError) as caught:
        source.fetch(other.ref())
    assert caught.value.failure_class is FailureClass.NOT_FOUND


def test_candidates_are_capped_and_sorted(
    tmp_path: Path, sample_factory: Callable[..., Any]
) -> None:
    many = sample_factory(signatures=MAX_SIGNATURES + 3)
    got = layout(tmp_path, many).fetch(many.ref())
    digests = [s.referrer_digest for s in got.signatures]
    assert len(digests) == MAX_SIGNATURES
    assert digests == sorted(s.digest for s in many.signatures)[:MAX_SIGNATURES]


def test_referrers_of_other_subjects_and_other_types_are_ignored(
    tmp_path: Path, sample: Any, sample_factory: Callable[..., Any]
) -> None:
    other = sample_factory("other")
    foreign = signature_artifact(other.bundle.descriptor, b'{"other": true}')
    sbom = build_manifest(
        "application/spdx+json", b"{}", "application/spdx+json", sample.bundle.descriptor, None
    )
    got = layout(tmp_path, sample, extra=(foreign, sbom)).fetch(sample.ref())
    assert [s.referrer_digest for s in got.signatures] == [sample.signatures[0].digest]


def test_a_malformed_sigstore_referrer_fails_closed(tmp_path: Path, sample: Any) -> None:
    good = sample.signatures[0]
    body = json.loads(good.manifest)
    body["layers"] = body["layers"] * 2
    broken = Artifact(json.dumps(body).encode(), good.blobs, artifact_type=SIGSTORE_TYPE)
    source = layout(tmp_path, sample, extra=(broken,))
    with pytest.raises(BundleFetchError) as caught:
        source.fetch(sample.ref())
    assert caught.value.failure_class is FailureClass.INTEGRITY
    assert "exactly one layer" in caught.value.message


def test_a_corrupted_layer_blob_is_a_transient_registry_fault(tmp_path: Path, sample: Any) -> None:
    source = layout(tmp_path, sample)
    layer_digest = json.loads(sample.bundle.manifest)["layers"][0]["digest"]
    blob = tmp_path / "blobs" / "sha256" / layer_digest.split(":")[1]
    blob.write_bytes(blob.read_bytes() + b"tampered")
    with pytest.raises(BundleFetchError) as caught:
        source.fetch(sample.ref())
    assert caught.value.failure_class is FailureClass.REGISTRY
    assert caught.value.transient is True


def test_a_missing_layer_is_not_found(tmp_path: Path, sample: Any) -> None:
    source = layout(tmp_path, sample)
    layer_digest = json.loads(sample.bundle.manifest)["layers"][0]["digest"]
    (tmp_path / "blobs" / "sha256" / layer_digest.split(":")[1]).unlink()
    with pytest.raises(BundleFetchError) as caught:
        source.fetch(sample.ref())
    assert caught.value.failure_class is FailureClass.NOT_FOUND


def test_a_symlinked_blob_is_refused(tmp_path: Path, sample: Any) -> None:
    source = layout(tmp_path, sample)
    path = tmp_path / "blobs" / "sha256" / sample.digest.split(":")[1]
    real = tmp_path / "elsewhere"
    real.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(real)
    with pytest.raises(BundleFetchError) as caught:
        source.fetch(sample.ref())
    assert "symbolic link" in caught.value.message


def test_a_directory_that_is_no_layout_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        OciLayoutSource(tmp_path)
    assert "index.json" in caught.value.diagnostics()


def test_oversized_bundle_layers_are_refused_before_reading(tmp_path: Path) -> None:
    files = {"recipe.yaml": b"r", "manifest.json": b"{}"}
    layer = build_layer(files)
    bundle = bundle_artifact(layer)
    writer = LayoutWriter(tmp_path)
    write_to_layout(writer, bundle)
    writer.close()
    source = OciLayoutSource(tmp_path, Limits(compressed_layer=len(layer) - 1))
    ref = BundleRef("ghcr.io/a/b:t", bundle.digest, PredicateType.V3)
    with pytest.raises(BundleFetchError) as caught:
        source.fetch(ref)
    assert "compressed_layer" in caught.value.message
    assert caught.value.failure_class is FailureClass.INTEGRITY


def test_the_tag_schema_index_is_what_links_unlisted_referrers(tmp_path: Path, sample: Any) -> None:
    writer = LayoutWriter(tmp_path)
    write_to_layout(writer, sample.bundle, sample.signatures, tag_schema=True)
    writer.close()
    index = json.loads((tmp_path / "index.json").read_text())
    names = [
        (m.get("annotations") or {}).get("org.opencontainers.image.ref.name")
        for m in index["manifests"]
    ]
    assert referrers_tag(sample.digest) in names
    assert sample.signatures[0].digest not in [m["digest"] for m in index["manifests"]]
    got = OciLayoutSource(tmp_path).fetch(sample.ref())
    assert len(got.signatures) == 1
    assert (
        sha256_digest(got.signatures[0].bundle_json)
        == json.loads(sample.signatures[0].manifest)["layers"][0]["digest"]
    )
    assert LAYER_TYPE in sample.bundle.manifest.decode()


# --------------------------------------------------------------------------- index prefetch


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork even while threads another test left behind are idle in this process (the tests
    of the thread rule use the real rule)."""
    import generator.forkedcall as forkedcall

    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)


@pytest.mark.usefixtures("forking")
def test_a_prefetched_index_equals_one_made_here(tmp_path: Path, sample: Any) -> None:
    from generator.bundle.layout import LayoutReader
    from generator.bundle.prefetch import IndexPrefetch

    layout(tmp_path, sample, tag_schema=True)
    prefetch = IndexPrefetch([tmp_path], Limits())
    try:
        got = prefetch.get(tmp_path)
    finally:
        prefetch.close()
    assert got is not None
    assert got == LayoutReader(tmp_path, Limits()).index()
    source = OciLayoutSource(tmp_path, Limits(), index=got)
    assert source.fetch(sample.ref()).digest == sample.digest
    assert prefetch.get(tmp_path) is got  # asked again: the same answer, no second child


@pytest.mark.usefixtures("forking")
def test_an_unusable_layout_is_left_to_the_build_process(tmp_path: Path) -> None:
    """The child answers None; indexing here then raises the usual, clear error."""
    from generator.bundle.prefetch import IndexPrefetch

    prefetch = IndexPrefetch([tmp_path / "nothing"], Limits())
    assert prefetch.get(tmp_path / "nothing") is None
    with pytest.raises(InputError, match="cannot be used"):
        OciLayoutSource(tmp_path / "nothing", Limits(), index=prefetch.get(tmp_path / "nothing"))


@pytest.mark.usefixtures("forking")
def test_a_prefetch_not_needed_is_stopped(tmp_path: Path, sample: Any) -> None:
    from generator.bundle.prefetch import IndexPrefetch

    layout(tmp_path, sample)
    prefetch = IndexPrefetch([tmp_path], Limits())
    child = prefetch._process
    prefetch.close()
    assert child is None or not child.is_alive()
    assert prefetch.get(tmp_path) is None  # closed first: index it yourself


def test_no_prefetch_child_while_another_thread_runs(tmp_path: Path, sample: Any) -> None:
    """The real rule (`forkedcall.fork_is_safe`): a child forked while another thread holds a
    lock would hold it forever. None is forked; the layout is indexed here when asked for."""
    import threading

    from generator.bundle.layout import LayoutReader
    from generator.bundle.prefetch import IndexPrefetch

    layout(tmp_path, sample)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        prefetch = IndexPrefetch([tmp_path], Limits())
        assert prefetch._process is None
        got = prefetch.get(tmp_path)
    finally:
        stop.set()
        other.join()
    assert got is not None and got == LayoutReader(tmp_path, Limits()).index()


@pytest.mark.usefixtures("forking")
def test_a_prefetch_that_cannot_fork_leaves_the_index_to_the_caller(
    tmp_path: Path, sample: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of processes or memory: no error; the layout is indexed here when asked for (not
    at all when the prefetch is let go first)."""
    import generator.forkedcall as forkedcall
    from generator.bundle.layout import LayoutReader
    from generator.bundle.prefetch import IndexPrefetch

    def no_fork(*args: Any) -> Any:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(forkedcall, "ForkedCall", no_fork)
    layout(tmp_path, sample)
    prefetch = IndexPrefetch([tmp_path], Limits())
    got = prefetch.get(tmp_path)
    assert got is not None and got == LayoutReader(tmp_path, Limits()).index()
    closed = IndexPrefetch([tmp_path], Limits())
    closed.close()
    assert closed.get(tmp_path) is None  # let go first: index it yourself
