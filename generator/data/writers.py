"""The data contract writers: JSON-ready documents from the board and the pointer records.

Field names follow aicr's `aicr-corroboration/v1` exactly; additions are documented as ours in
docs/data-contract.md. `write_data` is the only function here that touches the file system.
"""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from generator.corroborate import (
    STATES,
    Board,
    Grid,
    GridRow,
    Omitted,
    Series,
    Tab,
    grid_when,
    run_id_for,
    safe_slug,
    series_when,
)
from generator.corroborate.bounds import shown_rows
from generator.data.gojson import write_go_json
from generator.data.records import FreshnessInfo, PointerRecord
from generator.data.schemaid import with_schema_id
from generator.errors import BuildError, InputError, Location
from generator.facts import (
    bandwidth,
    components,
    criteria,
    criteria_match,
    hardware_facts,
    redacted,
    skip_reason,
    validator_images,
)
from generator.facts.failure import failure_reason
from generator.limits import LIMITS
from generator.model import (
    PHASE_ORDER,
    Evidence,
    NoVerdict,
    ParsedPointer,
    Pending,
    Rejected,
    RejectedPointer,
    TestResult,
    Verified,
    VerifyExit,
)

SCHEMA = "aicr-corroboration/v1"
LINKS: Mapping[str, str] = {
    "install": "curl -sfL https://get.aicr.run | bash",
    "docs": "https://docs.aicr.run/",
    "github": "https://github.com/NVIDIA/aicr",
}
SCHEMA_FILES: tuple[str, ...] = (
    "index.schema.json",
    "series.schema.json",
    "pointers.schema.json",
    "build-info.schema.json",
    "manifest.schema.json",
    "badge-endpoint.schema.json",
)


# --------------------------------------------------------------------------- index.json


def _grid(grid: Grid, limit: int = LIMITS.rows_per_grid) -> dict[str, Any]:
    rows, left = shown_rows(grid.rows, limit)
    if grid.unlisted_only:  # rows only left-out unlisted signers report: untested, unlisted
        left = dict(
            sorted({**left, "UNTESTED": left.get("UNTESTED", 0) + grid.unlisted_only}.items())
        )
    doc: dict[str, Any] = {
        "aicrVer": grid.aicr_version,
        "phaseRollup": {str(p): str(s) for p, s in grid.phase_rollup.items()},
        "rollup": str(grid.rollup),
        "tests": [_row(r) for r in rows],
    }
    if left:  # ours: rows past the limit, by state (the rollups count them)
        doc["omitted"] = {"tests": sum(left.values()), "byState": left}
    return doc


def omitted_document(omitted: Omitted) -> dict[str, int]:
    """`omitted` of a recipe (ours): what it leaves out past the count limits."""
    return {
        "unlistedSigners": omitted.unlisted_signers,
        "unlistedRuns": omitted.unlisted_runs,
        "versions": omitted.versions,
        "historyRuns": omitted.history_runs,
        "historyRows": omitted.history_rows,
    }


_grid_when = lru_cache(maxsize=1 << 14)(grid_when)
"""`grid_when`, remembered: index.json asks it per signer cell of every row, for few runs."""


def _row(row: GridRow) -> dict[str, Any]:
    signers = []
    for cell in row.signers:
        run = cell.run
        entry: dict[str, Any] = {
            "src": cell.src,
            "result": str(cell.result),
            "aicrVer": run.aicr_version,
            "k8sVer": run.k8s_version,
            "when": _grid_when(run.attested_at),
            "build": run.run_id,
            "evidenceRef": run.evidence_ref,
            "allowlisted": run.allowlisted,
            "recipeDigest": str(run.recipe_digest),
        }
        if run.aicr_commit:
            entry["aicrCommit"] = run.aicr_commit
        signers.append(entry)
    return {
        "phase": str(row.phase),
        "name": row.name,
        "consensus": str(row.consensus),
        "reported": row.reported,
        "signers": signers,
        "counts": {
            "pass": row.counts.passed,
            "fail": row.counts.failed,
            "notRun": row.counts.not_run,
        },
        "sameDigest": row.same_digest,
        "distinctOrgs": row.distinct_orgs,
        "oneOrg": row.one_org,
    }


def _grids(tab: Tab) -> list[dict[str, Any]]:
    """The combined grid, then each version's, within the rows limits of one grid and of one
    recipe (the combined grid is filled first)."""
    budget = LIMITS.rows_per_recipe
    out = []
    for grid in (tab.combined, *tab.versions):
        doc = _grid(grid, min(LIMITS.rows_per_grid, budget))
        budget -= len(doc["tests"])
        out.append(doc)
    return out


