"""aicr's five verification steps for one pointer, fail closed, plus this project's extra checks.

Steps (evidence-format.md 5.1-5.5): 1 `materialize-bundle`, 2 `signature-verify`, 3
`predicate-parse`, 4 `manifest-hash-check`, 5 `render-summary`. The first failing step stops the
checks; later steps are recorded as `skipped` and step 5 is always `informational`, so every
result lists all five steps. Failure classes and exits follow 5.6 (`classify`, `merge_cause`).

Checks aicr does not make (spec 11) are separate sub-rows with `beyond_aicr=True`, run only after
aicr's own step-4 checks passed, so a verdict that differs from `aicr evidence verify` is always
explained by a marked row.

Decisions:
- A bundle outside every trusted registry prefix was never fetched: that is `NoVerdict` (class
  `registry`, "not fetched: outside every --trusted-registry prefix"), not `Rejected`, because
  nothing is known about a possibly valid bundle.
- A fetch error flagged `transient` (e.g. bytes that do not hash to their digest) is `NoVerdict`
  whatever its class; any other fetch error keeps the class the bundle seam gave it.
- A pointer that claims no signer on a signed bundle is verified against the certificate's own
  identity (a real exact policy, never a no-op) and is `Verified` with that identity, as aicr
  accepts any Fulcio identity without pins; the allowlist decides what it counts for.
- `criteriaMatch.matched == false` is flagged in a sub-row but does not fail (ADR-007 step 7 is
  only proposed); a `matched` value that contradicts `perDimension` fails.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from generator import strictjson
from generator.ctrf import parse_ctrf
from generator.errors import BundleError, EvidenceDashError
from generator.model import (
    PHASE_ORDER,
    STEP_NAMES,
    BundleRef,
    Evidence,
    FailureCause,
    FailureClass,
    NoVerdict,
    OciDigest,
    Pending,
    Phase,
    Pointer,
    PointerLocation,
    PredicateType,
    Rejected,
    SignerIdentity,
    Step,
    StepStatus,
    SubRow,
    Verdict,
    Verified,
)
from generator.recipe.canonical import digest_for_predicate_type
from generator.recipe.names import profile_selection_for, recipe_name_for
from generator.tree.yamlio import load_yaml, load_yaml_with_events
from generator.verify.recipememo import RECIPES
from generator.verify.signature import SignatureFailure, SignatureOk, verify_signature
from generator.verify.trust import Trust

MiB = 1024 * 1024
MAX_SIGNATURE_CANDIDATES = 8
MAX_MANIFEST_BYTES = 1 * MiB
MAX_RECIPE_BYTES = 1 * MiB
MAX_STATEMENT_BYTES = 10 * MiB
MAX_CTRF_BYTES = 10 * MiB

UNLISTED_OK = frozenset({"manifest.json", "statement.intoto.json", "attestation.intoto.jsonl"})
POLICY_EXCLUDED_DETAIL = "not fetched: outside every --trusted-registry prefix"
FORBIDDEN_HINT = "make the fork's aicr-evidence package public, or provide registry credentials"
TRANSIENT_HINT = "retry later; this says nothing about the evidence itself"
INTEGRITY_HINT = (
    "re-create the bundle with `aicr validate --emit-attestation`, re-sign and re-push it"
)
SCHEMA_HINT = "re-generate the pointer and bundle with a current aicr"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_PROFILE = re.compile(r"^[A-Za-z0-9._-]+=[A-Za-z0-9._-]+$")
_STEP_CLASS = {2: FailureClass.SIGNATURE, 3: FailureClass.SCHEMA, 4: FailureClass.INTEGRITY}


# --------------------------------------------------------------------------- seams


class SignatureCandidateLike(Protocol):
    @property
    def referrer_digest(self) -> OciDigest: ...

    @property
    def bundle_json(self) -> bytes: ...


class MaterializedLike(Protocol):
    """What the verifier needs of `generator.bundle.types.Materialized`."""

    @property
    def digest(self) -> OciDigest: ...

    @property
    def files(self) -> Mapping[str, bytes]: ...

    @property
    def signatures(self) -> Sequence[SignatureCandidateLike]: ...


class BundleSourceLike(Protocol):
    """`generator.bundle.types.BundleSource`: fetch by digest or raise `BundleFetchError`."""

    def fetch(self, ref: BundleRef) -> Any: ...


class SignatureVerifier(Protocol):
    """`verify_signature`'s shape, so tests can pass a fake."""

    def __call__(
        self,
        bundle_json: bytes,
        trust: Trust,
        *,
        expected: SignerIdentity | None,
        rekor_log_index: int | None = None,
    ) -> SignatureOk: ...


