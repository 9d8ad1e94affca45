"""Registry faults under load: a fake OCI registry on 127.0.0.1 serves the demo bundles slowly,
resets the connection for one bundle and serves a different blob than asked for another, while
the build runs with `--jobs` far above the CPU count. The build must finish, the two bundles end
without a verdict (never as verified or as evidence against the signer), every other demo recipe
keeps its state, and the cache holds no blob whose digest does not match.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.conftest import Sandbox, assert_demo_unchanged, new_sandbox

pytestmark = pytest.mark.slow
RESET = "h200-k0s-ubuntu-training"
WRONG_BLOB = "gb300-generic-ubuntu-training"


class FakeRegistry:
    """Read-only OCI distribution endpoints over an OCI layout, with per-digest faults."""

    def __init__(self, layout: Path, *, reset: set[str], wrong: set[str], delay: float) -> None:
        self.blobs = layout / "blobs" / "sha256"
        index = json.loads((layout / "index.json").read_text(encoding="utf-8"))
        self.tags = {
            m["annotations"]["org.opencontainers.image.ref.name"]: m["digest"]
            for m in index["manifests"]
            if "org.opencontainers.image.ref.name" in m.get("annotations", {})
        }
        self.reset, self.wrong, self.delay = reset, wrong, delay
        self.requests = 0
        self.concurrent = 0
        self.peak = 0
        self.lock = threading.Lock()
        self.other_blob = next(p.name for p in sorted(self.blobs.iterdir()))

    def handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                with registry.lock:
                    registry.requests += 1
                    registry.concurrent += 1
                    registry.peak = max(registry.peak, registry.concurrent)
                try:
                    time.sleep(registry.delay)
                    self._serve()
                finally:
                    with registry.lock:
                        registry.concurrent -= 1

            def _serve(self) -> None:
                path = self.path.split("?", 1)[0]
                parts = path.split("/")
                if "referrers" in parts:
                    return self._send(404, b"{}")
                kind, ref = parts[-2], parts[-1]
                digest = ref if ref.startswith("sha256:") else registry.tags.get(ref, "")
                hexd = digest.removeprefix("sha256:")
                if digest in registry.reset:
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.connection.close()
                    return None
                if digest in registry.wrong and kind == "blobs":
                    hexd = registry.other_blob
                blob = registry.blobs / hexd
                if not hexd or not blob.is_file():
                    return self._send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')
                data = blob.read_bytes()
                media = "application/octet-stream"
                if kind == "manifests":
                    media = json.loads(data).get("mediaType", media)
                return self._send(200, data, media)

            def _send(self, status: int, body: bytes, media: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


def _pointer_digest(box: Sandbox, recipe: str) -> str:
    pointer = next((box.evidence / recipe).glob("*/sha256-*.yaml"))
    return "sha256:" + pointer.name.removeprefix("sha256-").removesuffix(".yaml")


def _layer_of(box: Sandbox, manifest_digest: str) -> str:
    manifest = json.loads(
        (box.layout / "blobs" / "sha256" / manifest_digest.removeprefix("sha256:")).read_bytes()
    )
    return str(manifest["layers"][0]["digest"])


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, Any, Any]]:
    box = new_sandbox(tmp_path_factory.mktemp("registry"))
    reset = {_pointer_digest(box, RESET)}
    wrong = {_layer_of(box, _pointer_digest(box, WRONG_BLOB))}
    registry = FakeRegistry(box.layout, reset=reset, wrong=wrong, delay=0.05)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), registry.handler())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    mirror = f"ghcr.io=http://127.0.0.1:{server.server_address[1]}"
    jobs = str(4 * (os.cpu_count() or 1) + 8)
    try:
        result = box.run(
            "--registry-mirror", mirror, "--jobs", jobs, "--data-only", offline=False, timeout=300
        )
        yield box, result, registry
    finally:
        server.shutdown()


def test_build_finishes_under_faults_and_load(
    faulty: tuple[Sandbox, Any, Any], demo_states: dict[str, Any]
) -> None:
    box, result, registry = faulty
    assert result.returncode == 0, result.stdout + result.stderr
    assert registry.requests > 20
    assert_demo_unchanged(box, demo_states, affected=(RESET, WRONG_BLOB))
    assert box.stray_files() == []


@pytest.mark.parametrize(("recipe", "words"), [(RESET, ("connection",)), (WRONG_BLOB, ("digest",))])
def test_faulty_bundle_has_no_verdict(
    faulty: tuple[Sandbox, Any, Any], recipe: str, words: tuple[str, ...]
) -> None:
    box, _result, _registry = faulty
    records = [p for p in box.pointers().values() if p["recipe"] == recipe]
    assert records
    for record in records:
        verify = record["verify"]
        assert verify["exit"] == 3, verify  # no verdict: says nothing about the evidence
        detail = verify["failureCause"]["detail"].lower()
        assert any(w in detail for w in words), detail
        assert verify["failureCause"]["class"] in ("transient", "registry")


def test_cache_never_holds_a_mismatching_blob(faulty: tuple[Sandbox, Any, Any]) -> None:
    box, _result, _registry = faulty
    blobs = box.cache / "bundles" / "blobs" / "sha256"
    stored = [p for p in blobs.iterdir() if not p.name.startswith(".")]
    assert len(stored) > 10
    for blob in stored:
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name, blob
    index = json.loads((box.cache / "bundles" / "index.json").read_text(encoding="utf-8"))
    listed = {m["digest"] for m in index["manifests"]}
    assert _pointer_digest(box, RESET) not in listed
    assert _pointer_digest(box, WRONG_BLOB) not in listed