def _tab(tab: Tab) -> dict[str, Any]:
    combined, *versions = _grids(tab)
    doc: dict[str, Any] = {
        "recipe": tab.recipe,
        "coord": tab.coord.as_dict(),
        "rollup": str(tab.rollup),
        "tally": {str(s): n for s, n in tab.tally.items()},
        "combined": combined,
        "versions": versions,
        "path": tab.coordinate.path,
    }
    if tab.profile:
        doc["profile"] = tab.profile
    if tab.profile_selection:
        doc["profileSelection"] = tab.profile_selection
    if tab.omitted.any:
        doc["omitted"] = omitted_document(tab.omitted)
    return doc


def index_document(board: Board, *, build_time: str) -> dict[str, Any]:
    """`data/index.json`. `build_time` is SOURCE_DATE_EPOCH or the newest attestedAt (RFC 3339)."""
    meta: dict[str, Any] = {
        "links": dict(LINKS),
        "counts": {
            "recipes": len(board.tabs),
            "csps": len(board.groups),
            "sources": len(board.sources),
        },
        "buildTime": build_time,
    }
    if board.generated_at:
        meta["generatedAt"] = board.generated_at
    return {
        "schema": SCHEMA,
        "meta": meta,
        "states": {
            str(state): {
                "rank": info.rank,
                "colour": info.colour,
                "icon": info.icon,
                "label": info.label,
                "description": info.description,
            }
            for state, info in STATES.items()
        },
        "phases": [str(p) for p in PHASE_ORDER],
        "criteria": {axis: list(values) for axis, values in board.criteria.items()},
        "sources": {
            src: {
                "label": rec.label,
                "class": str(rec.signer_class),
                "allowlisted": rec.allowlisted,
                "signerId": rec.identity,
                "slug": str(rec.slug),
                "issuer": rec.issuer,
                "org": rec.org,
            }
            for src, rec in board.sources.items()
        },
        "groups": [
            {
                "service": g.service,
                "dashboards": [
                    {"accelerator": d.accelerator, "os": d.os, "tabs": [_tab(t) for t in d.tabs]}
                    for d in g.dashboards
                ],
            }
            for g in board.groups
        ],
    }


# --------------------------------------------------------------------------- series


def series_document(series: Series) -> dict[str, Any]:
    """`data/series/<recipe>.json`: aicr's shape plus `resultsByRow` and `attestedAt`."""
    builds: dict[str, list[dict[str, Any]]] = {}
    for src, columns in series.builds.items():
        out = []
        for build in columns:
            run = build.run
            column: dict[str, Any] = {
                "id": run.run_id,
                "aicrVer": run.aicr_version,
                "k8sVer": run.k8s_version,
                "when": series_when(run.attested_at),
                "attestedAt": run.attested_at,
                "newest": build.newest,
                "evidenceRef": run.evidence_ref,
                "results": {n: str(r) for n, r in build.results.items()},
                "resultsByRow": {f"{p}/{n}": str(r) for (p, n), r in build.results_by_row.items()},
            }
            if run.aicr_commit:
                column["aicrCommit"] = run.aicr_commit
            out.append(column)
        builds[src] = out
    doc: dict[str, Any] = {
        "recipe": series.recipe,
        "rows": [{"name": n, "phase": str(p)} for p, n in series.rows],
        "builds": builds,
        "health": {
            src: {"flakePct": h.flake_pct, "lastPassBuild": h.last_pass_build, "builds": h.builds}
            for src, h in series.health.items()
        },
    }
    if series.omitted_runs or series.omitted_rows:  # ours: past the count limits
        doc["omitted"] = {"builds": series.omitted_runs, "rows": series.omitted_rows}
    return doc


def series_documents(board: Board) -> dict[str, dict[str, Any]]:
    """One series document per tab, keyed by the recipe slug (the file name)."""
    return {tab.recipe: series_document(tab.series) for tab in board.tabs}


# --------------------------------------------------------------------------- pointers.json


