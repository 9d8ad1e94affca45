"""Side-by-side comparison tables over each signer's latest evidence, as view models.

The Hardware & software panel of a recipe page (`_hardware.j2`) shows run facts, hardware,
recipe criteria, component versions and validator images, one column per signer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.site.model import SiteModel, age

__all__ = [
    "HardwareView",
    "MCell",
    "MatrixRow",
    "RunColumn",
    "components_matrix",
    "criteria_matrix",
    "hardware_matrix",
    "hardware_view",
    "validator_images",
]


@dataclass(frozen=True)
class MCell:
    """One signer's value in a comparison table; `value` None means not reported."""

    value: str | None
    note: str = ""
    warn: bool = False


@dataclass(frozen=True)
class MatrixRow:
    """One row of a side-by-side comparison over each signer's latest evidence."""

    label: str
    detail: str
    cells: tuple[MCell, ...]

    @property
    def sources(self) -> str:
        """Where the values were read (`fingerprint`, `snapshot`, `recipe`), distinct, in order."""
        return (
            ", ".join(dict.fromkeys(c.note for c in self.cells if c.value is not None and c.note))
            or "–"
        )

    @property
    def differs(self) -> bool:
        """Do the signers that reported a value disagree on it?"""
        return len({c.value for c in self.cells if c.value is not None}) > 1


def _ordered_keys(lists: Sequence[Sequence[Mapping[str, Any]]], key: str) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items:
            seen.setdefault(str(item.get(key)), None)
    return list(seen)


def hardware_matrix(latest: Sequence[Mapping[str, Any]]) -> list[MatrixRow]:
    """Hardware facts (rows) by signer (columns), with where each value was read."""
    per = [list(p["evidence"].get("hardware") or []) for p in latest]
    rows = []
    for key in _ordered_keys(per, "key"):
        found = [next((h for h in hw if str(h.get("key")) == key), None) for hw in per]
        first = next(h for h in found if h is not None)
        cells = tuple(
            MCell(None)
            if h is None or h.get("value") is None
            else MCell(str(h["value"]), str(h.get("source") or ""))
            for h in found
        )
        rows.append(
            MatrixRow(str(first.get("label") or key), str(first.get("detail") or ""), cells)
        )
    return rows


def components_matrix(latest: Sequence[Mapping[str, Any]]) -> list[MatrixRow]:
    """Component versions (rows) by signer (columns)."""
    per = [list(p["evidence"].get("components") or []) for p in latest]
    rows = []
    for name in sorted(_ordered_keys(per, "name")):
        found = [next((c for c in comps if str(c.get("name")) == name), None) for comps in per]
        rows.append(
            MatrixRow(
                name,
                "",
                tuple(MCell(None) if c is None else MCell(str(c.get("version"))) for c in found),
            )
        )
    return rows


def criteria_matrix(latest: Sequence[Mapping[str, Any]]) -> list[MatrixRow]:
    """Recipe criteria (rows): what the recipe requires and what each signer's cluster provides."""
    per = [list((p["evidence"].get("criteriaMatch") or {}).get("dimensions") or []) for p in latest]
    rows = []
    for dim in _ordered_keys(per, "dimension"):
        found = [next((d for d in ds if str(d.get("dimension")) == dim), None) for ds in per]
        first = next(d for d in found if d is not None)
        cells = tuple(
            MCell(None)
            if d is None or d.get("fingerprintProvides") is None
            else MCell(
                str(d["fingerprintProvides"]), str(d.get("match") or ""), bool(d.get("mismatched"))
            )
            for d in found
        )
        rows.append(MatrixRow(dim, str(first.get("recipeRequires") or "–"), cells))
    return rows


def validator_images(latest: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], int]]:
    """Distinct validator images over the latest evidence, with how many signers used each."""
    seen: dict[str, tuple[Mapping[str, Any], int]] = {}
    for p in latest:
        for img in p["evidence"].get("validatorImages") or []:
            key = f"{img.get('image')}@{img.get('digest')}"
            prev = seen.get(key)
            seen[key] = (img, 1 if prev is None else prev[1] + 1)
    return [seen[k] for k in sorted(seen)]


@dataclass(frozen=True)
class RunColumn:
    """One signer's latest run: the column heading and the run facts row values."""

    label: str
    counted: bool
    attested: str
    age: str
    aicr: str
    redacted: bool
    run_id: str


@dataclass(frozen=True)
class HardwareView:
    """Everything the hardware panel draws for one recipe."""

    runs: tuple[RunColumn, ...]
    hardware: tuple[MatrixRow, ...]
    criteria: tuple[MatrixRow, ...]
    components: tuple[MatrixRow, ...]
    images: tuple[tuple[Mapping[str, Any], int], ...]


def _text(value: object) -> str:
    return "" if value is None else str(value)


def hardware_view(m: SiteModel, latest: Sequence[Mapping[str, Any]]) -> HardwareView:
    """The comparison tables of a recipe's latest evidence (one column per signer)."""
    runs = []
    for p in latest:
        sig = p.get("signer") or {}
        ev = p["evidence"]
        runs.append(
            RunColumn(
                m.label(sig.get("sourceId"), p),
                bool(sig.get("allowlisted")),
                _text(ev.get("attestedAt")),
                age(ev.get("attestedAt"), m.build_time),
                _text(ev.get("aicrVersion")),
                bool(ev.get("redacted")),
                _text(ev.get("runId") or "unknown"),
            )
        )
    return HardwareView(
        tuple(runs),
        tuple(hardware_matrix(latest)),
        tuple(criteria_matrix(latest)),
        tuple(components_matrix(latest)),
        tuple(validator_images(latest)),
    )
