"""Registry options checked at the command line: the credentials file, `--allow-private-registry`
and `--registry-mirror` values.

Credentials are read only from an explicit `--registry-auth` file; `load_credentials` reads the
container auth-file format (`auths.<host>.auth`, base64 `user:pass`, or username/password).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from generator import strictjson
from generator.errors import InputError, Location

from ._files import read_capped
from .transport import allowance_entry
from .types import BundleFetchError

Credentials = Mapping[str, tuple[str, str]]
"""Registry host (`host[:port]`) to (username, password)."""


AUTH_FILE_CAP = 1024 * 1024


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
