"""Fetch files of a published site over https, under the bundle client's guards and hard bounds.

`verify-site URL` and `build --previous URL` read a site someone else serves: it may be slow,
huge, redirect elsewhere or drop the connection. `SiteFetcher` talks to it through the same
transport as bundle fetches (`generator.bundle.transport`: the address guard refuses loopback,
private and other non-public addresses unless allowed, and the watchdog cuts the sockets once
the whole fetch's deadline has passed) and adds what a site needs:

- one host: only `https://` (plain http only to an allowed non-public host, for tests), and a
  redirect to another host, scheme or port is refused;
- bounds: at most `max_files` requests, `max_file_bytes` per body (or less, when the caller
  knows the size it expects), `max_total_bytes` over the whole fetch, `deadline` seconds in all;
- `Accept-Encoding: identity`, so the bytes are the file's bytes (a compressed body is still
  decoded, under the same caps, should a server insist).

Failures are `SiteFetchError` (no verdict, exit 3), worded by the tool (`transport.describe`);
a body above its cap is `SiteTooLarge`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import requests
import urllib3

from generator.bundle.transport import (
    AddressRefused,
    GuardedAdapter,
    HostAllowance,
    Transfer,
    allowance_entry,
    describe,
    transfer_scope,
)
from generator.errors import EvidenceDashError, Location, UsageError
from generator.siteurl import is_site_url

__all__ = [
    "FetchLimits",
    "SiteFetchError",
    "SiteFetcher",
    "SiteTooLarge",
    "is_site_url",
]

MiB = 1024 * 1024
CHUNK = 64 * 1024
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class FetchLimits:
    """Bounds on one whole site fetch (every request of it)."""

    max_files: int = 50_000
    """Requests in all (files, probes of unlisted paths, redirects)."""
    max_file_bytes: int = 512 * MiB
    """Bytes of one body."""
    max_total_bytes: int = 4096 * MiB
    """Bytes of every body together."""
    deadline: float = 900.0
    """Seconds for the whole fetch (connect, headers and every body)."""
    request_timeout: float = 30.0
    """Seconds one connect or one read may block."""


class SiteFetchError(EvidenceDashError):
    """The site could not be read (network, refusal, bounds): no verdict."""

    exit_code = 3


class SiteTooLarge(SiteFetchError):
    """A body went past its cap (the caller's expected size, or the per-file bound)."""

    def __init__(self, path: str, cap: int, **kwargs: Any) -> None:
        super().__init__(f"{path} is larger than {cap} bytes", **kwargs)
        self.path = path
        self.cap = cap


class SiteFetcher:
    """Read files of the site at `base_url` (a folder URL), one bounded transfer in all.

    `ca_bundle` is a PEM file of certificate authorities to trust instead of the system's
    (a site behind a private CA; the tests' own CA). `allow_private` names hosts
    (`HOST[:PORT]`) that may resolve to loopback, private or other non-public addresses.
    Use as a context manager: the deadline runs from `__enter__`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        ca_bundle: Path | None = None,
        allow_private: Iterable[str] = (),
        limits: FetchLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parts = urlsplit(base_url)
        try:
            allowance = HostAllowance(frozenset(allowance_entry(h) for h in allow_private))
        except ValueError as exc:
            raise UsageError(
                "--allow-private-site cannot be used",
                expected="HOST or HOST:PORT",
                found=", ".join(allow_private),
                hint="for example --allow-private-site 127.0.0.1:8443",
            ) from exc
        host = (parts.hostname or "").lower()
        port = parts.port or (443 if parts.scheme == "https" else 80)
        private_ok = allowance.allows(host, port)
        if (
            parts.scheme not in ("https", "http")
            or not host
            or parts.query
            or parts.fragment
            or (parts.scheme == "http" and not private_ok)
        ):
            raise UsageError(
                "the site address cannot be used",
                expected="https://host[:port]/path/ (plain http only for a host named by "
                "--allow-private-site)",
                found=base_url,
                hint="pass the address the site is published at, or a local folder",
            )
        self.base = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}/"
        self.origin = (parts.scheme, parts.netloc.lower())
        self.allowance = allowance
        self.ca_bundle = ca_bundle
        self.limits = limits if limits is not None else FetchLimits()
        self._clock = clock
        self._session: requests.Session | None = None
        self._transfer: Transfer | None = None
        self._deadline_at = float("inf")
        self.requests = 0
        self.bytes = 0

    # ------------------------------------------------------------------ scope

    def __enter__(self) -> SiteFetcher:
        session = requests.Session()
        session.trust_env = False  # no proxy, netrc or CA bundle from the environment
        adapter = GuardedAdapter()
        session.mount("https://", adapter)
        session.mount("http://", adapter)
        session.headers["User-Agent"] = "evidence-dashboard"
        session.headers["Accept-Encoding"] = "identity"
        self._session = session
        self._deadline_at = self._clock() + self.limits.deadline
        self._transfer = Transfer(
            deadline_at=time.monotonic() + self.limits.deadline, allowance=self.allowance
        )
        self._scope = transfer_scope(self._transfer)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._scope.__exit__(None, None, None)
        if self._session is not None:
            self._session.close()

    # ------------------------------------------------------------------ public

    def url(self, path: str) -> str:
        """The address of a site path (each segment percent-encoded)."""
        return self.base + quote(path, safe="/")

    def get(self, path: str, *, cap: int | None = None) -> bytes | None:
        """The body of `path`, or None when the site answers 404 or 410.

        `cap` (at most the per-file bound) is the most bytes accepted; one more is
        `SiteTooLarge`. Any other answer or failure is `SiteFetchError`."""
        limit = self.limits.max_file_bytes if cap is None else min(cap, self.limits.max_file_bytes)
        url = self.url(path)
        response = self._request(url)
        try:
            if response.status_code in (404, 410):
                return None
            if response.status_code != 200:
                raise SiteFetchError(
                    f"the site answered HTTP {response.status_code}",
                    location=Location(url),
                    expected="200, or 404 for a file that is not there",
                    found=str(response.status_code),
                    hint="check the address, or retry later",
                )
            return self._body(response, url, path, limit)
        finally:
            response.close()

    @contextmanager
    def _guarded(self, url: str, during: str) -> Iterator[None]:
        try:
            yield
        except AddressRefused:
            raise SiteFetchError(
                "the site's host resolves to a private, loopback or reserved address",
                location=Location(url),
                expected="a site at a public address",
                found="a non-public address",
                hint="allow it with --allow-private-site HOST[:PORT] if you mean it",
            ) from None
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if self._transfer is not None and self._transfer.expired:
                raise self._deadline(url) from None
            raise SiteFetchError(
                f"the site could not be read: {describe(exc)} {during}",
                location=Location(url),
                expected="a complete answer",
                found=describe(exc),
                hint="retry later; this says nothing about the site's content",
            ) from None

    def _deadline(self, url: str) -> SiteFetchError:
        return SiteFetchError(
            f"the site fetch ran out of time (the deadline of {self.limits.deadline:g} s passed)",
            location=Location(url),
            expected=f"the whole site within {self.limits.deadline:g} s",
            hint="retry later; this says nothing about the site's content",
        )

    def _timeout(self, url: str) -> tuple[float, float]:
        remaining = self._deadline_at - self._clock()
        if remaining <= 0 or (self._transfer is not None and self._transfer.expired):
            raise self._deadline(url)
        step = min(self.limits.request_timeout, remaining)
        return step, step

    def _count_request(self, url: str) -> None:
        self.requests += 1
        if self.requests > self.limits.max_files:
            raise SiteFetchError(
                f"the site needs more than {self.limits.max_files} requests",
                location=Location(url),
                expected=f"at most {self.limits.max_files} files",
                hint="a site this large is not one this tool checks over the network; "
                "download it and pass the folder",
            )

    def _request(self, url: str) -> requests.Response:
        """GET `url`, following at most 5 redirects within the same scheme, host and port."""
        assert self._session is not None, "use SiteFetcher as a context manager"
        for _hop in range(MAX_REDIRECTS + 1):
            self._count_request(url)
            with self._guarded(url, "before the answer"):
                response = self._session.get(
                    url,
                    stream=True,
                    allow_redirects=False,
                    timeout=self._timeout(url),
                    verify=str(self.ca_bundle) if self.ca_bundle is not None else True,
                )
            location = response.headers.get("Location")
            if response.status_code not in _REDIRECTS or not location:
                return response
            response.close()
            target = urljoin(url, location)
            parts = urlsplit(target)
            if (parts.scheme, parts.netloc.lower()) != self.origin:
                raise SiteFetchError(
                    "the site redirected to another host",
                    location=Location(url),
                    expected=f"files served by {self.origin[0]}://{self.origin[1]}",
                    found=target,
                    hint="pass the address the site is really served from",
                )
            url = target
        raise SiteFetchError(
            "the site redirected too often",
            location=Location(url),
            expected=f"at most {MAX_REDIRECTS} redirects",
            hint="check the address",
        )

    def _body(self, response: requests.Response, url: str, path: str, cap: int) -> bytes:
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise SiteTooLarge(
                path, cap, location=Location(url), found=f"Content-Length {declared}"
            )
        chunks: list[bytes] = []
        size = 0
        with self._guarded(url, "while reading the body"):
            while True:
                self._timeout(url)
                chunk = response.raw.read(CHUNK, decode_content=True)
                if not chunk:
                    break
                size += len(chunk)
                self.bytes += len(chunk)
                if size > cap:
                    raise SiteTooLarge(path, cap, location=Location(url), found=f"{size}+ bytes")
                if self.bytes > self.limits.max_total_bytes:
                    raise SiteFetchError(
                        f"the site is larger than {self.limits.max_total_bytes} bytes in all",
                        location=Location(url),
                        expected=f"at most {self.limits.max_total_bytes} bytes",
                        hint="download it and pass the folder",
                    )
                chunks.append(chunk)
        if self._transfer is not None and self._transfer.expired:
            raise self._deadline(url)
        if declared and declared.isdigit() and size < int(declared):
            raise SiteFetchError(
                "the site closed the connection before the whole file was sent",
                location=Location(url),
                expected=f"{declared} bytes",
                found=f"{size} bytes",
                hint="retry later; this says nothing about the site's content",
            )
        return b"".join(chunks)
