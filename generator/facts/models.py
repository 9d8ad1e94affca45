"""Frozen records of what one bundle says, as the site shows it.

Each fact records where its value came from, so a page can say "signed", "agent node" or
"recipe" next to it and a missing value reads "not reported" instead of being guessed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from generator.model import TestResult

AXES: tuple[str, ...] = ("service", "accelerator", "os", "intent", "platform")

FINGERPRINT = "fingerprint"
"""The signed `predicate.fingerprint` (computed from the raw snapshot at emit time)."""
SNAPSHOT = "snapshot"
"""`snapshot.yaml`: readings from the one node the snapshot agent ran on."""
RECIPE = "recipe"
"""The bundle's `recipe.yaml` (what the recipe asks for, not what was measured)."""


@dataclass(frozen=True)
class HardwareFact:
    """One hardware or cluster fact. `value` None means "not reported" (e.g. minimal bundles)."""

    key: str
    label: str
    value: str | None
    source: str | None
    detail: str | None


@dataclass(frozen=True)
class Component:
    """A recipe `componentRefs[]` entry: name and pinned version (None when unpinned)."""

    name: str
    version: str | None


@dataclass(frozen=True)
class ValidatorImage:
    """A `predicate.validatorImages[]` entry. `mutable`: pinned by tag only, no digest."""

    image: str
    digest: str
    mutable: bool


@dataclass(frozen=True)
class Criteria(Mapping[str, str]):
    """The five coordinate axes of a recipe's resolved `criteria` ("" when absent).

    Readable both as attributes and as a read-only mapping of the axis names.
    """

    service: str = ""
    accelerator: str = ""
    os: str = ""
    intent: str = ""
    platform: str = ""

    def __getitem__(self, axis: str) -> str:
        if axis not in AXES:
            raise KeyError(axis)
        return str(getattr(self, axis))

    def __iter__(self) -> Iterator[str]:
        return iter(AXES)

    def __len__(self) -> int:
        return len(AXES)

    def as_dict(self) -> dict[str, str]:
        return {
            "service": self.service,
            "accelerator": self.accelerator,
            "os": self.os,
            "intent": self.intent,
            "platform": self.platform,
        }


@dataclass(frozen=True)
class DimensionMatch:
    """One `criteriaMatch.perDimension` entry, normalised from either historical shape."""

    dimension: str
    recipe_requires: str | None
    fingerprint_provides: str | None
    match: str

    @property
    def mismatched(self) -> bool:
        """Only `mismatched` flips `criteriaMatch.matched`; unknown and not-inferable do not."""
        return self.match == "mismatched"


@dataclass(frozen=True)
class CriteriaMatch:
    """`predicate.criteriaMatch`. `matched` None when the predicate carries no such block."""

    matched: bool | None
    dimensions: tuple[DimensionMatch, ...]

    @property
    def mismatched(self) -> tuple[str, ...]:
        """Names of the dimensions the fingerprint contradicts."""
        return tuple(d.dimension for d in self.dimensions if d.mismatched)


@dataclass(frozen=True)
class BandwidthReading:
    """One NCCL bandwidth check: the measured number (full bundles only) against its floor.

    `measured` is never invented: None with a `note` when the bundle carries no number.
    `pass_line` is 0.9 x `floor` (aicr's 10% tolerance). `status` and `result` are the CTRF
    verdict (None when the check did not appear in the CTRF report). `disagrees` is true when
    the number and the reported status point different ways.
    """

    check: str
    measured: float | None
    floor: float | None
    pass_line: float | None
    status: str | None
    result: TestResult | None
    disagrees: bool
    note: str | None