# --------------------------------------------------------------------------- classification


def classify(
    step: int, *, http_status: int | None = None, transient: bool = False, canceled: bool = False
) -> FailureClass:
    """aicr's `classifyFailure` (5.6): HTTP status, then cancel, then transient, then the step."""
    if http_status is not None:
        if http_status in (401, 403):
            return FailureClass.REGISTRY_FORBIDDEN
        if http_status == 404:
            return FailureClass.NOT_FOUND
        if http_status == 429 or http_status >= 500:
            return FailureClass.TRANSIENT
        return FailureClass.REGISTRY
    if canceled:
        return FailureClass.CANCELED
    if transient:
        return FailureClass.TRANSIENT
    return _STEP_CLASS.get(step, FailureClass.UNKNOWN)


def merge_cause(current: FailureCause | None, new: FailureCause) -> FailureCause:
    """`recordFailure`: the first cause wins, except a non-verdict cause yields to a real one."""
    if current is None:
        return new
    if not current.failure_class.is_verdict and new.failure_class.is_verdict:
        return new
    return current


@dataclass
class _Run:
    """The mutable record of one verification while its steps run (private to this module)."""

    steps: list[Step] = field(default_factory=list)
    cause: FailureCause | None = None
    no_verdict: bool = False
    signer: SignerIdentity | None = None

    def passed(self, step: int, detail: str, rows: Sequence[SubRow] = ()) -> None:
        self.steps.append(_step(step, StepStatus.PASSED, detail, rows))

    def skipped(self, step: int, detail: str, rows: Sequence[SubRow] = ()) -> None:
        self.steps.append(_step(step, StepStatus.SKIPPED, detail, rows))

    def fail(
        self,
        step: int,
        detail: str,
        *,
        failure_class: FailureClass | None = None,
        hint: str = "",
        http_status: int | None = None,
        rows: Sequence[SubRow] = (),
        status: StepStatus = StepStatus.FAILED,
        no_verdict: bool = False,
    ) -> None:
        cls = failure_class or classify(step, http_status=http_status)
        self.steps.append(_step(step, status, detail, rows))
        cause = FailureCause(cls, detail, hint or _default_hint(cls), http_status)
        merged = merge_cause(self.cause, cause)
        if merged is cause:
            self.no_verdict = no_verdict or not cls.is_verdict
        self.cause = merged

    def outcome(self) -> Rejected | NoVerdict:
        done = {s.step for s in self.steps}
        for number in range(1, 5):
            if number not in done:
                self.skipped(number, "not run: an earlier step failed")
        self.steps.append(_step(5, StepStatus.INFORMATIONAL, "report assembled"))
        steps = tuple(sorted(self.steps, key=lambda s: s.step))
        assert self.cause is not None
        if self.no_verdict:
            return NoVerdict(steps=steps, cause=self.cause)
        return Rejected(steps=steps, cause=self.cause, signer=self.signer)


def _step(number: int, status: StepStatus, detail: str, rows: Sequence[SubRow] = ()) -> Step:
    return Step(number, STEP_NAMES[number - 1], status, detail, tuple(rows))


def _default_hint(cls: FailureClass) -> str:
    return {
        FailureClass.REGISTRY_FORBIDDEN: FORBIDDEN_HINT,
        FailureClass.TRANSIENT: TRANSIENT_HINT,
        FailureClass.INTEGRITY: INTEGRITY_HINT,
        FailureClass.SCHEMA: SCHEMA_HINT,
    }.get(cls, "")


# --------------------------------------------------------------------------- entry points


