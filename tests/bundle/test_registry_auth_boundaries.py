"""The registry client's authorization at its edges, against the real registry behind a 127.0.0.1
proxy that plays the registry's auth: a 403 refusal earns the credentials like a 401, a refused
login is not remembered, the token request carries the challenge's `service` (and the realm's
own query), an https realm is used and an http realm is refused to an https registry, and a
token answer is read up to exactly its 1 MiB cap.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from generator.bundle._registry_http import _Attempt
from generator.bundle.push import push_artifacts
from generator.bundle.registry import RegistryClient
from generator.bundle.types import BundleFetchError
from generator.model import FailureClass
from tests.bundle.conftest import Listener
from tests.bundle.test_registry_hardening import REPO, run_bounded

GOOD_BASIC = "Basic " + base64.b64encode(b"user:secret").decode()
TOKEN = "Bearer proxy-token"
ONE_MIB = 1024 * 1024
"""The documented cap on a token endpoint's answer (`TOKEN_CAP`), written out: a test that read
the constant would move with it."""

Answer = tuple[int, dict[str, str], bytes]
"""Status, headers and body of a reply the proxy makes itself."""


@dataclass
class AuthProxy:
    """A proxy in front of the real registry whose `gate` decides each request: an answer of
    its own, or None to pass the request on. Records (path with query, Authorization)."""

    registry: str
    gate: Callable[[AuthProxy, BaseHTTPRequestHandler], Answer | None]
    seen: list[tuple[str, str]] = field(default_factory=list)
    url: str = ""
    public: bool = False
    """Read by gates that let anonymous pulls through (a package made public)."""

    def netloc(self) -> str:
        return self.url.split("://", 1)[1]

    def auth_sent(self) -> list[str]:
        return [auth for path, auth in self.seen if path.startswith("/v2/")]

    def token_queries(self) -> list[dict[str, list[str]]]:
        return [parse_qs(urlsplit(path).query) for path, _auth in self.seen if "/token" in path]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (a refused token answer, read only up to its cap) is expected."""


def _serve(proxy: AuthProxy) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def do_GET(self) -> None:  # noqa: N802
            proxy.seen.append((self.path, self.headers.get("Authorization", "")))
            answer = proxy.gate(proxy, self)
            if answer is None:
                upstream = requests.get(
                    proxy.registry + self.path,
                    timeout=10,
                    headers={"Accept": self.headers.get("Accept", "*/*")},
                )
                answer = (
                    upstream.status_code,
                    {"Content-Type": upstream.headers.get("Content-Type", "application/json")},
                    upstream.content,
                )
            status, headers, body = answer
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = _QuietServer(("127.0.0.1", 0), Handler)
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    return server


@pytest.fixture
def pushed(docker_registry: str, sample: Any) -> str:
    """The real registry, holding `sample` and its signature."""
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    return docker_registry


@pytest.fixture
def proxy_for(pushed: str) -> Iterator[Callable[..., AuthProxy]]:
    servers: list[ThreadingHTTPServer] = []

    def start(gate: Callable[[AuthProxy, BaseHTTPRequestHandler], Answer | None]) -> AuthProxy:
        proxy = AuthProxy(pushed, gate)
        servers.append(_serve(proxy))
        return proxy

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _client(proxy: AuthProxy, password: str | None = "secret", **kwargs: Any) -> RegistryClient:
    credentials = {proxy.netloc(): ("user", password)} if password is not None else {}
    return RegistryClient(mirrors={"ghcr.io": proxy.url}, credentials=credentials, **kwargs)


def _refuse(status: int, challenge: str | None) -> Answer:
    return status, ({"WWW-Authenticate": challenge} if challenge else {}), b'{"errors":[]}'


# ------------------------------------------------------------------ 401 and 403 refusals


