"""First-party evidence without a pointer: `--bundle-refs FILE` (issue 3).

aicr's own CI signs and pushes evidence bundles but commits no pointer file. A bundle-refs file
lists such bundles, each digest-pinned and with the identity policy its signature must meet:

    - ref: ghcr.io/nvidia/aicr-evidence@sha256:<64 hex>
      issuer: https://token.actions.githubusercontent.com
      identityPattern: '^https://github\\.com/NVIDIA/aicr/\\.github/workflows/uat-aws\\.yaml@refs/heads/.+$'
      recipe: <recipe name>          # optional; when given, the bundle must be for it

Each entry is verified by the same pipeline as a pointer, against the same trust root, bundle
source and registry policy. The pointer fields a file would carry are derived from the bundle
(recipe, profile, attestedAt, predicateType from its DSSE statement) and the claimed signer is
the certificate identity, taken only when its SAN fully matches `identityPattern` (RE2) and its
issuer equals `issuer`; the pipeline then proves that exact identity signed the bundle. The
allowlist classifies the signer like any other, so only a first-party entry makes such runs count.

An entry gets the synthetic path `bundle-refs/<index>-sha256-<hex>`: never a path derived from the
ref, which is untrusted text. Malformed entries are an `InputError` naming the file and index.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import re2

from generator import strictjson
from generator.errors import BundleError, EvidenceDashError, InputError, Location
from generator.model import (
    BundleRef,
    ClaimedSigner,
    FailureCause,
    FailureClass,
    OciDigest,
    ParsedPointer,
    Pointer,
    PointerLocation,
    PredicateType,
    RecipeName,
    Rejected,
    SignerIdentity,
    Step,
    StepStatus,
    SubRow,
    Verdict,
    Verified,
)

SCHEMA_VERSION = "bundle-ref"
"""The `schema_version` of a pointer derived from a bundle ref (it never came from a file)."""

MAX_FILE_BYTES = 1 << 20
MAX_CANDIDATES = 8
_KEYS = frozenset({"ref", "issuer", "identityPattern", "recipe"})
_PINNED = re.compile(
    r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9._:/-]*/[A-Za-z0-9._/-]+)"
    r"@(?P<digest>sha256:[0-9a-f]{64})$"
)
_EXAMPLE = (
    "- ref: ghcr.io/nvidia/aicr-evidence@sha256:<64 hex>\n"
    "  issuer: https://token.actions.githubusercontent.com\n"
    "  identityPattern: '^https://github\\.com/NVIDIA/aicr/...$'"
)
NO_MATCH_HINT = (
    "check the --bundle-refs entry's identityPattern and issuer against the workflow "
    "that signed the bundle (the pattern must match the whole certificate SAN)"
)


@dataclass(frozen=True)
class BundleRefEntry:
    """One validated bundle-refs entry. `index` is its position in the file (0-based)."""

    index: int
    ref: str
    digest: OciDigest
    issuer: str
    identity_pattern: str
    recipe: RecipeName | None = None

    @property
    def path(self) -> str:
        """The synthetic record path: `bundle-refs/<index>-sha256-<hex>`."""
        return f"bundle-refs/{self.index}-{self.digest.replace(':', '-')}"

    @property
    def location(self) -> PointerLocation:
        return PointerLocation(path=self.path, folder_recipe=None, folder_source=None)

    def matches(self, signer: SignerIdentity) -> bool:
        """The entry's policy: issuer exactly equal, SAN fully matched by the RE2 pattern."""
        return (
            signer.issuer == self.issuer
            and _compiled(self.identity_pattern).fullmatch(signer.identity) is not None
        )


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


# --------------------------------------------------------------------------- parsing


def _bad(
    file: str, index: int | None, key: str | None, message: str, *, expected: str, found: str
) -> InputError:
    where = "" if index is None else f"[{index}]" + (f".{key}" if key else "")
    return InputError(
        f"bundle-refs entry {where or '(file)'}: {message}"
        if index is not None
        else f"bundle-refs file: {message}",
        location=Location(file, where or None),
        expected=expected,
        found=found,
        hint="fix the entry in the --bundle-refs file; an entry looks like:\n" + _EXAMPLE,
    )


def _text(entry: Mapping[str, Any], key: str, file: str, index: int) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _bad(
            file,
            index,
            key,
            f"{key} must be a non-empty string",
            expected="a string",
            found=repr(value)[:80],
        )
    if any(c in value for c in "\n\r\x00"):
        raise _bad(
            file,
            index,
            key,
            f"{key} contains a line break",
            expected="one line",
            found=repr(value)[:80],
        )
    return value


