"""Smoke tests of the benchmark's synthetic tree generator (never timed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.gen import TreeShape, generate_tree, recipe_decls, shape_for, signers
from generator.model import ParsedPointer
from generator.tree import load_allowlist, scan_tree

SMALL = TreeShape(recipes=3, signers=2, builds=2, fail_every=3, reject_every=5)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    root = tmp_path_factory.mktemp("bench") / "tree"
    return root, generate_tree(SMALL, root, workers=1)


def test_writes_one_usable_pointer_per_attestation(tree: tuple[Path, object]) -> None:
    root, _ = tree
    allowlist = load_allowlist(root / "evidence" / "allowlist.yaml")
    scan = scan_tree(root, allowlist=allowlist, allow_pending=True)
    parsed = [f for f in scan.files if isinstance(f, ParsedPointer)]
    assert len(parsed) == SMALL.attestations == len(scan.files)
    assert not scan.duplicate_of


def test_bundles_differ_in_digest_recipe_and_signer(tree: tuple[Path, object]) -> None:
    root, _ = tree
    scan = scan_tree(
        root, allowlist=load_allowlist(root / "evidence" / "allowlist.yaml"), allow_pending=True
    )
    pointers = [f.pointer for f in scan.files if isinstance(f, ParsedPointer)]
    assert len({p.bundle.digest for p in pointers}) == len(pointers)
    assert len({p.recipe for p in pointers}) == SMALL.recipes
    assert len({p.signer.identity.identity for p in pointers if p.signer}) == SMALL.signers
    assert len({p.signer.rekor_log_index for p in pointers if p.signer}) == len(pointers)


def test_layout_holds_every_bundle_and_its_referrer(tree: tuple[Path, object]) -> None:
    root, info = tree
    index = json.loads((root / "bundles" / "index.json").read_text())
    refs = [
        m
        for m in index["manifests"]
        if m.get("artifactType") == "application/vnd.dev.sigstore.bundle.v0.3+json"
    ]
    assert len(refs) == SMALL.attestations
    assert (root / "trust" / "trusted_root.json").is_file()
    assert info.rejected == SMALL.attestations // SMALL.reject_every  # type: ignore[attr-defined]


def test_a_second_call_reuses_the_tree_and_a_new_shape_rewrites_it(tmp_path: Path) -> None:
    shape = TreeShape(recipes=1, signers=1, builds=1)
    first = generate_tree(shape, tmp_path / "t", workers=1)
    again = generate_tree(shape, tmp_path / "t", workers=1)
    assert not first.reused and again.reused
    other = generate_tree(TreeShape(recipes=2, signers=1, builds=1), tmp_path / "t", workers=1)
    assert not other.reused and other.pointers == 2


@pytest.mark.parametrize(("size", "recipes"), [(100, 10), (1000, 100), (10_000, 1000)])
def test_shape_for_sizes(size: int, recipes: int) -> None:
    shape = shape_for(size)
    assert shape.attestations == size and shape.recipes == recipes


@pytest.mark.parametrize("size", [0, 15, 99])
def test_shape_for_rejects_sizes_that_do_not_divide(size: int) -> None:
    with pytest.raises(ValueError):
        shape_for(size)


def test_recipes_are_distinct_and_signers_include_an_unlisted_one() -> None:
    shape = TreeShape(recipes=1000, signers=5, builds=1)
    names = [d.name for d in recipe_decls(shape)]
    assert len(set(names)) == 1000
    people = signers(shape)
    assert [p.listing for p in people].count(None) == 1
    assert all(p.listing != "first-party" for p in people)