def verify_pointer(
    pointer: Pointer,
    location: PointerLocation,
    source: BundleSourceLike,
    trust: Trust,
    *,
    signature_verifier: SignatureVerifier | None = None,
) -> Verdict:
    """Fetch the pointer's bundle from `source` (step 1) and verify it (steps 2-5)."""
    run = _Run()
    ref = pointer.bundle
    if not ref.oci:
        run.fail(
            1,
            "pointer has no bundle.oci (the bundle was never pushed)",
            failure_class=FailureClass.UNKNOWN,
            hint="push the bundle and record bundle.oci and bundle.digest in the pointer",
        )
        return run.outcome()
    if not ref.digest:
        run.fail(
            1,
            f"refusing tag-only reference {ref.oci}: the pointer has no bundle.digest",
            failure_class=FailureClass.UNKNOWN,
            hint="pin the bundle by digest (bundle.digest: sha256:<hex>)",
        )
        return run.outcome()
    try:
        materialized = source.fetch(ref)
    except BundleError as exc:
        _fetch_failure(run, exc)
        return run.outcome()
    except OSError as exc:
        run.fail(1, f"bundle could not be read: {exc}", failure_class=FailureClass.TRANSIENT)
        return run.outcome()
    return verify_materialized(
        pointer, location, materialized, trust, signature_verifier=signature_verifier
    )


def _fetch_failure(run: _Run, exc: BundleError) -> None:
    if getattr(exc, "policy_excluded", False):
        detail = getattr(exc, "published_detail", None) or POLICY_EXCLUDED_DETAIL
        run.fail(
            1,
            detail,
            failure_class=FailureClass.REGISTRY,
            hint=exc.hint or "add the registry prefix with --trusted-registry",
            status=StepStatus.SKIPPED,
            no_verdict=True,
        )
        return
    given = getattr(exc, "failure_class", None)
    cls = (
        given
        if isinstance(given, FailureClass)
        else classify(1, http_status=exc.http_status, transient=exc.transient)
    )
    detail = exc.message
    if exc.found and exc.found not in detail:
        detail = f"{detail} ({exc.found})"
    run.fail(
        1,
        detail,
        failure_class=cls,
        hint=exc.hint or "",
        http_status=exc.http_status,
        no_verdict=exc.transient,
    )


def verify_materialized(
    pointer: Pointer,
    location: PointerLocation,
    materialized: MaterializedLike,
    trust: Trust,
    *,
    signature_verifier: SignatureVerifier | None = None,
) -> Verdict:
    """Verify an already materialized bundle against its pointer: steps 1 (digest) to 5."""
    run = _Run()
    check_signature = signature_verifier or verify_signature
    files = materialized.files
    pulled = materialized.digest
    if pointer.bundle.digest != pulled:
        run.fail(
            1,
            f"pointer digest {pointer.bundle.digest} does not match pulled digest {pulled}",
            failure_class=FailureClass.UNKNOWN,
            hint="the pointer and the registry disagree; re-generate the pointer",
        )
        return run.outcome()
    step1_rows = [SubRow("bundleDigest", str(pulled)), SubRow("files", str(len(files)))]
    if getattr(materialized, "needed_credentials", False) is True:
        step1_rows.append(
            SubRow(
                "registry access",
                "needed credentials: not anonymously reproducible",
                beyond_aicr=True,
            )
        )
    run.passed(1, f"materialized {pointer.bundle.pinned_ref}", step1_rows)

    # ---- step 2: signature-verify
    ok: SignatureOk | None = None
    pending = False
    if not materialized.signatures:
        if pointer.signer is not None:
            claimed = pointer.signer.identity
            run.fail(
                2,
                f"pointer claims a signer ({claimed.identity}, {claimed.issuer}) but the "
                "bundle carries no signature",
                hint="attach the Sigstore bundle as a referrer (re-run the signing step)",
            )
            return run.outcome()
        pending = True
        run.skipped(2, "no signature attached (unsigned bundle — pending signature)")
    else:
        ok = _step2(run, pointer, materialized, trust, check_signature)
        if ok is None:
            return run.outcome()

    # ---- step 3: predicate-parse
    parsed = _step3(run, pointer, files, ok)
    if parsed is None:
        return run.outcome()
    predicate_type, predicate = parsed

    # ---- step 4: manifest-hash-check (+ beyond-aicr checks, + Evidence)
    evidence = _step4(run, pointer, location, files, predicate_type, predicate)
    if evidence is None:
        return run.outcome()

    # ---- step 5: render-summary
    failed = _phase_failures(predicate)
    rows = [
        SubRow(f"phases.{p}", _phase_summary(predicate, p))
        for p in PHASE_ORDER
        if p.value in (predicate.get("phases") or {})
    ]
    if pending:
        rows.append(SubRow("pending", "true" if not failed else "false (phase failures recorded)"))
    run.steps.append(_step(5, StepStatus.INFORMATIONAL, "report assembled", rows))
    steps = tuple(run.steps)
    credentials = getattr(materialized, "needed_credentials", False) is True
    if ok is None:
        return Pending(steps=steps, evidence=evidence, needed_credentials=credentials)
    if ok.logged_at is not None:  # the time sigstore verified, carried with the evidence
        evidence = replace(evidence, logged_at=ok.logged_at)
    return Verified(
        steps=steps,
        signer=ok.signer,
        rekor_log_index=ok.log_index,
        evidence=evidence,
        phase_failures=failed,
        log_url=trust.log_url(ok.log_index, rekor_v2=ok.rekor_v2),
        needed_credentials=credentials,
    )


