"""The registry client's configuration at its edges: auth files (explicit ones refuse what the
default one skips), credential entries (empty user, no colon, a secret holding colons), host
keys that differ by case or scheme, mirror URLs, and auth challenges."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from generator.bundle._registry_auth import _parse_challenge
from generator.bundle.registry import (
    check_mirror_url,
    default_auth_file,
    load_credentials,
)
from generator.errors import InputError


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _write(folder: Path, auths: Any) -> Path:
    path = folder / "config.json"
    path.write_text(json.dumps({"auths": auths}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("key", "host"),
    [
        ("ghcr.io", "ghcr.io"),
        ("GHCR.io", "ghcr.io"),
        ("https://index.docker.io/v1/", "index.docker.io"),
        ("registry.example:5000/path", "registry.example:5000"),
    ],
)
def test_an_auth_key_names_its_host_lowercased_without_scheme_or_path(
    tmp_path: Path, key: str, host: str
) -> None:
    path = _write(tmp_path, {key: {"auth": _b64("user:secret")}})
    assert load_credentials(path) == {host: ("user", "secret")}


@pytest.mark.parametrize(
    ("entry", "pair"),
    [
        ({"auth": _b64("user:se:cr:et")}, ("user", "se:cr:et")),
        ({"auth": _b64("user:")}, ("user", "")),
        ({"username": "user", "password": ""}, ("user", "")),
        ({"username": "user", "password": "pw", "auth": ""}, ("user", "pw")),
    ],
    ids=["colons-in-secret", "empty-secret", "username-password", "empty-auth-falls-back"],
)
def test_usable_credential_entries(tmp_path: Path, entry: Any, pair: tuple[str, str]) -> None:
    assert load_credentials(_write(tmp_path, {"ghcr.io": entry})) == {"ghcr.io": pair}


@pytest.mark.parametrize(
    "entry",
    [
        {"auth": _b64(":secret")},
        {"auth": _b64("usersecret")},
        {"auth": base64.b64encode(b"\xff:x").decode()},
        {"username": "", "password": "pw"},
        {"username": "user"},
        {"username": "user", "password": 1},
        ["user", "pw"],
    ],
    ids=[
        "no-user",
        "no-colon",
        "not-utf8",
        "empty-user",
        "no-password",
        "password-a-number",
        "a-list",
    ],
)
def test_unusable_credential_entries_are_refused_explicitly_and_skipped_by_default(
    tmp_path: Path, entry: Any
) -> None:
    path = _write(tmp_path, {"bad.io": entry, "ghcr.io": {"auth": _b64("user:secret")}})
    with pytest.raises(InputError, match="cannot be used") as caught:
        load_credentials(path)
    assert "auths.bad.io" in caught.value.found
    assert load_credentials(None, {"DOCKER_CONFIG": str(tmp_path)}) == {
        "ghcr.io": ("user", "secret")
    }


@pytest.mark.parametrize(
    "content",
    [b"not json", b'{"auths": []}', b"[1]", b"\xff\xfe"],
    ids=["not-json", "auths-a-list", "a-list", "not-utf8"],
)
def test_an_unusable_default_auth_file_gives_no_credentials(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "config.json").write_bytes(content)
    assert load_credentials(None, {"DOCKER_CONFIG": str(tmp_path)}) == {}
    with pytest.raises(InputError, match="cannot be used"):
        load_credentials(tmp_path / "config.json")


MIB = 1024 * 1024


def _padded_auth_file(folder: Path, size: int) -> Path:
    """A valid auth file of exactly `size` bytes (trailing spaces are JSON whitespace)."""
    path = _write(folder, {"ghcr.io": {"auth": _b64("user:secret")}})
    data = path.read_bytes()
    path.write_bytes(data + b" " * (size - len(data)))
    return path


def test_an_auth_file_larger_than_its_cap_is_refused_explicitly(tmp_path: Path) -> None:
    path = _padded_auth_file(tmp_path, MIB + 1)
    with pytest.raises(InputError, match="cannot be used") as caught:
        load_credentials(path)
    assert str(MIB) in str(caught.value.diagnostics())
    assert load_credentials(None, {"DOCKER_CONFIG": str(tmp_path)}) == {}


def test_an_auth_file_at_its_cap_is_read(tmp_path: Path) -> None:
    path = _padded_auth_file(tmp_path, MIB)
    assert load_credentials(path) == {"ghcr.io": ("user", "secret")}


def test_an_auth_entry_that_is_not_strict_base64_gives_no_credentials(tmp_path: Path) -> None:
    """Characters outside the base64 alphabet are an error, never skipped over: `u*ser` is
    not a spelling of `user`."""
    loose = _b64("user:secret")
    loose = loose[:2] + "*" + loose[2:]
    path = _write(tmp_path, {"bad.io": {"auth": loose}})
    with pytest.raises(InputError, match="cannot be used"):
        load_credentials(path)
    assert load_credentials(None, {"DOCKER_CONFIG": str(tmp_path)}) == {}


@pytest.mark.parametrize("value", ["", "host:port", "host:0", "host:65536", "[::1]:x"])
def test_an_unusable_private_registry_value_is_refused(value: str) -> None:
    from generator.bundle._registry_config import check_allowed_host

    with pytest.raises(InputError, match="--allow-private-registry value cannot be used"):
        check_allowed_host(value)


@pytest.mark.parametrize(
    ("value", "entry"),
    [("127.0.0.1:5000", ("127.0.0.1", 5000)), ("Mirror.LAN", ("mirror.lan", None))],
)
def test_a_usable_private_registry_value_is_host_and_port(
    value: str, entry: tuple[str, int | None]
) -> None:
    from generator.bundle._registry_config import check_allowed_host

    assert check_allowed_host(value) == entry


def test_the_default_auth_file_follows_docker_config(tmp_path: Path) -> None:
    assert default_auth_file({"DOCKER_CONFIG": str(tmp_path)}) == tmp_path / "config.json"
    assert default_auth_file({"DOCKER_CONFIG": ""}) == Path.home() / ".docker" / "config.json"
    assert default_auth_file({}) == Path.home() / ".docker" / "config.json"


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("https://mirror.example/ghcr/", "https://mirror.example/ghcr"),
        ("https://mirror.example//", "https://mirror.example"),
    ],
)
def test_a_mirror_url_is_kept_without_trailing_slashes(url: str, base: str) -> None:
    assert check_mirror_url("ghcr.io", url) == base


@pytest.mark.parametrize(
    "url",
    ["ftp://mirror.example", "mirror.example:5000", "http://", "https://mirror.example/?x=1"],
    ids=["ftp", "no-scheme", "no-host", "query"],
)
def test_a_mirror_url_that_is_not_plain_http_is_refused(url: str) -> None:
    with pytest.raises(InputError, match="--registry-mirror") as caught:
        check_mirror_url("ghcr.io", url)
    assert caught.value.found == url


@pytest.mark.parametrize(
    ("header", "scheme", "params"),
    [
        (
            'Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull"',
            "bearer",
            {
                "realm": "https://ghcr.io/token",
                "service": "ghcr.io",
                "scope": "repository:a/b:pull",
            },
        ),
        ('  BASIC Realm="x y"  ', "basic", {"realm": "x y"}),
        (
            "Bearer realm=https://r.example/t, service=svc",
            "bearer",
            {
                "realm": "https://r.example/t",
                "service": "svc",
            },
        ),
        ("Bearer", "bearer", {}),
    ],
    ids=["quoted", "case-and-space", "unquoted", "no-params"],
)
def test_a_challenge_is_read_case_insensitively(
    header: str, scheme: str, params: dict[str, str]
) -> None:
    assert _parse_challenge(header) == (scheme, params)