def evidence_document(
    evidence: Evidence, *, rekor_log_index: int | None = None, log_url: str | None = None
) -> dict[str, Any]:
    """`EVIDENCE`: what the recipe and source pages render about one bundle."""
    try:
        run_id: str | None = run_id_for(evidence)
    except InputError:
        run_id = None
    profile = evidence.predicate.get("profile")
    selection = profile.get("selection") if isinstance(profile, Mapping) else None
    match = criteria_match(evidence)
    phases: dict[str, Any] = {}
    raw_phases = evidence.predicate.get("phases")
    for phase in PHASE_ORDER:
        entry = raw_phases.get(str(phase)) if isinstance(raw_phases, Mapping) else None
        if isinstance(entry, Mapping):
            phases[str(phase)] = {k: _int(entry.get(k)) for k in ("passed", "failed", "skipped")}
    listed = [
        (str(phase), t)
        for phase in PHASE_ORDER
        for t in (evidence.ctrf[phase].tests if phase in evidence.ctrf else ())
    ]
    limit = LIMITS.tests_per_pointer
    left = max(len(listed) - limit, 0)
    if left:  # non-passing tests first, then in report order
        order = sorted(
            range(len(listed)), key=lambda i: (listed[i][1].result is TestResult.PASS, i)
        )
        listed = [listed[i] for i in sorted(order[:limit])]
    tests = [
        {
            "phase": phase,
            "name": t.name,
            "status": t.status,
            "result": str(t.result),
            "skipReason": skip_reason(t),
            **({"failure": failure_reason(t)} if t.result is TestResult.FAIL else {}),
        }
        for phase, t in listed
    ]
    doc = {
        "attestedAt": evidence.attested_at,
        "loggedAt": evidence.logged_at,
        "runId": run_id,
        "aicrVersion": evidence.aicr_version,
        "aicrCommit": evidence.aicr_commit,
        "evidenceRef": evidence.evidence_ref,
        "recipeDigest": str(evidence.recipe_digest),
        "profile": selection if isinstance(selection, str) and selection else None,
        "rekorLogIndex": rekor_log_index,
        "logUrl": log_url,
        "redacted": redacted(evidence),
        "criteria": criteria(evidence).as_dict(),
        "criteriaMatch": {
            "matched": match.matched,
            "mismatched": list(match.mismatched),
            "dimensions": [
                {
                    "dimension": d.dimension,
                    "recipeRequires": d.recipe_requires,
                    "fingerprintProvides": d.fingerprint_provides,
                    "match": d.match,
                    "mismatched": d.mismatched,
                }
                for d in match.dimensions
            ],
        },
        "hardware": [
            {
                "key": f.key,
                "label": f.label,
                "value": f.value,
                "source": f.source,
                "detail": f.detail,
            }
            for f in hardware_facts(evidence)
        ],
        "components": [{"name": c.name, "version": c.version} for c in components(evidence)],
        "validatorImages": [
            {"image": v.image, "digest": v.digest, "mutable": v.mutable}
            for v in validator_images(evidence)
        ],
        "phases": phases,
        "tests": tests,
        "bandwidth": [
            {
                "check": b.check,
                "measured": b.measured,
                "floor": b.floor,
                "passLine": b.pass_line,
                "status": b.status,
                "result": str(b.result) if b.result else None,
                "disagrees": b.disagrees,
                "note": b.note,
            }
            for b in bandwidth(evidence)
        ],
    }
    if left:  # ours: tests past the limit, not listed
        doc["truncated"] = {"tests": left}
    return doc


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _identity(issuer: str, identity: str) -> dict[str, str]:
    return {"identity": identity, "issuer": issuer}


