"""End to end: one multi-SAN key cannot be two allowlisted signers and make a recipe Confirmed.

A sandboxed copy of the demo tree gets a new recipe with two pointers, each claiming one of two
allowlisted community identities. Signed by two honest single-SAN leaves the recipe is Confirmed
(the control); signed by one key whose leaf carries both SANs it must not be.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from generator.model import Phase, SignerIdentity
from generator.testing.authority import LeafShape, SigningOptions, TestAuthority
from generator.testing.bundles import TestSpec, build_bundle
from tests.hostile.conftest import ATTESTED, hostile_spec, new_sandbox, recipe_states

OAUTH = "https://github.com/login/oauth"
ALICE = SignerIdentity(OAUTH, "alice@example.com")
BOB = SignerIdentity(OAUTH, "bob@example.com")
TESTS = {Phase.DEPLOYMENT: [TestSpec("gpu-operator-healthy")]}


def _allow(recipes: Path) -> None:
    path = recipes / "evidence" / "allowlist.yaml"
    text = path.read_text(encoding="utf-8")
    extra = "".join(
        f"  - label: {s.identity}\n    issuer: {s.issuer}\n    source: {s.slug}\n"
        for s in (ALICE, BOB)
    )
    path.write_text(text.replace("community:\n", "community:\n" + extra, 1), encoding="utf-8")


def _state(tmp: Path, authority: TestAuthority, options: SigningOptions | None) -> Any:
    from generator.build import BuildOptions, evaluate

    box = new_sandbox(tmp)
    _allow(box.recipes)
    recipe = None
    for hour, signer in enumerate((ALICE, BOB)):
        spec = hostile_spec(
            "idt",
            signer=signer,
            tests=TESTS,
            signing=options,
            attested_at=ATTESTED + timedelta(hours=hour),
        )
        built = build_bundle(spec, authority)
        recipe = built.recipe_name
        box.add_bundle(built)
    options_ = BuildOptions.flat(
        recipes=box.recipes,
        out=box.out,
        trust_root=box.recipes / "trust" / "trusted_root.json",
        oci_layouts=(box.layout,),
        offline=True,
        cache=box.cache,
        quiet=True,
    )
    evaluation = evaluate(options_.evaluation)
    pointers = evaluation.documents["pointers"]["pointers"]
    states = recipe_states(evaluation.documents["index"])
    return states.get(recipe, ("(not listed)", (), ())), pointers


def test_two_single_san_signers_confirm(tmp_path: Path, authority: TestAuthority) -> None:
    (rollup, _phases, tests), _pointers = _state(tmp_path, authority, None)
    assert rollup == "CONFIRMED", rollup
    assert {t[2] for t in tests} == {"CONFIRMED"}


def test_one_multi_san_key_does_not_confirm(tmp_path: Path, authority: TestAuthority) -> None:
    shape = LeafShape(sans=(ALICE.identity, BOB.identity))
    (rollup, _phases, tests), pointers = _state(
        tmp_path, authority, SigningOptions(leaf=shape, key_label="one-key-two-sans")
    )
    assert rollup != "CONFIRMED", rollup
    assert "CONFIRMED" not in {t[2] for t in tests}
    ours = [p for p in pointers if "/idt-" in p["path"] or p["path"].startswith("evidence/idt")]
    assert len(ours) == 2, [p["path"] for p in pointers]
    for pointer in ours:
        text = str(pointer)
        assert "signature" in text and "email:alice@example.com" in text, text
