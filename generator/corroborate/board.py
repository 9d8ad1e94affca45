"""Aggregate counted runs into the board: groups, dashboards and tabs, each with its grids.

Mirrors aicr's aggregation (1.10, 2.3, 8): entries are processed in a stable order so every
"first wins" rule is deterministic; malformed entries are skipped with a recorded reason, never
fatal. Beyond aicr, tabs sort with the profile in the key, and a coordinate whose runs disagree
on the recipe slug is flagged.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from generator.corroborate.bounds import Omitted, drop_unlisted
from generator.corroborate.grid import (
    Grid,
    OrganisationOf,
    combined_grid,
    signer_source_id,
    version_grids,
)
from generator.corroborate.runs import countable, parse_rfc3339, run_from_verified, run_order
from generator.corroborate.series import Series, build_series, grid_signers_of
from generator.facts import Criteria, criteria
from generator.limits import LIMITS, OutputLimits
from generator.model import (
    Classification,
    ConsensusState,
    Pointer,
    Run,
    SignerClass,
    SignerIdentity,
    SourceId,
    SourceSlug,
    Verified,
)
from generator.recipe.names import Coordinate

_SAFE_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_PROFILE = re.compile(r"([A-Za-z0-9._-]+)=([A-Za-z0-9._-]+)")


def safe_slug(name: str) -> bool:
    """A recipe slug usable as one file name: no separators, no dot names, bounded length."""
    return bool(_SAFE_SLUG.fullmatch(name)) and name not in (".", "..")


def profile_segment(selection: str) -> str | None:
    """`lower(name) + "-" + lower(value)` of a `name=value` selection; None when malformed."""
    match = _PROFILE.fullmatch(selection)
    return f"{match.group(1).lower()}-{match.group(2).lower()}" if match else None


class CoordinateLike(Protocol):
    @property
    def group(self) -> str: ...
    @property
    def dashboard(self) -> str: ...
    @property
    def tab(self) -> str: ...


@dataclass(frozen=True)
class Naming:
    """The recipe seam's coordinate functions, injected so this module stays pure and testable."""

    coordinate_for: Callable[..., CoordinateLike]
    sort_key: Callable[[str, str], Any]


def default_naming() -> Naming:
    """`generator.recipe.names.coordinate_for` and `sort_key` (imported late: the recipe seam)."""
    names = importlib.import_module("generator.recipe.names")
    return Naming(coordinate_for=names.coordinate_for, sort_key=names.sort_key)


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class BoardEntry:
    """One counted run with the criteria of its bundle's recipe."""

    run: Run
    criteria: Criteria
    origin: str = ""
    """Where the run came from (the pointer path), for skip messages and stable order."""


def board_entry(
    verified: Verified, classification: Classification, pointer: Pointer, *, origin: str = ""
) -> BoardEntry:
    """A `BoardEntry` from a verified bundle (raises `InputError` on a bad attestedAt)."""
    return BoardEntry(
        run=run_from_verified(verified, classification, pointer),
        criteria=criteria(verified.evidence),
        origin=origin,
    )


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True)
class Tab:
    recipe: str
    coordinate: Coordinate
    coord: Criteria
    """Display criteria: platform "" means none, os "any" for os-agnostic recipes."""
    profile: str | None
    profile_selection: str | None
    combined: Grid
    versions: tuple[Grid, ...]
    series: Series
    runs: tuple[Run, ...]
    omitted: Omitted = Omitted()
    """What the recipe leaves out past the count limits (`generator.limits`)."""

    @property
    def rollup(self) -> ConsensusState:
        """The baked recipe-level rollup: over every row of the combined grid."""
        return self.combined.rollup

    @property
    def tally(self) -> Mapping[ConsensusState, int]:
        return self.combined.tally


@dataclass(frozen=True)
class Dashboard:
    accelerator: str
    os: str
    tabs: tuple[Tab, ...]


@dataclass(frozen=True)
class Group:
    service: str
    dashboards: tuple[Dashboard, ...]


