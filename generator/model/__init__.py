"""The pure domain model: frozen dataclasses, enums and `NewType` digests shared by every seam.

Nothing here touches the outside world. The seams pass these types to each other:

    tree   -> PointerFile (ParsedPointer | RejectedPointer), Allowlist
    verify -> Verdict (Verified | Pending | Rejected | NoVerdict), each with aicr's Steps
    ctrf   -> CtrfReport per phase, inside Evidence
    corroborate <- Run (one verified, counted run of one signer)

The types are defined by concern in private modules (`_ids`, `_enums`, `_pointers`,
`_verdicts`); import them from here.
"""

from __future__ import annotations

from generator.model._enums import (
    PHASE_ORDER,
    Canonicalizer,
    ConsensusState,
    FailureClass,
    Freshness,
    Phase,
    PredicateType,
    SignerClass,
    StepStatus,
    TestResult,
    VerifyExit,
)
from generator.model._ids import (
    OciDigest,
    RecipeName,
    Sha256Hex,
    SourceId,
    SourceSlug,
    source_id,
    source_slug,
)
from generator.model._pointers import (
    AllowlistEntry,
    BundleRef,
    ClaimedSigner,
    Classification,
    ParsedPointer,
    Pointer,
    PointerFile,
    PointerLocation,
    RejectedPointer,
    SignerIdentity,
)
from generator.model._verdicts import (
    STEP_NAMES,
    CtrfReport,
    CtrfTest,
    Evidence,
    FailureCause,
    NoVerdict,
    Pending,
    Rejected,
    RowKey,
    Run,
    Step,
    SubRow,
    Verdict,
    Verified,
)

__all__ = [
    "AllowlistEntry",
    "BundleRef",
    "Canonicalizer",
    "ClaimedSigner",
    "Classification",
    "ConsensusState",
    "CtrfReport",
    "CtrfTest",
    "Evidence",
    "FailureCause",
    "FailureClass",
    "Freshness",
    "NoVerdict",
    "OciDigest",
    "PHASE_ORDER",
    "ParsedPointer",
    "Pending",
    "Phase",
    "Pointer",
    "PointerFile",
    "PointerLocation",
    "PredicateType",
    "RecipeName",
    "Rejected",
    "RejectedPointer",
    "RowKey",
    "Run",
    "STEP_NAMES",
    "Sha256Hex",
    "SignerClass",
    "SignerIdentity",
    "SourceId",
    "SourceSlug",
    "Step",
    "StepStatus",
    "SubRow",
    "TestResult",
    "Verdict",
    "Verified",
    "VerifyExit",
    "source_id",
    "source_slug",
]
