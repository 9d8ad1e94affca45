"""Where a build may connect, and what it publishes when it cannot: the real CLI on a copy of
the demo tree, with pointers that name registries on this machine's own addresses.

- Pointers naming `127.0.0.1:<port>` (a listening port and a closed one) are refused before any
  connection with one worded reason, and `data/pointers.json` carries no socket or TLS text.
- `--allow-private-registry 127.0.0.1:<port>` lets the build connect there.
- Without `--registry-auth`, a login in `$DOCKER_CONFIG/config.json` is never sent.
- `--fetch-timeout` bounds a registry that trickles its answer: the pointer ends without a
  verdict (exit 3, class `registry`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from generator.bundle.transport import PRIVATE_ADDRESS_REASON
from tests.hostile.conftest import Sandbox

pytestmark = pytest.mark.slow
RAW_TEXT = (
    "Connection refused",
    "Errno",
    "WRONG_VERSION_NUMBER",
    "Connection reset",
    "Max retries",
    "HTTPConnectionPool",
    "HTTPSConnectionPool",
)


class Listener:
    """A TCP port on 127.0.0.1 that counts connections, and either hangs up at once or
    (`drip`) answers with a large declared body sent one byte every 50 ms."""

    def __init__(self, *, drip: bool = False) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.drip = drip
        self.connections = 0
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self.drip:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
                for _ in range(1200):
                    if self.stop.wait(0.05):
                        return
                    conn.sendall(b" ")
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def point_at(box: Sandbox, registry: str, seed: str) -> str:
    """Add a copy of a demo pointer whose bundle is on `registry` under a digest no layout
    holds (so the build has to ask that registry); returns the pointer's path."""
    source = next(
        p
        for p in sorted(box.evidence.glob("*/*/sha256-*.yaml"))
        if "oci: ghcr.io/" in p.read_text(encoding="utf-8")
    )
    digest = hashlib.sha256(seed.encode()).hexdigest()
    old = source.name.removeprefix("sha256-").removesuffix(".yaml")
    text = source.read_text(encoding="utf-8").replace(old, digest)
    text = text.replace("oci: ghcr.io/", f"oci: {registry}/")
    target = source.with_name(f"sha256-{digest}.yaml")
    target.write_text(text, encoding="utf-8")
    return target.relative_to(box.recipes).as_posix()


def record_of(box: Sandbox, path: str) -> dict[str, Any]:
    found = [p for p in box.pointers().values() if p["path"].endswith(path.split("/", 1)[1])]
    assert len(found) == 1, [p["path"] for p in box.pointers().values()]
    return found[0]


def online_run(box: Sandbox, *extra: str) -> Any:
    return box.run(
        "--oci-layout", str(box.layout), "--data-only", *extra, offline=False, timeout=300
    )


def test_private_registries_are_refused_before_connecting(
    sandbox: Sandbox, listener: Listener
) -> None:
    live = point_at(sandbox, f"127.0.0.1:{listener.port}", "live")
    dead = point_at(sandbox, f"127.0.0.1:{closed_port()}", "dead")
    result = online_run(sandbox)
    assert result.returncode == 0, result.stdout + result.stderr
    details = []
    for path in (live, dead):
        verify = record_of(sandbox, path)["verify"]
        assert verify["exit"] == 3, verify  # not fetched: no verdict, like a policy exclusion
        assert verify["failureCause"]["class"] == "registry"
        details.append(verify["failureCause"]["detail"])
    assert details == [PRIVATE_ADDRESS_REASON, PRIVATE_ADDRESS_REASON]
    assert listener.connections == 0
    published = (sandbox.out / "data" / "pointers.json").read_text(encoding="utf-8")
    for text in RAW_TEXT:
        assert text not in published, text


def test_an_allowed_private_registry_is_fetched_and_its_failure_worded(
    sandbox: Sandbox, listener: Listener
) -> None:
    live = point_at(sandbox, f"127.0.0.1:{listener.port}", "live")
    dead_port = closed_port()
    dead = point_at(sandbox, f"127.0.0.1:{dead_port}", "dead")
    result = online_run(
        sandbox,
        "--allow-private-registry",
        f"127.0.0.1:{listener.port}",
        "--allow-private-registry",
        f"127.0.0.1:{dead_port}",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert listener.connections >= 1, "the allowed registry was connected to"
    live_cause = record_of(sandbox, live)["verify"]["failureCause"]
    dead_cause = record_of(sandbox, dead)["verify"]["failureCause"]
    # https to a port that hangs up, and to a closed port: the tool's words only.
    assert live_cause["detail"] in ("TLS handshake failed", "connection reset by the registry")
    assert dead_cause["detail"] == "registry unreachable"
    published = (sandbox.out / "data" / "pointers.json").read_text(encoding="utf-8")
    for text in RAW_TEXT:
        assert text not in published, text
    assert "Errno" in result.stderr, "the raw detail goes to the build log"


class _Recorder(BaseHTTPRequestHandler):
    """Refuses everything with a Basic challenge and records the Authorization headers."""

    seen: list[str] = []

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_GET(self) -> None:  # noqa: N802
        type(self).seen.append(self.headers.get("Authorization", ""))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="registry"')
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def test_a_docker_login_is_not_sent_without_registry_auth(sandbox: Sandbox, tmp_path: Path) -> None:
    handler = type("Recorder", (_Recorder,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    point_at(sandbox, "ghcr.io", "logged-in")
    docker = sandbox.inputs / "docker"
    docker.mkdir()
    token = base64.b64encode(b"user:secret").decode()
    (docker / "config.json").write_text(
        json.dumps({"auths": {h: {"auth": token} for h in (host, f"http://{host}", "ghcr.io")}}),
        encoding="utf-8",
    )
    env = {**sandbox.env(), "DOCKER_CONFIG": str(docker)}
    import subprocess

    args = sandbox.build_args(
        "--oci-layout",
        str(sandbox.layout),
        "--data-only",
        "--registry-mirror",
        f"ghcr.io=http://{host}",
        offline=False,
    )
    try:
        result = subprocess.run(
            args,
            cwd=sandbox.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert handler.seen, "the registry was asked"
    assert all(value == "" for value in handler.seen), handler.seen


def test_fetch_timeout_ends_a_trickling_registry_without_a_verdict(sandbox: Sandbox) -> None:
    drip = Listener(drip=True)
    try:
        path = point_at(sandbox, "ghcr.io", "slow")
        result = online_run(
            sandbox,
            "--registry-mirror",
            f"ghcr.io=http://127.0.0.1:{drip.port}",
            "--fetch-timeout",
            "1",
        )
    finally:
        drip.close()
    assert result.returncode == 0, result.stdout + result.stderr
    verify = record_of(sandbox, path)["verify"]
    assert verify["exit"] == 3, verify
    assert verify["failureCause"]["class"] == "registry"
    assert "timed out" in verify["failureCause"]["detail"]
