"""Aggregate counted runs into the board: groups, dashboards and tabs, each with its grids.

Mirrors aicr's aggregation (1.10, 2.3, 8): entries are processed in a stable order so every
"first wins" rule is deterministic; malformed entries are skipped with a recorded reason, never
fatal. Beyond aicr, tabs sort with the profile in the key, and a coordinate whose runs disagree
on the recipe slug is flagged.

This module holds the board's inputs and outputs; the aggregation itself (`build_board`) is in
`_aggregate`, and the package exports it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from generator.corroborate.bounds import Omitted
from generator.corroborate.grid import (
    Grid,
)
from generator.corroborate.runs import parse_rfc3339, run_from_verified
from generator.corroborate.series import Series
from generator.facts import Criteria, criteria
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
from generator.recipe import Coordinate

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
class KeptDocs:
    """A tab's documents as an earlier build made them (`data/index.json`'s tab and
    `data/series/<recipe>.json`), kept under a key naming everything they were made from
    (`TabLookup`), with the `Omitted` counts the series made."""

    doc: Mapping[str, Any]
    series: Mapping[str, Any]
    omitted: Omitted


@dataclass(frozen=True)
class KeptTab:
    """A tab whose documents an earlier build made from the same runs (`KeptDocs`): the board
    places it as it would place the `Tab` made again, without making its grids and series."""

    recipe: str
    coordinate: Coordinate
    coord: Criteria
    profile: str | None
    profile_selection: str | None
    runs: tuple[Run, ...]
    kept: KeptDocs

    @property
    def omitted(self) -> Omitted:
        return self.kept.omitted


BoardTab = Tab | KeptTab
"""A tab of the board: made in this build, or kept from an earlier one."""


class TabLookup(Protocol):
    """Where the board finds the documents of a tab made before (`generator.evaluate.tabstore`).

    `key` names a coordinate `path`'s `runs` (in board order) by where each came from
    (`origins`) and how its signer is classified, the organisation each run's signer counts
    for (`orgs`) and the count limits, or is None when a run cannot be named so; `kept` gives
    the documents stored under a key, or None."""

    def key(
        self,
        path: str,
        runs: Sequence[Run],
        origins: Sequence[str],
        orgs: Sequence[str],
        limits: str,
    ) -> str | None: ...

    def kept(self, key: str) -> KeptDocs | None: ...


@dataclass(frozen=True)
class Dashboard:
    accelerator: str
    os: str
    tabs: tuple[BoardTab, ...]


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

    tab_keys: Mapping[str, str] = field(default_factory=dict)
    """The key of each tab made in this build whose documents may be kept (`TabLookup`), by
    recipe."""

    @property
    def tabs(self) -> tuple[BoardTab, ...]:
        return tuple(t for g in self.groups for d in g.dashboards for t in d.tabs)

    def made_tabs(self) -> tuple[Tab, ...]:
        """The tabs made in this build (a board built without a `TabLookup` has only these)."""
        return tuple(t for t in self.tabs if isinstance(t, Tab))

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
