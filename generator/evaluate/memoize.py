"""The evaluation memo of one build (generator.buildmemo): its key, what it reuses and keeps."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.buildmemo import Counts, EvaluationMemo, Memo, fingerprint
from generator.evaluate.assess import aicr_program
from generator.evaluate.engine import cache_root
from generator.evaluate.evaluation import Evaluation
from generator.model import NoVerdict, Pending, Verified
from generator.options import BuildOptions

__all__ = ["MemoSlot", "counts_of"]


def counts_of(evaluation: Evaluation) -> Counts:
    """The summary counts of an evaluation."""
    records = evaluation.records
    return Counts(
        pointers=len(records),
        verified=sum(1 for r in records if isinstance(r.verdict, Verified)),
        rejected=evaluation.count(2),
        pending=sum(1 for r in records if isinstance(r.verdict, Pending)),
        no_verdict=evaluation.count(3),
        build_time=evaluation.build_time,
    )


@dataclass
class MemoSlot:
    """A build's place in the memo: its key (None: not memoized, `--reevaluate` or an online
    production trust root) and the memo folder."""

    key: str | None
    memos: EvaluationMemo

    @classmethod
    def for_build(cls, options: BuildOptions) -> MemoSlot:
        key = (
            None
            if options.output.reevaluate
            else fingerprint(options.evaluation, aicr_program(options.freshness))
        )
        return cls(key, EvaluationMemo(cache_root(options.engine)))

    def load(self) -> Memo | None:
        """The memo of an identical earlier evaluation, or None."""
        return self.memos.load(self.key) if self.key is not None else None

    def keeper(self, evaluation: Evaluation, counts: Counts) -> Callable[[Path], None] | None:
        """What keeps this evaluation's data folder, or None when it must not be kept.

        Only a definite evaluation is kept: a verdict the registry could not give this time
        (none, or an older one reused) may change when it can."""
        definite = all(
            not isinstance(r.verdict, NoVerdict) and r.verified_at is None
            for r in evaluation.records
        )
        if self.key is None or not definite:
            self.key = None
            return None
        key, documents = self.key, evaluation.documents

        def keep(data_dir: Path) -> None:
            self.memos.store(key, documents, counts, data_dir)

        return keep

    def add_page_digests(self, digests: Mapping[str, Any] | None) -> None:
        """Keep the site's document digests with the memo just stored (if any)."""
        if self.key is not None and digests is not None:
            self.memos.add_page_digests(self.key, digests)
