"""The docker-registry fixture survives a port taken between picking it and binding it."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.bundle import conftest as bundle_conftest

pytestmark = pytest.mark.registry


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port held by a listener that accepts connections and never answers."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(8)
        yield int(holder.getsockname()[1])


def test_a_port_taken_in_between_is_retried(
    tmp_path: Path, taken_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = shutil.which("docker-registry")
    if binary is None:
        pytest.skip("docker-registry binary is not installed")
    picks: list[int] = []
    real_free_port = bundle_conftest._free_port

    def first_the_taken_one() -> int:
        picks.append(taken_port if not picks else real_free_port())
        return picks[-1]

    monkeypatch.setattr(bundle_conftest, "_free_port", first_the_taken_one)
    process, base = bundle_conftest._start_registry(binary, tmp_path)
    try:
        assert len(picks) == 2 and picks[0] == taken_port
        assert base == f"http://127.0.0.1:{picks[1]}"
        assert requests.get(f"{base}/v2/", timeout=5).status_code == 200
    finally:
        bundle_conftest._stop(process)
    assert process.returncode is not None


def test_every_port_taken_fails_with_the_ports_tried(
    tmp_path: Path, taken_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = shutil.which("docker-registry")
    if binary is None:
        pytest.skip("docker-registry binary is not installed")
    monkeypatch.setattr(bundle_conftest, "_free_port", lambda: taken_port)
    with pytest.raises(pytest.fail.Exception, match="every port it tried taken") as failed:
        bundle_conftest._start_registry(binary, tmp_path)
    assert str(taken_port) in str(failed.value)
