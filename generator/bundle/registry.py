"""A small, read-only OCI distribution client over `requests`, built for untrusted registries.

It pulls a bundle by digest (manifest, single layer) and its Sigstore referrers (the OCI 1.1
referrers API, then the `sha256-<hex>` tag-schema fallback), checks every blob against its
digest, streams every body under a byte cap, and bounds each fetch with connect/read timeouts, a
total deadline enforced while bytes trickle in (see `transport`) and a minimum throughput. Auth is
anonymous bearer tokens from `WWW-Authenticate` (ghcr.io style); read-only credentials are read
only from an explicit `--registry-auth` file, used only after an anonymous 401/403, and only with
the registry host they were given for (never after a redirect to another host, never to a token
realm on another host, never over plain http except to a loopback mirror).
`--registry-mirror HOST=URL` fetches what names HOST from URL (plain http is allowed only for
mirrors). Hosts that resolve to non-public addresses are refused unless they are a mirror's
endpoint or named by `--allow-private-registry`.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import requests
import urllib3

from generator import strictjson
from generator.errors import InputError, Location
from generator.model import BundleRef, FailureClass

from .layout import read_capped
from .oci import (
    INDEX_TYPE,
    MANIFEST_ACCEPT,
    SIGSTORE_TYPE,
    RawBundle,
    RawReferrer,
    bundle_layer,
    check_digest,
    index_candidates,
    materialize,
    referrer_layer,
    referrers_tag,
)
from .refs import Reference, check_policy, parse_reference
from .transport import (
    PRIVATE_ADDRESS_REASON,
    AddressRefused,
    GuardedAdapter,
    HostAllowance,
    Transfer,
    allowance_entry,
    describe,
    transfer_scope,
)
from .types import (
    BundleFetchError,
    Limits,
    Materialized,
    PrivateAddressError,
    cap_error,
    status_error,
    transient_error,
)

log = logging.getLogger(__name__)

Credentials = Mapping[str, tuple[str, str]]
"""Registry host (`host[:port]`) to (username, password)."""

AUTH_FILE_CAP = 1024 * 1024
TOKEN_CAP = 1024 * 1024
CHUNK = 64 * 1024
MAX_REDIRECTS = 5
DEFAULT_FETCH_TIMEOUT = 120.0
"""Seconds one bundle fetch (every request, connect + headers + whole body) may take."""
MIN_THROUGHPUT = 4 * 1024
"""Bytes per second a body must average once `THROUGHPUT_GRACE` seconds have passed."""
THROUGHPUT_GRACE = 10.0
_REDIRECTS = (301, 302, 303, 307, 308)
_CHALLENGE_PARAM = re.compile(r'(\w+)\s*=\s*(?:"([^"]*)"|([^\s,]+))')


# --------------------------------------------------------------------------- configuration


def _auth_host(key: str) -> str:
    """`https://index.docker.io/v1/` -> `index.docker.io`; `ghcr.io` stays."""
    if "://" in key:
        key = urlsplit(key).netloc
    return key.split("/", 1)[0].lower()


def default_auth_file(environ: Mapping[str, str] | None = None) -> Path:
    """`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json` (the client never reads it on
    its own: credentials come only from an explicit `--registry-auth` file)."""
    env = os.environ if environ is None else environ
    folder = env.get("DOCKER_CONFIG")
    return (Path(folder) if folder else Path.home() / ".docker") / "config.json"


def load_credentials(
    auth_file: Path | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, tuple[str, str]]:
    """Read `auths.<host>.auth` (base64 `user:pass`) from a container auth file.

    An explicit `auth_file` that is missing or malformed is an `InputError`; the default file
    is optional, and its unusable entries are skipped.
    """
    explicit = auth_file is not None
    path = auth_file if auth_file is not None else default_auth_file(environ)

    def bad(found: str) -> InputError:
        return InputError(
            "registry auth file cannot be used",
            location=Location(str(path)),
            expected='JSON {"auths": {"<host>": {"auth": "<base64 user:pass>"}}}',
            found=found,
            hint="fix the file or drop --registry-auth",
        )

    try:
        data = read_capped(path, AUTH_FILE_CAP, "auth_file", "registry auth file")
    except BundleFetchError as exc:
        if explicit:
            raise bad(exc.message) from exc
        return {}
    if data is None:
        if explicit:
            raise bad("no such file")
        return {}
    try:
        body = strictjson.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        if explicit:
            raise bad(f"invalid JSON: {exc}") from exc
        return {}
    auths = body.get("auths") if isinstance(body, dict) else None
    if not isinstance(auths, dict):
        if explicit:
            raise bad("no `auths` object")
        return {}
    result: dict[str, tuple[str, str]] = {}
    for key, entry in auths.items():
        pair = _entry_credentials(entry)
        if pair is None:
            if explicit:
                raise bad(f"auths.{key} has no usable auth")
            continue
        result[_auth_host(str(key))] = pair
    return result


def _entry_credentials(entry: Any) -> tuple[str, str] | None:
    if not isinstance(entry, dict):
        return None
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            name, sep, secret = base64.b64decode(auth, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return (name, secret) if sep and name else None
    user, password = entry.get("username"), entry.get("password")
    if isinstance(user, str) and user and isinstance(password, str):
        return user, password
    return None


def check_allowed_host(value: str) -> tuple[str, int | None]:
    """An `--allow-private-registry` value as (host, port or None); `InputError` if unusable."""
    try:
        return allowance_entry(value)
    except ValueError as exc:
        raise InputError(
            "--allow-private-registry value cannot be used",
            location=Location(value),
            expected="HOST or HOST:PORT (e.g. 127.0.0.1:5000)",
            found=value,
            hint=str(exc),
        ) from exc


def check_mirror_url(host: str, url: str) -> str:
    """A mirror base URL without trailing slash; `InputError` unless http(s) with a host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
        raise InputError(
            "--registry-mirror URL cannot be used",
            location=Location(host),
            expected="http://host[:port][/path] or https://...",
            found=url,
            hint="for example --registry-mirror ghcr.io=http://127.0.0.1:5000",
        )
    return url.rstrip("/")


