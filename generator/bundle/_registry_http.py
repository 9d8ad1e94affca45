"""The registry client's HTTP layer: one guarded session per thread, redirects, deadlines, bodies.

Every request goes through `_request` (at most 5 redirects, never down to http, no credentials to
another host) and every body through `_body` (streamed under its cap, the fetch deadline and the
minimum throughput, truncation a transient fault). Transport failures become worded
`BundleFetchError`s; the library's own text goes to the log.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import requests
import urllib3

from generator.errors import Location
from generator.model import FailureClass

from .transport import PRIVATE_ADDRESS_REASON, AddressRefused, GuardedAdapter, Transfer, describe
from .types import BundleFetchError, PrivateAddressError, cap_error, transient_error

log = logging.getLogger("generator.bundle.registry")
"""The registry client's one logger, whichever module of it logs."""

CHUNK = 64 * 1024
MAX_REDIRECTS = 5
DEFAULT_FETCH_TIMEOUT = 120.0
"""Seconds one bundle fetch (every request, connect + headers + whole body) may take."""
MIN_THROUGHPUT = 4 * 1024
"""Bytes per second a body must average once `THROUGHPUT_GRACE` seconds have passed."""
THROUGHPUT_GRACE = 10.0
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass
class _Attempt:
    """The state of one bundle fetch: endpoint, deadline and whether credentials were needed."""

    base: str
    repo: str
    deadline_at: float
    needed_credentials: bool = False
    transfer: Transfer = field(default_factory=lambda: Transfer(deadline_at=float("inf")))
    mirrored: bool = False

    @property
    def netloc(self) -> str:
        return urlsplit(self.base).netloc.lower()

    @property
    def plain_http(self) -> bool:
        return self.base.startswith("http://")


