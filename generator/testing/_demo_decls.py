"""The demo scenario's frozen declarations: signers, recipes, runs and their outcomes (part of
`generator.testing.demo_scenario`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from generator.model import FailureClass, Phase, PredicateType, SignerClass, SignerIdentity

_TYPES = {"v1": PredicateType.V1, "v2": PredicateType.V2, "v3": PredicateType.V3}
_CLASSES = {
    "community": SignerClass.COMMUNITY,
    "partner": SignerClass.PARTNER,
    "first-party": SignerClass.FIRST_PARTY,
}
_STATUSES = {"pass": "passed", "fail": "failed", "other": "other"}


class Tamper(StrEnum):
    """How a rejected run goes wrong, and the failure class the verifier must report."""

    MODIFIED_CTRF = "modified-ctrf"
    FOREIGN_AUTHORITY = "foreign-authority"
    CLAIMED_OTHER_IDENTITY = "claimed-other-identity"

    @property
    def failure_class(self) -> FailureClass:
        return FailureClass.INTEGRITY if self is Tamper.MODIFIED_CTRF else FailureClass.SIGNATURE


@dataclass(frozen=True)
class Listing:
    """How the allowlist lists a signer: by its 32-hex source slug, or by an identity pattern."""

    signer_class: SignerClass
    label: str
    pattern: str | None = None


@dataclass(frozen=True)
class SignerDecl:
    """A named signer; `listing` None means unlisted (verified, reported, never counted)."""

    key: str
    identity: SignerIdentity
    listing: Listing | None


@dataclass(frozen=True)
class RecipeDecl:
    """One recipe: criteria, optional profile, signed components, current components, floors."""

    name: str
    criteria: Mapping[str, str]
    profile: tuple[str, str] | None
    components: tuple[tuple[str, str], ...]
    current_components: tuple[tuple[str, str], ...] | None
    floors: Mapping[str, float]
    overlay: bool


@dataclass(frozen=True)
class Outcome:
    """A CTRF outcome: `status` is a CTRF status; `reason` is a skip reason or a failure's
    message; `trace` is a failure's CTRF trace (written to full bundles only)."""

    status: str
    reason: str | None = None
    trace: str | None = None


@dataclass(frozen=True)
class Measured:
    """A measured NCCL bandwidth in GB/s (full bundles carry the number in stdout)."""

    gbps: float


Bandwidth = Measured | Outcome


@dataclass(frozen=True)
class RunDecl:
    """One run as the scenario states it (signed, rejected or pending alike)."""

    index: str
    recipe: str
    signer: str | None
    at: datetime
    aicr: str
    predicate_type: PredicateType
    full: bool
    checks: Mapping[Phase, Mapping[str, Outcome]]
    bandwidth: Mapping[str, Bandwidth]
    gpu_nodes: int | None


@dataclass(frozen=True)
class CountedRun:
    """A run that verifies (exit 0 or 1)."""

    run: RunDecl


@dataclass(frozen=True)
class RejectedRun:
    """A run the verifier must reject with `tamper.failure_class`."""

    run: RunDecl
    tamper: Tamper
    signed_bandwidth: Mapping[str, Bandwidth]
    certificate: str | None


@dataclass(frozen=True)
class PendingRun:
    """An unsigned run behind a flat pending pointer."""

    run: RunDecl


ScenarioRun = CountedRun | RejectedRun | PendingRun


@dataclass(frozen=True)
class Scenario:
    """The whole demo scenario."""

    seed: str
    authority_valid_from: datetime
    repository: str
    signers: Mapping[str, SignerDecl]
    recipes: Mapping[str, RecipeDecl]
    runs: tuple[ScenarioRun, ...]