# --------------------------------------------------------------------------- one fetch


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


@dataclass(frozen=True)
class _Auth:
    header: str
    credentialed: bool


def _parse_challenge(value: str) -> tuple[str, dict[str, str]]:
    scheme, _, rest = value.strip().partition(" ")
    params = {
        m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
        for m in _CHALLENGE_PARAM.finditer(rest)
    }
    return scheme.lower(), params


class RegistryClient:
    """A `BundleSource` that pulls from OCI registries (or their mirrors), read-only.

    `trusted_prefixes`, when set, limits fetches to `<registry>/<repo>` names under one of them.
    `allow_private` names hosts (`HOST` or `HOST:PORT`) that may resolve to non-public addresses;
    a mirror's own endpoint always may. `deadline` bounds each bundle fetch (`--fetch-timeout`).
    Credentials come from `credentials` or the explicit `auth_file`, never from a default file
    (`environ` is accepted for older callers and ignored).
    """

    def __init__(
        self,
        *,
        mirrors: Mapping[str, str] | None = None,
        trusted_prefixes: tuple[str, ...] | None = None,
        auth_file: Path | None = None,
        credentials: Credentials | None = None,
        limits: Limits | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        deadline: float = DEFAULT_FETCH_TIMEOUT,
        min_throughput: int = MIN_THROUGHPUT,
        throughput_grace: float = THROUGHPUT_GRACE,
        allow_private: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        del environ  # credentials are never read from a default location
        self.mirrors = {h.lower(): check_mirror_url(h, u) for h, u in (mirrors or {}).items()}
        self.trusted_prefixes = tuple(trusted_prefixes) if trusted_prefixes is not None else None
        if credentials is not None:
            self.credentials: Credentials = dict(credentials)
        else:
            self.credentials = load_credentials(auth_file) if auth_file is not None else {}
        self.allowance = HostAllowance(frozenset(check_allowed_host(h) for h in allow_private))
        self.min_throughput = min_throughput
        self.throughput_grace = throughput_grace
        self.limits = limits or Limits()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.deadline = deadline
        self._clock = clock
        self._local = threading.local()
        self._tokens: dict[tuple[str, str], _Auth] = {}
        self._challenges: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ public

    def fetch(self, ref: BundleRef) -> Materialized:
        """Pull, check and unpack the bundle `ref.digest` names, with its signatures."""
        raw = self.fetch_raw(ref)
        return materialize(raw, origin="registry", limits=self.limits, where=ref.pinned_ref)

    def fetch_raw(self, ref: BundleRef) -> RawBundle:
        """The digest-checked manifest, layer and Sigstore referrers, not yet unpacked."""
        reference = parse_reference(ref)
        check_policy(reference, self.trusted_prefixes)
        base = self.base_url(reference.registry)
        mirrored = reference.registry.lower() in self.mirrors
        allowance = self.allowance
        if mirrored:
            endpoint = urlsplit(base)
            port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
            allowance = allowance.with_entries([((endpoint.hostname or "").lower(), port)])
        attempt = _Attempt(
            base=base,
            repo=reference.repository,
            deadline_at=self._clock() + self.deadline,
            mirrored=mirrored,
            transfer=Transfer(deadline_at=time.monotonic() + self.deadline, allowance=allowance),
        )
        with transfer_scope(attempt.transfer):
            return self._fetch_raw(ref, reference, attempt)

    def _fetch_raw(self, ref: BundleRef, reference: Reference, attempt: _Attempt) -> RawBundle:
        limits = self.limits
        manifest = self._get(
            attempt,
            f"manifests/{reference.digest}",
            accept=MANIFEST_ACCEPT,
            cap=limits.manifest_json,
            cap_name="manifest_json",
            what="the bundle manifest",
        )
        assert manifest is not None
        where = ref.pinned_ref
        check_digest(manifest, reference.digest, "bundle manifest", where)
        layer_descriptor = bundle_layer(manifest, limits, where)
        layer = self._get(
            attempt,
            f"blobs/{layer_descriptor.digest}",
            accept="*/*",
            cap=limits.compressed_layer,
            cap_name="compressed_layer",
            what="the bundle layer",
        )
        assert layer is not None
        check_digest(layer, layer_descriptor.digest, "bundle layer", where)
        referrers = self._referrers(attempt, reference)
        return RawBundle(
            manifest=manifest,
            layer=layer,
            referrers=referrers,
            needed_credentials=attempt.needed_credentials,
        )

    def base_url(self, registry: str) -> str:
        """The mirror URL for `registry`, else `https://<registry>`."""
        return self.mirrors.get(registry.lower(), f"https://{registry}")

    # ------------------------------------------------------------------ referrers

    def _referrers(self, attempt: _Attempt, reference: Reference) -> tuple[RawReferrer, ...]:
        limits = self.limits
        api = f"referrers/{reference.digest}?artifactType={quote(SIGSTORE_TYPE, safe='')}"
        index = self._get(
            attempt,
            api,
            accept=INDEX_TYPE,
            cap=limits.referrer_manifest,
            cap_name="referrer_manifest",
            what="the referrers list",
            missing_ok=True,
        )
        if index is None:
            index = self._get(
                attempt,
                f"manifests/{referrers_tag(reference.digest)}",
                accept=INDEX_TYPE,
                cap=limits.referrer_manifest,
                cap_name="referrer_manifest",
                what="the referrers tag",
                missing_ok=True,
            )
        if index is None:
            return ()
        where = f"{reference.name} referrers of {reference.digest}"
        found: list[RawReferrer] = []
        for candidate in index_candidates(index, limits, where, FailureClass.REGISTRY):
            manifest = self._get(
                attempt,
                f"manifests/{candidate.digest}",
                accept=MANIFEST_ACCEPT,
                cap=limits.referrer_manifest,
                cap_name="referrer_manifest",
                what="a signature referrer manifest",
            )
            assert manifest is not None
            check_digest(manifest, candidate.digest, "signature referrer manifest", where)
            layer = referrer_layer(manifest, reference.digest, limits, where)
            if layer is None:
                continue
            blob = self._get(
                attempt,
                f"blobs/{layer.digest}",
                accept="*/*",
                cap=limits.sigstore_bundle,
                cap_name="sigstore_bundle",
                what="a signature referrer layer",
            )
            assert blob is not None
            check_digest(blob, layer.digest, "signature referrer layer", where)
            found.append(RawReferrer(manifest=manifest, layer=blob))
        return tuple(found)

    # ------------------------------------------------------------------ HTTP

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

    def _get(
        self,
        attempt: _Attempt,
        path: str,
        *,
        accept: str,
        cap: int,
        cap_name: str,
        what: str,
        missing_ok: bool = False,
    ) -> bytes | None:
        """GET `/v2/<repo>/<path>`; the body under `cap`, or None for a 404 when `missing_ok`."""
        url = f"{attempt.base}/v2/{attempt.repo}/{path}"
        response = self._authorized(attempt, url, accept)
        try:
            status = response.status_code
            if status == 404 and missing_ok:
                return None
            if status != 200:
                raise status_error(status, what, url=url)
            return self._body(attempt, response, url, cap, cap_name, what)
        finally:
            response.close()

    def _authorized(self, attempt: _Attempt, url: str, accept: str) -> requests.Response:
        """GET with the cached token; on 401/403 try an anonymous token, then credentials.

        A challenge is remembered for the host that issued it; credentials are offered only when
        that host is the registry they were given for (`_may_send_credentials`).
        """
        key = (attempt.base, attempt.repo)
        with self._lock:
            auth = self._tokens.get(key)
        response = self._send(attempt, url, accept, auth)
        if response.status_code not in (401, 403):
            if auth is not None and auth.credentialed:
                attempt.needed_credentials = True
            return response
        challenge = self._challenge(attempt, response)
        if (
            response.status_code == 401
            and challenge[0] == "bearer"
            and (auth is None or not auth.credentialed)
        ):
            token = self._token(attempt, challenge[1], None)
            if token is not None:
                response.close()
                auth = _Auth(token, credentialed=False)
                response = self._send(attempt, url, accept, auth)
        if response.status_code in (401, 403) and self._may_send_credentials(attempt, response):
            creds = self.credentials.get(attempt.netloc)
            if creds is not None:
                challenge = self._challenge(attempt, response)
                credentialed = self._credentialed_auth(attempt, challenge, creds)
                if credentialed is not None:
                    response.close()
                    auth = credentialed
                    attempt.needed_credentials = True
                    response = self._send(attempt, url, accept, auth)
        if response.status_code not in (401, 403) and auth is not None:
            with self._lock:
                self._tokens[key] = auth
        return response

    def _may_send_credentials(self, attempt: _Attempt, response: requests.Response) -> bool:
        """Only the registry host itself, over https or to a loopback mirror, gets credentials."""
        if _netloc(response.url) != attempt.netloc:
            return False  # the refusal came from a host we were redirected to
        return not attempt.plain_http or (attempt.mirrored and _is_loopback(attempt.base))

    def _challenge(
        self, attempt: _Attempt, response: requests.Response
    ) -> tuple[str, dict[str, str]]:
        """The challenge `response` carries, else the last one its host issued for this repo."""
        header = response.headers.get("WWW-Authenticate")
        key = (_netloc(response.url), attempt.repo)
        with self._lock:
            if header:
                self._challenges[key] = _parse_challenge(header)
            return self._challenges.get(key, ("", {}))

    def _credentialed_auth(
        self, attempt: _Attempt, challenge: tuple[str, dict[str, str]], creds: tuple[str, str]
    ) -> _Auth | None:
        basic = "Basic " + base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode()
        if challenge[0] == "bearer":
            if _netloc(challenge[1].get("realm", "")) != attempt.netloc:
                log.warning(
                    "not sending credentials for %s to the token realm %r on another host",
                    attempt.netloc,
                    challenge[1].get("realm", ""),
                )
                return None
            token = self._token(attempt, challenge[1], basic)
            return _Auth(token, credentialed=True) if token is not None else None
        return _Auth(basic, credentialed=True)

    def _token(self, attempt: _Attempt, params: Mapping[str, str], basic: str | None) -> str | None:
        """A bearer token from the challenge's realm (anonymous unless `basic`); None if refused."""
        realm = params.get("realm", "")
        parts = urlsplit(realm)
        if (
            parts.scheme not in ("https", "http")
            or not parts.netloc
            or (parts.scheme == "http" and not attempt.plain_http)
        ):
            raise BundleFetchError(
                "registry asked for a token from an unusable realm",
                failure_class=FailureClass.REGISTRY,
                location=Location(attempt.base),
                expected="an https token realm",
                found=repr(realm),
                hint="check the registry, or map it with --registry-mirror",
            )
        query = {"scope": params.get("scope") or f"repository:{attempt.repo}:pull"}
        if params.get("service"):
            query["service"] = params["service"]
        sep = "&" if parts.query else "?"
        url = realm + sep + "&".join(f"{k}={quote(v, safe=':')}" for k, v in sorted(query.items()))
        headers = {"Accept": "application/json"}
        if basic:
            headers["Authorization"] = basic
        response = self._request(attempt, url, headers)
        try:
            if response.status_code in (401, 403):
                return None
            if response.status_code != 200:
                raise status_error(response.status_code, "a pull token", url=realm)
            body = self._body(attempt, response, realm, TOKEN_CAP, "token", "a pull token")
        finally:
            response.close()
        try:
            value = strictjson.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            raise BundleFetchError(
                "token endpoint returned junk",
                failure_class=FailureClass.REGISTRY,
                location=Location(realm),
                expected="JSON with `token`",
                found=f"{type(exc).__name__}: {exc}",
                hint="the registry's token service answered something unreadable; retry later "
                "or check the registry",
            ) from exc
        token = value.get("token") or value.get("access_token") if isinstance(value, dict) else None
        if not isinstance(token, str) or not token:
            return None
        return f"Bearer {token}"

    def _send(
        self, attempt: _Attempt, url: str, accept: str, auth: _Auth | None
    ) -> requests.Response:
        headers = {"Accept": accept}
        if auth is not None:
            headers["Authorization"] = auth.header
        return self._request(attempt, url, headers)

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


def _netloc(url: str) -> str:
    return urlsplit(url).netloc.lower()


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
