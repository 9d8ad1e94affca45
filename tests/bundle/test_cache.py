"""The bundle cache: an OCI layout shared by threads and processes, storing only checked bytes."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from generator.bundle.cache import BundleCache, default_cache_dir
from generator.bundle.layout import OciLayoutSource
from generator.bundle.oci import RawBundle, RawReferrer
from generator.bundle.types import BundleFetchError
from generator.model import FailureClass


def raw_of(sample: Any, *, needed_credentials: bool = False) -> RawBundle:
    return RawBundle(
        manifest=sample.bundle.manifest,
        layer=sample.bundle.blobs[-1],
        referrers=tuple(RawReferrer(s.manifest, s.blobs[-1]) for s in sample.signatures),
        needed_credentials=needed_credentials,
    )


def test_put_then_get_round_trips(tmp_path: Path, sample: Any) -> None:
    cache = BundleCache(tmp_path)
    assert cache.get(sample.digest) is None
    assert cache.put(raw_of(sample)) == sample.digest
    got = cache.get(sample.digest)
    assert got is not None
    assert got.origin == "cache"
    assert got.files == sample.files
    assert [s.referrer_digest for s in got.signatures] == [sample.signatures[0].digest]
    assert got.needed_credentials is False


def test_needed_credentials_survives_the_cache(tmp_path: Path, sample: Any) -> None:
    cache = BundleCache(tmp_path)
    cache.put(raw_of(sample, needed_credentials=True))
    got = BundleCache(tmp_path).get(sample.digest)
    assert got is not None and got.needed_credentials is True


def test_the_cache_is_a_readable_oci_layout(tmp_path: Path, sample: Any) -> None:
    BundleCache(tmp_path).put(raw_of(sample))
    got = OciLayoutSource(tmp_path).fetch(sample.ref())
    assert got.files == sample.files and len(got.signatures) == 1


def test_a_layer_that_does_not_match_is_never_stored(tmp_path: Path, sample: Any) -> None:
    cache = BundleCache(tmp_path)
    bad = RawBundle(sample.bundle.manifest, sample.bundle.blobs[-1] + b"x")
    with pytest.raises(BundleFetchError) as caught:
        cache.put(bad)
    assert caught.value.failure_class is FailureClass.REGISTRY
    assert caught.value.transient is True
    assert cache.get(sample.digest) is None
    assert not (tmp_path / "index.json").exists()


def test_a_corrupt_entry_is_a_miss_and_a_new_put_repairs_it(tmp_path: Path, sample: Any) -> None:
    cache = BundleCache(tmp_path)
    cache.put(raw_of(sample))
    layer_digest = json.loads(sample.bundle.manifest)["layers"][0]["digest"]
    blob = tmp_path / "blobs" / "sha256" / layer_digest.split(":")[1]
    blob.write_bytes(b"rot")
    assert cache.get(sample.digest) is None
    cache.put(raw_of(sample))
    got = cache.get(sample.digest)
    assert got is not None and got.files == sample.files


def test_a_re_put_with_more_signatures_replaces_the_referrers_tag(
    tmp_path: Path, sample_factory: Callable[..., Any]
) -> None:
    cache = BundleCache(tmp_path)
    one, two = sample_factory("s", signatures=1), sample_factory("s", signatures=2)
    cache.put(raw_of(one))
    cache.put(raw_of(two))
    got = cache.get(two.digest)
    assert got is not None and len(got.signatures) == 2
    tags = [
        m
        for m in json.loads((tmp_path / "index.json").read_text())["manifests"]
        if (m.get("annotations") or {}).get("org.opencontainers.image.ref.name")
    ]
    assert len(tags) == 1


def test_threads_sharing_a_cache_lose_nothing(
    tmp_path: Path, sample_factory: Callable[..., Any]
) -> None:
    samples = [sample_factory(f"t{n}") for n in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda s: BundleCache(tmp_path).put(raw_of(s)), samples))
    cache = BundleCache(tmp_path)
    assert all(cache.get(s.digest) is not None for s in samples)


def _put_in_child(root: str, seed: str) -> None:
    from generator.bundle.artifact import build_layer, bundle_artifact
    from generator.bundle.cache import BundleCache as ChildCache
    from generator.bundle.oci import RawBundle as ChildRaw

    files = {"recipe.yaml": seed.encode(), "manifest.json": b"{}"}
    layer = build_layer(files)
    bundle = bundle_artifact(layer)
    for _ in range(5):
        ChildCache(Path(root)).put(ChildRaw(bundle.manifest, layer))


def test_processes_sharing_a_cache_lose_nothing(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    seeds = [f"p{n}" for n in range(4)]
    children = [context.Process(target=_put_in_child, args=(str(tmp_path), s)) for s in seeds]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    listed = json.loads((tmp_path / "index.json").read_text())["manifests"]
    assert len(listed) == len(seeds)
    cache = BundleCache(tmp_path)
    assert all(cache.get(m["digest"]) is not None for m in listed)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"XDG_CACHE_HOME": "/x/cache"}, Path("/x/cache/evidence-dashboard")),
        ({"XDG_CACHE_HOME": "relative"}, Path.home() / ".cache" / "evidence-dashboard"),
        ({}, Path.home() / ".cache" / "evidence-dashboard"),
    ],
    ids=["xdg", "relative-xdg-ignored", "home"],
)
def test_default_cache_dir(
    environ: dict[str, str], expected: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the suite sets its own (tests/conftest.py), which platformdirs would read
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir(environ) == expected
