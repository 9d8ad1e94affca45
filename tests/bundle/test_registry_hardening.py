"""Fail-closed transport rules of the registry client, against servers on 127.0.0.1.

- A: a fetch has a total deadline that holds while a server trickles bytes (body or headers),
  and a minimum throughput; running out is a `registry` no-verdict, never a hang.
- B: credentials are read only from an explicit auth file and stay with the registry host they
  were given for (not after a redirect, not to a token realm on another host).
- C: hosts that resolve to non-public addresses are refused before any connection, unless they
  are a mirror's endpoint or allowed explicitly; published reasons are the tool's own words.

Each transfer runs in a thread joined with a generous bound, so a regression fails the test
instead of hanging it; nothing asserts on elapsed time.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from generator.bundle.push import push_artifacts
from generator.bundle.registry import RegistryClient
from generator.bundle.transport import PRIVATE_ADDRESS_REASON, describe, is_public_address
from generator.bundle.types import BundleFetchError, PrivateAddressError
from generator.model import FailureClass

REPO = "nvidia/aicr-evidence"
BOUND = 30.0
"""Seconds a fetch thread may take before the test calls it a hang (never reached when fixed)."""


def run_bounded(call: Callable[[], Any]) -> BaseException | Any:
    """Run `call` in a thread; its result or exception. Fails the test if it is still running
    after `BOUND` seconds (the regression this file guards against is a hang)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), f"the fetch was still running after {BOUND} s"
    return box.get("error", box.get("result"))


# --------------------------------------------------------------------------- raw servers


@dataclass
class RawServer:
    """A TCP server on 127.0.0.1 whose connections are handled by `behaviour(conn, stop)`."""

    behaviour: Callable[[socket.socket, threading.Event], None]
    stop: threading.Event = field(default_factory=threading.Event)
    connections: int = 0
    sock: socket.socket = field(default_factory=socket.socket)

    def start(self) -> RawServer:
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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
            self.behaviour(conn, self.stop)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk


def drip_body(conn: socket.socket, stop: threading.Event) -> None:
    """Declare a large body, then send one byte every 50 ms (at most 600 of them)."""
    _read_request(conn)
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
    )
    for _ in range(600):
        if stop.wait(0.05):
            return
        conn.sendall(b" ")


def drip_headers(conn: socket.socket, stop: threading.Event) -> None:
    """Start an answer, then trickle one header byte every 50 ms (at most 600 of them)."""
    _read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Padding: ")
    for _ in range(600):
        if stop.wait(0.05):
            return
        conn.sendall(b"a")


def silent(conn: socket.socket, stop: threading.Event) -> None:
    """Read the request and never answer (until the test ends)."""
    _read_request(conn)
    stop.wait(BOUND)


def hang_up(conn: socket.socket, stop: threading.Event) -> None:
    """Accept and close at once (a listening port that speaks no TLS)."""


@pytest.fixture
def raw_server() -> Iterator[
    Callable[[Callable[[socket.socket, threading.Event], None]], RawServer]
]:
    servers: list[RawServer] = []

    def start(behaviour: Callable[[socket.socket, threading.Event], None]) -> RawServer:
        server = RawServer(behaviour).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- A: deadlines


@pytest.mark.slow  # each case waits out a real 1 s deadline (mutation runs leave it out)
@pytest.mark.parametrize(
    "behaviour", [drip_body, drip_headers, silent], ids=["drip-body", "drip-headers", "no-headers"]
)
def test_a_trickling_or_silent_registry_ends_as_a_registry_no_verdict(
    raw_server: Any, sample: Any, behaviour: Any
) -> None:
    server = raw_server(behaviour)
    client = RegistryClient(mirrors={"ghcr.io": server.url}, credentials={}, deadline=1.0)
    outcome = run_bounded(lambda: client.fetch(sample.ref()))
    assert isinstance(outcome, BundleFetchError), outcome
    assert outcome.transient is True  # exit 3: says nothing about the evidence
    assert "timed out" in outcome.message
    if behaviour is not silent:  # a silent server may also meet the per-read timeout first
        assert outcome.failure_class is FailureClass.REGISTRY


