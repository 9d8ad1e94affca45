"""Every pointer stands on its own: a pointer repeating another's bundle is verified and judged
against its own folder and claims, and a bundle counts once however many pointers name it."""

from __future__ import annotations

import pytest

from generator.build import evaluate
from tests.evaluation.conftest import ALICE, EvidenceTree, by_path, failure_class


@pytest.mark.parametrize(
    "foreign_recipe",
    ["b200", "x100"],
    ids=["foreign-folder-sorts-first", "foreign-folder-sorts-last"],
)
def test_a_pointer_naming_another_recipes_bundle_is_rejected_on_its_own(
    evidence_tree: EvidenceTree, foreign_recipe: str
) -> None:
    """A pointer in recipe B's folder naming recipe A's bundle fails on its own (the bundle is
    not B's) whichever pointer the scan saw first; A stays verified and counted once."""
    honest = evidence_tree.sign("h100")
    decoy = evidence_tree.sign(foreign_recipe)  # only so that recipe B exists in the tree
    honest_path, decoy_path = evidence_tree.add(honest, decoy)
    foreign_name = decoy.recipe_name
    foreign_path = (
        f"evidence/{foreign_name}/{ALICE.slug}/sha256-{honest.digest.removeprefix('sha256:')}.yaml"
    )
    evidence_tree.point(honest, foreign_path, recipe=foreign_name)
    evidence_tree.write()

    evaluation = evaluate(evidence_tree.options().evaluation)

    pointers = by_path(evaluation.documents)
    foreign = pointers[foreign_path]
    assert foreign["verify"]["exit"] == 2
    assert failure_class(foreign) in ("schema", "integrity")
    assert foreign_name in foreign["verify"]["failureCause"]["detail"]
    assert foreign["evidence"] is None
    # the repetition is noted on whichever of the two the scan met second
    noted = [p for p in (foreign, pointers[honest_path]) if p["duplicateOf"]]
    assert len(noted) == 1 and noted[0]["duplicateOf"] in (foreign_path, honest_path)

    assert pointers[honest_path]["verify"]["exit"] == 0
    assert pointers[decoy_path]["verify"]["exit"] == 0
    counted = [r.bundle_digest for r in evaluation.board.runs]
    assert sorted(counted) == sorted([honest.digest, decoy.digest])
    assert {str(r.recipe) for r in evaluation.board.runs if r.bundle_digest == honest.digest} == {
        honest.recipe_name
    }


def test_an_honest_duplicate_is_verified_on_its_own_and_counted_once(
    evidence_tree: EvidenceTree,
) -> None:
    """A flat pending copy next to the signed pointer of the same bundle is verified itself
    (against the certificate's identity, as it claims no signer) and the bundle is one run."""
    built = evidence_tree.sign("h100")
    signed_path = evidence_tree.point(built)
    flat_path = evidence_tree.point(built, f"evidence/{built.recipe_name}.yaml", signer=False)
    evidence_tree.write()

    evaluation = evaluate(evidence_tree.options().evaluation)

    pointers = by_path(evaluation.documents)
    flat = pointers[flat_path]
    assert flat["duplicateOf"] == signed_path
    assert flat["verify"]["exit"] == 0
    step2 = flat["verify"]["steps"][1]
    assert {
        "key": "pointer signer",
        "value": "none claimed; certificate identity reported",
        "beyondAicr": False,
    } in step2["subRows"]  # its own verification, not the other's
    assert pointers[signed_path]["verify"]["exit"] == 0
    assert [r.bundle_digest for r in evaluation.board.runs] == [built.digest]
    tab = evaluation.documents["index"]["groups"][0]["dashboards"][0]["tabs"][0]
    (row,) = tab["combined"]["tests"]
    assert row["counts"] == {"pass": 1, "fail": 0, "notRun": 0}


def test_a_duplicate_that_passes_counts_when_the_first_fails(
    evidence_tree: EvidenceTree,
) -> None:
    """The scan's first pointer of a bundle fails on its own (it claims another signer); the
    repeating pointer passes: the bundle still counts, once, through the one that passed."""
    from dataclasses import replace

    from generator.model import SignerIdentity
    from generator.testing.bundles import render_pointer

    built = evidence_tree.sign("h100")
    honest_path = evidence_tree.point(built)
    # a claimed signer whose folder the scan meets before ALICE's
    liar = next(
        s
        for s in (SignerIdentity(ALICE.issuer, f"https://github.com/liar/{n}") for n in range(64))
        if s.slug < ALICE.slug
    )
    lying_path = (
        f"evidence/{built.recipe_name}/{liar.slug}/"
        f"sha256-{built.digest.removeprefix('sha256:')}.yaml"
    )
    evidence_tree.pointers[lying_path] = render_pointer(replace(built.pointer, signer=liar))
    evidence_tree.write(signers=(ALICE, liar))

    evaluation = evaluate(evidence_tree.options().evaluation)

    pointers = by_path(evaluation.documents)
    assert pointers[lying_path]["verify"]["exit"] == 2
    assert failure_class(pointers[lying_path]) == "signature"
    assert pointers[honest_path]["verify"]["exit"] == 0
    assert [r.bundle_digest for r in evaluation.board.runs] == [built.digest]
    assert [r.signer for r in evaluation.board.runs] == [ALICE]