# --------------------------------------------------------------------------- step 2


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
        if claimed is None:
            rows.append(SubRow("pointer signer", "none claimed; certificate identity reported"))
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
    first = tried[0][1]
    if len(tried) == 1:
        detail = first.detail
        rows = []
    else:
        detail = f"none of {len(tried)} signature candidates verified; first: {first.detail}"
        rows = [SubRow(d, f.detail) for d, f in tried]
    hint = next((f.hint for _, f in tried if f.hint), "")
    run.fail(2, detail, hint=hint, rows=rows)
    return None


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


# --------------------------------------------------------------------------- step 3


def _step3(
    run: _Run, pointer: Pointer, files: Mapping[str, bytes], ok: SignatureOk | None
) -> tuple[PredicateType, Mapping[str, Any]] | None:
    if ok is not None:
        statement: Mapping[str, Any] = ok.statement
        origin = "from verified DSSE payload"
    else:
        origin = "from unsigned statement.intoto.json"
        raw = files.get("statement.intoto.json")
        if raw is None:
            run.fail(3, "statement.intoto.json missing from the unsigned bundle")
            return None
        if len(raw) > MAX_STATEMENT_BYTES:
            run.fail(3, f"statement.intoto.json exceeds {MAX_STATEMENT_BYTES} bytes")
            return None
        try:
            doc = strictjson.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            run.fail(3, f"statement.intoto.json {strictjson.problem(exc)}")
            return None
        if not isinstance(doc, dict):
            run.fail(3, "statement.intoto.json is not a JSON object")
            return None
        statement = doc
        problem = predicate_type_problem(doc.get("predicateType"), doc.get("predicate"))
        if problem:
            run.fail(3, problem)
            return None
    ptype = PredicateType(statement["predicateType"])
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict):
        run.fail(3, "statement has no predicate object")
        return None
    recipe = predicate.get("recipe")
    name = recipe.get("name") if isinstance(recipe, dict) else None
    if pointer.recipe != name:
        run.fail(
            3, f"pointer recipe {pointer.recipe!r} does not match predicate recipe.name {name!r}"
        )
        return None
    rows = [
        SubRow("predicateType", ptype.value),
        SubRow("recipe.name", str(name)),
    ]
    if pointer.bundle.predicate_type is not ptype:
        run.fail(
            3,
            f"pointer bundle.predicateType {pointer.bundle.predicate_type.value} does "
            f"not equal the statement's {ptype.value}",
            rows=[*rows, SubRow("pointer predicateType", "mismatch", beyond_aicr=True)],
        )
        return None
    rows.append(SubRow("pointer predicateType", "equals statement", beyond_aicr=True))
    version = predicate.get("schemaVersion", "")
    run.passed(3, f"predicate {version} for recipe {name} ({origin})", rows)
    return ptype, predicate


# --------------------------------------------------------------------------- step 4


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _local_path(path: object) -> str | None:
    """A manifest path if it is local (relative, no `..`, no backslash or NUL), else None."""
    if not isinstance(path, str) or not path or path.startswith("/"):
        return None
    if "\\" in path or "\x00" in path:
        return None
    parts = _posix_parts(path)
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _posix_parts(path: str) -> list[str]:
    """`PurePosixPath(path).parts` of a relative path, without building a path object."""
    return [part for part in path.split("/") if part and part != "."]


def _schema_version_ok(value: object) -> bool:
    return isinstance(value, str) and (value == "1.0" or value.startswith("1.0."))


