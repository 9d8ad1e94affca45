"""Fixtures for the bundle seam: fake bundles, a scripted fake registry, Debian's docker-registry.

The fake registry is a threaded `http.server` on 127.0.0.1 that speaks enough of the OCI
distribution API (manifests, blobs, referrers, anonymous and credentialed bearer tokens) and can
be scripted to fail: a status, a truncated body, corrupted bytes, or no answer at all.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import requests

from generator.bundle.artifact import (
    Artifact,
    build_layer,
    bundle_artifact,
    referrers_index,
    signature_artifact,
)
from generator.bundle.oci import INDEX_TYPE, referrers_tag, sha256_digest
from generator.model import BundleRef, OciDigest, PredicateType

# --------------------------------------------------------------------------- fake bundles


@dataclass(frozen=True)
class Sample:
    """A fake evidence bundle with its files and signature referrers."""

    files: dict[str, bytes]
    bundle: Artifact
    signatures: tuple[Artifact, ...]

    @property
    def digest(self) -> OciDigest:
        return self.bundle.digest

    def ref(self, oci: str = "ghcr.io/nvidia/aicr-evidence:demo-0123456789ab") -> BundleRef:
        return BundleRef(oci=oci, digest=self.digest, predicate_type=PredicateType.V3)


def fake_files(seed: str = "a") -> dict[str, bytes]:
    manifest = json.dumps({"schemaVersion": "1.0.0", "files": []}, indent=2).encode() + b"\n"
    return {
        "recipe.yaml": f"kind: RecipeResult\nmetadata:\n  name: demo-{seed}\n".encode(),
        "manifest.json": manifest,
        "ctrf/deployment.json": json.dumps({"results": {"tests": []}, "seed": seed}).encode(),
    }


def make_sample(seed: str = "a", *, signatures: int = 1, prefix: str | None = None) -> Sample:
    files = fake_files(seed)
    bundle = bundle_artifact(build_layer(files, prefix=prefix))
    sigs = tuple(
        signature_artifact(
            bundle.descriptor,
            json.dumps({"fake": "sigstore bundle", "n": n, "seed": seed}).encode(),
        )
        for n in range(signatures)
    )
    return Sample(files=files, bundle=bundle, signatures=sigs)


@pytest.fixture
def sample() -> Sample:
    return make_sample()


@pytest.fixture
def sample_factory() -> Callable[..., Sample]:
    return make_sample


# --------------------------------------------------------------------------- fake registry


@dataclass
class Fault:
    """Scripted behaviour for requests whose path matches `pattern` (`times` None: always)."""

    pattern: str
    action: int | str
    times: int | None = None


@dataclass
class FakeRegistry:
    """State of the fake registry; tests add artifacts, faults and an auth mode."""

    base_url: str = ""
    manifests: dict[tuple[str, str], tuple[bytes, str]] = field(default_factory=dict)
    blobs: dict[tuple[str, str], bytes] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    auth: str = "none"
    """none | bearer (anonymous tokens) | credentials (tokens only for `user:secret`)."""
    referrers_api: bool = True
    log: list[tuple[str, str, str]] = field(default_factory=list)
    """(method, path with query, Authorization header) per request."""
    accepts: list[tuple[str, str | None]] = field(default_factory=list)
    """(path with query, Accept header or None) per request."""
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, repo: str, sample: Sample, *, tag_schema: bool = False) -> None:
        for artifact in (sample.bundle, *sample.signatures):
            for blob in artifact.blobs:
                self.blobs[(repo, sha256_digest(blob))] = blob
            self.manifests[(repo, artifact.digest)] = (artifact.manifest, artifact.media_type)
        if tag_schema and sample.signatures:
            self.manifests[(repo, referrers_tag(sample.digest))] = (
                referrers_index(sample.signatures),
                INDEX_TYPE,
            )

    def fault(self, pattern: str, action: int | str, times: int | None = None) -> None:
        self.faults.append(Fault(pattern, action, times))

    def take_fault(self, path: str) -> int | str | None:
        with self.lock:
            for fault in self.faults:
                if re.search(fault.pattern, path) and fault.times != 0:
                    if fault.times is not None:
                        fault.times -= 1
                    return fault.action
        return None

    def requests_to(self, pattern: str) -> list[tuple[str, str, str]]:
        return [entry for entry in self.log if re.search(pattern, entry[1])]


GOOD_BASIC = "Basic " + base64.b64encode(b"user:secret").decode()


def _handler(state: FakeRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(
            self,
            status: int,
            body: bytes = b"",
            headers: dict[str, str] | None = None,
            *,
            length: int | None = None,
        ) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body) if length is None else length))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _challenge(self) -> None:
            realm = f"{state.base_url}/token"
            self._send(
                401,
                b'{"errors":[{"code":"UNAUTHORIZED"}]}',
                {
                    "WWW-Authenticate": f'Bearer realm="{realm}",service="fake",scope="repository:x:pull"'
                },
            )

        def _authorized(self) -> bool:
            header = self.headers.get("Authorization", "")
            if state.auth == "none":
                return True
            if state.auth == "bearer":
                return header in ("Bearer anon-token", "Bearer user-token")
            return header == "Bearer user-token"

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            path = self.path
            state.log.append((self.command, path, self.headers.get("Authorization", "")))
            state.accepts.append((path, self.headers.get("Accept")))
            action = state.take_fault(path)
            if action == "hang":
                state.release.wait(10)
                return
            if isinstance(action, int):
                self._send(action, b'{"errors":[]}')
                return
            parts = urlsplit(path)
            if action in ("redirect", "redirect-upper"):
                port = state.base_url.rsplit(":", 1)[1]
                host = "localhost" if action == "redirect" else "LOCALHOST"
                self._send(307, b"", {"Location": f"http://{host}:{port}/cdn{parts.path}"})
                return
            if parts.path.startswith("/cdn/"):
                blob = state.blobs.get(
                    (
                        parts.path[5:].split("/blobs/")[0].removeprefix("v2/"),
                        parts.path.rsplit("/", 1)[1],
                    )
                )
                self._send(200 if blob is not None else 404, blob or b"")
                return
            if parts.path == "/token":
                header = self.headers.get("Authorization")
                if header is None:
                    self._send(200, json.dumps({"token": "anon-token"}).encode())
                elif header == GOOD_BASIC:
                    self._send(200, json.dumps({"access_token": "user-token"}).encode())
                else:
                    self._send(401, b"{}")
                return
            if parts.path == "/v2/" or not self._authorized():
                if state.auth != "none" and not self._authorized():
                    self._challenge()
                else:
                    self._send(200, b"{}")
                return
            match = re.fullmatch(r"/v2/(.+)/(manifests|blobs|referrers)/([^/]+)", parts.path)
            if match is None:
                self._send(404, b'{"errors":[{"code":"NOT_FOUND"}]}')
                return
            repo, kind, reference = match.group(1), match.group(2), unquote(match.group(3))
            if kind == "referrers":
                self._referrers(repo, reference, parse_qs(parts.query))
                return
            if kind == "manifests":
                found = state.manifests.get((repo, reference))
                body, media = found if found is not None else (b"", "")
            else:
                body = state.blobs.get((repo, reference), b"")
                found = (body, "") if (repo, reference) in state.blobs else None
                media = "application/octet-stream"
            if found is None:
                self._send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')
                return
            if action == "corrupt":
                body = body[:-1] + bytes([body[-1] ^ 1])
            if action == "truncate":
                self._send(200, body[: len(body) // 2], {"Content-Type": media}, length=len(body))
                self.close_connection = True
                return
            if action == "gzip":  # a CDN that compresses: Content-Length is the wire size
                packed = gzip.compress(body, mtime=0)
                self._send(200, packed, {"Content-Type": media, "Content-Encoding": "gzip"})
                return
            if action == "oversize":
                self._send(200, b"", {"Content-Type": media}, length=1 << 40)
                self.close_connection = True
                return
            self._send(
                200, body, {"Content-Type": media, "Docker-Content-Digest": sha256_digest(body)}
            )

        def _referrers(self, repo: str, digest: str, query: dict[str, list[str]]) -> None:
            if not state.referrers_api:
                self._send(404, b"404 page not found\n")
                return
            wanted = query.get("artifactType", [None])[0]
            entries = []
            for (r, ref), (body, media) in sorted(state.manifests.items()):
                if r != repo or not ref.startswith("sha256:") or media == INDEX_TYPE:
                    continue
                manifest = json.loads(body)
                if (manifest.get("subject") or {}).get("digest") != digest:
                    continue
                if wanted and manifest.get("artifactType") != wanted:
                    continue
                entries.append(
                    {
                        "mediaType": media,
                        "digest": ref,
                        "size": len(body),
                        "artifactType": manifest.get("artifactType"),
                    }
                )
            body = json.dumps(
                {"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": entries}
            ).encode()
            self._send(200, body, {"Content-Type": INDEX_TYPE})

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up early (caps, timeouts) are expected here."""


