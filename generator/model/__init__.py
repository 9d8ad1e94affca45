"""The pure domain model: frozen dataclasses, enums and `NewType` digests shared by every seam.

Nothing here touches the outside world. The seams pass these types to each other:

    tree   -> PointerFile (ParsedPointer | RejectedPointer), Allowlist
    verify -> Verdict (Verified | Pending | Rejected | NoVerdict), each with aicr's Steps
    ctrf   -> CtrfReport per phase, inside Evidence
    corroborate <- Run (one verified, counted run of one signer)
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any, NewType

# --------------------------------------------------------------------------- digests and ids

Sha256Hex = NewType("Sha256Hex", str)
"""64 lowercase hex characters, no prefix (predicate.recipe.digest, statement subject)."""

OciDigest = NewType("OciDigest", str)
"""`sha256:` + 64 lowercase hex (pointer bundle.digest, manifest/ctrf/bom digests)."""

SourceSlug = NewType("SourceSlug", str)
"""First 32 hex of sha256(issuer + "\\n" + identity): pointer folders and allowlist `source`."""

SourceId = NewType("SourceId", str)
"""Full 64-hex sha256(issuer + "\\n" + identity): aicr's canonical public source ID."""

RecipeName = NewType("RecipeName", str)
"""A full recipe name such as `gb200-gke-cos-training-slurm-gpustack-bundle-installer`."""


def source_slug(issuer: str, identity: str) -> SourceSlug:
    """The 32-hex source slug of a signer (spec 6). Both parts must be non-empty."""
    if not issuer or not identity:
        raise ValueError("source slug needs a non-empty issuer and identity")
    return SourceSlug(hashlib.sha256(f"{issuer}\n{identity}".encode()).hexdigest()[:32])


def source_id(issuer: str, identity: str) -> SourceId:
    """The full 64-hex canonical source ID of a signer (aicr-dashboard 1.4)."""
    if not issuer or not identity:
        raise ValueError("source id needs a non-empty issuer and identity")
    return SourceId(hashlib.sha256(f"{issuer}\n{identity}".encode()).hexdigest())


# --------------------------------------------------------------------------- enums


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


# --------------------------------------------------------------------------- tree: pointers


@dataclass(frozen=True)
class SignerIdentity:
    """A signer's (issuer, identity) pair. Verified when it comes from a certificate."""

    issuer: str
    identity: str

    @property
    def slug(self) -> SourceSlug:
        return source_slug(self.issuer, self.identity)

    @property
    def source_id(self) -> SourceId:
        return source_id(self.issuer, self.identity)

    @property
    def consensus_key(self) -> str:
        return f"{self.issuer}\n{self.identity}"


@dataclass(frozen=True)
class ClaimedSigner:
    """The signer a pointer claims (unverified until the certificate agrees)."""

    identity: SignerIdentity
    rekor_log_index: int | None = None


@dataclass(frozen=True)
class BundleRef:
    """`attestations[0].bundle`: where the OCI evidence artifact is and what it claims to be."""

    oci: str
    digest: OciDigest | None
    predicate_type: PredicateType

    @property
    def repository(self) -> str:
        """`registry/repo` without tag or digest."""
        ref = self.oci.split("@", 1)[0]
        last = ref.rsplit("/", 1)
        if len(last) == 2 and ":" in last[1]:
            return f"{last[0]}/{last[1].split(':', 1)[0]}"
        return ref

    @property
    def pinned_ref(self) -> str:
        """The digest-pinned `<registry>/<repo>@sha256:<hex>` (aicr's `evidenceRef`)."""
        return f"{self.repository}@{self.digest}" if self.digest else self.oci


@dataclass(frozen=True)
class Pointer:
    """A schema-valid pointer (spec 2.1). `attested_at` is normalised RFC 3339 UTC with `Z`."""

    schema_version: str
    recipe: RecipeName
    profile: str | None
    bundle: BundleRef
    signer: ClaimedSigner | None
    attested_at: str

    @property
    def pending(self) -> bool:
        return self.signer is None


@dataclass(frozen=True)
class PointerLocation:
    """Where a pointer file sits, relative to the recipes root (forward slashes)."""

    path: str
    """e.g. `evidence/<recipe>/<source>/sha256-<hex>.yaml`, or `evidence/<recipe>.yaml` if flat."""
    folder_recipe: str | None
    folder_source: str | None

    @property
    def flat(self) -> bool:
        return self.folder_source is None


@dataclass(frozen=True)
class ParsedPointer:
    location: PointerLocation
    pointer: Pointer


@dataclass(frozen=True)
class RejectedPointer:
    """A pointer file that cannot be used: `rule` names the schema/contract rule that failed."""

    location: PointerLocation
    rule: str
    message: str
    hint: str
    recipe: str | None = None
    """The recipe it seems to be for (folder or `recipe:` value), for display only."""


PointerFile = ParsedPointer | RejectedPointer


# --------------------------------------------------------------------------- allowlist


@dataclass(frozen=True)
class AllowlistEntry:
    """One allowlist entry: exactly one of `source` and `identity_pattern` is set."""

    signer_class: SignerClass
    issuer: str
    label: str | None
    source: SourceSlug | None
    identity_pattern: str | None
    position: int
    """Index inside its class list, for messages and stable order."""


@dataclass(frozen=True)
class Classification:
    """How the allowlist classifies a verified signer. Unlisted: community, not allowlisted."""

    signer_class: SignerClass
    allowlisted: bool
    entry: AllowlistEntry | None


# --------------------------------------------------------------------------- verification


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
