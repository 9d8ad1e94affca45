"""The registry client's body reader at its edges, over a fake byte stream and a fake clock:
a declared or streamed size exactly at the cap and one byte over, a body shorter than its
Content-Length, and the minimum throughput exactly at its grace period and just past it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from generator.bundle._registry_http import _Attempt
from generator.bundle.registry import RegistryClient
from generator.bundle.types import BundleFetchError
from generator.model import FailureClass

URL = "https://registry.example/v2/acme/blobs/sha256:x"
CAP = 100


class FakeStream:
    """`response.raw`: hands out the given chunks, ticking the fake clock before each read."""

    def __init__(self, chunks: list[bytes], clock: FakeClock, step: float = 0.0) -> None:
        self.chunks: Iterator[bytes] = iter(chunks)
        self.clock = clock
        self.step = step

    def read1(self, size: int, decode_content: bool = True) -> bytes:
        self.clock.now += self.step
        return next(self.chunks, b"")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _read(
    chunks: list[bytes],
    *,
    declared: int | None = None,
    step: float = 0.0,
    min_throughput: int = 1,
    grace: float = 10.0,
) -> bytes:
    clock = FakeClock()
    client = RegistryClient(
        credentials={}, clock=clock, min_throughput=min_throughput, throughput_grace=grace
    )
    response = requests.Response()
    response.raw = FakeStream(chunks, clock, step)
    if declared is not None:
        response.headers["Content-Length"] = str(declared)
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1e9)
    return client._body(attempt, response, URL, CAP, "blob", "the blob")


@pytest.mark.parametrize("declared", [None, CAP])
def test_a_body_of_exactly_the_cap_is_read(declared: int | None) -> None:
    assert _read([b"x" * 60, b"x" * 40], declared=declared) == b"x" * CAP


def test_a_declared_length_one_over_the_cap_is_refused_before_reading() -> None:
    with pytest.raises(BundleFetchError, match="exceeds the blob limit of 100 bytes") as caught:
        _read([], declared=CAP + 1)
    assert caught.value.failure_class is FailureClass.INTEGRITY
    assert caught.value.found == "Content-Length 101"


def test_a_streamed_body_one_over_the_cap_is_refused() -> None:
    with pytest.raises(BundleFetchError, match="exceeds the blob limit") as caught:
        _read([b"x" * 60, b"x" * 41])
    assert caught.value.found == "more than 100 bytes"


@pytest.mark.parametrize("declared", ["abc", "", "-1"])
def test_a_content_length_that_is_not_a_count_is_ignored(declared: str) -> None:
    clock = FakeClock()
    client = RegistryClient(credentials={}, clock=clock)
    response = requests.Response()
    response.raw = FakeStream([b"abc"], clock)
    response.headers["Content-Length"] = declared
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1e9)
    assert client._body(attempt, response, URL, CAP, "blob", "the blob") == b"abc"


@pytest.mark.parametrize(("declared", "short"), [(10, 9), (10, 0)])
def test_a_body_shorter_than_its_content_length_is_a_transient_fault(
    declared: int, short: int
) -> None:
    with pytest.raises(BundleFetchError, match="was truncated") as caught:
        _read([b"x" * short] if short else [], declared=declared)
    assert caught.value.transient
    assert caught.value.found == f"{short} of {declared} bytes"


def test_throughput_is_not_judged_within_the_grace_period() -> None:
    """Ten one-byte chunks, one second apart, against 5 bytes/s: at exactly 10 s (the grace)
    the slow body is still read."""
    assert _read([b"x"] * 10, step=1.0, min_throughput=5, grace=10.0) == b"x" * 10


def test_a_body_slower_than_the_minimum_after_the_grace_is_refused() -> None:
    with pytest.raises(BundleFetchError, match="slower than 5 bytes/s") as caught:
        _read([b"x"] * 11, step=1.0, min_throughput=5, grace=10.0)
    assert caught.value.transient
    assert caught.value.failure_class is FailureClass.REGISTRY


def test_a_body_at_exactly_the_minimum_throughput_is_read() -> None:
    """5 bytes per second for 12 s against a 5 bytes/s minimum: not slower, so read."""
    assert _read([b"x" * 5] * 12, step=1.0, min_throughput=5, grace=2.0) == b"x" * 60


def _response_from(url: str) -> requests.Response:
    response = requests.Response()
    response.url = url
    return response


@pytest.mark.parametrize(
    ("base", "mirrored", "refused_by", "sent"),
    [
        ("https://ghcr.io", False, "https://ghcr.io/v2/a", True),
        ("https://ghcr.io", False, "https://GHCR.io/v2/a", True),
        ("https://ghcr.io", False, "https://ghcr.io.evil/v2/a", False),
        ("https://ghcr.io", False, "https://ghcr.io:444/v2/a", False),
        ("http://127.0.0.1:5000", True, "http://127.0.0.1:5000/v2/a", True),
        ("http://localhost:5000", True, "http://localhost:5000/v2/a", True),
        ("http://[::1]:5000", True, "http://[::1]:5000/v2/a", True),
        ("http://127.0.0.1:5000", False, "http://127.0.0.1:5000/v2/a", False),
        ("http://10.0.0.7:5000", True, "http://10.0.0.7:5000/v2/a", False),
        ("http://localhost.evil:5000", True, "http://localhost.evil:5000/v2/a", False),
    ],
    ids=[
        "https-same-host",
        "host-case",
        "lookalike-host",
        "other-port",
        "loopback-mirror",
        "localhost-mirror",
        "ipv6-loopback-mirror",
        "plain-http-not-a-mirror",
        "private-mirror",
        "lookalike-localhost",
    ],
)
def test_credentials_go_only_to_the_registry_over_https_or_a_loopback_mirror(
    base: str, mirrored: bool, refused_by: str, sent: bool
) -> None:
    client = RegistryClient(credentials={})
    attempt = _Attempt(base=base, repo="acme", deadline_at=1e9, mirrored=mirrored)
    assert client._may_send_credentials(attempt, _response_from(refused_by)) is sent


def test_a_mirror_is_chosen_by_registry_name_whatever_its_case() -> None:
    client = RegistryClient(mirrors={"GHCR.io": "http://127.0.0.1:5000/"}, credentials={})
    assert client.base_url("ghcr.io") == "http://127.0.0.1:5000"
    assert client.base_url("GHCR.IO") == "http://127.0.0.1:5000"
    assert client.base_url("quay.io") == "https://quay.io"


@pytest.mark.parametrize(
    ("left", "timeouts"),
    [(100.0, (10.0, 30.0)), (20.0, (10.0, 20.0)), (5.0, (5.0, 5.0)), (0.5, (0.5, 0.5))],
)
def test_a_request_never_waits_past_the_time_the_fetch_has_left(
    left: float, timeouts: tuple[float, float]
) -> None:
    clock = FakeClock()
    clock.now = 1000.0
    client = RegistryClient(credentials={}, clock=clock, connect_timeout=10.0, read_timeout=30.0)
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1000.0 + left)
    assert client._timeout(attempt, URL) == timeouts


def test_no_request_starts_once_the_fetch_has_no_time_left() -> None:
    clock = FakeClock()
    clock.now = 1000.0
    client = RegistryClient(credentials={}, clock=clock)
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1000.0)
    with pytest.raises(BundleFetchError, match="deadline") as caught:
        client._timeout(attempt, URL)
    assert caught.value.transient


@pytest.mark.parametrize(("per_second", "ok"), [(4096, True), (4095, False)])
def test_the_default_minimum_throughput_is_4_kib_per_second_after_10_s(
    per_second: int, ok: bool
) -> None:
    """With the defaults, a body that averages exactly 4 KiB/s past the 10 s grace is read;
    one byte a second less is refused (written out: a test that read the constants would move
    with them)."""
    clock = FakeClock()
    client = RegistryClient(credentials={}, clock=clock)
    response = requests.Response()
    response.raw = FakeStream([b"x" * per_second] * 12, clock, step=1.0)
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1e9)
    if ok:
        body = client._body(attempt, response, URL, 1 << 20, "blob", "the blob")
        assert len(body) == 12 * per_second
    else:
        with pytest.raises(BundleFetchError, match="slower than 4096 bytes/s") as caught:
            client._body(attempt, response, URL, 1 << 20, "blob", "the blob")
        assert caught.value.expected == "at least 4096 bytes/s after 10 s"


@pytest.mark.parametrize("expired", [True, False], ids=["deadline-passed", "in-time"])
def test_a_transport_failure_after_the_deadline_is_the_deadline(expired: bool) -> None:
    """A connection torn down because the fetch's deadline passed is reported as the deadline
    (class `registry`, with its own next step), not as the socket error it caused."""
    from generator.bundle.transport import Transfer

    client = RegistryClient(credentials={}, deadline=7.0)
    transfer = Transfer(deadline_at=float("inf"))
    if expired:
        transfer.expire()
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1e9)
    attempt.transfer = transfer
    error = client._transport_error(attempt, URL, OSError("connection reset"), "reading")
    assert isinstance(error, BundleFetchError)
    assert error.transient
    if expired:
        assert error.failure_class is FailureClass.REGISTRY
        assert error.message == "registry timed out (the fetch deadline of 7 s passed)"
    else:
        assert "timed out" not in error.message


class _BrokenStream(FakeStream):
    """Hands out its chunks, then the connection breaks."""

    def read1(self, size: int, decode_content: bool = True) -> bytes:
        chunk = super().read1(size, decode_content)
        if not chunk:
            raise OSError("connection reset by peer")
        return chunk


def test_a_connection_that_breaks_while_a_body_is_read_fails_the_fetch() -> None:
    """Without a Content-Length nothing else would tell a broken body from a whole one: the
    read error itself must fail the fetch (transient), never return what came so far."""
    clock = FakeClock()
    client = RegistryClient(credentials={}, clock=clock)
    response = requests.Response()
    response.raw = _BrokenStream([b"x" * 10], clock)
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1e9)
    with pytest.raises(BundleFetchError) as caught:
        client._body(attempt, response, URL, CAP, "blob", "the blob")
    assert caught.value.transient


class _ExpiringStream(FakeStream):
    """Hands out its chunks; the deadline passes while the end of the body is awaited."""

    def __init__(self, chunks: list[bytes], clock: FakeClock, attempt: _Attempt) -> None:
        super().__init__(chunks, clock)
        self.attempt = attempt

    def read1(self, size: int, decode_content: bool = True) -> bytes:
        chunk = super().read1(size, decode_content)
        if not chunk:
            self.attempt.transfer.expire()
        return chunk


def test_a_body_whose_end_came_after_the_deadline_is_the_deadline() -> None:
    """The deadline expired the transfer while the end of the body was awaited: the fetch is
    over time, whatever was read (never a late success)."""
    clock = FakeClock()
    client = RegistryClient(credentials={}, clock=clock, deadline=7.0)
    attempt = _Attempt(base="https://registry.example", repo="acme", deadline_at=1e9)
    response = requests.Response()
    response.raw = _ExpiringStream([b"x" * 10], clock, attempt)
    with pytest.raises(BundleFetchError, match="deadline of 7 s passed"):
        client._body(attempt, response, URL, CAP, "blob", "the blob")
