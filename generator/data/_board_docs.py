"""The board's documents: `data/index.json` (groups, tabs and their grids) and `data/series/*.json`.

Field names follow aicr's `aicr-corroboration/v1`; our additions (`omitted`, `resultsByRow`,
`attestedAt`) are documented in docs/data-contract.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from generator.corroborate import (
    STATES,
    Board,
    BoardTab,
    Grid,
    GridRow,
    Omitted,
    Series,
    Tab,
    grid_when,
    series_when,
    shown_rows,
)
from generator.limits import LIMITS
from generator.model import PHASE_ORDER, Run

SCHEMA = "aicr-corroboration/v1"


LINKS: Mapping[str, str] = {
    "install": "curl -sfL https://get.aicr.run | bash",
    "docs": "https://docs.aicr.run/",
    "github": "https://github.com/NVIDIA/aicr",
}


def _grid(grid: Grid, limit: int, written: _Written) -> dict[str, Any]:
    """One grid's document; `written`: what this recipe's grids already wrote."""
    rows, left = shown_rows(grid.rows, limit)
    if grid.unlisted_only:  # rows only left-out unlisted signers report: untested, unlisted
        left = dict(
            sorted({**left, "UNTESTED": left.get("UNTESTED", 0) + grid.unlisted_only}.items())
        )
    doc: dict[str, Any] = {
        "aicrVer": grid.aicr_version,
        "phaseRollup": {str(p): str(s) for p, s in grid.phase_rollup.items()},
        "rollup": str(grid.rollup),
        "tests": [written.row(r) for r in rows],
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


class _Written:
    """The parts of one recipe's grid documents already written, by the identity of what they
    were written from (the recipe's tab holds it meanwhile; the documents are only ever read):
    a version grid made of the combined grid's runs shares its rows, and a run's cell reads
    alike in every row it has the same result in."""

    __slots__ = ("_cells", "_rows")

    def __init__(self) -> None:
        self._rows: dict[int, dict[str, Any]] = {}
        self._cells: dict[tuple[int, str, str], dict[str, Any]] = {}

    def row(self, row: GridRow) -> dict[str, Any]:
        doc = self._rows.get(id(row))
        if doc is None:
            doc = self._rows[id(row)] = _row(row, self._cells)
        return doc


def _row(row: GridRow, cells: dict[tuple[int, str, str], dict[str, Any]]) -> dict[str, Any]:
    signers = []
    for cell in row.signers:
        run = cell.run
        result = str(cell.result)
        key = (id(run), cell.src, result)
        entry = cells.get(key)
        if entry is None:
            entry = cells[key] = _cell(cell.src, result, run)
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


def _cell(src: str, result: str, run: Run) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "src": src,
        "result": result,
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
    return entry


def _grids(tab: Tab) -> list[dict[str, Any]]:
    """The combined grid, then each version's, within the rows limits of one grid and of one
    recipe (the combined grid is filled first)."""
    budget = LIMITS.rows_per_recipe
    out = []
    written = _Written()
    for grid in (tab.combined, *tab.versions):
        doc = _grid(grid, min(LIMITS.rows_per_grid, budget), written)
        budget -= len(doc["tests"])
        out.append(doc)
    return out


def tab_document(tab: BoardTab) -> Mapping[str, Any]:
    """A tab's document in `data/index.json`: made, or as kept (`KeptTab`)."""
    return _tab(tab) if isinstance(tab, Tab) else tab.kept.doc


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
                    {
                        "accelerator": d.accelerator,
                        "os": d.os,
                        "tabs": [tab_document(t) for t in d.tabs],
                    }
                    for d in g.dashboards
                ],
            }
            for g in board.groups
        ],
    }


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


def series_documents(board: Board) -> dict[str, Mapping[str, Any]]:
    """One series document per tab (made, or as kept), keyed by the recipe slug (the file
    name)."""
    return {
        tab.recipe: series_document(tab.series) if isinstance(tab, Tab) else tab.kept.series
        for tab in board.tabs
    }
