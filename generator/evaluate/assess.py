"""Assessment: what one pointer's verdict means (its record and its board entry).

`Assessor.assess` is the one place a verdict becomes a `PointerRecord`: the signer's
classification and display label, the freshness of the signed recipe (with why it is stale),
the flagged attestedAt skew. It runs where the verdict is: in a verification worker for a
cache miss (generator.evaluate.pool), so this per-pointer work is spread over the workers,
else in the build process; a worker sends back an `Assessed`, which makes the same record.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from generator.corroborate import BoardEntry, board_entry
from generator.data import FreshnessExplanation, FreshnessInfo, PointerRecord
from generator.data.laidout import plain
from generator.errors import InputError
from generator.freshness import ContentMemo, StaleExplainer, compare, providers_for
from generator.model import (
    Classification,
    Freshness,
    ParsedPointer,
    Pending,
    Rejected,
    Verdict,
    Verified,
)
from generator.options import EvaluationOptions, FreshnessOptions
from generator.tree import display_label
from generator.verify.times import flagged_skew

__all__ = [
    "Assessed",
    "Assessor",
    "aicr_program",
    "freshness_providers",
    "remembered",
    "settled",
]


class Assessed(NamedTuple):
    """What a verification worker made of one verdict besides the verdict (see `Assessor`)."""

    classification: Classification | None
    label: str | None
    freshness: FreshnessInfo
    document: Mapping[str, Any]
    """The pointer's data/pointers.json entry (`generator.data.pointer_document`), as the
    worker laid it out (`generator.data.laidout.LaidOutEntry`), or as objects when orjson does
    not write it exactly."""
    entry: BoardEntry | None
    """Its board entry, or None when the board does not count it."""

    def record(
        self,
        item: ParsedPointer,
        verdict: Verdict | None,
        verified_at: str | None,
        trust_root: str,
        duplicate_of: str | None = None,
    ) -> PointerRecord:
        """The record `Assessor.assess` made in the worker, rebuilt around the verdict (a
        worker does not know duplicates: the build names them here)."""
        return PointerRecord(
            pointer=item,
            verdict=verdict,
            classification=self.classification,
            label=self.label,
            duplicate_of=duplicate_of,
            freshness=self.freshness,
            verified_at=verified_at,
            attested_at_skew=flagged_skew(verdict),
            reused_trust_root=trust_root if verified_at else None,
        )

    def document_for(self, duplicate_of: str | None) -> Mapping[str, Any]:
        """The pointers.json entry, naming the pointer it duplicates (the only field a
        duplicate changes, see `generator.data.pointer_document`)."""
        return (
            self.document
            if duplicate_of is None
            else {**plain(self.document), "duplicateOf": duplicate_of}
        )


class Assessor:
    """Turns one pointer's verdict into its record and board entry (see the module)."""

    def __init__(
        self, allowlist: Any, providers: Sequence[Any], explainer: Any, memo: Any = None
    ) -> None:
        self.allowlist = allowlist
        self.providers = providers
        self.explainer = explainer
        self.memo: ContentMemo | None = memo
        """The freshness `ContentMemo` the providers and explainer share, if any."""
        self._labelled: dict[Any, tuple[Any, str]] = {}  # per signer: a build has few
        self.trust_root: str | None = None
        """The digest of the build's trust root (a reused verdict was judged under it)."""

    @classmethod
    def for_build(cls, options: EvaluationOptions, allowlist: Any, memo: ContentMemo) -> Assessor:
        """The assessor of a build: its freshness providers and explainer share `memo`."""
        return cls(
            allowlist,
            freshness_providers(options, memo),
            StaleExplainer.for_recipes(options.tree.recipes, memo),
            memo,
        )

    def assess(
        self,
        item: ParsedPointer,
        verdict: Verdict | None,
        *,
        verified_at: str | None = None,
        duplicate_of: str | None = None,
    ) -> tuple[PointerRecord, BoardEntry | None]:
        """(PointerRecord, BoardEntry or None) for `item` and its `verdict`."""
        if isinstance(verdict, Verified | Pending) and verdict.evidence.settled:
            raise ValueError("a settled verdict was assessed again (its documents are gone)")
        classification = None
        label = None
        signer = verdict.signer if isinstance(verdict, Verified | Rejected) else None
        if signer is not None:
            known = self._labelled.get(signer)
            if known is None:
                known = self._labelled[signer] = _labelled(self.allowlist, signer)
            classification, label = known
        record = PointerRecord(
            pointer=item,
            verdict=verdict,
            classification=classification,
            label=label,
            duplicate_of=duplicate_of,
            verified_at=verified_at,
            freshness=_freshness(verdict, item, self.providers, self.explainer),
            attested_at_skew=flagged_skew(verdict),
            reused_trust_root=self.trust_root if verified_at else None,
        )
        entry = None
        # A duplicate gets its entry too: the caller counts each bundle once
        # (generator.corroborate.count_each_bundle_once).
        if isinstance(verdict, Verified) and classification is not None:
            try:
                entry = board_entry(
                    verdict, classification, item.pointer, origin=item.location.path
                )
            except InputError:
                entry = None
        return record, entry