def pointer_document(record: PointerRecord) -> dict[str, Any]:
    """One `POINTER` entry."""
    pf = record.pointer
    verdict = record.verdict
    claimed = verified = None
    bundle = None
    source_id = None
    if isinstance(pf, ParsedPointer):
        p = pf.pointer
        bundle = {
            "oci": p.bundle.oci,
            "digest": p.bundle.digest,
            "predicateType": str(p.bundle.predicate_type),
        }
        if p.signer is not None:
            claimed = _identity(p.signer.identity.issuer, p.signer.identity.identity)
    signer = verdict.signer if isinstance(verdict, Verified | Rejected) else None
    if signer is not None and signer.issuer and signer.identity:
        verified = _identity(signer.issuer, signer.identity)
        source_id = str(signer.source_id)
    cls = record.classification
    steps = verdict.steps if verdict is not None else ()
    cause = verdict.cause if isinstance(verdict, Rejected | NoVerdict) else None
    if isinstance(pf, RejectedPointer):
        exit_code = int(VerifyExit.INVALID)
        failure: dict[str, Any] | None = {
            "class": "schema",
            "detail": pf.message,
            "httpStatus": None,
            "hint": pf.hint,
        }
    elif verdict is None:
        exit_code, failure = int(VerifyExit.NO_VERDICT), None
    else:
        exit_code = int(verdict.exit)
        failure = (
            None
            if cause is None
            else {
                "class": str(cause.failure_class),
                "detail": cause.detail,
                "httpStatus": cause.http_status,
                "hint": cause.hint,
            }
        )
    evidence = None
    if isinstance(verdict, Verified):
        evidence = evidence_document(
            verdict.evidence, rekor_log_index=verdict.rekor_log_index, log_url=verdict.log_url
        )
    elif isinstance(verdict, Pending):
        evidence = evidence_document(verdict.evidence)
    recipe = pf.pointer.recipe if isinstance(pf, ParsedPointer) else pf.recipe
    return {
        "path": pf.location.path,
        "recipe": recipe or pf.location.folder_recipe,
        "source": pf.location.folder_source,
        "bundle": bundle,
        "signer": {
            "claimed": claimed,
            "verified": verified,
            "class": str(cls.signer_class) if cls else None,
            "allowlisted": bool(cls and cls.allowlisted),
            "label": record.label,
            "sourceId": source_id,
        },
        "verify": {
            "exit": exit_code,
            "pending": isinstance(verdict, Pending),
            "failureCause": failure,
            "steps": [
                {
                    "step": s.step,
                    "name": s.name,
                    "status": str(s.status),
                    "detail": s.detail,
                    "subRows": [
                        {"key": r.key, "value": r.value, "beyondAicr": r.beyond_aicr}
                        for r in s.sub_rows
                    ],
                }
                for s in steps
            ],
            "rule": pf.rule if isinstance(pf, RejectedPointer) else None,
            "verifiedAt": record.verified_at,
            "reusedFrom": None
            if record.verified_at is None
            else {"verifiedAt": record.verified_at, "trustRoot": record.reused_trust_root},
            "anonymous": (
                not verdict.needed_credentials if isinstance(verdict, Verified | Pending) else None
            ),
        },
        "duplicateOf": record.duplicate_of,
        "attestedAtSkew": record.attested_at_skew,
        "freshness": _freshness(record.freshness),
        "evidence": evidence,
    }


def _freshness(info: FreshnessInfo) -> dict[str, Any]:
    """`POINTER.freshness`, with the (ours) `explanation` of stale evidence or null."""
    why = info.explanation
    return {
        "state": str(info.state),
        "signed": info.signed,
        "current": info.current,
        "provider": info.provider,
        "explanation": None
        if why is None
        else {
            "diff": list(why.diff),
            "truncated": why.truncated,
            "commits": None if why.commits is None else list(why.commits),
        },
    }


def pointers_document(
    records: Iterable[PointerRecord],
    made: Mapping[str, dict[str, Any]] | None = None,
    *,
    board: Board | None = None,
) -> dict[str, Any]:
    """`data/pointers.json`: every pointer file, sorted by path.

    `made` holds entries already made by `pointer_document` (by path), where the verdicts
    were (a build's verification workers); the other records are made here. With a `board`,
    pointers whose run a count limit left out of its recipe say so (`omitted`), and the
    recipes that left something out are counted (`omitted`, ours)."""
    known = made or {}
    left = board.omitted_origins if board is not None else {}
    pointers = []
    for r in sorted(records, key=lambda r: r.path):
        doc = known.get(r.path) or pointer_document(r)
        if r.path in left:
            doc = {**doc, "omitted": left[r.path]}
        pointers.append(doc)
    out: dict[str, Any] = {"pointers": pointers}
    recipes = {
        t.recipe: omitted_document(t.omitted)
        for t in (board.tabs if board is not None else ())
        if t.omitted.any
    }
    if recipes:
        out["omitted"] = dict(sorted(recipes.items()))
    return out


# --------------------------------------------------------------------------- build-info.json


def build_info_document(
    *,
    build_time: str,
    commit: str | None,
    source_url: str | None,
    verifier: str,
    trust_name: str,
    trust_production: bool,
    trust_refreshed: str | None,
    trusted_registries: Sequence[str] | None,
    preview: bool,
    trust_fallback: str | None = None,
    publisher: Mapping[str, str] | None = None,
    verify_with: Mapping[str, Any] | None = None,
    log_search_url: str | None = None,
) -> dict[str, Any]:
    """`data/build-info.json` (ours): how and from what this site was built. `trustRootFallback`
    is only written when a TUF refresh could not reach its repository (so every page warns)."""
    info: dict[str, Any] = {
        "buildTime": build_time,
        "commit": commit,
        "sourceUrl": source_url,
        "verifier": verifier,
        "trust": {"name": trust_name, "production": trust_production, "refreshed": trust_refreshed},
        "trustedRegistries": list(trusted_registries) if trusted_registries is not None else None,
        "preview": preview,
    }
    if trust_fallback:
        info["trustRootFallback"] = {"reason": trust_fallback}
    if publisher:  # who signs data/manifest.json (`build --publisher-identity`)
        info["publisher"] = {"identity": publisher["identity"], "issuer": publisher["issuer"]}
    if verify_with is not None:  # the options a reader repeats a verification with
        info["verifyWith"] = dict(verify_with)
    if log_search_url:  # `--log-search-url`: a transparency-log search page, `{logIndex}`
        info["logSearchUrl"] = log_search_url
    return info