def _step4(
    run: _Run,
    pointer: Pointer,
    location: PointerLocation,
    files: Mapping[str, bytes],
    ptype: PredicateType,
    predicate: Mapping[str, Any],
) -> Evidence | None:
    # 4.1 inventory
    manifest_claim = _get(predicate, "manifest", "digest")
    if not isinstance(manifest_claim, str) or not manifest_claim:
        run.fail(4, "predicate.manifest.digest is empty")
        return None
    raw_manifest = files.get("manifest.json")
    if raw_manifest is None:
        run.fail(
            4,
            "manifest inventory check failed for 1 file(s)",
            rows=[SubRow("manifest.json", "file missing from bundle: manifest.json")],
        )
        return None
    if len(raw_manifest) > MAX_MANIFEST_BYTES:
        run.fail(4, f"manifest.json exceeds {MAX_MANIFEST_BYTES} bytes")
        return None
    got = _sha(raw_manifest)
    if got != manifest_claim:
        run.fail(
            4,
            "manifest inventory check failed for 1 file(s)",
            rows=[
                SubRow(
                    "manifest.json",
                    f"manifest.json: sha256 mismatch (got {got}, want {manifest_claim})",
                )
            ],
        )
        return None
    try:
        manifest = strictjson.loads(raw_manifest)
    except (ValueError, UnicodeDecodeError) as exc:
        run.fail(4, f"manifest.json {strictjson.problem(exc)}")
        return None
    entries = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(manifest, dict) or not _schema_version_ok(manifest.get("schemaVersion")):
        version = manifest.get("schemaVersion") if isinstance(manifest, dict) else None
        run.fail(4, f"manifest.json schemaVersion {version!r} is not 1.0.x")
        return None
    if not isinstance(entries, list) or not entries:
        run.fail(4, "manifest.json lists no files")
        return None
    problems: list[SubRow] = []
    listed: set[str] = set()
    recipe_bytes: bytes | None = None
    for entry in entries:
        raw_path = entry.get("path") if isinstance(entry, dict) else None
        path = _local_path(raw_path)
        if path is None:
            problems.append(
                SubRow(
                    str(raw_path),
                    f"{raw_path!r} is not a local path (rejecting potential traversal)",
                )
            )
            continue
        assert isinstance(entry, dict)
        listed.add(path)
        data = files.get(path)
        if data is None:
            if any(name.startswith(path + "/") for name in files):
                problems.append(SubRow(path, f"{path} is a directory, not a file"))
            else:
                problems.append(SubRow(path, f"file missing from bundle: {path}"))
            continue
        size = entry.get("size")
        if isinstance(size, bool) or not isinstance(size, int | float) or size < 0:
            problems.append(SubRow(path, f"{path}: size {size!r} is not a byte count"))
            continue
        if size > 0 and len(data) != size:
            problems.append(
                SubRow(path, f"{path}: size mismatch (got {len(data)}, want {int(size)})")
            )
            continue
        want = entry.get("sha256")
        want_hex = want.removeprefix("sha256:") if isinstance(want, str) else ""
        got_hex = hashlib.sha256(data).hexdigest()
        if got_hex != want_hex:
            problems.append(
                SubRow(path, f"{path}: sha256 mismatch (got sha256:{got_hex}, want {want})")
            )
            continue
        if path == "recipe.yaml":
            recipe_bytes = data
    problems.extend(
        SubRow(name, f"{name}: file not in manifest.json (unsigned)")
        for name in sorted(files)
        if name not in listed and name not in UNLISTED_OK
    )
    if problems:
        run.fail(4, f"manifest inventory check failed for {len(problems)} file(s)", rows=problems)
        return None

    # 4.2 phase digests
    phases = predicate.get("phases") or {}
    if not isinstance(phases, dict):
        run.fail(4, "predicate.phases is not an object")
        return None
    for key, value in phases.items():
        try:
            phase = Phase(key)
        except ValueError:
            run.fail(4, f"predicate contains unknown phase {key!r}")
            return None
        claim = value.get("ctrfDigest") if isinstance(value, dict) else None
        if not isinstance(claim, str) or not claim:
            run.fail(4, f"phases.{phase}.ctrfDigest is empty")
            return None
        data = files.get(f"ctrf/{phase}.json")
        if data is None:
            run.fail(4, f"ctrf/{phase}.json missing from bundle")
            return None
        if len(data) > MAX_CTRF_BYTES:
            run.fail(4, f"ctrf/{phase}.json exceeds {MAX_CTRF_BYTES} bytes")
            return None
        if _sha(data) != claim:
            run.fail(4, f"ctrf/{phase}.json digest mismatch (got {_sha(data)}, want {claim})")
            return None

    # 4.3 recipe identity
    identity = _recipe_identity(run, pointer, ptype, predicate, recipe_bytes)
    if identity is None:
        return None
    recipe, want_sel = identity
    aicr_rows = [
        SubRow("manifest.json", manifest_claim),
        SubRow("files", f"{len(listed)} listed, all present and matching"),
        SubRow("phases", ", ".join(sorted(phases)) or "(none)"),
        SubRow("recipe.digest", str(_get(predicate, "recipe", "digest"))),
        SubRow("profile", want_sel or "(none)"),
        SubRow(
            "profile.policyDescriptorIdentity",
            "format checked (64 hex); not recomputed" if want_sel else "n/a",
        ),
    ]

    # beyond aicr (spec 11)
    beyond, evidence = _beyond_aicr(
        pointer, location, files, ptype, predicate, recipe, recipe_bytes or b"", entries
    )
    failures = [row for row, failed in beyond if failed]
    rows = aicr_rows + [row for row, _ in beyond]
    if failures or evidence is None:
        run.fail(
            4,
            f"{len(failures)} check(s) beyond aicr failed: "
            + "; ".join(f"{r.key}: {r.value}" for r in failures),
            rows=rows,
        )
        return None
    run.passed(
        4,
        "manifest digest matches predicate; bundle files, phase digests, and recipe "
        "identity (name/profile/digest) verified",
        rows,
    )
    return evidence


