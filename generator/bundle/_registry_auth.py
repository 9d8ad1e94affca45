"""The registry client's authorization: anonymous bearer tokens, then credentials, host-bound.

A 401/403 first earns an anonymous token from the challenge's realm; credentials are offered only
afterwards, only to the registry host they were given for, never over plain http except to a
loopback mirror, and never to a token realm on another host. Tokens are cached per repository.
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import requests

from generator import strictjson
from generator.errors import Location
from generator.model import FailureClass

from ._registry_config import Credentials
from ._registry_http import _Attempt, _RegistryHttp
from .types import BundleFetchError, status_error

log = logging.getLogger("generator.bundle.registry")
"""The registry client's one logger, whichever module of it logs."""

TOKEN_CAP = 1024 * 1024
_CHALLENGE_PARAM = re.compile(r'(\w+)\s*=\s*(?:"([^"]*)"|([^\s,]+))')


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


class _RegistryAuth(_RegistryHttp):
    """Authorization for `RegistryClient`: the state below is set by its constructor."""

    credentials: Credentials
    _tokens: dict[tuple[str, str], _Auth]
    _challenges: dict[tuple[str, str], tuple[str, dict[str, str]]]
    _lock: threading.Lock

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
