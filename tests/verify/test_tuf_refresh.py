"""The production refresh path fails closed: real TUF repositories on 127.0.0.1, the real TUF
client through sigstore's `TrustUpdater` (`tuf_refresh`), and `load_trust`'s decision.

A TUF security error (expired metadata, a rollback, unsigned metadata, a wrong target hash or
length) stops the build with `InputError` (exit 2); a repository that cannot be reached falls
back to the wheel's root and says why (`Trust.fallback`, shown on every page). The error types
are also driven straight through the adapter seam, wrapped the way sigstore wraps them.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from securesystemslib.signer import CryptoSigner, Signer
from tuf.api import exceptions as tuf_errors
from tuf.api.metadata import (
    Metadata,
    MetaFile,
    Root,
    Snapshot,
    TargetFile,
    Targets,
    Timestamp,
)
from urllib3 import exceptions as urllib3_errors

from generator.errors import InputError
from generator.testing.authority import TestAuthority
from generator.verify.trust import (
    PRODUCTION_TUF_URL,
    embedded_root_bytes,
    load_trust,
    tuf_refresh,
)

FAR = datetime(2099, 1, 1, tzinfo=UTC)
PAST = datetime(2000, 1, 1, tzinfo=UTC)
ROLES = ("root", "targets", "snapshot", "timestamp")


class _Handler(BaseHTTPRequestHandler):
    files: dict[str, bytes]
    status: int | None

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        server: Any = self.server
        if server.status is not None:
            self.send_error(server.status)
            return
        body = server.files.get(self.path.lstrip("/"))
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


class LocalTufRepo:
    """A TUF repository (root, targets, snapshot, timestamp; no consistent snapshots) whose one
    target is `trusted_root.json`, served over HTTP on 127.0.0.1."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.signers: dict[str, Signer] = {r: CryptoSigner.generate_ed25519() for r in ROLES}
        root = Root(version=1, expires=FAR, consistent_snapshot=False)
        for role, signer in self.signers.items():
            root.add_key(signer.public_key, role)
        self.root_bytes = self._signed(root, "root")
        self.server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.files = {"1.root.json": self.root_bytes}
        self.server.status = None
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _signed(self, signed: Any, role: str, signer: Signer | None = None) -> bytes:
        metadata = Metadata(signed)
        metadata.sign(signer or self.signers[role])
        return bytes(metadata.to_bytes())

    def publish(
        self,
        *,
        version: int = 1,
        timestamp_expires: datetime = FAR,
        timestamp_signer: Signer | None = None,
        served_target: bytes | None = None,
    ) -> None:
        """Publish every role at `version` over `payload`; the knobs make one part hostile."""
        targets = Targets(version=version, expires=FAR)
        targets.targets["trusted_root.json"] = TargetFile.from_data(
            "trusted_root.json", self.payload
        )
        snapshot = Snapshot(
            version=version, expires=FAR, meta={"targets.json": MetaFile(version=version)}
        )
        timestamp = Timestamp(
            version=version, expires=timestamp_expires, snapshot_meta=MetaFile(version=version)
        )
        self.server.files.update(
            {
                "targets.json": self._signed(targets, "targets"),
                "snapshot.json": self._signed(snapshot, "snapshot"),
                "timestamp.json": self._signed(timestamp, "timestamp", timestamp_signer),
                "targets/trusted_root.json": self.payload
                if served_target is None
                else served_target,
            }
        )

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def tuf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fresh XDG data and cache homes: sigstore's TUF client keeps its metadata there."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


PAYLOAD = TestAuthority("tuf-refresh").trusted_root_json()


@pytest.fixture
def repo(tuf_home: Path) -> Iterator[LocalTufRepo]:
    served = LocalTufRepo(PAYLOAD)
    # the client's trust anchor: the repository's version-1 root, where sigstore looks for it
    anchor = tuf_home / "data" / "sigstore-python" / "tuf" / quote(served.url, safe="")
    anchor.mkdir(parents=True)
    (anchor / "root.json").write_bytes(served.root_bytes)
    yield served
    served.stop()


