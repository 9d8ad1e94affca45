"""Trust roots: embedded production/staging, TUF refresh with fallback, explicit files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from generator.errors import InputError, UsageError
from generator.verify.trust import PUBLIC_LOG_SEARCH, embedded_root_bytes, load_trust


def test_offline_production_uses_the_embedded_root() -> None:
    trust = load_trust(offline=True)
    assert trust.production and not trust.refreshed
    assert trust.digest == hashlib.sha256(embedded_root_bytes("production")).hexdigest()
    assert trust.public_log_base == PUBLIC_LOG_SEARCH
    assert trust.log_url(101487427) == f"{PUBLIC_LOG_SEARCH}101487427"
    assert trust.log_url(5, rekor_v2=True) is None
    assert trust.log_url(None) is None


def test_offline_never_asks_the_refresher() -> None:
    def refresh(url: str) -> bytes:
        raise AssertionError("offline must not refresh")

    assert not load_trust(offline=True, refresh=refresh).refreshed


def test_staging_has_no_public_log_link() -> None:
    trust = load_trust(mode="staging", offline=True)
    assert not trust.production and trust.public_log_base is None
    assert trust.log_url(7) is None
    assert trust.digest != load_trust(offline=True).digest


def test_refresh_success_marks_refreshed() -> None:
    data = embedded_root_bytes("production")
    seen: list[str] = []

    def refresh(url: str) -> bytes:
        seen.append(url)
        return data

    trust = load_trust(refresh=refresh)
    assert trust.refreshed and seen == ["https://tuf-repo-cdn.sigstore.dev"]


def test_refresh_failure_falls_back_to_embedded() -> None:
    def refresh(url: str) -> bytes:
        raise OSError("no network")

    trust = load_trust(refresh=refresh)
    assert not trust.refreshed
    assert trust.digest == hashlib.sha256(embedded_root_bytes("production")).hexdigest()


def test_default_refresh_fails_closed_to_embedded_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    trust = load_trust()
    assert not trust.refreshed


def test_root_file_bare_and_client_trust_config(tmp_path: Path) -> None:
    root = embedded_root_bytes("staging")
    bare = tmp_path / "trusted_root.json"
    bare.write_bytes(root)
    config = tmp_path / "trust_config.json"
    config.write_text(
        json.dumps(
            {
                "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
                "trustedRoot": json.loads(root),
                "signingConfig": {
                    "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json"
                },
            }
        )
    )
    for path in (bare, config):
        trust = load_trust(root_file=path)
        assert not trust.production and not trust.refreshed and trust.public_log_base is None
        assert trust.digest == hashlib.sha256(path.read_bytes()).hexdigest()
        assert trust.name == path.name


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        json.dumps({"mediaType": "application/vnd.dev.sigstore.trustedroot.v0.2+json"}).encode(),
        json.dumps(
            {"mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json"}
        ).encode(),
    ],
    ids=["not-json", "wrong-media-type", "config-without-root"],
)
def test_bad_root_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "root.json"
    path.write_bytes(content)
    with pytest.raises(InputError):
        load_trust(root_file=path)


def test_missing_root_file(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        load_trust(root_file=tmp_path / "absent.json")


def test_unknown_mode() -> None:
    with pytest.raises(UsageError):
        load_trust(mode="public-good", offline=True)