def parse_bundle_refs(data: bytes, *, file: str) -> tuple[BundleRefEntry, ...]:
    """Validate a bundle-refs document (a YAML or JSON list). Raises `InputError`."""
    from generator.tree.yamlio import load_yaml

    try:
        doc = (
            strictjson.loads(data) if data.lstrip().startswith(b"[") else load_yaml(data, file=file)
        )
    except (ValueError, UnicodeDecodeError) as exc:
        over = isinstance(exc, strictjson.JsonLimitError)
        raise _bad(
            file,
            None,
            None,
            strictjson.problem(exc) if over else "not valid JSON",
            expected="a JSON or YAML list",
            found=type(exc).__name__,
        ) from exc
    except EvidenceDashError as exc:
        raise _bad(
            file,
            None,
            None,
            f"not valid YAML: {exc.message}",
            expected="a JSON or YAML list",
            found="unparseable YAML",
        ) from exc
    if not isinstance(doc, list):
        raise _bad(
            file,
            None,
            None,
            "the document must be a list of entries",
            expected="a list",
            found=type(doc).__name__,
        )
    entries: list[BundleRefEntry] = []
    for index, raw in enumerate(doc):
        if not isinstance(raw, dict):
            raise _bad(
                file,
                index,
                None,
                "an entry must be a mapping",
                expected="a mapping",
                found=type(raw).__name__,
            )
        unknown = sorted(str(k) for k in raw if k not in _KEYS)
        if unknown:
            raise _bad(
                file,
                index,
                unknown[0],
                f"unknown key {unknown[0]!r}",
                expected="ref, issuer, identityPattern, recipe",
                found=", ".join(unknown),
            )
        ref = _text(raw, "ref", file, index)
        pinned = _PINNED.match(ref)
        if pinned is None:
            raise _bad(
                file,
                index,
                "ref",
                "ref must be pinned by digest",
                expected="<registry>/<repo>@sha256:<64 lowercase hex>",
                found=ref[:200],
            )
        issuer = _text(raw, "issuer", file, index)
        pattern = _text(raw, "identityPattern", file, index)
        try:
            _compiled(pattern)
        except re2.error as exc:
            raise _bad(
                file,
                index,
                "identityPattern",
                "identityPattern is not a valid RE2 expression",
                expected="an RE2 (Go regexp) pattern",
                found=f"{pattern[:120]} ({exc})",
            ) from exc
        recipe = raw.get("recipe")
        if recipe is not None:
            recipe = _text(raw, "recipe", file, index)
        entries.append(
            BundleRefEntry(
                index=index,
                ref=ref,
                digest=OciDigest(pinned.group("digest")),
                issuer=issuer,
                identity_pattern=pattern,
                recipe=RecipeName(recipe) if recipe else None,
            )
        )
    return tuple(entries)


def load_bundle_refs(path: Path) -> tuple[BundleRefEntry, ...]:
    """Read and validate a `--bundle-refs` file (at most 1 MiB). Raises `InputError`."""
    display = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InputError(
            "cannot read the bundle-refs file",
            location=Location(display),
            expected="a readable YAML or JSON file",
            found=type(exc).__name__,
            hint="check the --bundle-refs path",
        ) from exc
    if len(data) > MAX_FILE_BYTES:
        raise InputError(
            "the bundle-refs file is too large",
            location=Location(display),
            expected=f"at most {MAX_FILE_BYTES} bytes",
            found="more",
            hint="list fewer bundles per file",
        )
    return parse_bundle_refs(data, file=display)


# --------------------------------------------------------------------------- verification


class _Failing:
    """A bundle source that replays one fetch failure (so the pipeline classifies it)."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def fetch(self, ref: BundleRef) -> Any:
        raise self._error


def _certificate_signer(bundle_json: bytes) -> SignerIdentity | None:
    """The identity a candidate's certificate names (not yet verified), or None if unreadable."""
    from generator.verify.policy import certificate_identity
    from generator.verify.signature import bundle_certificate

    try:
        return certificate_identity(bundle_certificate(bundle_json))
    except Exception:  # noqa: BLE001 - any unreadable candidate is simply not a match
        return None


def _unverified_statement(bundle_json: bytes) -> Mapping[str, Any]:
    """The DSSE statement of a candidate, parsed but not verified ({} when unreadable).

    Only used to fill in the pointer fields a file would have carried; the pipeline then checks
    every one of them against the verified payload, so a lie here fails verification.
    """
    try:
        envelope = strictjson.loads(bundle_json).get("dsseEnvelope") or {}
        payload = base64.b64decode(str(envelope.get("payload", "")), validate=True)
        statement = strictjson.loads(payload)
    except (ValueError, AttributeError, binascii.Error, UnicodeDecodeError):
        return {}
    return statement if isinstance(statement, dict) else {}