@dataclass(frozen=True)
class SourceRecord:
    """One signer as `index.sources` lists it."""

    src: SourceId
    label: str
    signer_class: SignerClass
    allowlisted: bool
    identity: str
    issuer: str
    slug: SourceSlug
    org: str


@dataclass(frozen=True)
class Skip:
    """A run left off the board, and why (aicr skips malformed input, never fatally)."""

    origin: str
    recipe: str
    run_id: str
    reason: str
    detail: str


@dataclass(frozen=True)
class Board:
    """Everything the data writers need."""

    groups: tuple[Group, ...]
    sources: Mapping[SourceId, SourceRecord]
    criteria: Mapping[str, tuple[str, ...]]
    newest_attested_at: str | None
    """The newest claimed attestedAt (a claim: never what `generated_at` reports)."""
    skipped: tuple[Skip, ...] = ()
    warnings: tuple[str, ...] = ()
    runs: tuple[Run, ...] = field(default=())
    newest_logged_at: str | None = None
    """The newest verified transparency-log time of a counted run."""
    omitted_origins: Mapping[str, str] = field(default_factory=dict)
    """Origin (pointer path) -> why its run was left out of its recipe (count limits)."""

    @property
    def tabs(self) -> tuple[Tab, ...]:
        return tuple(t for g in self.groups for d in g.dashboards for t in d.tabs)

    @property
    def generated_at(self) -> str:
        """The newest verified log time as `YYYY-MM-DD HH:MM UTC` ("" without one): a
        claimed attestedAt (which may say 2099) never dates the board."""
        moment = parse_rfc3339(self.newest_logged_at or "")
        return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else ""


# --------------------------------------------------------------------------- labels


def signer_label(signer: SignerIdentity, classification: Classification) -> str:
    """aicr `labelFor`, with an allowlist entry's own label first."""
    if classification.entry is not None and classification.entry.label:
        return classification.entry.label
    if classification.allowlisted and classification.signer_class is SignerClass.FIRST_PARTY:
        return "NVIDIA UAT"
    parts = urlsplit(signer.identity)
    if parts.scheme in ("http", "https") and parts.hostname:
        segments = [s for s in parts.path.split("/") if s]
        if parts.hostname in ("github.com", "gitlab.com") and len(segments) >= 2:
            return f"{segments[0]}/{segments[1]}"
        return parts.hostname
    return str(signer.slug)


# --------------------------------------------------------------------------- aggregation


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


