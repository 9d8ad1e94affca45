"""The bundle cache against Debian's real docker-registry: a cached blob that no longer
matches its digest, or an entry whose annotations were edited (the "needed credentials" flag
the site publishes), is a counted miss; the bundle is pulled again and the site is the honest
one."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from generator.build import run_build
from generator.bundle.cache import NEEDED_CREDENTIALS
from generator.bundle.oci import INDEX_TYPE
from tests.bundle.conftest import docker_registry  # noqa: F401 (the registry fixture)
from tests.cacheauth.conftest import options
from tests.cacheauth.test_tampered_cache import assert_honest, site_files

pytestmark = pytest.mark.registry
REPOSITORY = "demo-evidence/aicr-evidence"


def push_layout(base: str, repository: str, layout: Path) -> None:
    """Push every blob and manifest of an OCI layout (manifests before the indexes naming
    them; tagged entries by their tag too)."""
    http = requests.Session()
    blobs = layout / "blobs" / "sha256"
    for blob in sorted(blobs.iterdir()):
        start = http.post(f"{base}/v2/{repository}/blobs/uploads/", timeout=30)
        assert start.status_code == 202, start.text
        target = start.headers["Location"]
        target = target if target.startswith("http") else f"{base}{target}"
        sep = "&" if "?" in target else "?"
        put = http.put(
            f"{target}{sep}digest=sha256:{blob.name}",
            data=blob.read_bytes(),
            headers={"Content-Type": "application/octet-stream"},
            timeout=30,
        )
        assert put.status_code in (201, 204), put.text
    index = json.loads((layout / "index.json").read_bytes())
    for entry in sorted(index["manifests"], key=lambda e: e["mediaType"] == INDEX_TYPE):
        body = (blobs / entry["digest"].split(":", 1)[1]).read_bytes()
        tag = (entry.get("annotations") or {}).get("org.opencontainers.image.ref.name")
        for reference in filter(None, (entry["digest"], tag)):
            put = http.put(
                f"{base}/v2/{repository}/manifests/{reference}",
                data=body,
                headers={"Content-Type": entry["mediaType"]},
                timeout=30,
            )
            assert put.status_code in (201, 204), put.text


def _entries(cache: Path) -> list[dict[str, Any]]:
    index = json.loads((cache / "bundles" / "index.json").read_bytes())
    return [
        e
        for e in index["manifests"]
        if e.get("artifactType") is None and e["mediaType"] != INDEX_TYPE
    ]


def flip_a_layer_blob(cache: Path) -> None:
    """One bundle's layer blob in the cache is rewritten with other bytes."""
    entry = _entries(cache)[0]
    blobs = cache / "bundles" / "blobs" / "sha256"
    manifest = json.loads((blobs / entry["digest"].split(":", 1)[1]).read_bytes())
    layer = blobs / manifest["layers"][0]["digest"].split(":", 1)[1]
    data = bytearray(layer.read_bytes())
    data[len(data) // 2] ^= 0xFF
    layer.write_bytes(bytes(data))


def claim_credentials_were_needed(cache: Path) -> None:
    """Every cached bundle is marked as served only with credentials."""
    path = cache / "bundles" / "index.json"
    index = json.loads(path.read_bytes())
    for entry in index["manifests"]:
        if entry.get("artifactType") is None and entry["mediaType"] != INDEX_TYPE:
            entry.setdefault("annotations", {})[NEEDED_CREDENTIALS] = "true"
    path.write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    "tamper", [flip_a_layer_blob, claim_credentials_were_needed], ids=["blob", "annotation"]
)
def test_a_tampered_bundle_cache_entry_is_pulled_again(
    tree: Path,
    tmp_path: Path,
    docker_registry: str,  # noqa: F811
    tamper: Callable[[Path], None],
) -> None:
    push_layout(docker_registry, REPOSITORY, tree / "bundles")
    cache = tmp_path / "cache"

    def build(out: str) -> Any:
        return run_build(
            options(
                tree,
                tmp_path / out,
                cache,
                offline=False,
                oci_layouts=(),
                registry_mirrors={"ghcr.io": docker_registry},
            )
        )

    first = build("honest")
    assert first.verified > 0 and first.auth_failures == 0
    assert _entries(cache), "the registry pulls did not enter the bundle cache"
    # the verdicts and the evaluation are gone: the bundles are read from the bundle cache
    shutil.rmtree(cache / "verify")
    shutil.rmtree(cache / "evaluation")
    shutil.rmtree(cache / "recipes")
    tamper(cache)
    again = build("again")
    assert_honest(tmp_path / "again", tmp_path / "honest", again)
    assert site_files(tmp_path / "again") == site_files(tmp_path / "honest")
