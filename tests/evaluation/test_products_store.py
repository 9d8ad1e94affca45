"""generator.evaluate.products: a stored recipe product reads back as the product it was;
authentic bytes of another shape are not a product; a verdict's stored outcome is what the
build summary counts of it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from generator.cacheauth import CacheAuth, Purpose
from generator.evaluate.products import (
    PointerProduct,
    RecipeProduct,
    StoredKind,
    StoredOutcome,
    product_parts,
)
from generator.evaluate.productstore import ProductStore
from generator.model import FailureCause, FailureClass, NoVerdict, Pending, Rejected, VerifyExit
from tests._evidence_fakes import identity, make_evidence, make_verified

AUTH = CacheAuth(b"p" * 40)
KEY = "a" * 64
SIGNER = identity("acme")


def _product(document: dict[str, Any]) -> RecipeProduct:
    pointer = PointerProduct(
        path="evidence/r/s/sha256-x.yaml",
        outcome=StoredOutcome(StoredKind.VERIFIED, VerifyExit.VALID, SIGNER),
        document={"path": "evidence/r/s/sha256-x.yaml", **document},
        entry=None,
    )
    return RecipeProduct(KEY, ((SIGNER, "mark"),), (pointer,))


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


@pytest.mark.parametrize(
    "value",
    [2**64, -(2**63) - 1, 123456789012345678901234567890, "lone \udc80"],
    ids=["u64-plus-one", "i64-minus-one", "30-digits", "lone-surrogate"],
)
def test_a_product_orjson_cannot_hold_exactly_is_not_kept(tmp_path: Path, value: Any) -> None:
    """orjson reads an integer beyond 64 bits back as a float: a product holding one (a
    hostile bundle's number) is not stored, so its recipe is evaluated again, exactly."""
    store = ProductStore(tmp_path, AUTH)
    store.store(_product({"n": value}))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None
    edge = _product({"n": [2**64 - 1, -(2**63)]})  # the widest integers orjson holds
    store.store(edge)
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) == edge


def _sealed(store: ProductStore, doc: dict[str, Any], layouts: bytes) -> None:
    """Authentic product bytes: the JSON part's length, the JSON part, the layouts."""
    head = json.dumps(doc).encode()
    body = len(head).to_bytes(8, "big") + head + layouts
    AUTH.write_sealed(store._file(KEY), Purpose.RECIPE, body, KEY.encode())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("kind", "NoVerdict"),
        ("kind", None),
        ("exit", 7),
        ("exit", 3),  # no verdict
        ("exit", 2),  # a rejection's, for a verified verdict
        ("exit", "0"),
        ("exit", True),
        ("signer", "ab"),
        ("signer", ["only-one"]),
        ("signer", [1, 2]),
    ],
)
def test_a_sealed_product_with_a_malformed_outcome_is_a_miss(
    tmp_path: Path, field: str, value: Any
) -> None:
    """Authentic bytes of the wrong shape (a future or foreign writer) are not a product."""
    doc, layouts = product_parts(_product({}))
    store = ProductStore(tmp_path, AUTH)
    _sealed(store, doc, b"".join(layouts))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is not None
    doc["pointers"][0]["outcome"][field] = value
    _sealed(store, doc, b"".join(layouts))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None


_CAUSE = FailureCause(FailureClass.SIGNATURE, "bad", "fix it")


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        (
            make_verified(make_evidence(), SIGNER),
            StoredOutcome(StoredKind.VERIFIED, VerifyExit.VALID, SIGNER),
        ),
        (
            dataclasses.replace(make_verified(make_evidence(), SIGNER), phase_failures=True),
            StoredOutcome(StoredKind.VERIFIED, VerifyExit.VALID_WITH_FAILURES, SIGNER),
        ),
        (
            Pending(steps=(), evidence=make_evidence()),
            StoredOutcome(StoredKind.PENDING, VerifyExit.VALID, None),
        ),
        (
            Rejected(steps=(), cause=_CAUSE, signer=SIGNER),
            StoredOutcome(StoredKind.REJECTED, VerifyExit.INVALID, SIGNER),
        ),
        (
            Rejected(steps=(), cause=_CAUSE),
            StoredOutcome(StoredKind.REJECTED, VerifyExit.INVALID, None),
        ),
    ],
    ids=["verified", "verified-with-failures", "pending", "rejected-signed", "rejected"],
)
def test_the_outcome_of_a_definite_verdict(verdict: Any, expected: StoredOutcome) -> None:
    assert StoredOutcome.of(verdict) == expected


def test_no_verdict_has_no_stored_outcome() -> None:
    with pytest.raises(ValueError, match="definite"):
        StoredOutcome.of(NoVerdict(steps=(), cause=_CAUSE))


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


@pytest.mark.parametrize(
    "damage",
    [
        lambda doc, layouts: (doc["document"].update(layout=[-1, 10]), layouts),
        lambda doc, layouts: (doc["document"].update(layout=[0, len(layouts) + 1]), layouts),
        lambda doc, layouts: (doc["document"].update(layout=[1, len(layouts)]), layouts),
        lambda doc, layouts: (doc["document"].update(layout=[0, 1]), layouts),
        lambda doc, layouts: (doc["document"].update(layout=[0, "9"]), layouts),
        lambda doc, layouts: (doc["document"].update(layout=[0, True]), layouts),
        lambda doc, layouts: (doc["document"].update(layout=[0]), layouts),
        lambda doc, layouts: (doc["document"].update(layout=None), layouts),
        lambda doc, layouts: (None, layouts[:-1]),
        lambda doc, layouts: (None, b"[" + layouts[1:]),
        lambda doc, layouts: (doc["document"]["head"].update(keys=None), layouts),
        lambda doc, layouts: (doc["document"].pop("head"), layouts),
        lambda doc, layouts: (doc.update(document={"path": "x"}), layouts),
    ],
    ids=[
        "negative-offset",
        "beyond-the-end",
        "shifted",
        "too-short",
        "length-not-int",
        "length-bool",
        "one-number",
        "no-span",
        "truncated",
        "not-an-object",
        "bad-head",
        "no-head",
        "a-dict-document",
    ],
)
def test_a_sealed_product_with_a_damaged_layout_is_a_miss(tmp_path: Path, damage: Any) -> None:
    """Authentic bytes whose entries' spans or heads do not fit their layouts are not a
    product: nothing beyond the layouts is ever read as an entry."""
    doc, layouts = product_parts(_product({"n": 1}))
    store = ProductStore(tmp_path, AUTH)
    blob = b"".join(layouts)
    _sealed(store, doc, blob)
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None and loaded == _product({"n": 1})
    blob = damage(doc["pointers"][0], blob)[1]
    _sealed(store, doc, blob)
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None


def test_a_product_whose_json_part_overruns_its_bytes_is_a_miss(tmp_path: Path) -> None:
    doc, layouts = product_parts(_product({}))
    store = ProductStore(tmp_path, AUTH)
    head = json.dumps(doc).encode()
    for size in (len(head) + sum(map(len, layouts)) + 1, 2**63, 0):
        body = size.to_bytes(8, "big") + head + b"".join(layouts)
        AUTH.write_sealed(store._file(KEY), Purpose.RECIPE, body, KEY.encode())
        assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None
    AUTH.write_sealed(store._file(KEY), Purpose.RECIPE, b"\0\0", KEY.encode())
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None