def build_board(
    entries: Iterable[BoardEntry],
    *,
    organisation_of: OrganisationOf,
    naming: Naming | None = None,
    label_of: Callable[[SignerIdentity, Classification], str] = signer_label,
    limits: OutputLimits = LIMITS,
) -> Board:
    """Aggregate entries into the board (aicr cheat-sheet order of checks, section 8)."""
    names = naming or default_naming()
    skipped: list[Skip] = []
    warnings: list[str] = []

    def skip(entry: BoardEntry, reason: str, detail: str) -> None:
        skipped.append(Skip(entry.origin, str(entry.run.recipe), entry.run.run_id, reason, detail))

    staged: list[tuple[str, str, str, BoardEntry, Coordinate, str | None]] = []
    for entry in entries:
        run = entry.run
        if not countable(run):
            skip(entry, "empty-signer", "the verified signer has an empty issuer or identity")
            continue
        if parse_rfc3339(run.attested_at) is None:
            skip(entry, "bad-timestamp", f"attestedAt {run.attested_at!r} is not RFC 3339")
            continue
        if not safe_slug(str(run.recipe)):
            skip(entry, "unsafe-slug", f"recipe slug {str(run.recipe)!r} cannot be a file name")
            continue
        segment: str | None = None
        if run.profile is not None:
            segment = profile_segment(run.profile)
            if segment is None:
                skip(entry, "bad-profile", f"profile selection {run.profile!r} is not name=value")
                continue
        try:
            raw = names.coordinate_for(entry.criteria, segment)
        except Exception as exc:  # the recipe seam fails closed with its own error types
            skip(
                entry, "no-coordinate", str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            )
            continue
        coordinate = Coordinate(raw.group, raw.dashboard, raw.tab)
        staged.append(
            (coordinate.path, str(run.signer.slug), run.run_id, entry, coordinate, segment)
        )
    staged.sort(key=lambda s: (s[0], s[1], s[2], s[3].origin))

    buckets: dict[str, _Bucket] = {}
    slug_owner: dict[str, str] = {}
    sources: dict[SourceId, SourceRecord] = {}
    for path, _slug, _rid, entry, coordinate, segment in staged:
        run = entry.run
        owner = slug_owner.setdefault(str(run.recipe), path)
        if owner != path:
            skip(entry, "slug-claimed", f"recipe slug {run.recipe!r} is already used by {owner}")
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

    tabs: list[Tab] = []
    omitted_origins: dict[str, str] = {}
    for path, bucket in buckets.items():
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
            continue
        runs, dropped, dropped_signers = drop_unlisted(bucket.runs, limits.unlisted_signers)
        omitted_origins.update(
            (bucket.origins[rid], "unlisted-signer-limit")
            for rid in dropped
            if rid in bucket.origins
        )
        left_out = [r for r in bucket.runs if r.run_id in dropped] if dropped else []
        version_count = len({r.aicr_version for r in runs})
        bounded = version_count > limits.versions_per_recipe
        versions = version_grids(
            runs, organisation_of, limit=limits.versions_per_recipe, left_out=left_out
        )
        series = build_series(
            bucket.recipe,
            runs,
            versions,
            keep=grid_signers_of(runs) if bounded else None,
            runs_per_signer=limits.runs_per_signer,
            max_rows=limits.rows_per_series,
        )
        tabs.append(
            Tab(
                recipe=bucket.recipe,
                coordinate=bucket.coordinate,
                coord=_display(bucket.criteria),
                profile=bucket.profile,
                profile_selection=next(iter(bucket.selections)),
                combined=combined_grid(runs, organisation_of, left_out=left_out),
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
        )

    groups = _arrange(tabs, names)
    crit_values: dict[str, list[str]] = {
        a: [] for a in ("service", "accelerator", "os", "intent", "platform")
    }
    for tab in tabs:
        for axis, value in tab.coord.items():
            crit_values[axis].append((value or "(none)") if axis == "platform" else value)
    all_runs = tuple(r for t in tabs for r in t.runs)
    newest = max((r.attested_at for r in all_runs), default=None)
    logged = max((r.logged_at for r in all_runs if r.logged_at), default=None)
    return Board(
        groups=groups,
        sources=dict(sorted(sources.items())),
        criteria={
            axis: _ordered_values(axis, [v for v in vals if v], names)
            for axis, vals in crit_values.items()
        },
        newest_attested_at=newest,
        skipped=tuple(skipped),
        warnings=tuple(warnings),
        runs=all_runs,
        newest_logged_at=logged,
        omitted_origins=dict(sorted(omitted_origins.items())),
    )


def _arrange(tabs: list[Tab], names: Naming) -> tuple[Group, ...]:
    """Groups by service order, dashboards by accelerator then OS, tabs by intent-platform then
    profile (stable; the profile is in the key)."""
    by_group: dict[str, dict[str, list[Tab]]] = {}
    for tab in tabs:
        by_group.setdefault(tab.coordinate.group, {}).setdefault(
            tab.coordinate.dashboard, []
        ).append(tab)

    def group_key(service: str) -> tuple[Any, str]:
        return (names.sort_key("service", service), service)

    def dash_key(item: tuple[str, list[Tab]]) -> tuple[Any, Any, str]:
        first = item[1][0].coord
        return (
            names.sort_key("accelerator", first.accelerator),
            names.sort_key("os", first.os),
            item[0],
        )

    def tab_key(tab: Tab) -> tuple[str, str, str]:
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
