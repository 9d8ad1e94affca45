"""`PointerRecord`: one pointer file with everything the pointers page and data say about it."""

from __future__ import annotations

from dataclasses import dataclass

from generator.model import Classification, Freshness, PointerFile, Verdict


@dataclass(frozen=True)
class FreshnessExplanation:
    """Why evidence is stale: the canonical recipe diff (capped) and the overlay's commits since
    the attested aicrCommit (`commits` None when that commit is not in the repository history).
    """

    diff: tuple[str, ...] = ()
    commits: tuple[str, ...] | None = None
    truncated: bool = False


@dataclass(frozen=True)
class FreshnessInfo:
    """Signed recipe digest against the current one. `provider` names who computed `current`;
    `explanation` is set for stale evidence when the build could explain it.
    """

    state: Freshness = Freshness.UNKNOWN
    signed: str | None = None
    current: str | None = None
    provider: str | None = None
    explanation: FreshnessExplanation | None = None


@dataclass(frozen=True)
class PointerRecord:
    """One pointer file found in the tree and what became of it.

    `verdict` is None when the tree already rejected the file (a `RejectedPointer`) or the
    bundle was never looked at; `verified_at` is set when a cached verdict was reused (the
    bundle could not be read this time), with `reused_trust_root`, the digest of the trust
    root that earlier verification was judged under; `attested_at_skew` when the claimed
    attestedAt is far from the verified log time.
    """

    pointer: PointerFile
    verdict: Verdict | None = None
    classification: Classification | None = None
    label: str | None = None
    duplicate_of: str | None = None
    freshness: FreshnessInfo = FreshnessInfo()
    verified_at: str | None = None
    attested_at_skew: int | None = None
    """attestedAt minus the verified log time in seconds, when they are more than the
    tolerance apart (generator.verify.times): the claim is flagged on the pointer's card."""
    reused_trust_root: str | None = None

    @property
    def path(self) -> str:
        return self.pointer.location.path
