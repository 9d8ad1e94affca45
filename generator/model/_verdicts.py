"""What the verify seam produces: aicr's steps and sub-rows, the parsed `Evidence`, and the four
verdicts (`Verified`, `Pending`, `Rejected`, `NoVerdict`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from generator.model._enums import (
    FailureClass,
    Phase,
    PredicateType,
    StepStatus,
    TestResult,
    VerifyExit,
)
from generator.model._ids import OciDigest, RecipeName, Sha256Hex
from generator.model._pointers import Classification, SignerIdentity


@dataclass(frozen=True)
class SubRow:
    key: str
    value: str
    beyond_aicr: bool = False
    """True for checks this project adds on top of aicr's verifier (spec 11)."""


@dataclass(frozen=True)
class Step:
    """One of aicr's five verification steps, in its JSON shape."""

    step: int
    name: str
    status: StepStatus
    detail: str = ""
    sub_rows: tuple[SubRow, ...] = ()


STEP_NAMES: tuple[str, ...] = (
    "materialize-bundle",
    "signature-verify",
    "predicate-parse",
    "manifest-hash-check",
    "render-summary",
)


@dataclass(frozen=True)
class FailureCause:
    failure_class: FailureClass
    detail: str
    hint: str
    http_status: int | None = None


@dataclass(frozen=True)
class CtrfTest:
    """One CTRF test entry. `status` is the raw CTRF status; `result` its aicr bucket."""

    name: str
    status: str
    result: TestResult
    duration_ms: float | None = None
    message: str | None = None
    stdout: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    trace: str | None = None


@dataclass(frozen=True)
class CtrfReport:
    """A parsed `ctrf/<phase>.json`. Duplicate names: the last entry wins (aicr `loadRun`)."""

    phase: Phase
    tests: tuple[CtrfTest, ...]
    summary: Mapping[str, int] = field(default_factory=dict)
    tool: str | None = None


@dataclass(frozen=True)
class Evidence:
    """What a materialized, integrity-checked bundle says, parsed for the engine.

    `predicate` is the verified in-toto predicate as JSON data (numbers as in the payload);
    `recipe` and `snapshot` are the YAML documents as plain data (YAML 1.2 scalars); the raw
    `recipe_yaml` bytes are kept for freshness diffs.
    """

    bundle_digest: OciDigest
    evidence_ref: str
    predicate_type: PredicateType
    predicate: Mapping[str, Any]
    recipe: Mapping[str, Any]
    recipe_yaml: bytes
    snapshot: Mapping[str, Any] | None
    ctrf: Mapping[Phase, CtrfReport]
    bom: Mapping[str, Any] | None = None
    logged_at: str | None = None
    """The time sigstore verified for the signature (`YYYY-MM-DDTHH:MM:SSZ`): the transparency
    log's integrated time, else the earliest signed RFC 3161 timestamp. None when unsigned.
    Unlike `attested_at` (a claim inside the payload) this is what orders runs."""
    settled: bool = False
    """True once the evidence was assessed and its documents let go (`settle`)."""

    def settle(self) -> Evidence:
        """This evidence without the documents only assessing reads (recipe and its YAML,
        snapshot, CTRF reports, BOM): once a pointer's record, data entry and board entry are
        made, the build needs only the predicate, and 10,000 bundles' documents are hundreds
        of MB. A settled evidence is never cached (`generator.verify.serialize`) or assessed."""
        return replace(
            self, recipe={}, recipe_yaml=b"", snapshot=None, ctrf={}, bom=None, settled=True
        )

    @property
    def attested_at(self) -> str:
        return str(self.predicate.get("attestedAt", ""))

    @property
    def aicr_version(self) -> str:
        return str(self.predicate.get("aicrVersion", ""))

    @property
    def aicr_commit(self) -> str | None:
        value = self.predicate.get("aicrCommit")
        return str(value) if value else None

    @property
    def recipe_name(self) -> str:
        return str((self.predicate.get("recipe") or {}).get("name", ""))

    @property
    def recipe_digest(self) -> Sha256Hex:
        return Sha256Hex(str((self.predicate.get("recipe") or {}).get("digest", "")))


@dataclass(frozen=True)
class Verified:
    """exit 0 (valid) or 1 (valid, with recorded phase failures). The only counted outcome."""

    steps: tuple[Step, ...]
    signer: SignerIdentity
    rekor_log_index: int | None
    evidence: Evidence
    phase_failures: bool
    log_url: str | None = None
    """A public transparency-log link for the first entry, when the log is public."""
    needed_credentials: bool = False
    """True when the registry served the bundle only with credentials (issue 3): the evidence is
    not anonymously reproducible. Appended with a default, so existing callers are unchanged."""

    @property
    def exit(self) -> VerifyExit:
        return VerifyExit.VALID_WITH_FAILURES if self.phase_failures else VerifyExit.VALID


@dataclass(frozen=True)
class Pending:
    """exit 0 with `pending: true`: an unsigned bundle with no claimed signer. Never counted."""

    steps: tuple[Step, ...]
    evidence: Evidence
    needed_credentials: bool = False
    """As `Verified.needed_credentials` (appended with a default, issue 3)."""

    @property
    def exit(self) -> VerifyExit:
        return VerifyExit.VALID


@dataclass(frozen=True)
class Rejected:
    """exit 2: the evidence is invalid. `signer` is the certificate's identity if it was read."""

    steps: tuple[Step, ...]
    cause: FailureCause
    signer: SignerIdentity | None = None

    @property
    def exit(self) -> VerifyExit:
        return VerifyExit.INVALID


@dataclass(frozen=True)
class NoVerdict:
    """exit 3: nothing can be said (bundle unavailable, transient fault, canceled)."""

    steps: tuple[Step, ...]
    cause: FailureCause

    @property
    def exit(self) -> VerifyExit:
        return VerifyExit.NO_VERDICT


Verdict = Verified | Pending | Rejected | NoVerdict


# --------------------------------------------------------------------------- corroboration


RowKey = tuple[Phase, str]
"""A board row: (phase, CTRF test name)."""


@dataclass(frozen=True)
class Run:
    """One verified, attributable run of one signer for one recipe: the unit consensus counts."""

    recipe: RecipeName
    signer: SignerIdentity
    classification: Classification
    run_id: str
    aicr_version: str
    aicr_commit: str | None
    k8s_version: str
    attested_at: str
    evidence_ref: str
    recipe_digest: Sha256Hex
    results: Mapping[RowKey, TestResult]
    bundle_digest: OciDigest
    profile: str | None = None
    skip_reasons: Mapping[RowKey, str] = field(default_factory=dict)
    logged_at: str = ""
    """The verified transparency-log time (`Evidence.logged_at`): runs are ordered by it,
    never by the claimed `attested_at` alone."""

    @property
    def allowlisted(self) -> bool:
        return self.classification.allowlisted