def _recipe_identity(
    run: _Run,
    pointer: Pointer,
    ptype: PredicateType,
    predicate: Mapping[str, Any],
    recipe_bytes: bytes | None,
) -> tuple[Mapping[str, Any], str] | None:
    if recipe_bytes is None:
        run.fail(4, "manifest.json has no recipe.yaml entry")
        return None
    if len(recipe_bytes) > MAX_RECIPE_BYTES:
        run.fail(4, f"recipe.yaml exceeds {MAX_RECIPE_BYTES} bytes")
        return None
    memo_key = RECIPES.key(recipe_bytes, ptype)
    remembered = RECIPES.get(memo_key)
    recipe_events = None
    if remembered is not None:
        recipe = remembered[0]
    else:
        try:
            recipe, recipe_events = load_yaml_with_events(recipe_bytes, file="recipe.yaml")
        except EvidenceDashError as exc:
            run.fail(4, f"recipe.yaml cannot be decoded: {exc.message}")
            return None
    if not isinstance(recipe, dict):
        run.fail(4, "recipe.yaml is not a mapping")
        return None
    want_name = recipe_name_for(recipe)
    want_sel = profile_selection_for(recipe)
    got_name = _get(predicate, "recipe", "name")
    if want_name and got_name != want_name:
        run.fail(
            4, f"predicate recipe.name {got_name!r} does not match the recipe's name {want_name!r}"
        )
        return None
    # Canonicalized once per distinct document (generator.verify.recipememo); the comparison
    # with this bundle's predicate below runs for every bundle.
    if remembered is not None:
        want_digest = remembered[1]
    else:
        try:
            want_digest = digest_for_predicate_type(recipe_bytes, ptype, events=recipe_events)
        except EvidenceDashError as exc:
            run.fail(4, f"recipe.yaml cannot be canonicalized: {exc.message}")
            return None
        RECIPES.put(memo_key, recipe, want_digest, len(recipe_bytes))
    got_digest = _get(predicate, "recipe", "digest")
    if got_digest != want_digest:
        run.fail(4, f"recipe digest mismatch (predicate {got_digest}, recipe.yaml {want_digest})")
        return None
    metadata = recipe.get("metadata")
    selected = metadata.get("selectedProfile") if isinstance(metadata, dict) else None
    profile = predicate.get("profile")
    if (selected is None) != (profile is None):
        run.fail(
            4,
            "recipe metadata.selectedProfile and predicate.profile must be present "
            "together or absent together",
        )
        return None
    if isinstance(profile, dict):
        selected_map = selected if isinstance(selected, dict) else {}
        if profile.get("selection") != want_sel:
            run.fail(
                4,
                f"predicate profile.selection {profile.get('selection')!r} does not "
                f"match the recipe's {want_sel!r}",
            )
            return None
        if (profile.get("advertiser") or "") != (selected_map.get("advertiser") or ""):
            run.fail(
                4,
                f"predicate profile.advertiser {profile.get('advertiser')!r} does not "
                f"match the recipe's {selected_map.get('advertiser')!r}",
            )
            return None
        pdi = profile.get("policyDescriptorIdentity")
        if not isinstance(pdi, str) or not _HEX64.match(pdi):
            run.fail(
                4,
                "predicate profile.policyDescriptorIdentity is not 64 lowercase hex "
                "(historical-only; regenerate and re-sign)",
            )
            return None
    if want_name and pointer.recipe != want_name:
        run.fail(
            4, f"pointer recipe {pointer.recipe!r} does not match the recipe's name {want_name!r}"
        )
        return None
    if (pointer.profile or "") != want_sel:
        run.fail(
            4,
            f"pointer profile {pointer.profile or ''!r} does not match the recipe's "
            f"selection {want_sel!r}",
        )
        return None
    return recipe, want_sel


