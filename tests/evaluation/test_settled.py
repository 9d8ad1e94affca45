"""Settled verdicts: once a pointer is assessed, the build keeps its verdict without the bundle's
documents (memory), and nothing can use such a verdict where the documents matter: it is never
cached, never assessed again, and the build's outputs are those of full verdicts."""

from __future__ import annotations

from typing import Any

import pytest

import generator.evaluate.pool as pool
from generator.build import evaluate
from generator.evaluate.assess import settled
from generator.isolation import assess_isolated
from generator.model import NoVerdict, ParsedPointer, Pending, Verified
from generator.verify.serialize import verdict_to_json
from tests.evaluation.conftest import EvidenceTree, by_path


def _tree_with_duplicates(evidence_tree: EvidenceTree) -> tuple[str, str, str]:
    """Three bundles, one named again by a flat pending copy (a duplicate)."""
    first, second, third = (evidence_tree.sign(r) for r in ("h100", "b200", "x100"))
    signed_path = evidence_tree.point(first)
    evidence_tree.point(second)
    evidence_tree.point(third)
    flat_path = evidence_tree.point(first, f"evidence/{first.recipe_name}.yaml", signer=False)
    evidence_tree.write()
    return signed_path, flat_path, first.recipe_name


def test_records_keep_settled_verdicts_and_the_documents_stay_whole(
    evidence_tree: EvidenceTree,
) -> None:
    """Every verified record is settled; its data entry still holds the bundle's facts."""
    signed_path, _flat, _recipe = _tree_with_duplicates(evidence_tree)

    evaluation = evaluate(evidence_tree.options().evaluation)

    verified = [r for r in evaluation.records if isinstance(r.verdict, Verified | Pending)]
    assert verified and all(r.verdict.evidence.settled for r in verified)  # type: ignore[union-attr]
    assert all(r.verdict.evidence.snapshot is None for r in verified)  # type: ignore[union-attr]
    entry = by_path(evaluation.documents)[signed_path]
    assert entry["evidence"]["tests"], entry["evidence"]  # made before the verdict settled
    assert entry["evidence"]["hardware"]


def test_workers_settle_duplicates_as_the_build_process_assesses_them(
    evidence_tree: EvidenceTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A duplicate verified in a worker comes back settled; its entry names the pointer it
    repeats exactly as when the build process assesses it, and the board counts it once."""
    signed_path, flat_path, _recipe = _tree_with_duplicates(evidence_tree)
    monkeypatch.setattr(pool, "_MIN_PER_WORKER", 1)

    alone = evaluate(evidence_tree.options("one", jobs=1).evaluation)
    spread = evaluate(evidence_tree.options("two", jobs=2).evaluation)

    assert by_path(spread.documents)[flat_path]["duplicateOf"] == signed_path
    assert spread.documents == alone.documents
    assert [r.bundle_digest for r in spread.board.runs] == [
        r.bundle_digest for r in alone.board.runs
    ]
    assert all(
        r.verdict.evidence.settled  # type: ignore[union-attr]
        for r in spread.records
        if isinstance(r.verdict, Verified)
    )


def test_a_settled_verdict_is_never_cached(evidence_tree: EvidenceTree) -> None:
    """Serializing a settled verdict for the verdict cache fails: a cached settled verdict
    would come back without its documents and be judged on nothing."""
    _tree_with_duplicates(evidence_tree)
    evaluation = evaluate(evidence_tree.options().evaluation)
    verdict = next(r.verdict for r in evaluation.records if isinstance(r.verdict, Verified))

    with pytest.raises(ValueError, match="settled"):
        verdict_to_json(verdict)


def test_a_settled_verdict_is_never_assessed_again(evidence_tree: EvidenceTree) -> None:
    """Assessing a settled verdict is refused; inside the isolation boundary that pointer gets
    an internal verdict (no verdict), never a record judged on missing documents."""
    _tree_with_duplicates(evidence_tree)
    options = evidence_tree.options().evaluation
    evaluation = evaluate(options)
    record = next(r for r in evaluation.records if isinstance(r.verdict, Verified))
    assert isinstance(record.pointer, ParsedPointer)

    from generator.evaluate.assess import Assessor
    from generator.freshness import ContentMemo
    from generator.tree import load_allowlist

    allowlist = load_allowlist(options.tree.recipes / "evidence" / "allowlist.yaml")
    assessor = Assessor.for_build(options, allowlist, ContentMemo(None))
    with pytest.raises(ValueError, match="settled"):
        assessor.assess(record.pointer, record.verdict)
    isolated, entry = assess_isolated(assessor, record.pointer, record.verdict)
    assert isinstance(isolated.verdict, NoVerdict) and entry is None


def test_settling_is_idempotent_and_keeps_the_predicate(evidence_tree: EvidenceTree) -> None:
    """What later stages read (the predicate: times, recipe name and digest) survives."""
    _tree_with_duplicates(evidence_tree)
    evaluation = evaluate(evidence_tree.options().evaluation)
    verdict: Any = next(r.verdict for r in evaluation.records if isinstance(r.verdict, Verified))
    again = settled(verdict)
    assert again is verdict
    assert verdict.evidence.recipe_digest and verdict.evidence.attested_at
    assert verdict.evidence.predicate["recipe"]["name"] == verdict.evidence.recipe_name
