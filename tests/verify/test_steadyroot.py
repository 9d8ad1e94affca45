"""The verifier's trusted root keeps its keyrings only where they can no longer change.

sigstore builds a verification keyring from every log key whose validity has started; a kept
ring must therefore be the ring sigstore would build at any later time. These tests use real
roots of the test signing authority and real bundles.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sigstore._internal.trust import KeyringPurpose
from sigstore.errors import MetadataError

from generator.testing.authority import DEFAULT_EPOCH, RootWindows, TestAuthority, Window
from generator.verify import signature
from generator.verify._steadyroot import SteadyRoot, steady
from generator.verify.signature import SignatureFailure, verify_signature
from generator.verify.trust import Trust, load_trust
from tests.verify.conftest import SIGNER, EvidenceCase

SIGNED_AT = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
KEY_START = datetime(2099, 1, 1, tzinfo=UTC)
"""A log key that starts long after any run of these tests."""
PAST_START = datetime(2024, 1, 1, tzinfo=UTC)
"""A log key that started before any run of these tests (sigstore's clock is the real one)."""
ENDED = datetime(2023, 1, 1, tzinfo=UTC)
"""The end of a log key's window that ended before any run of these tests."""


@pytest.fixture(scope="module")
def authority() -> TestAuthority:
    return TestAuthority("steady-root", shard_offset=11)


def _trust(authority: TestAuthority, tmp_path: Path, windows: RootWindows | None = None) -> Trust:
    path = tmp_path / "trusted_root.json"
    path.write_bytes(authority.trusted_root_json(windows=windows))
    return load_trust(root_file=path)


def _bundle(authority: TestAuthority) -> bytes:
    return bytes(
        authority.sign_dsse(
            EvidenceCase().seal().statement_bytes(), signer=SIGNER, signed_at=SIGNED_AT
        )
    )


def _keys(ring: Any) -> set[Any]:
    return set(ring._keyring)


def test_started_keys_keep_one_ring_equal_to_sigstores(
    authority: TestAuthority, tmp_path: Path
) -> None:
    root = _trust(authority, tmp_path).trusted_root
    kept = SteadyRoot(root)
    for ask in (kept.rekor_keyring, kept.ct_keyring):
        first = ask(KeyringPurpose.VERIFY)
        assert ask(KeyringPurpose.VERIFY) is first
    assert _keys(kept.rekor_keyring(KeyringPurpose.VERIFY)) == _keys(
        root.rekor_keyring(KeyringPurpose.VERIFY)
    )
    assert _keys(kept.ct_keyring(KeyringPurpose.VERIFY)) == _keys(
        root.ct_keyring(KeyringPurpose.VERIFY)
    )


WINDOWS = [
    pytest.param(lambda window: RootWindows(tlog=window), "rekor_keyring", id="rekor"),
    pytest.param(lambda window: RootWindows(ctlog=window), "ct_keyring", id="ct"),
]


@pytest.mark.parametrize(("windows", "ask"), WINDOWS)
def test_a_key_that_starts_later_keeps_nothing(
    authority: TestAuthority, tmp_path: Path, windows: Any, ask: str
) -> None:
    kept = SteadyRoot(_trust(authority, tmp_path, windows(Window(KEY_START))).trusted_root)
    for _ in range(2):
        with pytest.raises(MetadataError):  # sigstore's own answer: no key has started yet
            getattr(kept, ask)(KeyringPurpose.VERIFY)
    assert kept._rings == {}


@pytest.mark.parametrize(("windows", "ask"), WINDOWS)
def test_a_ring_is_kept_only_once_every_key_has_started(
    authority: TestAuthority, tmp_path: Path, windows: Any, ask: str
) -> None:
    root = _trust(authority, tmp_path, windows(Window(PAST_START))).trusted_root
    now = [PAST_START - timedelta(seconds=1)]
    kept = SteadyRoot(root, clock=lambda: now[0])
    first = getattr(kept, ask)(KeyringPurpose.VERIFY)
    assert getattr(kept, ask)(KeyringPurpose.VERIFY) is not first
    assert kept._rings == {}
    now[0] = PAST_START
    first = getattr(kept, ask)(KeyringPurpose.VERIFY)
    assert getattr(kept, ask)(KeyringPurpose.VERIFY) is first


@pytest.mark.parametrize(("windows", "ask"), WINDOWS)
def test_the_premise_a_verification_ring_keeps_a_key_whose_window_has_ended(
    authority: TestAuthority, tmp_path: Path, windows: Any, ask: str
) -> None:
    """The memo rests on sigstore keeping ended keys in a ring for verification (the window
    is then checked against the signing time: `generator.verify.windows`), so that a ring
    can only grow over time. Should a sigstore release drop ended keys, this fails first."""
    ended = windows(Window(DEFAULT_EPOCH, ENDED))
    root = _trust(authority, tmp_path, ended).trusted_root
    fresh = _keys(getattr(root, ask)(KeyringPurpose.VERIFY))
    assert fresh == _keys(
        getattr(_trust(authority, tmp_path).trusted_root, ask)(KeyringPurpose.VERIFY)
    )
    kept = SteadyRoot(root)
    assert getattr(kept, ask)(KeyringPurpose.VERIFY) is getattr(kept, ask)(KeyringPurpose.VERIFY)


def test_a_ring_for_signing_is_never_kept(authority: TestAuthority, tmp_path: Path) -> None:
    kept = SteadyRoot(_trust(authority, tmp_path).trusted_root)
    ring = kept.rekor_keyring(KeyringPurpose.SIGN)
    assert kept.rekor_keyring(KeyringPurpose.SIGN) is not ring
    assert kept._rings == {}


def test_the_shared_verifier_verifies_over_kept_rings(
    authority: TestAuthority, tmp_path: Path
) -> None:
    trust = _trust(authority, tmp_path)
    signature._VERIFIERS.pop(trust.digest, None)
    bundle = _bundle(authority)
    for _ in range(2):
        assert verify_signature(bundle, trust, expected=SIGNER).signer == SIGNER
    root = signature.verifier_for(trust)._trusted_root  # type: ignore[attr-defined]
    assert isinstance(root, SteadyRoot)
    assert set(root._rings) == {"rekor", "ct"}


def test_kept_rings_still_reject_a_foreign_log(authority: TestAuthority, tmp_path: Path) -> None:
    """A bundle logged by another authority's logs fails over kept rings as over fresh ones."""
    trust = _trust(authority, tmp_path)
    signature._VERIFIERS.pop(trust.digest, None)
    assert verify_signature(_bundle(authority), trust, expected=SIGNER)  # rings now kept
    foreign = _bundle(TestAuthority("steady-root-foreign", shard_offset=11))
    with pytest.raises(SignatureFailure):
        verify_signature(foreign, trust, expected=SIGNER)


def test_a_root_of_another_shape_is_used_as_it_is() -> None:
    class Other:
        pass

    other: Any = Other()
    assert steady(other) is other