@pytest.mark.registry
@pytest.mark.parametrize(
    ("status", "challenge"),
    [(401, 'Basic realm="proxy"'), (403, 'Basic realm="proxy"'), (403, None)],
    ids=["401-basic", "403-basic", "403-no-challenge"],
)
def test_a_refusal_with_401_or_403_earns_the_credentials_after_an_anonymous_try(
    proxy_for: Callable[..., AuthProxy], sample: Any, status: int, challenge: str | None
) -> None:
    """Registries refuse a private package's anonymous pull with either status (GHCR answers
    403): both are an authorization refusal, so the login is offered, and only after it."""

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        if handler.headers.get("Authorization") == GOOD_BASIC:
            return None
        return _refuse(status, challenge)

    proxy = proxy_for(gate)
    got = run_bounded(lambda: _client(proxy).fetch(sample.ref()))
    assert not isinstance(got, BaseException), got
    assert got.files == sample.files and got.needed_credentials is True
    sent = proxy.auth_sent()
    assert sent[0] == "", "the first request is anonymous"
    assert GOOD_BASIC in sent


@pytest.mark.registry
@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_login_is_not_remembered_for_the_next_fetch(
    proxy_for: Callable[..., AuthProxy], sample: Any, status: int
) -> None:
    """Wrong credentials are refused and the fetch fails; once the package is public the next
    fetch starts anonymous again and succeeds, instead of replaying the refused login (which
    the registry refuses, public package or not)."""

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        auth = handler.headers.get("Authorization")
        if auth == GOOD_BASIC or (proxy.public and auth is None):
            return None
        return _refuse(status, None)

    proxy = proxy_for(gate)
    client = _client(proxy, password="wrong")
    first = run_bounded(lambda: client.fetch(sample.ref()))
    assert isinstance(first, BundleFetchError), first
    assert first.failure_class is FailureClass.REGISTRY_FORBIDDEN
    proxy.public = True
    proxy.seen.clear()
    second = run_bounded(lambda: client.fetch(sample.ref()))
    assert not isinstance(second, BaseException), second
    assert second.files == sample.files and second.needed_credentials is False
    assert set(proxy.auth_sent()) == {""}, proxy.seen


# ------------------------------------------------------------------ the token request


def _bearer_gate(
    challenge_params: str, token_check: Callable[[dict[str, list[str]]], bool], token_body: bytes
) -> Callable[[AuthProxy, BaseHTTPRequestHandler], Answer | None]:
    """Pulls need `TOKEN`; the challenge names the realm `<proxy>/token` plus `challenge_params`
    (formatted with the proxy's url); the token endpoint answers `token_body` when
    `token_check` accepts the query, else 401 (what a token service does)."""

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        parts = urlsplit(handler.path)
        if parts.path == "/token":
            if not token_check(parse_qs(parts.query)):
                return 401, {}, b'{"errors":[{"code":"DENIED"}]}'
            return 200, {"Content-Type": "application/json"}, token_body
        if handler.headers.get("Authorization") == TOKEN:
            return None
        return _refuse(401, "Bearer " + challenge_params.format(url=proxy.url))

    return gate


SCOPE = f"repository:{REPO}:pull"
ANON = json.dumps({"token": "proxy-token"}).encode()


@pytest.mark.registry
@pytest.mark.parametrize(
    ("params", "query"),
    [
        (
            f'realm="{{url}}/token",service="registry.example",scope="{SCOPE}"',
            {"service": ["registry.example"], "scope": [SCOPE]},
        ),
        (f'realm="{{url}}/token",scope="{SCOPE}"', {"scope": [SCOPE]}),
        (
            'realm="{url}/token",scope="repository:mirror/aicr-evidence:pull"',
            {"scope": ["repository:mirror/aicr-evidence:pull"]},
        ),
        (
            'realm="{url}/token?account=evidence",service="registry.example"',
            {"account": ["evidence"], "service": ["registry.example"], "scope": [SCOPE]},
        ),
    ],
    ids=["service", "no-service", "registrys-own-scope", "realm-with-query"],
)
def test_the_token_request_carries_exactly_the_challenges_parameters(
    proxy_for: Callable[..., AuthProxy], sample: Any, params: str, query: dict[str, list[str]]
) -> None:
    """A token service issues tokens for its own `service` name only (Docker's token auth):
    the challenge's `service` and `scope` are passed on, none is invented, and a realm that
    has a query of its own keeps it."""
    proxy = proxy_for(_bearer_gate(params, lambda got: got == query, ANON))
    got = run_bounded(lambda: _client(proxy, password=None).fetch(sample.ref()))
    assert not isinstance(got, BaseException), (got, proxy.token_queries())
    assert got.files == sample.files and got.needed_credentials is False
    assert proxy.token_queries() == [query]


