"""Step 2, `signature-verify`: the first of up to 8 signature candidates that verifies and binds.

After sigstore-python verified a candidate, `_check_statement` makes aicr's statement checks:
the subject is the pulled digest (and, beyond aicr, the pointer's), and the predicateType is
coherent with the predicate (`predicate_type_problem`, spec 2.2).
"""

from __future__ import annotations

import re

from generator.model import Pointer, PredicateType, SubRow
from generator.verify._fields import _HEX64
from generator.verify._run import MAX_SIGNATURE_CANDIDATES, _Run
from generator.verify._seams import MaterializedLike, SignatureVerifier
from generator.verify.signature import SignatureFailure, SignatureOk
from generator.verify.trust import Trust

_PROFILE = re.compile(r"^[A-Za-z0-9._-]+=[A-Za-z0-9._-]+$")


def _step2(
    run: _Run,
    pointer: Pointer,
    materialized: MaterializedLike,
    trust: Trust,
    check_signature: SignatureVerifier,
) -> SignatureOk | None:
    """Try up to 8 candidates; take the first that verifies, matches the claims and binds."""
    claimed = pointer.signer
    expected = claimed.identity if claimed else None
    log_index = claimed.rekor_log_index if claimed else None
    pulled_hex = str(materialized.digest).removeprefix("sha256:")
    pointer_hex = str(pointer.bundle.digest or "").removeprefix("sha256:")
    tried: list[tuple[str, SignatureFailure]] = []
    candidates = list(materialized.signatures)[:MAX_SIGNATURE_CANDIDATES]
    for candidate in candidates:
        try:
            ok = check_signature(
                candidate.bundle_json, trust, expected=expected, rekor_log_index=log_index
            )
            _check_statement(ok, pulled_hex, pointer_hex)
        except SignatureFailure as failure:
            tried.append((str(candidate.referrer_digest), failure))
            if run.signer is None and failure.signer is not None:
                run.signer = failure.signer
            continue
        rows = _verified_rows(ok, trust, pulled_hex, claimed is None)
        if len(candidates) > 1:
            rows.append(
                SubRow(
                    "signature candidate",
                    f"{candidate.referrer_digest} ({len(tried) + 1} of {len(candidates)})",
                )
            )
        rows.extend(SubRow(f"rejected candidate {d}", f.detail) for d, f in tried)
        run.passed(
            2, f"signature verified; signed by {ok.signer.identity} ({ok.signer.issuer})", rows
        )
        return ok
    _none_verified(run, tried)
    return None


def _verified_rows(ok: SignatureOk, trust: Trust, pulled_hex: str, unclaimed: bool) -> list[SubRow]:
    """Step 2's rows for the candidate that verified: who signed, which log, what subject."""
    rows = [
        SubRow("signer.identity", ok.signer.identity),
        SubRow("signer.issuer", ok.signer.issuer),
        SubRow("rekorLogIndex", str(ok.log_index) if ok.log_index is not None else "(none)"),
        SubRow(
            "tlog",
            "rekor v2 (inclusion proof + timestamp)"
            if ok.rekor_v2
            else "rekor v1 (inclusion proof + promise)",
        ),
        SubRow("subject", f"sha256:{pulled_hex} (pulled artifact digest)"),
        SubRow("subject = pointer bundle.digest", "yes", beyond_aicr=True),
        SubRow("trust root", f"{trust.name}{'' if trust.refreshed else ' (not refreshed)'}"),
    ]
    if unclaimed:
        rows.append(SubRow("pointer signer", "none claimed; certificate identity reported"))
    return rows


def _none_verified(run: _Run, tried: list[tuple[str, SignatureFailure]]) -> None:
    """Step 2 fails with the first candidate's reason (and every candidate's when several)."""
    first = tried[0][1]
    if len(tried) == 1:
        detail = first.detail
        rows: list[SubRow] = []
    else:
        detail = f"none of {len(tried)} signature candidates verified; first: {first.detail}"
        rows = [SubRow(d, f.detail) for d, f in tried]
    hint = next((f.hint for _, f in tried if f.hint), "")
    run.fail(2, detail, hint=hint, rows=rows)


def _check_statement(ok: SignatureOk, pulled_hex: str, pointer_hex: str) -> None:
    """aicr's statement checks after a verify: subject binding and predicateType coherence."""
    subject = ok.statement.get("subject")
    first = subject[0] if isinstance(subject, list) and subject else None
    digest = first.get("digest") if isinstance(first, dict) else None
    subject_hex = digest.get("sha256") if isinstance(digest, dict) else None
    if not isinstance(subject_hex, str) or not subject_hex:
        raise SignatureFailure("signed statement subject[0] has no sha256 digest", signer=ok.signer)
    if not _HEX64.match(subject_hex):
        raise SignatureFailure(
            f"signed subject digest {subject_hex!r} is not 64 lowercase hex", signer=ok.signer
        )
    if subject_hex != pulled_hex:
        raise SignatureFailure(
            f"signed subject digest ({subject_hex}) does not match pulled artifact digest "
            f"({pulled_hex})",
            signer=ok.signer,
        )
    if subject_hex != pointer_hex:  # beyond aicr (spec 11); equal to the pulled one after step 1
        raise SignatureFailure(
            f"signed subject digest ({subject_hex}) does not match the pointer's bundle.digest "
            f"(sha256:{pointer_hex})",
            signer=ok.signer,
        )
    problem = predicate_type_problem(
        ok.statement.get("predicateType"), ok.statement.get("predicate")
    )
    if problem:
        raise SignatureFailure(problem, signer=ok.signer)


def predicate_type_problem(predicate_type: object, predicate: object) -> str | None:
    """The coherence rules of spec 2.2: known type; v1 without, v2 with a valid profile."""
    if not isinstance(predicate_type, str):
        return f"unexpected predicateType {predicate_type!r}"
    try:
        ptype = PredicateType(predicate_type)
    except ValueError:
        return f"unexpected predicateType {predicate_type!r}"
    if not isinstance(predicate, dict):
        return "statement has no predicate object"
    profile = predicate.get("profile")
    if ptype is PredicateType.V1:
        if profile is not None:
            return "predicateType v1 must not carry a profile"
        return None
    if profile is None:
        return "predicateType v2 requires a profile" if ptype is PredicateType.V2 else None
    if not isinstance(profile, dict):
        return "predicate profile is not an object"
    selection = profile.get("selection")
    if not isinstance(selection, str) or not _PROFILE.match(selection):
        return f"predicate profile.selection {selection!r} is not name=value"
    identity = profile.get("policyDescriptorIdentity")
    if not isinstance(identity, str) or not identity:
        return "predicate profile.policyDescriptorIdentity is empty"
    return None