class _RegistryHttp:
    """HTTP for `RegistryClient`: the settings below are set by its constructor."""

    connect_timeout: float
    read_timeout: float
    deadline: float
    min_throughput: int
    throughput_grace: float
    _clock: Callable[[], float]
    _local: threading.local

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.trust_env = False
            adapter = GuardedAdapter()
            session.mount("https://", adapter)
            session.mount("http://", adapter)
            session.headers["User-Agent"] = "evidence-dashboard"
            self._local.session = session
        return session

    def _timeout(self, attempt: _Attempt, url: str) -> tuple[float, float]:
        remaining = attempt.deadline_at - self._clock()
        if remaining <= 0 or attempt.transfer.expired:
            raise self._deadline_error(url)
        return min(self.connect_timeout, remaining), min(self.read_timeout, remaining)

    def _deadline_error(self, url: str) -> BundleFetchError:
        """The whole fetch ran out of time: no verdict (exit 3), class `registry`, not cached."""
        return BundleFetchError(
            f"registry timed out (the fetch deadline of {self.deadline:g} s passed)",
            failure_class=FailureClass.REGISTRY,
            transient=True,
            location=Location(url),
            expected=f"the whole fetch within {self.deadline:g} s",
            hint="retry later, or raise --fetch-timeout; this says nothing about the evidence",
        )

    def _transport_error(
        self, attempt: _Attempt, url: str, exc: BaseException, during: str
    ) -> BundleFetchError:
        """A worded, classified transport failure; the library's own text goes to the log."""
        if attempt.transfer.expired:
            log.warning(
                "registry fetch %s: deadline passed %s (%s: %s)",
                url,
                during,
                type(exc).__name__,
                exc,
            )
            return self._deadline_error(url)
        reason = describe(exc)
        log.warning(
            "registry fetch %s failed %s: %s (%s: %s)", url, during, reason, type(exc).__name__, exc
        )
        return transient_error(reason, url=url)

    def _refused(self, attempt: _Attempt, url: str, exc: AddressRefused) -> BundleFetchError:
        host = f"{exc.host}:{exc.port}" if exc.port else exc.host
        log.warning(
            "registry fetch %s refused: %s resolves to %s (allow it with "
            "--allow-private-registry %s)",
            url,
            host,
            exc.address,
            host,
        )
        return PrivateAddressError(
            PRIVATE_ADDRESS_REASON,
            failure_class=FailureClass.REGISTRY,
            policy_excluded=True,
            location=Location(url),
            expected="a registry at a public address",
            found="a private, loopback, link-local or reserved address",
            hint="allow it with --allow-private-registry HOST, map it with --registry-mirror, "
            "or move the evidence to a public registry",
        )

    def _request(self, attempt: _Attempt, url: str, headers: dict[str, str]) -> requests.Response:
        """GET following at most 5 redirects, never downgrading to http, dropping auth off-host."""
        origin = urlsplit(url).netloc
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                response = self._session().get(
                    url,
                    headers=headers,
                    stream=True,
                    allow_redirects=False,
                    timeout=self._timeout(attempt, url),
                )
            except AddressRefused as exc:
                raise self._refused(attempt, url, exc) from None
            except requests.RequestException as exc:
                raise self._transport_error(attempt, url, exc, "before the answer") from None
            location = response.headers.get("Location")
            if response.status_code not in _REDIRECTS or not location:
                return response
            response.close()
            target = urljoin(url, location)
            scheme = urlsplit(target).scheme
            if scheme != "https" and not (scheme == "http" and attempt.plain_http):
                raise BundleFetchError(
                    "registry redirected to an insecure or unsupported URL",
                    failure_class=FailureClass.REGISTRY,
                    location=Location(url),
                    expected="an https redirect",
                    found=target,
                    hint="only --registry-mirror endpoints may use plain http",
                )
            if urlsplit(target).netloc != origin:
                headers = {k: v for k, v in headers.items() if k != "Authorization"}
            url = target
        raise BundleFetchError(
            "registry redirected too often",
            failure_class=FailureClass.REGISTRY,
            location=Location(url),
            expected=f"at most {MAX_REDIRECTS} redirects",
            hint="check the registry or mirror",
        )

    def _body(
        self,
        attempt: _Attempt,
        response: requests.Response,
        url: str,
        cap: int,
        cap_name: str,
        what: str,
    ) -> bytes:
        """The body, streamed under `cap`, the deadline and the minimum throughput; short
        bodies are transient faults."""
        declared = response.headers.get("Content-Length")
        expected = int(declared) if declared and declared.isdigit() else None
        if expected is not None and expected > cap:
            raise cap_error(what, cap_name, cap, where=url, found=f"Content-Length {expected}")
        if response.headers.get("Content-Encoding", "identity").lower() != "identity":
            expected = None  # the wire size of a compressed body: the cap counts decoded bytes
        chunks: list[bytes] = []
        total = 0
        started = self._clock()
        raw = response.raw
        try:
            while True:
                # read1: whatever one read brings, so the checks below run while bytes trickle.
                chunk = raw.read1(CHUNK, decode_content=True)
                if not chunk:
                    break
                total += len(chunk)
                if total > cap:
                    raise cap_error(what, cap_name, cap, where=url, found=f"more than {cap} bytes")
                chunks.append(chunk)
                self._timeout(attempt, url)
                self._check_throughput(url, total, self._clock() - started)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._transport_error(attempt, url, exc, f"reading {what}") from None
        if attempt.transfer.expired:
            raise self._deadline_error(url)
        if expected is not None and total != expected:
            raise transient_error(
                f"{what} was truncated", url=url, found=f"{total} of {expected} bytes"
            )
        return b"".join(chunks)

    def _check_throughput(self, url: str, total: int, elapsed: float) -> None:
        if elapsed > self.throughput_grace and total < self.min_throughput * elapsed:
            raise BundleFetchError(
                f"registry timed out (slower than {self.min_throughput} bytes/s)",
                failure_class=FailureClass.REGISTRY,
                transient=True,
                location=Location(url),
                expected=f"at least {self.min_throughput} bytes/s after "
                f"{self.throughput_grace:g} s",
                found=f"{total} bytes in {elapsed:.0f} s",
                hint="retry later",
            )
