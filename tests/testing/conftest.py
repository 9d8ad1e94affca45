"""Shared fixtures for the test-authority and bundle-factory tests: an offline socket guard, one
sharded authority, its trusted root on disk and one real sigstore Verifier over it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from generator.model import SignerIdentity
from generator.testing.authority import TestAuthority

SHARD = 100_000_000
SIGNED_AT = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)
EMAIL = SignerIdentity("https://github.com/login/oauth", "alice@example.com")
WORKFLOW = SignerIdentity(
    "https://token.actions.githubusercontent.com",
    "https://github.com/acme/evidence/.github/workflows/publish.yml@refs/tags/v1",
)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any socket connection attempt fails loudly: these tests are offline."""

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("network access attempted in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(scope="module")
def authority() -> TestAuthority:
    a = TestAuthority("tests-testing", shard_offset=SHARD)
    a.add_filler_entries(5)
    return a


@pytest.fixture(scope="module")
def root_file(authority: TestAuthority, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("root") / "trusted_root.json"
    path.write_bytes(authority.trusted_root_json())
    return path


@pytest.fixture(scope="module")
def verifier(root_file: Path) -> Iterator[Any]:
    from sigstore.models import TrustedRoot
    from sigstore.verify import Verifier

    yield Verifier(trusted_root=TrustedRoot.from_file(str(root_file)))