def _beyond_aicr(
    pointer: Pointer,
    location: PointerLocation,
    files: Mapping[str, bytes],
    ptype: PredicateType,
    predicate: Mapping[str, Any],
    recipe: Mapping[str, Any],
    recipe_bytes: bytes,
    entries: list[Any],
) -> tuple[list[tuple[SubRow, bool]], Evidence | None]:
    """Spec 11 checks as (row, failed) pairs, and the Evidence when every file parses."""
    out: list[tuple[SubRow, bool]] = []

    def row(key: str, value: str, failed: bool) -> None:
        out.append((SubRow(key, value, beyond_aicr=True), failed))

    # BOM digest and image count
    bom_claim = predicate.get("bom")
    bom_bytes = files.get("bom.cdx.json")
    bom: Mapping[str, Any] | None = None
    if bom_bytes is not None:
        try:
            doc = strictjson.loads(bom_bytes)
            bom = doc if isinstance(doc, dict) else None
        except strictjson.JsonLimitError as exc:
            row("bom.cdx.json", strictjson.problem(exc), True)
        except (ValueError, UnicodeDecodeError):
            bom = None
    if isinstance(bom_claim, dict):
        if bom_bytes is None:
            row("bom.digest", "bom.cdx.json missing from bundle", True)
        else:
            want = bom_claim.get("digest")
            got = _sha(bom_bytes)
            row(
                "bom.digest",
                "matches" if got == want else f"mismatch (got {got}, want {want})",
                got != want,
            )
            count = bom_claim.get("imageCount")
            components = bom.get("components") if bom is not None else None
            actual = len(components) if isinstance(components, list) else None
            same = actual is not None and _num_eq(count, actual)
            row(
                "bom.imageCount",
                f"{actual}" if same else f"mismatch (predicate {count!r}, bom.cdx.json {actual!r})",
                not same,
            )
    else:
        row("bom.digest", "no bom in predicate", bom_claim is not None)

    # manifest.fileCount
    count = _get(predicate, "manifest", "fileCount")
    same = _num_eq(count, len(entries))
    row(
        "manifest.fileCount",
        str(len(entries))
        if same
        else f"mismatch (predicate {count!r}, manifest.json {len(entries)})",
        not same,
    )

    # predicate.schemaVersion
    version = predicate.get("schemaVersion")
    ok_version = _schema_version_ok(version) or version == "1.0.0"
    row(
        "predicate.schemaVersion",
        str(version) if ok_version else f"{version!r} is not 1.0.x",
        not ok_version,
    )

    # pointer attestedAt
    attested = _normalize_time(predicate.get("attestedAt"))
    same = attested is not None and attested == pointer.attested_at
    row(
        "pointer attestedAt",
        pointer.attested_at
        if same
        else f"mismatch (pointer {pointer.attested_at}, predicate {predicate.get('attestedAt')!r})",
        not same,
    )

    # pointer file name
    if location.flat:
        row("pointer file name", "not applicable (flat pointer)", False)
    else:
        want_name = f"{str(pointer.bundle.digest).replace(':', '-')}.yaml"
        got_name = (_posix_parts(location.path) or [""])[-1]  # PurePosixPath(...).name
        row(
            "pointer file name",
            got_name if got_name == want_name else f"mismatch ({got_name}, want {want_name})",
            got_name != want_name,
        )

    # criteriaMatch
    value, failed = _criteria_row(predicate.get("criteriaMatch"))
    row("criteriaMatch", value, failed)

    # Evidence: parse what the engine reads
    ctrf = {}
    ctrf_ok = True
    for phase in PHASE_ORDER:
        data = files.get(f"ctrf/{phase}.json")
        if data is None:
            continue
        try:
            ctrf[phase] = parse_ctrf(data, phase, file=f"ctrf/{phase}.json")
        except EvidenceDashError as exc:
            row(f"ctrf/{phase}.json", f"not a CTRF report: {exc.message}", True)
            ctrf_ok = False
    snapshot: Mapping[str, Any] | None = None
    snapshot_ok = True
    if "snapshot.yaml" in files:
        try:
            snap = load_yaml(files["snapshot.yaml"], file="snapshot.yaml")
        except EvidenceDashError as exc:
            row("snapshot.yaml", f"cannot be decoded: {exc.message}", True)
            snap, snapshot_ok = None, False
        if snapshot_ok and snap is not None and not isinstance(snap, dict):
            row("snapshot.yaml", "is not a mapping", True)
            snapshot_ok = False
        snapshot = snap if isinstance(snap, dict) else None
    if not (ctrf_ok and snapshot_ok):
        return out, None
    digest = OciDigest(str(pointer.bundle.digest))
    evidence = Evidence(
        bundle_digest=digest,
        evidence_ref=pointer.bundle.pinned_ref,
        predicate_type=ptype,
        predicate=predicate,
        recipe=recipe,
        recipe_yaml=recipe_bytes,
        snapshot=snapshot,
        ctrf=ctrf,
        bom=bom,
    )
    return out, evidence