def _normalized_time(value: object) -> str:
    if not isinstance(value, str) or not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        return ""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def derived_pointer(
    entry: BundleRefEntry, statement: Mapping[str, Any], signer: SignerIdentity | None
) -> Pointer:
    """The pointer a file would have carried for this bundle, from its (unverified) statement."""
    predicate = statement.get("predicate")
    predicate = predicate if isinstance(predicate, dict) else {}
    try:
        ptype = PredicateType(str(statement.get("predicateType")))
    except ValueError:
        ptype = PredicateType.V3
    recipe = predicate.get("recipe")
    name = recipe.get("name") if isinstance(recipe, dict) else None
    profile = predicate.get("profile")
    selection = profile.get("selection") if isinstance(profile, dict) else None
    return Pointer(
        schema_version=SCHEMA_VERSION,
        recipe=entry.recipe or RecipeName(name if isinstance(name, str) else ""),
        profile=selection if isinstance(selection, str) and selection else None,
        bundle=BundleRef(oci=entry.ref, digest=entry.digest, predicate_type=ptype),
        signer=ClaimedSigner(identity=signer) if signer is not None else None,
        attested_at=_normalized_time(predicate.get("attestedAt")),
    )


def _no_match(
    entry: BundleRefEntry, materialized: Any, seen: Sequence[SignerIdentity], candidates: int
) -> Rejected:
    """Step 2 fails with class `signature`: no candidate's certificate meets the policy."""
    if candidates == 0:
        detail = "the bundle carries no signature (a bundle ref must be signed)"
    elif not seen:
        detail = f"no certificate identity could be read from {candidates} signature candidate(s)"
    else:
        first = seen[0]
        detail = (
            f"certificate identity {first.identity!r} ({first.issuer}) does not meet the "
            f"bundle ref's policy: identityPattern {entry.identity_pattern!r} "
            f"(RE2 full match) with issuer {entry.issuer!r}"
        )
    skipped = "not run: an earlier step failed"
    steps = (
        Step(
            1,
            "materialize-bundle",
            StepStatus.PASSED,
            f"materialized {entry.ref}",
            (
                SubRow("bundleDigest", str(materialized.digest)),
                SubRow("files", str(len(materialized.files))),
            ),
        ),
        Step(
            2,
            "signature-verify",
            StepStatus.FAILED,
            detail,
            (
                SubRow("identityPattern", entry.identity_pattern, beyond_aicr=True),
                SubRow("issuer", entry.issuer, beyond_aicr=True),
            ),
        ),
        Step(3, "predicate-parse", StepStatus.SKIPPED, skipped),
        Step(4, "manifest-hash-check", StepStatus.SKIPPED, skipped),
        Step(5, "render-summary", StepStatus.INFORMATIONAL, "report assembled"),
    )
    return Rejected(
        steps=steps,
        cause=FailureCause(FailureClass.SIGNATURE, detail, NO_MATCH_HINT),
        signer=seen[0] if seen else None,
    )


def verify_bundle_ref(
    entry: BundleRefEntry, source: Any, trust: Any, *, signature_verifier: Any = None
) -> tuple[ParsedPointer, Verdict]:
    """Fetch and verify one bundle ref; the derived pointer and its verdict."""
    from generator.verify.pipeline import verify_materialized, verify_pointer

    location = entry.location
    placeholder = derived_pointer(entry, {}, None)
    try:
        materialized = source.fetch(placeholder.bundle)
    except (BundleError, OSError) as exc:
        verdict = verify_pointer(placeholder, location, _Failing(exc), trust)
        return ParsedPointer(location, placeholder), verdict
    if materialized.digest != entry.digest:  # step 1 reports the mismatch
        verdict = verify_materialized(
            placeholder, location, materialized, trust, signature_verifier=signature_verifier
        )
        return ParsedPointer(location, placeholder), verdict
    candidates = list(materialized.signatures)[:MAX_CANDIDATES]
    seen: list[SignerIdentity] = []
    for candidate in candidates:
        signer = _certificate_signer(candidate.bundle_json)
        if signer is None:
            continue
        seen.append(signer)
        if entry.matches(signer):
            pointer = derived_pointer(entry, _unverified_statement(candidate.bundle_json), signer)
            verdict = verify_materialized(
                pointer, location, materialized, trust, signature_verifier=signature_verifier
            )
            return ParsedPointer(location, pointer), _with_policy_row(verdict, entry)
    return ParsedPointer(location, placeholder), _no_match(
        entry, materialized, seen, len(candidates)
    )


def _with_policy_row(verdict: Verdict, entry: BundleRefEntry) -> Verdict:
    """Record the bundle ref's identity policy on step 2 of a verified verdict."""
    if not isinstance(verdict, Verified):
        return verdict
    row = SubRow(
        "identityPattern",
        f"{entry.identity_pattern} (RE2 full match; issuer exact)",
        beyond_aicr=True,
    )
    steps = tuple(
        replace(s, sub_rows=(*s.sub_rows, row)) if s.step == 2 else s for s in verdict.steps
    )
    return replace(verdict, steps=steps)
