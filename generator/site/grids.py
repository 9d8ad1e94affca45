"""Consensus grids as view models: one row per test, one cell per signer column.

A recipe page shows one grid per aicr version lens; `grid_view` gathers everything the grid
template (`_grid.j2`) draws, so the template only loops and escapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.site.bounded import OmittedRows, omitted_rows, page_grids
from generator.site.model import SiteModel, anchor

__all__ = [
    "Cell",
    "ColumnRun",
    "GridView",
    "HeadCell",
    "Lens",
    "PhaseRows",
    "Row",
    "Run",
    "counts_text",
    "grid_rows",
    "grid_view",
    "k8s_minors",
    "newest_build",
    "result_counts",
    "runs_by_ref",
    "signer_columns",
]


def result_counts(results: Mapping[str, Any]) -> dict[str, int]:
    """How many rows of one build passed, failed and were not run."""
    values = list(results.values())
    return {
        "pass": values.count("pass"),
        "fail": values.count("fail"),
        "notRun": values.count("not-run"),
    }


def newest_build(builds: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The build marked newest, else the first one."""
    return next((b for b in builds if b.get("newest")), builds[0] if builds else None)


def signer_columns(
    model: SiteModel, grids: Sequence[Mapping[str, Any]], latest: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Source ids that appear in any grid or latest evidence, counted first, then by label."""
    seen: set[str] = set()
    for g in grids:
        for t in g.get("tests", []):
            seen.update(str(s["src"]) for s in t.get("signers", []))
    for p in latest:
        sid = (p.get("signer") or {}).get("sourceId")
        if sid:
            seen.add(str(sid))
    return sorted(seen, key=lambda s: (not model.counted(s), model.label(s)))


@dataclass(frozen=True)
class Cell:
    """One signer's result for one test row: pass, fail, not-run (with reason) or none; the
    id of its run's panel in the column heading (`run`, empty without a run) and, for a
    failure, why it failed and the id of its excerpt's block (unique on the page: Material's
    copy button names a block by the id it or its nearest ancestor has). Everything about
    the run itself is in the column, once."""

    result: str
    reason: str | None
    k8s: str
    run: str = ""
    message: str | None = None
    excerpt: tuple[str, ...] = ()
    excerpt_id: str = ""


@dataclass(frozen=True)
class Run:
    """A verified run a grid cell points at (by its `evidenceRef`)."""

    signer: str
    pointer: str
    digest: str
    failures: Mapping[tuple[str, str], Mapping[str, Any]]


@dataclass(frozen=True)
class ColumnRun:
    """One run a column's cells come from, shown once in the column heading: its panel id
    (`run-...`, what the cells link to), time, signer, versions, pointer and bundle digest."""

    id: str
    when: str
    signer: str
    aicr: str
    k8s: str
    pointer: str
    digest: str


def runs_by_ref(m: SiteModel, pointers: Sequence[Mapping[str, Any]]) -> dict[str, Run]:
    """The verified runs of a recipe by evidence reference, with their failed tests' reasons."""
    out: dict[str, Run] = {}
    for p in pointers:
        ev = p.get("evidence")
        if not ev or not ev.get("evidenceRef"):
            continue
        failures = {
            (str(t.get("phase")), str(t.get("name"))): t.get("failure") or {}
            for t in ev.get("tests") or ()
            if t.get("result") == "fail"
        }
        out[str(ev["evidenceRef"])] = Run(
            m.label((p.get("signer") or {}).get("sourceId"), p),
            str(p.get("path") or ""),
            str((p.get("bundle") or {}).get("digest") or ""),
            failures,
        )
    return out


