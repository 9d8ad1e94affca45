"""From board entries to the board: stage the countable entries, bucket them by coordinate, make one
tab per coordinate within the count limits, then arrange groups, dashboards and tabs.

Every entry that does not count is recorded as a `Skip` with its reason, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from generator.corroborate.board import (
    Board,
    BoardEntry,
    BoardTab,
    Dashboard,
    Group,
    KeptDocs,
    KeptTab,
    Naming,
    Skip,
    SourceRecord,
    Tab,
    TabLookup,
    default_naming,
    profile_segment,
    safe_slug,
    signer_label,
)
from generator.corroborate.bounds import Omitted, drop_unlisted
from generator.corroborate.grid import (
    GridMemo,
    OrganisationOf,
    combined_grid,
    signer_source_id,
    version_grids,
)
from generator.corroborate.runs import countable, parse_rfc3339, run_order
from generator.corroborate.series import build_series, grid_signers_of
from generator.facts import Criteria
from generator.limits import LIMITS, OutputLimits
from generator.model import (
    Classification,
    Run,
    SignerIdentity,
    SourceId,
)
from generator.recipe import Coordinate


@dataclass
class _Bucket:
    recipe: str
    coordinate: Coordinate
    criteria: Criteria
    profile: str | None
    selections: set[str | None]
    runs: list[Run]
    origins: dict[str, str] = field(default_factory=dict)
    """Run id -> origin, for runs a limit may leave out."""
    run_origins: list[str] = field(default_factory=list)
    """Each run's origin, in `runs` order ("" when it has none)."""


def _display(crit: Criteria) -> Criteria:
    os_value = "" if crit.os in ("", "any") else crit.os
    platform = "" if crit.platform in ("", "any") else crit.platform
    return Criteria(crit.service, crit.accelerator, os_value or "any", crit.intent, platform)


def _ordered_values(axis: str, values: Iterable[str], naming: Naming) -> tuple[str, ...]:
    def key(value: str) -> tuple[int, Any, str]:
        if value == "(none)":
            return (0, 0, value)
        return (1, naming.sort_key(axis, value), value)

    return tuple(sorted(set(values), key=key))


Staged = tuple[str, str, str, BoardEntry, Coordinate, str | None]
"""An accepted entry with its sort key parts: (coordinate path, signer slug, run id, entry,
coordinate, profile segment)."""


def build_board(
    entries: Iterable[BoardEntry],
    *,
    organisation_of: OrganisationOf,
    naming: Naming | None = None,
    label_of: Callable[[SignerIdentity, Classification], str] = signer_label,
    limits: OutputLimits = LIMITS,
    lookup: TabLookup | None = None,
) -> Board:
    """Aggregate entries into the board (aicr cheat-sheet order of checks, section 8).

    With a `lookup`, a coordinate whose runs an earlier build made documents of (the same
    runs, organisations and limits) is a `KeptTab` of those documents; every other tab is
    made, and `Board.tab_keys` names those the lookup could key."""
    names = naming or default_naming()
    skipped: list[Skip] = []
    warnings: list[str] = []
    staged = _stage(entries, names, skipped)
    buckets, sources = _bucket(staged, skipped, warnings, organisation_of, label_of)
    tabs: list[BoardTab] = []
    omitted_origins: dict[str, str] = {}
    tab_keys: dict[str, str] = {}
    for path, bucket in buckets.items():
        key = _key(path, bucket, organisation_of, limits, lookup)
        kept = None if key is None or lookup is None else lookup.kept(key)
        if kept is not None:
            tabs.append(_kept_tab(bucket, kept, limits, omitted_origins))
            continue
        tab = _tab(path, bucket, organisation_of, limits, skipped, omitted_origins)
        if tab is not None:
            tabs.append(tab)
            if key is not None:
                tab_keys[tab.recipe] = key
    all_runs = tuple(r for t in tabs for r in t.runs)
    newest = max((r.attested_at for r in all_runs), default=None)
    logged = max((r.logged_at for r in all_runs if r.logged_at), default=None)
    return Board(
        groups=_arrange(tabs, names),
        sources=dict(sorted(sources.items())),
        criteria=_criteria_values(tabs, names),
        newest_attested_at=newest,
        skipped=tuple(skipped),
        warnings=tuple(warnings),
        runs=all_runs,
        newest_logged_at=logged,
        omitted_origins=dict(sorted(omitted_origins.items())),
        tab_keys=tab_keys,
    )


def _key(
    path: str,
    bucket: _Bucket,
    organisation_of: OrganisationOf,
    limits: OutputLimits,
    lookup: TabLookup | None,
) -> str | None:
    """The key `lookup` names a coordinate's tab by (None: no lookup, or a coordinate whose
    profiles collide, which makes no tab)."""
    if lookup is None or len(bucket.selections) > 1:
        return None
    orgs = [organisation_of(run.signer, run.classification) for run in bucket.runs]
    return lookup.key(path, bucket.runs, bucket.run_origins, orgs, repr(limits))


