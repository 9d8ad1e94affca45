"""Trust-root validity windows are honoured at the time of signing.

sigstore-python checks a CA's, a log key's and a CT key's `validFor` only against the wall
clock (an ended window still verifies, a window starting after the signing is accepted once it
has started); only TSA windows are checked against the signed time. These tests build trust
roots from the real test authority whose windows end before or start after the signing, and
verify real bundles against them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from generator.model import FailureClass, Rejected, Verified
from generator.testing.authority import DEFAULT_EPOCH, RootWindows, TestAuthority, Window
from generator.verify.pipeline import verify_pointer
from generator.verify.signature import SignatureFailure, verify_signature
from generator.verify.trust import Trust, load_trust
from tests.verify.conftest import SIGNER, EvidenceCase, FakeSource, first_log_index

SIGNED_AT = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
ENDED = Window(DEFAULT_EPOCH, datetime(2023, 1, 1, tzinfo=UTC))
LATER = Window(datetime(2024, 6, 1, tzinfo=UTC))
ENDED_TEXT = "valid 2020-01-01T00:00:00Z to 2023-01-01T00:00:00Z"
LATER_TEXT = "valid 2024-06-01T00:00:00Z to (no end)"


@pytest.fixture(scope="module")
def authority() -> TestAuthority:
    return TestAuthority("windows", shard_offset=7)


def _trust(authority: TestAuthority, tmp_path: Path, windows: RootWindows | None) -> Trust:
    path = tmp_path / "trusted_root.json"
    path.write_bytes(authority.trusted_root_json(windows=windows))
    return load_trust(root_file=path)


def _sign(authority: TestAuthority, case: EvidenceCase, *, rekor_v2: bool = False) -> bytes:
    return bytes(
        authority.sign_dsse(
            case.statement_bytes(), signer=SIGNER, signed_at=SIGNED_AT, rekor_v2=rekor_v2
        )
    )


# (case, windows, rekor v2, words the reason must contain)
OUTSIDE = [
    (
        "ca-ended-before-signing",
        RootWindows(ca=ENDED),
        False,
        ("certificate authority", ENDED_TEXT, "integrated time", "2024-03-01T12:00:01Z"),
    ),
    (
        "ca-starts-after-signing",
        RootWindows(ca=LATER),
        False,
        ("certificate authority", LATER_TEXT),
    ),
    (
        "tlog-ended-before-signing",
        RootWindows(tlog=ENDED),
        False,
        ("transparency log key", "https://rekor.test.invalid", ENDED_TEXT),
    ),
    (
        "tlog-starts-after-signing",
        RootWindows(tlog=LATER),
        False,
        ("transparency log key", LATER_TEXT),
    ),
    (
        "ctlog-ended-before-signing",
        RootWindows(ctlog=ENDED),
        False,
        ("CT log key", "https://ctfe.test.invalid/test", ENDED_TEXT),
    ),
    ("ctlog-starts-after-signing", RootWindows(ctlog=LATER), False, ("CT log key", LATER_TEXT)),
    (
        "v2-ca-ended-before-timestamp",
        RootWindows(ca=ENDED),
        True,
        ("certificate authority", ENDED_TEXT, "signed timestamp", "2024-03-01T12:00:01Z"),
    ),
    (
        "v2-tlog-starts-after-timestamp",
        RootWindows(tlog=LATER),
        True,
        ("transparency log key", "https://log2.rekor.test.invalid", LATER_TEXT),
    ),
    ("v2-ctlog-ended-before-timestamp", RootWindows(ctlog=ENDED), True, ("CT log key", ENDED_TEXT)),
]


@pytest.mark.parametrize(
    ("name", "windows", "rekor_v2", "words"), OUTSIDE, ids=[c[0] for c in OUTSIDE]
)
def test_key_outside_its_window_at_signing_is_rejected(
    authority: TestAuthority,
    case: EvidenceCase,
    tmp_path: Path,
    name: str,
    windows: RootWindows,
    rekor_v2: bool,
    words: tuple[str, ...],
) -> None:
    trust = _trust(authority, tmp_path, windows)
    bundle = _sign(authority, case, rekor_v2=rekor_v2)
    with pytest.raises(SignatureFailure) as caught:
        verify_signature(bundle, trust, expected=SIGNER)
    for word in words:
        assert word in caught.value.detail, caught.value.detail
    pointer, location = case.pointer(signer=SIGNER, log_index=first_log_index(bundle))
    verdict = verify_pointer(pointer, location, FakeSource(case.materialized(bundle)), trust)
    assert isinstance(verdict, Rejected), verdict
    assert verdict.cause.failure_class is FailureClass.SIGNATURE
    for word in words:
        assert word in verdict.cause.detail, verdict.cause.detail


INSIDE = [
    ("default-windows", None, False),
    (
        "all-ended-after-signing",
        RootWindows(
            ca=Window(DEFAULT_EPOCH, datetime(2025, 1, 1, tzinfo=UTC)),
            tlog=Window(DEFAULT_EPOCH, datetime(2025, 1, 1, tzinfo=UTC)),
            ctlog=Window(DEFAULT_EPOCH, datetime(2025, 1, 1, tzinfo=UTC)),
        ),
        False,
    ),
    (
        "all-started-just-before",
        RootWindows(
            ca=Window(datetime(2024, 3, 1, 11, 0, tzinfo=UTC)),
            tlog=Window(datetime(2024, 3, 1, 11, 0, tzinfo=UTC)),
            ctlog=Window(datetime(2024, 3, 1, 11, 0, tzinfo=UTC)),
        ),
        False,
    ),
    ("v2-default-windows", None, True),
    (
        "v2-all-ended-after-signing",
        RootWindows(
            ca=Window(DEFAULT_EPOCH, datetime(2025, 1, 1, tzinfo=UTC)),
            tlog=Window(DEFAULT_EPOCH, datetime(2025, 1, 1, tzinfo=UTC)),
            ctlog=Window(DEFAULT_EPOCH, datetime(2025, 1, 1, tzinfo=UTC)),
        ),
        True,
    ),
]


@pytest.mark.parametrize(("name", "windows", "rekor_v2"), INSIDE, ids=[c[0] for c in INSIDE])
def test_bundle_signed_inside_every_window_verifies(
    authority: TestAuthority,
    case: EvidenceCase,
    tmp_path: Path,
    name: str,
    windows: RootWindows | None,
    rekor_v2: bool,
) -> None:
    trust = _trust(authority, tmp_path, windows)
    bundle = _sign(authority, case, rekor_v2=rekor_v2)
    assert verify_signature(bundle, trust, expected=SIGNER).signer == SIGNER
    pointer, location = case.pointer(signer=SIGNER, log_index=first_log_index(bundle))
    verdict = verify_pointer(pointer, location, FakeSource(case.materialized(bundle)), trust)
    assert isinstance(verdict, Verified), verdict


def test_windows_are_indexed_once_per_trust_root(authority: TestAuthority, tmp_path: Path) -> None:
    from generator.verify.windows import windows_for

    trust = _trust(authority, tmp_path, RootWindows(ca=ENDED))
    first = windows_for(trust.digest, trust.trusted_root)
    assert windows_for(trust.digest, trust.trusted_root) is first
    assert [k.window.end for k in first.tlogs] == [None, None]


def _rehint(bundle: bytes) -> bytes:
    """The bundle with its (unsigned) Rekor v2 `logId` changed to no key's ID but the same
    4-byte note hint, so sigstore tries every log key of the trust root."""
    import base64
    import json

    doc = json.loads(bundle)
    entry = doc["verificationMaterial"]["tlogEntries"][0]
    real = base64.b64decode(entry["logId"]["keyId"])
    entry["logId"]["keyId"] = base64.b64encode(real[:4] + b"\x5a" * 28).decode()
    return json.dumps(doc, indent=2).encode()


def test_an_unknown_log_key_hint_cannot_borrow_another_key_s_window(
    authority: TestAuthority, case: EvidenceCase, tmp_path: Path
) -> None:
    """sigstore tries every log key when the hint names none: then the key that really signed
    the checkpoint must be inside its window, not merely some key."""
    bundle = _rehint(_sign(authority, case, rekor_v2=True))
    # every log key inside: accepted without finding the key
    assert verify_signature(bundle, _trust(authority, tmp_path, None), expected=SIGNER)
    # only the (unused) v1 key outside: the v2 key that signed is found and is inside
    trust = _trust(authority, tmp_path, RootWindows(rekor_v1=ENDED))
    assert verify_signature(bundle, trust, expected=SIGNER).signer == SIGNER
    # the signing v2 key outside, the v1 key inside: rejected
    trust = _trust(authority, tmp_path, RootWindows(tlog=LATER, rekor_v1=Window(DEFAULT_EPOCH)))
    with pytest.raises(
        SignatureFailure,
        match="no transparency-log key of the trust root that "
        "is valid at 2024-03-01T12:00:01Z signed this",
    ):
        verify_signature(bundle, trust, expected=SIGNER)