def _criteria_row(value: object) -> tuple[str, bool]:
    """criteriaMatch consistency: `matched` is false iff a dimension is `mismatched`."""
    if value is None:
        return "absent", False
    if not isinstance(value, dict) or not isinstance(value.get("matched"), bool):
        return "malformed (no boolean matched)", True
    per = value.get("perDimension")
    dims: list[tuple[str, object]] = []
    if isinstance(per, list):
        dims = [(str(d.get("dimension")), d.get("match")) for d in per if isinstance(d, dict)]
    elif isinstance(per, dict):
        dims = [(str(k), v.get("match") if isinstance(v, dict) else None) for k, v in per.items()]
    elif per is not None:
        return "malformed perDimension", True
    mismatched = [name for name, match in dims if match == "mismatched"]
    matched = value["matched"]
    if matched == bool(mismatched):
        return (
            f"inconsistent: matched={str(matched).lower()} but mismatched dimensions "
            f"{mismatched or '(none)'}"
        ), True
    if mismatched:
        return f"matched=false; mismatched: {', '.join(mismatched)} (flagged, not failed)", False
    return "matched=true", False


# --------------------------------------------------------------------------- helpers


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    value: Any = data
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _num_eq(value: object, want: int) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value) == float(want)


def _normalize_time(value: object) -> str | None:
    """RFC 3339 to UTC `YYYY-MM-DDTHH:MM:SSZ` (whole seconds), or None when unparsable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)


def _phase_failures(predicate: Mapping[str, Any]) -> bool:
    phases = predicate.get("phases") or {}
    return isinstance(phases, dict) and any(
        isinstance(v, dict) and _count(v.get("failed")) > 0 for v in phases.values()
    )


def _phase_summary(predicate: Mapping[str, Any], phase: Phase) -> str:
    value = _get(predicate, "phases", phase.value) or {}
    return ", ".join(f"{k} {_count(value.get(k))}" for k in ("passed", "failed", "skipped"))


def phase_failures_recorded(verdict: Verdict) -> bool:
    """True when a valid verdict's predicate records a failed test (aicr exit 1)."""
    if isinstance(verdict, Verified | Pending):
        return _phase_failures(verdict.evidence.predicate)
    return False