def _kept_tab(
    bucket: _Bucket, kept: KeptDocs, limits: OutputLimits, omitted_origins: dict[str, str]
) -> KeptTab:
    """A coordinate's tab from the documents kept for its runs: the runs and left-out origins
    worked out as `_tab` does (the count limits), the grids and series not made."""
    runs, _dropped, _signers = _counted(bucket, limits, omitted_origins)
    return KeptTab(
        recipe=bucket.recipe,
        coordinate=bucket.coordinate,
        coord=_display(bucket.criteria),
        profile=bucket.profile,
        profile_selection=next(iter(bucket.selections)),
        runs=tuple(sorted(runs, key=run_order, reverse=True)),
        kept=kept,
    )


def _skip(skipped: list[Skip], entry: BoardEntry, reason: str, detail: str) -> None:
    skipped.append(Skip(entry.origin, str(entry.run.recipe), entry.run.run_id, reason, detail))


def _stage(entries: Iterable[BoardEntry], names: Naming, skipped: list[Skip]) -> list[Staged]:
    """The countable entries with their coordinates, in board order; the rest are skipped.
    A coordinate is worked out once per criteria and profile (a recipe's entries share them)."""
    staged: list[Staged] = []
    coordinates: dict[tuple[Criteria, str | None], Coordinate] = {}
    for entry in entries:
        run = entry.run
        if not countable(run):
            _skip(
                skipped,
                entry,
                "empty-signer",
                "the verified signer has an empty issuer or identity",
            )
            continue
        if parse_rfc3339(run.attested_at) is None:
            _skip(
                skipped, entry, "bad-timestamp", f"attestedAt {run.attested_at!r} is not RFC 3339"
            )
            continue
        if not safe_slug(str(run.recipe)):
            _skip(
                skipped,
                entry,
                "unsafe-slug",
                f"recipe slug {str(run.recipe)!r} cannot be a file name",
            )
            continue
        segment: str | None = None
        if run.profile is not None:
            segment = profile_segment(run.profile)
            if segment is None:
                _skip(
                    skipped,
                    entry,
                    "bad-profile",
                    f"profile selection {run.profile!r} is not name=value",
                )
                continue
        coordinate = coordinates.get((entry.criteria, segment))
        if coordinate is None:
            try:
                raw = names.coordinate_for(entry.criteria, segment)
            except Exception as exc:  # the recipe seam fails closed with its own error types
                _skip(
                    skipped,
                    entry,
                    "no-coordinate",
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                )
                continue
            coordinate = coordinates[entry.criteria, segment] = Coordinate(
                raw.group, raw.dashboard, raw.tab
            )
        staged.append(
            (coordinate.path, str(run.signer.slug), run.run_id, entry, coordinate, segment)
        )
    staged.sort(key=lambda s: (s[0], s[1], s[2], s[3].origin))
    return staged


def _bucket(
    staged: list[Staged],
    skipped: list[Skip],
    warnings: list[str],
    organisation_of: OrganisationOf,
    label_of: Callable[[SignerIdentity, Classification], str],
) -> tuple[dict[str, _Bucket], dict[SourceId, SourceRecord]]:
    """The runs of each coordinate (one recipe slug per coordinate), and every signer seen."""
    buckets: dict[str, _Bucket] = {}
    slug_owner: dict[str, str] = {}
    sources: dict[SourceId, SourceRecord] = {}
    for path, _slug, _rid, entry, coordinate, segment in staged:
        run = entry.run
        owner = slug_owner.setdefault(str(run.recipe), path)
        if owner != path:
            _skip(
                skipped,
                entry,
                "slug-claimed",
                f"recipe slug {run.recipe!r} is already used by {owner}",
            )
            continue
        bucket = buckets.get(path)
        if bucket is None:
            bucket = buckets[path] = _Bucket(
                str(run.recipe), coordinate, entry.criteria, segment, set(), []
            )
        elif bucket.recipe != run.recipe:
            warnings.append(
                f"{path}: run {run.run_id} names recipe {run.recipe!r}, "
                f"kept the first name {bucket.recipe!r}"
            )
        bucket.selections.add(run.profile)
        bucket.runs.append(run)
        bucket.run_origins.append(entry.origin)
        if entry.origin:
            bucket.origins[run.run_id] = entry.origin
        src = signer_source_id(run.signer)
        if src not in sources:
            sources[src] = SourceRecord(
                src=src,
                label=label_of(run.signer, run.classification),
                signer_class=run.classification.signer_class,
                allowlisted=run.classification.allowlisted,
                identity=run.signer.identity,
                issuer=run.signer.issuer,
                slug=run.signer.slug,
                org=organisation_of(run.signer, run.classification),
            )
    return buckets, sources


