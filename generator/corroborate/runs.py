"""Turn a verified bundle into the `Run` consensus counts, and pick runs per signer.

A run id is unique per bundle: the compact attestedAt plus the first 12 hex of the OCI bundle
digest, so two bundles attested in the same second never share an id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache

from generator.ctrf import bucket_status
from generator.errors import InputError, Location
from generator.facts import skip_reason
from generator.model import (
    PHASE_ORDER,
    Classification,
    Evidence,
    Pointer,
    RecipeName,
    RowKey,
    Run,
    TestResult,
    Verified,
)

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})"
)
_K8S = re.compile(r"v?(\d{1,6})\.(\d{1,6})(?:[.\-+].*)?")


def parse_rfc3339(text: str) -> datetime | None:
    """Parse an RFC 3339 timestamp into an aware UTC datetime, or None when it is not one."""
    match = _RFC3339.fullmatch(text.strip())
    if not match:
        return None
    zone = match.group(8)
    iso = text.strip()[: match.start(7) if match.group(7) else match.start(8)]
    try:
        moment = datetime.fromisoformat(
            iso.replace("t", "T") + ("+00:00" if zone in "Zz" else zone)
        )
    except ValueError:
        return None
    return moment.astimezone(UTC)


def normalise_time(text: str) -> str | None:
    """RFC 3339 as `YYYY-MM-DDTHH:MM:SSZ` in UTC (whole seconds), or None when unparseable."""
    moment = parse_rfc3339(text)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


@lru_cache(maxsize=65536)
def grid_when(attested_at: str) -> str:
    """`YYYY-MM-DD HH:MM UTC`, aicr's grid and `generatedAt` format."""
    moment = parse_rfc3339(attested_at)
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else ""


@lru_cache(maxsize=65536)
def series_when(attested_at: str) -> str:
    """`YYYY-MM-DD`, aicr's series format."""
    moment = parse_rfc3339(attested_at)
    return moment.strftime("%Y-%m-%d") if moment else ""


def k8s_minor(evidence: Evidence) -> str:
    """`major.minor` of the signed `fingerprint.k8sVersion.value`; "" when not captured."""
    fp = evidence.predicate.get("fingerprint")
    entry = fp.get("k8sVersion") if isinstance(fp, Mapping) else None
    value = entry.get("value") if isinstance(entry, Mapping) else None
    match = _K8S.fullmatch(str(value).strip()) if isinstance(value, str) else None
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else ""


def run_id_for(evidence: Evidence) -> str:
    """`<YYYYMMDDTHHMMSSZ>-<first 12 hex of the bundle digest>`; raises on a bad attestedAt."""
    moment = parse_rfc3339(evidence.attested_at)
    if moment is None:
        raise InputError(
            "predicate attestedAt is not an RFC 3339 timestamp",
            location=Location(
                evidence.evidence_ref or str(evidence.bundle_digest), "predicate.attestedAt"
            ),
            expected="a timestamp such as 2026-09-19T02:57:39Z",
            found=repr(evidence.attested_at),
            hint="re-attest the run with a current aicr; this bundle cannot be ordered",
        )
    hexpart = str(evidence.bundle_digest).removeprefix("sha256:")[:12]
    return f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{hexpart}"


def _profile_selection(evidence: Evidence, pointer: Pointer) -> str | None:
    profile = evidence.predicate.get("profile")
    selection = profile.get("selection") if isinstance(profile, Mapping) else None
    if isinstance(selection, str) and selection:
        return selection
    return pointer.profile


def run_from_verified(verified: Verified, classification: Classification, pointer: Pointer) -> Run:
    """The counted `Run` of one verified bundle. Raises `InputError` on an unparseable attestedAt.

    Results are keyed (phase, name) over aicr's phases, bucketed with `generator.ctrf`.
    """
    ev = verified.evidence
    run_id = run_id_for(ev)
    results: dict[RowKey, TestResult] = {}
    skips: dict[RowKey, str] = {}
    for phase in PHASE_ORDER:
        report = ev.ctrf.get(phase)
        for test in report.tests if report else ():
            key: RowKey = (phase, test.name)
            results[key] = bucket_status(test.status)
            reason = skip_reason(test)
            if reason:
                skips[key] = reason
    return Run(
        recipe=RecipeName(ev.recipe_name or pointer.recipe),
        signer=verified.signer,
        classification=classification,
        run_id=run_id,
        aicr_version=ev.aicr_version,
        aicr_commit=ev.aicr_commit,
        k8s_version=k8s_minor(ev),
        attested_at=normalise_time(ev.attested_at) or ev.attested_at,
        evidence_ref=ev.evidence_ref or pointer.bundle.pinned_ref,
        recipe_digest=ev.recipe_digest,
        results=results,
        bundle_digest=ev.bundle_digest,
        profile=_profile_selection(ev, pointer),
        skip_reasons=skips,
        logged_at=ev.logged_at or "",
    )


def run_order(run: Run) -> tuple[str, str, str]:
    """The sort key of "newest": the verified log time first (a claimed attestedAt never
    overtakes it), then attestedAt and the run id to break ties."""
    return (run.logged_at, run.attested_at, run.run_id)


def newest_first(runs: Iterable[Run]) -> list[Run]:
    """A signer's runs, newest first by the verified log time (`run_order`). aicr orders by
    attestedAt, a claim the signer writes; see generator.verify.times."""
    return sorted(runs, key=run_order, reverse=True)


def countable(run: Run) -> bool:
    """Runs with an empty issuer or identity are skipped (they would all share one key)."""
    return bool(run.signer.issuer and run.signer.identity)


def latest_per_signer(runs: Iterable[Run]) -> dict[str, Run]:
    """Each signer's newest run, keyed by the verified consensus key `issuer\\nidentity`."""
    latest: dict[str, Run] = {}
    for run in newest_first(r for r in runs if countable(r)):
        latest.setdefault(run.signer.consensus_key, run)
    return latest