@pytest.mark.registry
@pytest.mark.parametrize("status", [401, 403])
def test_a_token_service_refusing_the_anonymous_token_leads_to_the_login(
    proxy_for: Callable[..., AuthProxy], sample: Any, status: int
) -> None:
    """A token service that will not hand out an anonymous token (401, or 403 like some do)
    has refused authorization, not failed: the login is offered to it next."""
    params = f'realm="{{url}}/token",service="registry.example",scope="{SCOPE}"'
    bearer = _bearer_gate(params, lambda _query: True, ANON)

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        if handler.path.startswith("/token") and handler.headers.get("Authorization") is None:
            return status, {}, b'{"errors":[{"code":"DENIED"}]}'
        if handler.path.startswith("/token") and handler.headers.get("Authorization") != GOOD_BASIC:
            return 401, {}, b"{}"
        return bearer(proxy, handler)

    proxy = proxy_for(gate)
    got = run_bounded(lambda: _client(proxy).fetch(sample.ref()))
    assert not isinstance(got, BaseException), got
    assert got.files == sample.files and got.needed_credentials is True
    token_auth = [auth for path, auth in proxy.seen if path.startswith("/token")]
    assert token_auth[:2] == ["", GOOD_BASIC], token_auth


@pytest.mark.registry
@pytest.mark.parametrize(("size", "ok"), [(ONE_MIB, True), (ONE_MIB + 1, False)])
def test_a_token_answer_of_exactly_one_mib_is_read_one_byte_more_is_refused(
    proxy_for: Callable[..., AuthProxy], sample: Any, size: int, ok: bool
) -> None:
    body = ANON + b" " * (size - len(ANON))  # JSON with trailing white space
    assert len(body) == size
    params = f'realm="{{url}}/token",service="registry.example",scope="{SCOPE}"'
    proxy = proxy_for(_bearer_gate(params, lambda _query: True, body))
    got = run_bounded(lambda: _client(proxy, password=None).fetch(sample.ref()))
    if ok:
        assert not isinstance(got, BaseException), got
        assert got.files == sample.files
    else:
        assert isinstance(got, BundleFetchError), got
        assert got.message == f"a pull token exceeds the token limit of {ONE_MIB} bytes"
        assert not any(auth == TOKEN for auth in proxy.auth_sent())


# ------------------------------------------------------------------ the realm's scheme


@pytest.mark.registry
def test_an_https_token_realm_is_asked_over_tls(
    proxy_for: Callable[..., AuthProxy], sample: Any, listener: Listener
) -> None:
    """Public registries name an https realm (ghcr.io/token): the client opens a TLS connection
    to it. (This listener speaks no TLS, so the fetch then fails as a transport fault.)"""
    realm = f"https://{listener.netloc}/token"
    params = f'realm="{realm}",service="registry.example"'
    proxy = proxy_for(_bearer_gate(params, lambda _query: True, ANON))
    got = run_bounded(
        lambda: _client(proxy, password=None, allow_private=[listener.netloc]).fetch(sample.ref())
    )
    assert isinstance(got, BundleFetchError), got
    assert "unusable realm" not in got.message
    assert listener.first_bytes and listener.first_bytes[0][:1] == b"\x16", listener.first_bytes
    # 0x16: a TLS handshake record, the ClientHello


def test_an_https_registry_never_asks_a_plain_http_token_realm(listener: Listener) -> None:
    """A registry reached over https that names an http realm would have its token (and a
    login) sent in the clear: refused before any connection, naming the realm."""
    client = RegistryClient(credentials={}, allow_private=[listener.netloc])
    attempt = _Attempt(base="https://ghcr.io", repo=REPO, deadline_at=float("inf"))
    realm = f"http://{listener.netloc}/token"
    with pytest.raises(BundleFetchError, match="unusable realm") as caught:
        client._token(attempt, {"realm": realm, "service": "ghcr.io"}, None)
    assert caught.value.found == repr(realm)
    assert caught.value.failure_class is FailureClass.REGISTRY
    assert listener.first_bytes == []


