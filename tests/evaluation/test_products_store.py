"""generator.evaluate.products: a stored recipe product reads back as the product it was,
whether or not its documents hold values JSON cannot say directly (the `$` tags)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from generator.cacheauth import CacheAuth, Purpose
from generator.data import FreshnessInfo
from generator.evaluate.products import (
    PointerProduct,
    ProductStore,
    RecipeProduct,
    product_to_json,
)
from generator.model import Freshness
from tests._evidence_fakes import identity, make_evidence, make_verified

AUTH = CacheAuth(b"p" * 40)
KEY = "a" * 64


def _product(predicate: dict[str, Any]) -> RecipeProduct:
    verdict = make_verified(make_evidence(predicate=predicate), identity("acme"))
    settled = type(verdict)(**{**verdict.__dict__, "evidence": verdict.evidence.settle()})
    pointer = PointerProduct(
        path="evidence/r/s/sha256-x.yaml",
        verdict=settled,
        freshness=FreshnessInfo(Freshness.UNKNOWN, None, None, None),
        document={"path": "evidence/r/s/sha256-x.yaml", "note": 'a "$ in a string'},
        entry=None,
    )
    return RecipeProduct(KEY, (), (pointer,))


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"$schema": "https://example.test/schema"},
        {"nested": {"$ref": "#/x", "ok": [1, 2]}},
        {"note": 'quoted "$ inside a string'},
    ],
    ids=["plain", "dollar-key", "nested-dollar-key", "dollar-in-string"],
)
def test_a_stored_product_reads_back_equal(tmp_path: Path, extra: dict[str, Any]) -> None:
    product = _product(extra)
    store = ProductStore(tmp_path, AUTH)
    store.store(product)
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry to classify"))
    assert loaded == product
    assert loaded is not None and loaded.pointers[0].verdict.evidence.predicate == {
        **make_evidence().predicate,
        **extra,
    }


@pytest.mark.parametrize("status", ["bogus", ["passed"], None])
def test_a_sealed_product_with_an_unknown_step_status_is_a_miss(
    tmp_path: Path, status: Any
) -> None:
    """Authentic bytes of the wrong shape (a future or foreign writer) are not a product."""
    doc = product_to_json(_product({}))
    step = {"step": 1, "name": "signature", "status": status, "detail": "", "subRows": []}
    doc["pointers"][0]["verdict"]["steps"] = [step]
    store = ProductStore(tmp_path, AUTH)
    AUTH.write_sealed(store._file(KEY), Purpose.RECIPE, json.dumps(doc).encode(), KEY.encode())
    assert store.load(KEY, lambda signer: pytest.fail("no board entry to classify")) is None
    step["status"] = "passed"
    AUTH.write_sealed(store._file(KEY), Purpose.RECIPE, json.dumps(doc).encode(), KEY.encode())
    assert store.load(KEY, lambda signer: pytest.fail("no board entry to classify")) is not None


@pytest.mark.parametrize(
    ("signer", "duplicate", "label", "expected_signer", "expected_duplicate"),
    [
        ({"label": "old", "class": "x"}, None, "new", {"label": "new", "class": "x"}, None),
        ({"label": "same"}, None, "same", {"label": "same"}, None),
        ({"label": "old"}, "evidence/a.yaml", "old", {"label": "old"}, "evidence/a.yaml"),
        ({"label": None}, None, None, {"label": None}, None),
        (None, None, "any", None, None),  # no signer section: nothing to name
    ],
)
def test_a_reused_entry_takes_the_current_label_and_duplicate(
    signer: Any,
    duplicate: str | None,
    label: str | None,
    expected_signer: Any,
    expected_duplicate: Any,
) -> None:
    stored = {"path": "p", "signer": signer, "duplicateOf": None}
    pointer = dataclasses.replace(_product({}).pointers[0], document=stored)
    made = pointer.document_as(duplicate, label)
    assert made["signer"] == expected_signer and made["duplicateOf"] == expected_duplicate
    assert stored == {
        "path": "p",
        "signer": signer,
        "duplicateOf": None,
    }  # the product is untouched