def _run_cell(
    s: Mapping[str, Any],
    key: tuple[str, str],
    runs: Mapping[str, Run],
    lens: str,
    found: dict[str, ColumnRun],
) -> Cell:
    ref = str(s.get("evidenceRef") or "")
    run = runs.get(ref)
    result = str(s["result"])
    k8s = str(s.get("k8sVer") or "")
    column = found.get(ref) if ref else None
    if ref and column is None:
        column = found[ref] = ColumnRun(
            anchor("run", lens, ref, ""),
            str(s.get("when") or ""),
            run.signer if run else "",
            str(s.get("aicrVer") or ""),
            k8s,
            run.pointer if run else "",
            run.digest if run else "",
        )
    failure = run.failures.get(key) if run is not None and result == "fail" else None
    if failure is None:
        return Cell(result, None, k8s, column.id if column else "")
    return Cell(
        result,
        None,
        k8s,
        column.id if column else "",
        str(failure.get("message") or "no message in the report"),
        tuple(str(x) for x in failure.get("excerpt") or ()),
        anchor("trace", column.id if column else lens, *key),
    )


@dataclass(frozen=True)
class Row:
    """One test row of a grid, as shown."""

    phase: str
    name: str
    state: str
    rank: int
    counts: Mapping[str, Any]
    reported: int
    notes: tuple[str, ...]
    cells: tuple[Cell, ...]
    flags: tuple[str, ...] = ()
    anchor: str = ""

    @property
    def detail(self) -> str:
        """Everything about the consensus in one sentence (the cell's tooltip)."""
        c = self.counts
        parts = [
            f"allowlisted signers: {c.get('pass', 0)} pass, {c.get('fail', 0)} fail, "
            f"{c.get('notRun', 0)} not run"
        ]
        if self.reported:
            parts.append(f"{self.reported} reported by unlisted signers, not counted")
        parts.extend(self.notes)
        return "; ".join(parts)


def _skips(
    latest: Sequence[Mapping[str, Any]],
) -> tuple[dict[tuple[str, str, str], str | None], dict[str, str]]:
    """Each signer's skipped tests with the reason, and its Kubernetes minor version."""
    skipped: dict[tuple[str, str, str], str | None] = {}
    k8s_of: dict[str, str] = {}
    for p in latest:
        sid = str((p.get("signer") or {}).get("sourceId") or "")
        ev = p["evidence"]
        for t in ev.get("tests") or []:
            if t.get("result") == "not-run":
                skipped[(sid, str(t.get("phase")), str(t.get("name")))] = t.get("skipReason")
        for hw in ev.get("hardware") or []:
            if hw.get("key") == "k8sVersion" and hw.get("value"):
                k8s_of[sid] = ".".join(str(hw["value"]).split(".")[:2])
    return skipped, k8s_of


def grid_rows(
    model: SiteModel,
    grid: Mapping[str, Any],
    columns: Sequence[str],
    latest: Sequence[Mapping[str, Any]],
    runs: Mapping[str, Run] | None = None,
    column_runs: Sequence[dict[str, ColumnRun]] | None = None,
) -> list[Row]:
    """The rows of one grid with one cell per column (signer); `runs` (`runs_by_ref`) adds
    each cell's failure reason, and each column's runs are gathered into `column_runs` (one
    dict per column, by evidence reference, in order of first use)."""
    skipped, k8s_of = _skips(latest)
    rows = []
    runs = runs or {}
    lens = str(grid.get("aicrVer") or "combined")
    found = list(column_runs) if column_runs is not None else [{} for _ in columns]
    for t in grid.get("tests", []):
        by_src = {str(s["src"]): s for s in t.get("signers", [])}
        cells = []
        for n, src in enumerate(columns):
            s = by_src.get(src)
            key = (src, str(t["phase"]), str(t["name"]))
            if s is not None:
                cells.append(_run_cell(s, key[1:], runs, lens, found[n]))
            elif key in skipped and grid.get("aicrVer", "") == "":
                cells.append(Cell("not-run", skipped[key], k8s_of.get(src, "")))
            else:
                cells.append(_NONE)
        state = str(t.get("consensus"))
        notes = []
        flags = []
        if state == "CONFIRMED":
            if t.get("sameDigest"):
                notes.append("same recipe digest")
            else:
                notes.append("signers attested different recipe digests")
                flags.append("digests differ")
            if t.get("oneOrg"):
                notes.append("all passes from one organisation")
                flags.append("one org")
            else:
                notes.append(f"{t.get('distinctOrgs')} organisations")
        rows.append(
            Row(
                str(t["phase"]),
                str(t["name"]),
                state,
                int(model.states.get(state, {}).get("rank", 0)),
                t.get("counts") or {},
                int(t.get("reported") or 0),
                tuple(notes),
                tuple(cells),
                tuple(flags),
                anchor("check", grid.get("aicrVer") or "combined", t["phase"], t["name"]),
            )
        )
    return rows