# ------------------------------------------------------------------ no login from the environment


@pytest.mark.registry
@pytest.mark.parametrize("source", ["netrc", "proxy-variables"])
def test_no_login_is_taken_from_netrc_or_the_environment(
    proxy_for: Callable[..., AuthProxy],
    sample: Any,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    listener: Listener,
    source: str,
) -> None:
    """Credentials come only from the explicit auth file: a `.netrc` naming the registry (which
    `requests` reads by default) is never sent, and proxy variables are not followed."""

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        if handler.headers.get("Authorization") == GOOD_BASIC:
            return None
        return _refuse(401, 'Basic realm="proxy"')

    proxy = proxy_for(gate)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("NO_PROXY", "no_proxy", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    if source == "netrc":
        netrc = tmp_path / ".netrc"
        netrc.write_text("machine 127.0.0.1\nlogin user\npassword secret\n", encoding="utf-8")
        netrc.chmod(0o600)
        monkeypatch.setenv("NETRC", str(netrc))
    else:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, f"http://{listener.netloc}")
    got = run_bounded(lambda: _client(proxy, password=None).fetch(sample.ref()))
    assert isinstance(got, BundleFetchError), got
    assert got.failure_class is FailureClass.REGISTRY_FORBIDDEN
    assert proxy.seen and set(proxy.auth_sent()) == {""}, proxy.seen
    assert listener.first_bytes == []


# ------------------------------------------------------------------ token answers and reuse

PARAMS = f'realm="{{url}}/token",service="registry.example",scope="{SCOPE}"'


@pytest.mark.registry
@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (500, b"{}", "a pull token"),
        (200, b"not json", "token endpoint returned junk"),
    ],
    ids=["token-service-error", "token-junk"],
)
def test_a_token_service_that_fails_or_answers_junk_fails_the_fetch_without_a_token(
    proxy_for: Callable[..., AuthProxy],
    sample: Any,
    status: int,
    body: bytes,
    message: str,
) -> None:
    bearer = _bearer_gate(PARAMS, lambda _query: True, ANON)

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        if handler.path.startswith("/token"):
            return status, {"Content-Type": "application/json"}, body
        return bearer(proxy, handler)

    proxy = proxy_for(gate)
    got = run_bounded(lambda: _client(proxy, password=None).fetch(sample.ref()))
    assert isinstance(got, BundleFetchError), got
    assert message in got.message
    assert not any(auth.startswith("Bearer") for auth in proxy.auth_sent())


@pytest.mark.registry
@pytest.mark.parametrize("token", [5, "", None], ids=["a-number", "empty", "null"])
def test_a_token_answer_without_a_usable_token_sends_no_bearer(
    proxy_for: Callable[..., AuthProxy], sample: Any, token: object
) -> None:
    """`{"token": 5}` or an empty token is no token: nothing is sent as `Bearer 5` or
    `Bearer `, and the pull stays refused."""
    answer = json.dumps({"token": token}).encode()
    proxy = proxy_for(_bearer_gate(PARAMS, lambda _query: True, answer))
    got = run_bounded(lambda: _client(proxy, password=None).fetch(sample.ref()))
    assert isinstance(got, BundleFetchError), got
    assert got.failure_class is FailureClass.REGISTRY_FORBIDDEN
    assert not any(auth.startswith("Bearer") for auth in proxy.auth_sent()), proxy.seen


@pytest.mark.registry
def test_an_expired_anonymous_token_is_replaced_by_another_anonymous_one(
    proxy_for: Callable[..., AuthProxy], sample: Any
) -> None:
    """Every token is good for one pull here: when the cached anonymous token is refused, a
    new anonymous token is asked for. The login is never offered for a public package."""
    issued: list[str] = []
    used: set[str] = set()

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        if handler.path.startswith("/token"):
            issued.append(f"single-use-{len(issued)}")
            return 200, {}, json.dumps({"token": issued[-1]}).encode()
        auth = handler.headers.get("Authorization") or ""
        token = auth.removeprefix("Bearer ")
        if token in issued and token not in used:
            used.add(token)
            return None
        return _refuse(401, "Bearer " + PARAMS.format(url=proxy.url))

    proxy = proxy_for(gate)
    got = run_bounded(lambda: _client(proxy).fetch(sample.ref()))
    assert not isinstance(got, BaseException), got
    assert got.files == sample.files and got.needed_credentials is False
    assert len(issued) >= 2
    assert not any(auth.startswith("Basic") for _path, auth in proxy.seen), proxy.seen


