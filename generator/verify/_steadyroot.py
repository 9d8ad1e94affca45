"""A trusted root whose verification keyrings are built once, not once per bundle.

sigstore-python builds the Rekor and CT keyrings from the trusted root on every bundle it
verifies: each log key is parsed again and hashed for its key id (about 6% of a signature
check). A keyring for verification holds every key of the root whose validity has started,
expired keys included, so once every key has started the ring can never change: this root
then keeps the ring it built. A root with a key that starts later is asked afresh every
time, as sigstore asks it, so a kept ring is always the ring sigstore would build now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from sigstore._internal.trust import KeyringPurpose
from sigstore.models import TrustedRoot

__all__ = ["SteadyRoot", "steady"]


class SteadyRoot(TrustedRoot):
    """`TrustedRoot` with its verification keyrings kept once every log key has started."""

    def __init__(self, root: TrustedRoot, *, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__(root._inner)
        self._clock = clock or (lambda: datetime.now(UTC))
        self._rings: dict[str, Any] = {}

    def rekor_keyring(self, purpose: KeyringPurpose) -> Any:
        """The Rekor keyring (`TrustedRoot.rekor_keyring`), kept for verification."""
        return self._ring("rekor", purpose, self._inner.tlogs, super().rekor_keyring)

    def ct_keyring(self, purpose: KeyringPurpose) -> Any:
        """The CT log keyring (`TrustedRoot.ct_keyring`), kept for verification."""
        return self._ring("ct", purpose, self._inner.ctlogs, super().ct_keyring)

    def _ring(
        self,
        name: str,
        purpose: KeyringPurpose,
        logs: Iterable[Any],
        build: Callable[[KeyringPurpose], Any],
    ) -> Any:
        if purpose is not KeyringPurpose.VERIFY:
            return build(purpose)
        kept = self._rings.get(name)
        if kept is not None:
            return kept
        started = _all_started(logs, self._clock())  # read before the ring is built
        ring = build(purpose)
        if started:
            self._rings[name] = ring
        return ring


def _all_started(logs: Iterable[Any], now: datetime) -> bool:
    """Whether the validity of every log's key has started by `now` (no period: always)."""
    for log in logs:
        period = log.public_key.valid_for
        if period and now < period.start:
            return False
    return True


def steady(root: TrustedRoot) -> TrustedRoot:
    """`root` as a `SteadyRoot`, or `root` itself where this sigstore lays it out otherwise."""
    if not hasattr(root, "_inner"):
        return root
    try:
        return SteadyRoot(root)
    except Exception:  # noqa: BLE001 - a sigstore that changed: verify with its own root
        return root