def _load(repo: LocalTufRepo) -> Any:
    return load_trust(mode="production", refresh=lambda _url: tuf_refresh(repo.url))


def test_a_good_repository_refreshes(repo: LocalTufRepo) -> None:
    repo.publish()
    trust = _load(repo)
    assert trust.refreshed and trust.fallback is None
    assert trust.digest == hashlib.sha256(PAYLOAD).hexdigest()


def _tampered_same_length(payload: bytes) -> bytes:
    """The payload with one key renamed: same length, other hash."""
    return payload.replace(b'"mediaType"', b'"mediaTypf"', 1)


SECURITY: list[tuple[str, Callable[[LocalTufRepo], None], str]] = [
    ("expired-timestamp", lambda r: r.publish(timestamp_expires=PAST), "ExpiredMetadataError"),
    (
        "unsigned-timestamp",
        lambda r: r.publish(timestamp_signer=CryptoSigner.generate_ed25519()),
        "UnsignedMetadataError",
    ),
    (
        "target-hash-mismatch",
        lambda r: r.publish(served_target=_tampered_same_length(PAYLOAD)),
        "LengthOrHashMismatchError",
    ),
    (
        "target-too-long",
        lambda r: r.publish(served_target=PAYLOAD + b" " * 64),
        "DownloadLengthMismatchError",
    ),
]


@pytest.mark.parametrize(("name", "make", "error"), SECURITY, ids=[c[0] for c in SECURITY])
def test_a_tuf_security_error_stops_the_build(
    repo: LocalTufRepo, name: str, make: Callable[[LocalTufRepo], None], error: str
) -> None:
    make(repo)
    with pytest.raises(InputError) as caught:
        _load(repo)
    assert caught.value.exit_code == 2
    assert error in (caught.value.found or ""), caught.value.diagnostics()
    assert "refusing to fall back" in caught.value.message
    assert caught.value.hint and "--offline" in caught.value.hint
    assert PRODUCTION_TUF_URL in caught.value.diagnostics()


def test_a_rollback_stops_the_build(repo: LocalTufRepo) -> None:
    repo.publish(version=2)
    assert _load(repo).refreshed  # the client has now seen version 2
    repo.publish(version=1)
    with pytest.raises(InputError) as caught:
        _load(repo)
    assert "BadVersionNumberError" in (caught.value.found or ""), caught.value.diagnostics()


def test_an_unreachable_repository_falls_back_with_a_reason(repo: LocalTufRepo) -> None:
    repo.publish()
    repo.stop()
    trust = _load(repo)
    assert not trust.refreshed
    assert trust.digest == hashlib.sha256(embedded_root_bytes("production")).hexdigest()
    assert trust.fallback is not None
    assert PRODUCTION_TUF_URL in trust.fallback
    assert "could not reach the repository" in trust.fallback
    assert "DownloadError" in trust.fallback or "SlowRetrievalError" in trust.fallback, (
        trust.fallback
    )


def test_a_server_error_falls_back_with_a_reason(repo: LocalTufRepo) -> None:
    repo.publish()
    repo.server.status = 503
    trust = _load(repo)
    assert not trust.refreshed and trust.fallback and "503" in trust.fallback


# --------------------------------------------------------------------------- the adapter seam


class TUFError(Exception):
    """Stands in for sigstore's wrapper type only (sigstore raises its own from the TUF error)."""


def _wrapped(error: BaseException) -> Callable[[str], bytes]:
    def refresh(_url: str) -> bytes:
        try:
            raise error
        except BaseException as exc:
            raise TUFError("Failed to refresh TUF metadata") from exc

    return refresh


