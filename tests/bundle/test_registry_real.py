"""Push to and pull from Debian's real docker-registry (distribution 2.8) on 127.0.0.1.

Distribution 2.8 has no referrers API (it answers 404), so these tests prove the client takes
the `sha256-<hex>` tag-schema fallback against a real registry implementation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from generator.bundle.cache import BundleCache
from generator.bundle.chain import ChainSource
from generator.bundle.oci import INDEX_TYPE, SIGSTORE_TYPE, referrers_tag
from generator.bundle.push import push_artifacts
from generator.bundle.registry import RegistryClient
from generator.bundle.types import BundleFetchError
from generator.model import FailureClass

pytestmark = pytest.mark.registry

REPO = "nvidia/aicr-evidence"


def test_push_then_fetch_through_a_mirror_mapping(
    docker_registry: str, sample: Any, tmp_path: Path
) -> None:
    digest = push_artifacts(
        docker_registry, REPO, sample.bundle, sample.signatures, tag="demo-0123456789ab"
    )
    assert digest == sample.digest
    api = requests.get(
        f"{docker_registry}/v2/{REPO}/referrers/{digest}",
        params={"artifactType": SIGSTORE_TYPE},
        timeout=5,
    )
    assert api.status_code == 404, "distribution 2.8 has no referrers API"
    tagged = requests.get(
        f"{docker_registry}/v2/{REPO}/manifests/{referrers_tag(digest)}",
        headers={"Accept": INDEX_TYPE},
        timeout=5,
    )
    assert tagged.status_code == 200

    client = RegistryClient(mirrors={"ghcr.io": docker_registry}, credentials={})
    chain = ChainSource([], BundleCache(tmp_path / "cache"), client, offline=False)
    got = chain.fetch(sample.ref())
    assert got.origin == "registry"
    assert got.digest == sample.digest
    assert got.files == sample.files
    assert [s.referrer_digest for s in got.signatures] == [sample.signatures[0].digest]
    assert got.signatures[0].bundle_json == sample.signatures[0].blobs[-1]
    again = ChainSource([], BundleCache(tmp_path / "cache"), None, offline=True)
    assert again.fetch(sample.ref()).origin == "cache"


def test_an_unknown_digest_is_not_found(
    docker_registry: str, sample: Any, sample_factory: Any
) -> None:
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    missing = sample_factory("never-pushed")
    client = RegistryClient(mirrors={"ghcr.io": docker_registry}, credentials={})
    with pytest.raises(BundleFetchError) as caught:
        client.fetch(missing.ref())
    assert caught.value.failure_class is FailureClass.NOT_FOUND
    assert caught.value.http_status == 404


def test_an_unsigned_push_reads_back_unsigned(docker_registry: str, sample_factory: Any) -> None:
    unsigned = sample_factory("unsigned", signatures=0)
    push_artifacts(docker_registry, REPO, unsigned.bundle)
    client = RegistryClient(mirrors={"ghcr.io": docker_registry}, credentials={})
    got = client.fetch(unsigned.ref())
    assert got.signatures == () and got.files == unsigned.files


def test_several_signatures_come_back_in_digest_order(
    docker_registry: str, sample_factory: Any
) -> None:
    signed = sample_factory("multi", signatures=3)
    push_artifacts(docker_registry, REPO, signed.bundle, signed.signatures)
    client = RegistryClient(mirrors={"ghcr.io": docker_registry}, credentials={})
    got = client.fetch(signed.ref())
    assert [s.referrer_digest for s in got.signatures] == sorted(
        s.digest for s in signed.signatures
    )