def report_cache_failures(data_dir: Path) -> None:
    """Add this build's cache report to `<data_dir>/build-info.json`: how many cache entries
    failed authentication (`generator.cacheauth`) and were read as misses. Written once all
    cache reads are done and after the evaluation memo took its copy, so a reused evaluation
    never carries an earlier build's count."""
    from generator.cacheauth import failures

    path = data_dir / "build-info.json"
    doc = json.loads(path.read_bytes())
    doc["cache"] = {"authenticationFailures": len(failures())}
    with path.open("wb") as fh:
        write_go_json(doc, fh)


def default_build_time(board: Board, source_date_epoch: int | None = None) -> str:
    """SOURCE_DATE_EPOCH as RFC 3339 when given, else the newest verified log time ("" if
    none); never a claimed attestedAt."""
    if source_date_epoch is not None:
        return datetime.fromtimestamp(source_date_epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return board.newest_logged_at or ""


# --------------------------------------------------------------------------- files


def schema_text(name: str) -> str:
    """One shipped JSON Schema, read from the package."""
    if name not in SCHEMA_FILES:
        raise KeyError(name)
    return importlib.resources.files("generator.data").joinpath("schema", name).read_text("utf-8")


def series_file_name(recipe: str) -> str:
    """`<recipe>.json`, after checking the slug is a safe single path segment."""
    if not safe_slug(recipe):
        raise BuildError(
            "recipe slug cannot be used as a series file name",
            location=Location("data/series", recipe),
            expected="letters, digits, '.', '_' or '-', not starting with '.'",
            found=repr(recipe),
            hint="fix the recipe name in the pointer and predicate; the board should skip it",
        )
    return f"{recipe}.json"


def data_documents(
    *,
    board: Board,
    records: Iterable[PointerRecord],
    build_time: str,
    build_info: Mapping[str, Any],
    pointer_documents: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """All data documents of one build: index, series (by recipe), pointers and build-info
    (`pointer_documents`: pointers.json entries already made, see `pointers_document`)."""
    return {
        "index": index_document(board, build_time=build_time),
        "series": series_documents(board),
        "pointers": pointers_document(records, pointer_documents, board=board),
        "build_info": dict(build_info),
    }


def write_documents(
    out_dir: Path, documents: Mapping[str, Any], site_url: str | None = None
) -> list[Path]:
    """Write `<out_dir>/data/...` from `data_documents` output, plus the schemas (whose `$id`
    names `site_url`, see `generator.data.schemaid`).

    Returns the written files in write order. Same documents give byte-identical files.
    """
    data = out_dir / "data"
    plan: list[tuple[Path, Any]] = [
        (data / "index.json", documents["index"]),
        (data / "pointers.json", documents["pointers"]),
        (data / "build-info.json", documents["build_info"]),
    ]
    # File names are checked before anything is written, as when all texts were made first.
    plan.extend(
        (data / "series" / series_file_name(recipe), doc)
        for recipe, doc in sorted(documents["series"].items())
    )
    written: list[Path] = []
    folders: set[Path] = set()
    for path, doc in plan:
        if path.parent not in folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            folders.add(path.parent)
        with path.open("wb") as fh:
            write_go_json(doc, fh)  # streamed: the big documents are never one string
        written.append(path)
    for name in SCHEMA_FILES:
        path = data / "schema" / name
        _write_text(path, with_schema_id(schema_text(name), name, site_url), folders)
        written.append(path)
    return written


def _write_text(path: Path, text: str, folders: set[Path]) -> None:
    if path.parent not in folders:
        path.parent.mkdir(parents=True, exist_ok=True)
        folders.add(path.parent)
    path.write_text(text, encoding="utf-8", newline="\n")


def write_data(
    out_dir: Path,
    *,
    board: Board,
    records: Iterable[PointerRecord],
    build_time: str,
    build_info: Mapping[str, Any],
) -> list[Path]:
    """Write `<out_dir>/data/...`: index, series, pointers, build-info and schemas."""
    documents = data_documents(
        board=board, records=records, build_time=build_time, build_info=build_info
    )
    return write_documents(out_dir, documents)