def test_a_slow_but_steady_body_breaks_the_minimum_throughput(raw_server: Any, sample: Any) -> None:
    server = raw_server(drip_body)
    client = RegistryClient(
        mirrors={"ghcr.io": server.url},
        credentials={},
        deadline=600.0,
        min_throughput=1000,
        throughput_grace=0.2,
    )
    outcome = run_bounded(lambda: client.fetch(sample.ref()))
    assert isinstance(outcome, BundleFetchError), outcome
    assert outcome.failure_class is FailureClass.REGISTRY and outcome.transient is True
    assert "bytes/s" in outcome.message


def test_the_deadline_does_not_cut_a_healthy_fetch(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    client = RegistryClient(
        mirrors={"ghcr.io": fake_registry.base_url}, credentials={}, deadline=20.0
    )
    for _ in range(3):  # the same client, its pooled connections and the watchdog, again
        assert client.fetch(sample.ref()).files == sample.files


# --------------------------------------------------------------------------- B: credentials


def docker_config(folder: Path, *hosts: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    token = base64.b64encode(b"user:secret").decode()
    (folder / "config.json").write_text(
        json.dumps({"auths": {h: {"auth": token} for h in hosts}}), encoding="utf-8"
    )
    return folder


def test_no_default_docker_config_is_read_without_registry_auth(
    fake_registry: Any, sample: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_registry.auth = "credentials"  # anonymous pulls are refused: credentials would be tried
    fake_registry.add(REPO, sample)
    host = fake_registry.base_url.split("://", 1)[1]
    folder = docker_config(tmp_path / "docker", host, f"http://{host}", "ghcr.io")
    monkeypatch.setenv("DOCKER_CONFIG", str(folder))
    monkeypatch.setenv("HOME", str(tmp_path))
    client = RegistryClient(
        mirrors={"ghcr.io": fake_registry.base_url}, environ={"DOCKER_CONFIG": str(folder)}
    )
    assert client.credentials == {}
    outcome = run_bounded(lambda: client.fetch(sample.ref()))
    assert isinstance(outcome, BundleFetchError)
    assert outcome.failure_class is FailureClass.REGISTRY_FORBIDDEN
    assert fake_registry.log, "the registry was asked"
    sent = {entry[2] for entry in fake_registry.log}
    assert sent <= {"", "Bearer anon-token"}, sent  # anonymous only: no login from the file


@dataclass
class Recorder:
    """What a foreign 127.0.0.1 server received: (path, Authorization) per request."""

    seen: list[tuple[str, str]] = field(default_factory=list)
    url: str = ""


def _recording_server(
    recorder: Recorder, answer: Callable[[BaseHTTPRequestHandler], None]
) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def do_GET(self) -> None:  # noqa: N802
            recorder.seen.append((self.path, self.headers.get("Authorization", "")))
            answer(self)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    recorder.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    return server


def _reply(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"{}",
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


GOOD_BASIC = "Basic " + base64.b64encode(b"user:secret").decode()


@pytest.fixture
def foreign() -> Iterator[Recorder]:
    """A second 127.0.0.1 server: refuses everything with a Bearer challenge whose token realm
    is itself, and records every Authorization header it is sent."""
    recorder = Recorder()

    def answer(handler: BaseHTTPRequestHandler) -> None:
        if handler.path.startswith("/token"):
            _reply(handler, 401)
            return
        _reply(
            handler,
            401,
            headers={"WWW-Authenticate": f'Bearer realm="{recorder.url}/token",service="foreign"'},
        )

    server = _recording_server(recorder, answer)
    yield recorder
    server.shutdown()
    server.server_close()


def _auth_proxy(
    registry: str, recorder: Recorder, *, challenge: str, redirect_blobs_to: str | None
) -> ThreadingHTTPServer:
    """A proxy in front of the real registry that demands `user:secret` (Basic) and answers
    with `challenge`; blob requests can be redirected to another server."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        if redirect_blobs_to and "/blobs/" in handler.path:
            _reply(handler, 307, b"", {"Location": redirect_blobs_to + handler.path})
            return
        if handler.headers.get("Authorization") != GOOD_BASIC:
            _reply(handler, 401, headers={"WWW-Authenticate": challenge})
            return
        upstream = requests.get(
            registry + handler.path,
            timeout=10,
            headers={"Accept": handler.headers.get("Accept", "*/*")},
        )
        _reply(
            handler,
            upstream.status_code,
            upstream.content,
            {"Content-Type": upstream.headers.get("Content-Type", "application/json")},
        )

    return _recording_server(recorder, answer)


def _netloc(url: str) -> str:
    return url.split("://", 1)[1]


@pytest.mark.registry
def test_credentials_never_follow_a_redirect_to_another_host(
    docker_registry: str, sample: Any, foreign: Recorder
) -> None:
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    proxied = Recorder()
    proxy = _auth_proxy(
        docker_registry, proxied, challenge='Basic realm="proxy"', redirect_blobs_to=foreign.url
    )
    try:
        client = RegistryClient(
            mirrors={"ghcr.io": proxied.url},
            credentials={_netloc(proxied.url): ("user", "secret")},
            allow_private=[_netloc(foreign.url)],
        )
        outcome = run_bounded(lambda: client.fetch(sample.ref()))
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert any(auth == GOOD_BASIC for _path, auth in proxied.seen), "the proxy got its login"
    assert foreign.seen, "the blob request was redirected to the second server"
    assert all(auth == "" for _path, auth in foreign.seen), foreign.seen
    assert isinstance(outcome, BundleFetchError)
    assert outcome.failure_class is FailureClass.REGISTRY_FORBIDDEN


@pytest.mark.registry
def test_credentials_are_never_posted_to_a_token_realm_on_another_host(
    docker_registry: str, sample: Any, foreign: Recorder
) -> None:
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    proxied = Recorder()
    proxy = _auth_proxy(
        docker_registry,
        proxied,
        challenge=f'Bearer realm="{foreign.url}/token",service="proxy"',
        redirect_blobs_to=None,
    )
    try:
        client = RegistryClient(
            mirrors={"ghcr.io": proxied.url},
            credentials={_netloc(proxied.url): ("user", "secret")},
            allow_private=[_netloc(foreign.url)],
        )
        outcome = run_bounded(lambda: client.fetch(sample.ref()))
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert foreign.seen, "an anonymous token was asked for at the foreign realm"
    assert all(auth == "" for _path, auth in foreign.seen), foreign.seen
    assert isinstance(outcome, BundleFetchError)
    assert outcome.failure_class is FailureClass.REGISTRY_FORBIDDEN


@pytest.mark.registry
def test_credentials_still_reach_the_registry_they_were_given_for(
    docker_registry: str, sample: Any
) -> None:
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    proxied = Recorder()
    proxy = _auth_proxy(
        docker_registry, proxied, challenge='Basic realm="proxy"', redirect_blobs_to=None
    )
    try:
        client = RegistryClient(
            mirrors={"ghcr.io": proxied.url}, credentials={_netloc(proxied.url): ("user", "secret")}
        )
        got = run_bounded(lambda: client.fetch(sample.ref()))
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert not isinstance(got, BaseException), got
    assert got.files == sample.files and got.needed_credentials is True


# --------------------------------------------------------------------------- C: addresses


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("127.0.0.1", False),
        ("::1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("fe80::1", False),
        ("224.0.0.1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("240.0.0.1", False),
        ("100.64.0.1", False),
        ("::ffff:127.0.0.1", False),
        ("fd00::1", False),
        ("8.8.8.8", True),
        ("2606:4700::1111", True),
        ("not-an-ip", False),
    ],
)
def test_address_classes(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def test_a_private_registry_is_refused_before_any_connection(raw_server: Any, sample: Any) -> None:
    listening = raw_server(hang_up)
    client = RegistryClient(credentials={})
    outcomes = []
    for port in (listening.port, closed_port()):
        ref = sample.ref(f"127.0.0.1:{port}/nvidia/aicr-evidence:tag")
        outcomes.append(run_bounded(lambda ref=ref: client.fetch(ref)))
    for outcome in outcomes:
        assert isinstance(outcome, PrivateAddressError), outcome
        assert outcome.policy_excluded is True
        assert outcome.message == PRIVATE_ADDRESS_REASON
    assert listening.connections == 0


def test_localhost_is_refused_too(sample: Any) -> None:
    client = RegistryClient(credentials={})
    outcome = run_bounded(
        lambda: client.fetch(sample.ref(f"localhost:{closed_port()}/nvidia/aicr-evidence:tag"))
    )
    assert isinstance(outcome, PrivateAddressError), outcome


def test_an_allowed_private_registry_is_connected_to(raw_server: Any, sample: Any) -> None:
    listening = raw_server(hang_up)
    client = RegistryClient(credentials={}, allow_private=[f"127.0.0.1:{listening.port}"])
    outcome = run_bounded(
        lambda: client.fetch(sample.ref(f"127.0.0.1:{listening.port}/nvidia/aicr-evidence:tag"))
    )
    assert listening.connections >= 1
    assert isinstance(outcome, BundleFetchError) and not outcome.policy_excluded
    # https to a port that hangs up: worded by the tool, no library text.
    assert outcome.message in (
        "TLS handshake failed",
        "connection reset by the registry",
        "registry unreachable",
    ), outcome.message


def test_a_mirror_endpoint_does_not_open_its_host_to_pointers(
    fake_registry: Any, sample: Any
) -> None:
    fake_registry.add(REPO, sample)
    client = RegistryClient(mirrors={"ghcr.io": fake_registry.base_url}, credentials={})
    assert client.fetch(sample.ref()).files == sample.files  # the mirror works
    host = fake_registry.base_url.split("://", 1)[1]
    before = len(fake_registry.log)
    outcome = run_bounded(lambda: client.fetch(sample.ref(f"{host}/{REPO}:tag")))
    assert isinstance(outcome, PrivateAddressError), outcome
    assert len(fake_registry.log) == before


def test_a_redirect_to_a_private_host_is_refused(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault("^/v2/.*/blobs/", "redirect")  # to http://localhost:<port>/cdn/...
    client = RegistryClient(mirrors={"ghcr.io": fake_registry.base_url}, credentials={})
    outcome = run_bounded(lambda: client.fetch(sample.ref()))
    assert isinstance(outcome, PrivateAddressError), outcome
    assert not fake_registry.requests_to(r"^/cdn/")


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (
            requests.exceptions.ConnectionError(ConnectionRefusedError(111, "Connection refused")),
            "registry unreachable",
        ),
        (
            requests.exceptions.SSLError("[SSL: WRONG_VERSION_NUMBER] wrong version number"),
            "TLS handshake failed",
        ),
        (
            requests.exceptions.ConnectionError(
                ConnectionResetError(104, "Connection reset by peer")
            ),
            "connection reset by the registry",
        ),
        (requests.exceptions.ReadTimeout("read timed out"), "registry timed out"),
    ],
)
def test_transport_failures_are_worded_by_the_tool(error: BaseException, words: str) -> None:
    assert describe(error) == words


@dataclass
class _FakeConnection:
    host: str
    port: int
    _dns_host: str


@pytest.mark.parametrize(
    ("answers", "refused"),
    [
        (["140.82.112.34"], False),
        (["140.82.112.34", "10.0.0.7"], True),  # one private answer among public ones: refused
        (["2606:4700::1111", "::1"], True),
        (["169.254.169.254"], True),
    ],
)
def test_every_resolved_address_is_checked_and_the_checked_one_is_used(
    monkeypatch: pytest.MonkeyPatch, answers: list[str], refused: bool
) -> None:
    from generator.bundle import transport

    def fake_getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        assert host == "registry.example"
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answers
        ]

    monkeypatch.setattr(transport.socket, "getaddrinfo", fake_getaddrinfo)
    connection = _FakeConnection("registry.example", 443, "registry.example")
    if refused:
        with pytest.raises(transport.AddressRefused):
            transport._checked_address(connection)  # type: ignore[arg-type]
    else:
        assert transport._checked_address(connection) == answers[0]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("base", "mirrored", "answered_by", "allowed"),
    [
        ("https://ghcr.io", False, "https://ghcr.io/v2/x", True),
        ("https://ghcr.io", False, "https://cdn.example/blob", False),  # after an off-host redirect
        ("http://127.0.0.1:5000", True, "http://127.0.0.1:5000/v2/x", True),
        ("http://localhost:5000", True, "http://localhost:5000/v2/x", True),
        ("http://mirror.example:5000", True, "http://mirror.example:5000/v2/x", False),
    ],
)
def test_credentials_only_for_their_own_host_and_never_plain_http_off_loopback(
    base: str, mirrored: bool, answered_by: str, allowed: bool
) -> None:
    from generator.bundle._registry_http import _Attempt

    client = RegistryClient(credentials={})
    attempt = _Attempt(base=base, repo="r", deadline_at=0.0, mirrored=mirrored)
    response = requests.Response()
    response.url = answered_by
    assert client._may_send_credentials(attempt, response) is allowed