def _counted(
    bucket: _Bucket, limits: OutputLimits, omitted_origins: dict[str, str]
) -> tuple[list[Run], set[str], int]:
    """A coordinate's runs within the unlisted-signer limit (`drop_unlisted`: the runs, the
    run ids left out, how many signers they are), each left-out run's origin noted in
    `omitted_origins`."""
    runs, dropped, dropped_signers = drop_unlisted(bucket.runs, limits.unlisted_signers)
    omitted_origins.update(
        (bucket.origins[rid], "unlisted-signer-limit") for rid in dropped if rid in bucket.origins
    )
    return runs, dropped, dropped_signers


def _tab(
    path: str,
    bucket: _Bucket,
    organisation_of: OrganisationOf,
    limits: OutputLimits,
    skipped: list[Skip],
    omitted_origins: dict[str, str],
) -> Tab | None:
    """One coordinate's tab within the count limits; None (runs skipped) when profiles collide."""
    if len(bucket.selections) > 1:
        shown = sorted("(none)" if s is None else s for s in bucket.selections)
        skipped.extend(
            Skip(
                "",
                bucket.recipe,
                run.run_id,
                "profile-collision",
                f"{path}: profile selections disagree: {', '.join(shown)}",
            )
            for run in bucket.runs
        )
        return None
    runs, dropped, dropped_signers = _counted(bucket, limits, omitted_origins)
    left_out = [r for r in bucket.runs if r.run_id in dropped] if dropped else []
    version_count = len({r.aicr_version for r in runs})
    bounded = version_count > limits.versions_per_recipe
    known: GridMemo = {}  # the combined grid is often the newest version's
    versions = version_grids(
        runs, organisation_of, limit=limits.versions_per_recipe, left_out=left_out, known=known
    )
    series = build_series(
        bucket.recipe,
        runs,
        versions,
        keep=grid_signers_of(runs) if bounded else None,
        runs_per_signer=limits.runs_per_signer,
        max_rows=limits.rows_per_series,
    )
    return Tab(
        recipe=bucket.recipe,
        coordinate=bucket.coordinate,
        coord=_display(bucket.criteria),
        profile=bucket.profile,
        profile_selection=next(iter(bucket.selections)),
        combined=combined_grid(runs, organisation_of, left_out=left_out, known=known),
        versions=versions,
        series=series,
        runs=tuple(sorted(runs, key=run_order, reverse=True)),
        omitted=Omitted(
            unlisted_signers=dropped_signers,
            unlisted_runs=len(dropped),
            versions=max(version_count - limits.versions_per_recipe, 0),
            history_runs=series.omitted_runs,
            history_rows=series.omitted_rows,
        ),
    )


def _criteria_values(tabs: list[BoardTab], names: Naming) -> dict[str, tuple[str, ...]]:
    """The values each criteria axis takes on the board, in display order."""
    crit_values: dict[str, list[str]] = {
        a: [] for a in ("service", "accelerator", "os", "intent", "platform")
    }
    for tab in tabs:
        for axis, value in tab.coord.items():
            crit_values[axis].append((value or "(none)") if axis == "platform" else value)
    return {
        axis: _ordered_values(axis, [v for v in vals if v], names)
        for axis, vals in crit_values.items()
    }


def _arrange(tabs: list[BoardTab], names: Naming) -> tuple[Group, ...]:
    """Groups by service order, dashboards by accelerator then OS, tabs by intent-platform then
    profile (stable; the profile is in the key)."""
    by_group: dict[str, dict[str, list[BoardTab]]] = {}
    for tab in tabs:
        by_group.setdefault(tab.coordinate.group, {}).setdefault(
            tab.coordinate.dashboard, []
        ).append(tab)

    def group_key(service: str) -> tuple[Any, str]:
        return (names.sort_key("service", service), service)

    def dash_key(item: tuple[str, list[BoardTab]]) -> tuple[Any, Any, str]:
        first = item[1][0].coord
        return (
            names.sort_key("accelerator", first.accelerator),
            names.sort_key("os", first.os),
            item[0],
        )

    def tab_key(tab: BoardTab) -> tuple[str, str, str]:
        return (f"{tab.coord.intent}-{tab.coord.platform}", tab.profile or "", tab.coordinate.tab)

    groups: list[Group] = []
    for service in sorted(by_group, key=group_key):
        dashboards = tuple(
            Dashboard(
                accelerator=ts[0].coord.accelerator,
                os=ts[0].coord.os,
                tabs=tuple(sorted(ts, key=tab_key)),
            )
            for _, ts in sorted(by_group[service].items(), key=dash_key)
        )
        groups.append(Group(service=service, dashboards=dashboards))
    return tuple(groups)
