"""The registry client's HTTP layer at its edges, against the real registry behind a 127.0.0.1
proxy: a redirect to https is followed (as to a registry's CDN), a redirect to another scheme is
refused naming its target, and the requests of a fetch share kept-alive connections."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

from generator.bundle.push import push_artifacts
from generator.bundle.registry import RegistryClient
from generator.bundle.types import BundleFetchError
from generator.model import FailureClass
from tests.bundle.conftest import Listener
from tests.bundle.test_registry_hardening import REPO, run_bounded


class _Proxy(ThreadingHTTPServer):
    daemon_threads = True
    redirect: Callable[[str], str | None] = staticmethod(lambda _path: None)
    """Where a request for this path is redirected (307), or None to pass it to the registry."""
    ports: list[int]
    """The client port of each request: one per connection the client opened."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up after a refused redirect is expected."""


def _start(registry: str) -> _Proxy:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            server.ports.append(self.client_address[1])
            target = server.redirect(self.path)
            if target is not None:
                self._reply(307, b"", {"Location": target})
                return
            upstream = requests.get(
                registry + self.path,
                timeout=10,
                headers={"Accept": self.headers.get("Accept", "*/*")},
            )
            self._reply(
                upstream.status_code,
                upstream.content,
                {"Content-Type": upstream.headers.get("Content-Type", "application/json")},
            )

    server = _Proxy(("127.0.0.1", 0), Handler)
    server.ports = []
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    return server


@pytest.fixture
def proxy(docker_registry: str, sample: Any) -> Iterator[_Proxy]:
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    server = _start(docker_registry)
    yield server
    server.shutdown()
    server.server_close()


def _url(server: _Proxy) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def _blobs_to(prefix: str) -> Callable[[str], str | None]:
    return lambda path: prefix + path if "/blobs/" in path else None


@pytest.mark.registry
def test_a_redirect_to_https_is_followed(proxy: _Proxy, sample: Any, listener: Listener) -> None:
    """Registries send blobs to an https CDN: even from a plain-http mirror the client follows
    (a TLS connection is opened; this listener speaks no TLS, so the fetch then fails as a
    transport fault, not as a refused redirect)."""
    proxy.redirect = _blobs_to(f"https://{listener.netloc}/cdn")
    client = RegistryClient(
        mirrors={"ghcr.io": _url(proxy)}, credentials={}, allow_private=[listener.netloc]
    )
    got = run_bounded(lambda: client.fetch(sample.ref()))
    assert isinstance(got, BundleFetchError), got
    assert "insecure or unsupported" not in got.message
    assert listener.first_bytes and listener.first_bytes[0][:1] == b"\x16", listener.first_bytes


@pytest.mark.registry
@pytest.mark.parametrize(
    "target", ["ftp://{netloc}/cdn", "file:///etc/passwd", "gopher://{netloc}/"]
)
def test_a_redirect_to_another_scheme_is_refused_naming_it(
    proxy: _Proxy, sample: Any, listener: Listener, target: str
) -> None:
    location = target.format(netloc=listener.netloc)
    proxy.redirect = lambda path: location if "/blobs/" in path else None
    client = RegistryClient(
        mirrors={"ghcr.io": _url(proxy)}, credentials={}, allow_private=[listener.netloc]
    )
    got = run_bounded(lambda: client.fetch(sample.ref()))
    assert isinstance(got, BundleFetchError), got
    assert got.message == "registry redirected to an insecure or unsupported URL"
    assert got.failure_class is FailureClass.REGISTRY and got.found == location
    assert listener.first_bytes == []


@pytest.mark.registry
def test_the_requests_of_a_fetch_share_one_kept_alive_connection(
    proxy: _Proxy, sample: Any
) -> None:
    """Thousands of bundles are fetched per build: a request must not open (and, over https,
    handshake) a connection of its own while a kept-alive one is free."""
    client = RegistryClient(mirrors={"ghcr.io": _url(proxy)}, credentials={})
    got = run_bounded(lambda: client.fetch(sample.ref()))
    assert not isinstance(got, BaseException), got
    assert len(proxy.ports) >= 4, proxy.ports  # manifest, blob, referrers, signature, ...
    # A refused referrers API (404) may cost its connection; the others are kept alive.
    assert len(set(proxy.ports)) <= len(proxy.ports) // 2, proxy.ports