SEAM_SECURITY = [
    tuf_errors.ExpiredMetadataError("timestamp.json is expired"),
    tuf_errors.BadVersionNumberError("expected version 2, got 1"),
    tuf_errors.EqualVersionNumberError("same version"),
    tuf_errors.UnsignedMetadataError("timestamp was signed by 0/1 keys"),
    tuf_errors.LengthOrHashMismatchError("hash mismatch"),
    tuf_errors.RepositoryError("inconsistent repository"),
    tuf_errors.DownloadLengthMismatchError("longer than expected"),
    FileNotFoundError("no local root.json"),
    ValueError("cannot parse metadata"),
]
SEAM_NETWORK = [
    tuf_errors.DownloadError("failed to download"),
    tuf_errors.SlowRetrievalError("too slow"),
    tuf_errors.DownloadHTTPError("unavailable", 503),
    ConnectionRefusedError("connection refused"),
    TimeoutError("timed out"),
    OSError("network is unreachable"),
    urllib3_errors.MaxRetryError(None, "/timestamp.json", "no route"),  # type: ignore[arg-type]
    urllib3_errors.NewConnectionError(None, "refused"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("error", SEAM_SECURITY, ids=lambda e: type(e).__name__)
def test_seam_security_and_unknown_errors_stop(error: BaseException) -> None:
    with pytest.raises(InputError) as caught:
        load_trust(refresh=_wrapped(error))
    assert caught.value.exit_code == 2
    assert type(error).__name__ in (caught.value.found or "")


@pytest.mark.parametrize("error", SEAM_NETWORK, ids=lambda e: type(e).__name__)
def test_seam_network_errors_fall_back_with_a_reason(error: BaseException) -> None:
    trust = load_trust(refresh=_wrapped(error))
    assert not trust.refreshed
    assert trust.fallback and type(error).__name__ in trust.fallback


def test_a_network_error_raised_while_replacing_a_bad_local_copy_falls_back() -> None:
    """Only the outermost classifiable error decides: an invalid local copy being replaced is
    not the failure."""

    def refresh(_url: str) -> bytes:
        try:
            try:
                raise tuf_errors.ExpiredMetadataError("local timestamp expired")
            except tuf_errors.RepositoryError:
                raise tuf_errors.DownloadError("then the download failed") from None
        except tuf_errors.DownloadError as exc:
            raise TUFError("Failed to refresh TUF metadata") from exc

    assert load_trust(refresh=refresh).fallback


def test_offline_is_no_fallback() -> None:
    trust = load_trust(offline=True)
    assert not trust.refreshed and trust.fallback is None


# --------------------------------------------------------------------------- through the CLI

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def _cli_build(repo: LocalTufRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`evidence-dashboard build` in production mode, its TUF repository pointed at `repo`."""
    from click.testing import CliRunner

    from generator.cli import main
    from generator.verify import trust as trust_module

    monkeypatch.setattr(trust_module, "tuf_refresh", lambda _url: tuf_refresh(repo.url))
    return CliRunner().invoke(
        main,
        [
            "build",
            "--recipes",
            str(RECIPES),
            "--out",
            str(tmp_path / "site"),
            "--cache",
            str(tmp_path / "cache"),
            "--oci-layout",
            str(RECIPES / "bundles"),
            "--data-only",
            "--quiet",
            "--format",
            "json",
        ],
    )


def test_the_cli_exits_2_on_a_tuf_security_error(
    repo: LocalTufRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.publish(timestamp_expires=PAST)
    result = _cli_build(repo, tmp_path, monkeypatch)
    assert result.exit_code == 2, result.output
    assert "ExpiredMetadataError" in result.output and "refusing to fall back" in result.output
    assert not (tmp_path / "site" / "data" / "build-info.json").exists()


def test_the_cli_records_a_network_fallback_in_build_info(
    repo: LocalTufRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    repo.publish()
    repo.stop()
    result = _cli_build(repo, tmp_path, monkeypatch)
    assert result.exit_code in (0, 1), result.output
    info = json.loads((tmp_path / "site" / "data" / "build-info.json").read_text())
    assert info["trust"]["refreshed"] is None
    reason = info["trustRootFallback"]["reason"]
    assert "could not reach the repository" in reason and PRODUCTION_TUF_URL in reason