_V = TypeVar("_V", bound=Verdict | None)


def settled(verdict: _V) -> _V:
    """`verdict` with its evidence settled (`Evidence.settle`): what a build keeps of a
    verdict once its pointer was assessed and its data entry made."""
    if isinstance(verdict, Verified | Pending) and not verdict.evidence.settled:
        return replace(verdict, evidence=verdict.evidence.settle())
    return verdict


def aicr_program(options: FreshnessOptions) -> Path | None:
    """The aicr binary freshness would use (`--aicr`, else `aicr` on PATH)."""
    if options.aicr is not None:
        return options.aicr
    found = shutil.which("aicr")
    return Path(found) if found else None


def freshness_providers(options: EvaluationOptions, memo: ContentMemo | None = None) -> list[Any]:
    """The digest providers freshness compares a signed recipe against."""
    return providers_for(
        options.tree.recipes,
        digests=options.freshness.digests,
        aicr=aicr_program(options.freshness),
        memo=memo,
    )


def _freshness(
    verdict: Verdict | None, item: ParsedPointer, providers: Sequence[Any], explainer: Any = None
) -> FreshnessInfo:
    """Signed digest against the current one; stale evidence also gets its diff and commits."""
    if not isinstance(verdict, Verified):
        return FreshnessInfo()
    evidence = verdict.evidence
    result = compare(
        evidence.recipe_digest,
        evidence.predicate_type,
        item.pointer.recipe,
        item.pointer.profile,
        providers,
    )
    explanation = None
    if result.state is Freshness.STALE and explainer is not None:
        why = explainer.explain(
            item.pointer.recipe,
            item.pointer.profile,
            evidence.recipe_yaml,
            evidence.predicate_type.canonicalizer,
            evidence.aicr_commit,
        )
        explanation = FreshnessExplanation(
            diff=why.diff, commits=why.commits, truncated=why.truncated
        )
    return FreshnessInfo(
        state=result.state,
        signed=result.signed,
        current=result.current,
        provider=result.provider,
        explanation=explanation,
    )


def _labelled(allowlist: Any, signer: Any) -> tuple[Any, str]:
    """A verified signer's classification and display label (asked once per signer)."""
    classification = allowlist.classify(signer)
    return classification, display_label(signer, classification)


def remembered(organisation_of: Callable[[Any, Any], str]) -> Callable[[Any, Any], str]:
    """`organisation_of` answering each (signer, classification) once: the board asks per run
    and row, and a build has few signers."""
    known: dict[Any, str] = {}

    def lookup(signer: Any, classification: Any) -> str:
        try:
            key = (signer, classification)
            if key not in known:
                known[key] = organisation_of(signer, classification)
            return known[key]
        except TypeError:  # an unhashable classification: ask every time
            return str(organisation_of(signer, classification))

    return lookup