_NONE = Cell("none", None, "")


def counts_text(row: Row) -> str:
    """The consensus cell's one short count line (allowlisted signers only)."""
    c = row.counts
    parts = [f"{c.get('pass', 0)} pass", f"{c.get('fail', 0)} fail"]
    if c.get("notRun"):
        parts.append(f"{c['notRun']} not run")
    return " · ".join(parts)


def k8s_minors(grids: Sequence[Mapping[str, Any]]) -> list[str]:
    """Distinct Kubernetes minors of the signers in these grids, newest first."""
    found = {
        ".".join(str(s.get("k8sVer")).split(".")[:2])
        for g in grids
        for t in g.get("tests", [])
        for s in t.get("signers", [])
        if s.get("k8sVer")
    }

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) if x.isdigit() else 0 for x in v.split("."))

    return sorted(found, key=key, reverse=True)


@dataclass(frozen=True)
class HeadCell:
    """A signer column's heading in one lens: its label, its source page (if any), counted or
    not, and the runs its cells come from (their details, once per column)."""

    label: str
    href: str | None
    counted: bool
    runs: tuple[ColumnRun, ...] = ()


@dataclass(frozen=True)
class PhaseRows:
    """One phase of a grid: its rollup state, its rows and the anchor of the row that stands
    in for them when there are none (so a phase without evidence can be linked to)."""

    phase: str
    rollup: str
    rows: tuple[Row, ...]
    anchor: str = ""


@dataclass(frozen=True)
class Lens:
    """One grid (a lens): all versions combined, or one aicr version only."""

    key: str
    aicr_ver: str
    rollup: str
    shown: bool
    trimmed: bool
    phases: tuple[PhaseRows, ...]
    omitted: OmittedRows | None
    heads: tuple[HeadCell, ...] = ()


@dataclass(frozen=True)
class GridView:
    """Every grid of a recipe page, with the signer columns they share (each lens has its own
    headings: a column's runs differ from lens to lens)."""

    heads: tuple[HeadCell, ...]
    not_counted: tuple[bool, ...]
    span: int
    lenses: tuple[Lens, ...]


def grid_view(
    m: SiteModel,
    page: str,
    grids: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    latest: Sequence[Mapping[str, Any]],
    pointers: Sequence[Mapping[str, Any]] = (),
) -> GridView:
    """The grids of one recipe page as the template draws them (one lens per grid);
    `pointers` (the recipe's) give each column its runs' details and each failed cell why."""
    runs = runs_by_ref(m, pointers)
    heads = tuple(
        HeadCell(m.label(src), m.source_link(page, src), m.counted(src)) for src in columns
    )
    ranks = {str(k): int(v.get("rank", 99)) for k, v in m.states.items()}
    labels = {str(k): str(v.get("label", k)) for k, v in m.states.items()}
    lenses = []
    for n, (g, hidden) in enumerate(page_grids(grids, ranks)):
        found: list[dict[str, ColumnRun]] = [{} for _ in columns]
        rows = grid_rows(m, g, columns, latest, runs, found)
        rollups = g.get("phaseRollup") or {}
        key = str(g.get("aicrVer") or "combined")
        phases = tuple(
            PhaseRows(
                ph,
                str(rollups.get(ph, "UNTESTED")),
                tuple(r for r in rows if r.phase == ph),
                anchor("check", key, ph),
            )
            for ph in m.phases
        )
        lenses.append(
            Lens(
                key,
                str(g.get("aicrVer") or ""),
                str(g.get("rollup")),
                n == 0,
                bool(hidden),
                phases,
                omitted_rows(hidden, labels),
                tuple(
                    HeadCell(h.label, h.href, h.counted, tuple(f.values()))
                    for h, f in zip(heads, found, strict=True)
                ),
            )
        )
    return GridView(heads, tuple(not h.counted for h in heads), 2 + len(columns), tuple(lenses))
