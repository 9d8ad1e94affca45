"""Recipe-side facts of one bundle: components, validator images, criteria and criteria match."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.facts.models import (
    Component,
    Criteria,
    CriteriaMatch,
    DimensionMatch,
    ValidatorImage,
)
from generator.model import Evidence

DIMENSION_ORDER: tuple[str, ...] = ("service", "accelerator", "os", "intent", "platform", "nodes")
"""The newer list shape's order; the older map shape is put into this order too."""


def _opt_text(value: Any) -> str | None:
    if type(value) is str:  # the common case, first: asked some 40 times per bundle
        return value or None
    if value is None or isinstance(value, bool | Mapping | list):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value)
    return text if text != "" else None


def components(evidence: Evidence) -> tuple[Component, ...]:
    """`componentRefs[]` of the bundle's recipe, in recipe order (entries without a name skipped)."""
    refs = evidence.recipe.get("componentRefs")
    return tuple(
        Component(str(ref["name"]), _opt_text(ref.get("version")))
        for ref in (refs if isinstance(refs, list) else [])
        if isinstance(ref, Mapping) and _opt_text(ref.get("name"))
    )


def validator_images(evidence: Evidence) -> tuple[ValidatorImage, ...]:
    """`predicate.validatorImages` (a list or null). Tag-pinned images are flagged mutable."""
    raw = evidence.predicate.get("validatorImages")
    out: list[ValidatorImage] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping) or not _opt_text(item.get("image")):
            continue
        image = str(item["image"])
        digest = _opt_text(item.get("digest")) or ""
        out.append(ValidatorImage(image, digest, mutable=not digest and "@sha256:" not in image))
    return tuple(out)


def criteria(evidence: Evidence) -> Criteria:
    """The recipe's resolved `criteria` on the five coordinate axes."""
    raw = evidence.recipe.get("criteria")
    crit: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    return Criteria(
        service=_opt_text(crit.get("service")) or "",
        accelerator=_opt_text(crit.get("accelerator")) or "",
        os=_opt_text(crit.get("os")) or "",
        intent=_opt_text(crit.get("intent")) or "",
        platform=_opt_text(crit.get("platform")) or "",
    )


def _dimension(name: str, entry: Mapping[str, Any]) -> DimensionMatch:
    return DimensionMatch(
        dimension=name,
        recipe_requires=_opt_text(entry.get("recipeRequires")),
        fingerprint_provides=_opt_text(entry.get("fingerprintProvides")),
        match=_opt_text(entry.get("match")) or "unknown",
    )


def _order(name: str) -> tuple[int, str]:
    return (DIMENSION_ORDER.index(name) if name in DIMENSION_ORDER else len(DIMENSION_ORDER), name)


def criteria_match(evidence: Evidence) -> CriteriaMatch:
    """`predicate.criteriaMatch`, accepting the older map and the newer list `perDimension`."""
    raw = evidence.predicate.get("criteriaMatch")
    if not isinstance(raw, Mapping):
        return CriteriaMatch(matched=None, dimensions=())
    per = raw.get("perDimension")
    dims: list[DimensionMatch] = []
    if isinstance(per, Mapping):
        dims = [_dimension(str(k), v) for k, v in per.items() if isinstance(v, Mapping)]
        dims.sort(key=lambda d: _order(d.dimension))
    elif isinstance(per, list):
        dims = [
            _dimension(str(e["dimension"]), e)
            for e in per
            if isinstance(e, Mapping) and _opt_text(e.get("dimension"))
        ]
    matched = raw.get("matched")
    return CriteriaMatch(
        matched=matched if isinstance(matched, bool) else None,
        dimensions=tuple(dims),
    )
