"""Every closed choice of the model as an enum: predicate types, phases, results, states,
failure classes and exits."""

from __future__ import annotations

from enum import IntEnum, StrEnum


class PredicateType(StrEnum):
    """The accepted recipe-evidence predicate types (spec 2.2)."""

    V1 = "https://aicr.run/recipe-evidence/v1"
    V2 = "https://aicr.run/recipe-evidence/v2"
    V3 = "https://aicr.run/recipe-evidence/v3"

    @property
    def canonicalizer(self) -> Canonicalizer:
        """Legacy for v1/v2, V3 for v3 (`SubjectDigestForType`)."""
        return Canonicalizer.V3 if self is PredicateType.V3 else Canonicalizer.LEGACY

    @property
    def short(self) -> str:
        return self.value.rsplit("/", 1)[-1]


class Canonicalizer(StrEnum):
    """Which canonical recipe digest: legacy keeps `metadata.version`, v3 strips it."""

    LEGACY = "legacy"
    V3 = "v3"


class Phase(StrEnum):
    """Evidence phases, in aicr's `PhaseOrder` (deployment, performance, conformance)."""

    DEPLOYMENT = "deployment"
    PERFORMANCE = "performance"
    CONFORMANCE = "conformance"

    @property
    def order(self) -> int:
        return PHASE_ORDER.index(self)


PHASE_ORDER: tuple[Phase, ...] = (Phase.DEPLOYMENT, Phase.PERFORMANCE, Phase.CONFORMANCE)


class SignerClass(StrEnum):
    """Allowlist classes (spec 7). Class never changes weight; only `allowlisted` does."""

    FIRST_PARTY = "first-party"
    COMMUNITY = "community"
    PARTNER = "partner"


class TestResult(StrEnum):
    """One signer's result for one row (aicr `BucketStatus`)."""

    PASS = "pass"
    FAIL = "fail"
    NOT_RUN = "not-run"


class ConsensusState(StrEnum):
    """Row states plus the rollup-only PARTIAL (aicr-dashboard 1.3, 1.8)."""

    CONFIRMED = "CONFIRMED"
    SINGLE = "SINGLE"
    CONTESTED = "CONTESTED"
    FAILING = "FAILING"
    UNTESTED = "UNTESTED"
    PARTIAL = "PARTIAL"


class StepStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    INFORMATIONAL = "informational"


class FailureClass(StrEnum):
    """aicr's stable failure classes (spec 5.6) plus this project's own: `time` (the claimed
    attestedAt lies after the verified log time or the build time) and `internal` (the build
    itself failed on this one pointer; nothing is known about the evidence)."""

    REGISTRY_FORBIDDEN = "registry-forbidden"
    NOT_FOUND = "not-found"
    REGISTRY = "registry"
    SIGNATURE = "signature"
    INTEGRITY = "integrity"
    SCHEMA = "schema"
    TRANSIENT = "transient"
    CANCELED = "canceled"
    UNKNOWN = "unknown"
    TIME = "time"
    INTERNAL = "internal"

    @property
    def is_verdict(self) -> bool:
        """Transient, canceled and internal say nothing about the evidence (exit 3)."""
        return self not in (FailureClass.TRANSIENT, FailureClass.CANCELED, FailureClass.INTERNAL)


class VerifyExit(IntEnum):
    """aicr's result `exit` values."""

    VALID = 0
    VALID_WITH_FAILURES = 1
    INVALID = 2
    NO_VERDICT = 3


class Freshness(StrEnum):
    FRESH = "fresh"
    STALE = "stale"
    UNKNOWN = "unknown"
