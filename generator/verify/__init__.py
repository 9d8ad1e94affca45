"""The verify seam: real Sigstore verification and aicr's five-step verifier, fail closed.

- `trust`: which Sigstore trust root verifies (`load_trust`), refreshed or embedded.
- `policy`: the exact (issuer, SAN) identity policy and certificate identity reading.
- `signature`: the adapter around sigstore-python's `Verifier` (`verify_signature`).
- `pipeline`: `verify_pointer` / `verify_materialized`, producing a `Verdict` with aicr's steps;
  its steps live in private modules: `_run` (the running record, `classify`), `_signed` (step 2),
  `_statement` (step 3), `_manifest` (step 4), `_recipe_match` (4.3), `_beyond` (spec 11),
  `_fields` (predicate readers), `_seams` (the protocols the steps take).
- `serialize`: verdict JSON round trip and aicr's `VerifyResult` shape.
- `cache`: the on-disk verdict cache.
- `times`: the signing time against the attested time.

Nothing here reads the network or the clock, except `trust.tuf_refresh` when asked to refresh.
The face below is lazy: importing `generator.verify.times` must not load sigstore-python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.lazyface import lazy_face

if TYPE_CHECKING:
    from generator.verify.cache import VerdictCache, verdict_policy, verifier_code_digest
    from generator.verify.pipeline import (
        POLICY_EXCLUDED_DETAIL,
        BundleSourceLike,
        MaterializedLike,
        SignatureVerifier,
        classify,
        merge_cause,
        phase_failures_recorded,
        predicate_type_problem,
        verify_materialized,
        verify_pointer,
    )
    from generator.verify.policy import ExactIdentity, certificate_identity
    from generator.verify.serialize import (
        VerdictFormatError,
        aicr_result_json,
        result_exit,
        verdict_from_json,
        verdict_to_json,
    )
    from generator.verify.signature import (
        SignatureFailure,
        SignatureOk,
        bundle_certificate,
        parse_statement,
        verify_signature,
    )
    from generator.verify.times import attested_skew, flagged_skew, judge_time, newest_verified_time
    from generator.verify.trust import Trust, embedded_root_bytes, load_trust, tuf_refresh

__all__ = [
    "BundleSourceLike",
    "ExactIdentity",
    "MaterializedLike",
    "POLICY_EXCLUDED_DETAIL",
    "SignatureFailure",
    "SignatureOk",
    "SignatureVerifier",
    "Trust",
    "VerdictCache",
    "VerdictFormatError",
    "aicr_result_json",
    "attested_skew",
    "bundle_certificate",
    "certificate_identity",
    "classify",
    "embedded_root_bytes",
    "flagged_skew",
    "judge_time",
    "load_trust",
    "merge_cause",
    "newest_verified_time",
    "parse_statement",
    "phase_failures_recorded",
    "predicate_type_problem",
    "result_exit",
    "tuf_refresh",
    "verdict_from_json",
    "verdict_policy",
    "verdict_to_json",
    "verifier_code_digest",
    "verify_materialized",
    "verify_pointer",
    "verify_signature",
]

_HOME = {
    "BundleSourceLike": "pipeline",
    "ExactIdentity": "policy",
    "MaterializedLike": "pipeline",
    "POLICY_EXCLUDED_DETAIL": "pipeline",
    "SignatureFailure": "signature",
    "SignatureOk": "signature",
    "SignatureVerifier": "pipeline",
    "Trust": "trust",
    "VerdictCache": "cache",
    "VerdictFormatError": "serialize",
    "aicr_result_json": "serialize",
    "attested_skew": "times",
    "bundle_certificate": "signature",
    "certificate_identity": "policy",
    "classify": "pipeline",
    "embedded_root_bytes": "trust",
    "flagged_skew": "times",
    "judge_time": "times",
    "load_trust": "trust",
    "merge_cause": "pipeline",
    "newest_verified_time": "times",
    "parse_statement": "signature",
    "phase_failures_recorded": "pipeline",
    "predicate_type_problem": "pipeline",
    "result_exit": "serialize",
    "tuf_refresh": "trust",
    "verdict_from_json": "serialize",
    "verdict_policy": "cache",
    "verdict_to_json": "serialize",
    "verifier_code_digest": "cache",
    "verify_materialized": "pipeline",
    "verify_pointer": "pipeline",
    "verify_signature": "signature",
}
"""Which submodule defines each public name."""


__getattr__, __dir__ = lazy_face(__name__, _HOME, __all__, globals())