@pytest.mark.registry
@pytest.mark.parametrize("scheme", ["basic", "bearer"])
def test_every_fetch_that_rides_on_a_login_says_it_needed_credentials(
    proxy_for: Callable[..., AuthProxy], sample: Any, scheme: str
) -> None:
    """The second fetch by the same client reuses the login's token or Basic header without a
    new refusal: it needed the credentials all the same, and says so."""
    bearer = _bearer_gate(PARAMS, lambda _query: True, ANON)

    def gate(proxy: AuthProxy, handler: BaseHTTPRequestHandler) -> Answer | None:
        auth = handler.headers.get("Authorization")
        if scheme == "basic":
            return None if auth == GOOD_BASIC else _refuse(401, 'Basic realm="proxy"')
        if handler.path.startswith("/token") and auth != GOOD_BASIC:
            return 401, {}, b'{"errors":[{"code":"DENIED"}]}'
        return bearer(proxy, handler)

    proxy = proxy_for(gate)
    client = _client(proxy)
    first = run_bounded(lambda: client.fetch(sample.ref()))
    second = run_bounded(lambda: client.fetch(sample.ref()))
    for got in (first, second):
        assert not isinstance(got, BaseException), got
        assert got.needed_credentials is True


@pytest.mark.parametrize(
    "realm",
    ["https://straße.example/token", "https://registry.example.evil/token", ""],
    ids=["casefolds-to-the-registry", "another-host", "no-realm"],
)
def test_credentials_never_go_to_a_token_realm_on_another_host(
    realm: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`straße.example` casefolds to `strasse.example` but is another host name (IDNA keeps
    the ß): the login is not sent there, nothing is requested, and the warning names the realm
    as the registry wrote it."""
    client = RegistryClient(credentials={})
    attempt = _Attempt(base="https://strasse.example", repo=REPO, deadline_at=float("inf"))
    params = {"realm": realm, "service": "x"} if realm else {"service": "x"}
    with caplog.at_level("WARNING", logger="generator.bundle.registry"):
        got = client._credentialed_auth(attempt, ("bearer", params), ("user", "secret"))
    assert got is None
    warnings = [r.getMessage() for r in caplog.records]
    assert any("not sending credentials" in m and repr(realm) in m for m in warnings), warnings


def test_a_host_that_only_casefolds_to_localhost_is_not_loopback() -> None:
    from generator.bundle._registry_auth import _is_loopback

    assert _is_loopback("http://localhost:5000")
    assert _is_loopback("http://LOCALHOST:5000")
    assert not _is_loopback("http://localhoſt:5000")


def test_a_bearer_challenge_without_a_realm_is_refused_naming_the_empty_realm() -> None:
    client = RegistryClient(credentials={})
    attempt = _Attempt(base="https://ghcr.io", repo=REPO, deadline_at=float("inf"))
    with pytest.raises(BundleFetchError, match="unusable realm") as caught:
        client._token(attempt, {"service": "ghcr.io"}, None)
    assert caught.value.found == "''"


def test_a_refusal_from_a_host_that_only_casefolds_to_the_registry_s_earns_no_login() -> None:
    """A redirect target `strasse.example` is not the registry `ſtrasse.example` (a long s),
    though the two casefold alike: its refusal is not answered with the registry's login."""
    client = RegistryClient(credentials={})
    attempt = _Attempt(base="https://ſtrasse.example", repo=REPO, deadline_at=float("inf"))
    refusal = requests.Response()
    refusal.url = "https://strasse.example/v2/acme/manifests/x"
    assert not client._may_send_credentials(attempt, refusal)
    refusal.url = "https://ſtrasse.example/v2/acme/manifests/x"
    assert client._may_send_credentials(attempt, refusal)