@pytest.fixture
def fake_registry() -> Iterator[FakeRegistry]:
    state = FakeRegistry()
    server = _QuietServer(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- Debian registry


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: How many ports to try: the port picked is free when picked, but another process on the
#: machine may take it before the registry binds it.
REGISTRY_START_TRIES = 5


def _registry_config(tmp_path: Path, port: int) -> Path:
    config = tmp_path / "registry.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        "storage:\n"
        f"  filesystem:\n    rootdirectory: {tmp_path / 'storage'}\n"
        "  delete:\n    enabled: true\n"
        "http:\n"
        f"  addr: 127.0.0.1:{port}\n",
        encoding="utf-8",
    )
    return config


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr:
        process.stderr.close()


def _start_registry(binary: str, tmp_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start the registry on a free port, answering /v2/; a port taken in between is retried."""
    clashes: list[str] = []
    for _ in range(REGISTRY_START_TRIES):
        port = _free_port()
        process = subprocess.Popen(
            [binary, "serve", str(_registry_config(tmp_path, port))],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while True:
            if process.poll() is not None:
                err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                _stop(process)
                if "address already in use" in err:
                    clashes.append(f"{port}: {err.strip()[-200:]}")
                    break
                pytest.fail(f"docker-registry exited early: {err[-500:]}")
            try:
                answered = requests.get(f"{base}/v2/", timeout=1).status_code == 200
            except requests.RequestException:
                answered = False
            # an answer while our process is gone came from whoever holds the port
            if answered and process.poll() is None:
                return process, base
            if time.monotonic() > deadline:
                _stop(process)
                pytest.fail("docker-registry did not answer /v2/ within 15 s")
            time.sleep(0.05)
    pytest.fail(f"docker-registry found every port it tried taken: {clashes}")


@pytest.fixture
def docker_registry(tmp_path: Path) -> Iterator[str]:
    """A real distribution registry on 127.0.0.1:<free port>, storage in tmp_path."""
    binary = shutil.which("docker-registry")
    if binary is None:
        pytest.skip("docker-registry binary is not installed")
    process, base = _start_registry(binary, tmp_path)
    try:
        yield base
    finally:
        _stop(process)


# --------------------------------------------------------------------------- a bare listener


class Listener:
    """A 127.0.0.1 port that records the first bytes of each connection, then hangs up.
    The record is made before the hang-up, so a client that saw the hang-up sees the record."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.first_bytes: list[bytes] = []
        self.stop = threading.Event()
        self.sock.settimeout(0.05)
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _addr = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    self.first_bytes.append(conn.recv(16))
                except OSError:
                    self.first_bytes.append(b"")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()
