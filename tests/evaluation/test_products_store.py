"""generator.evaluate.products: a stored recipe product reads back as the product it was;
authentic bytes of another shape are not a product; a verdict's stored outcome is what the
build summary counts of it."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from generator.cacheauth import CacheAuth, Purpose, failures, reset_failures
from generator.corroborate import BoardEntry
from generator.data.gojson import finish_layout
from generator.data.laidout import ENTRY_PAD, LaidOutEntry, LayoutError, plain
from generator.evaluate.products import (
    PointerProduct,
    RecipeProduct,
    StoredKind,
    StoredOutcome,
    product_parts,
)
from generator.evaluate.productstore import LAYOUTS_SUFFIX, ProductStore
from generator.facts import Criteria
from generator.model import (
    FailureCause,
    FailureClass,
    NoVerdict,
    Pending,
    Phase,
    Rejected,
    VerifyExit,
)
from tests._evidence_fakes import identity, make_evidence, make_run, make_verified

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
    """An authentic product: its JSON part sealed, its file of laid-out entries beside it."""
    AUTH.write_sealed(store._file(KEY), Purpose.RECIPE, json.dumps(doc).encode(), KEY.encode())
    store._file(KEY, LAYOUTS_SUFFIX).write_bytes(layouts)


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
        ("signer", [["issuer"], "identity"]),  # unhashable: stored signers are made once a pair
        ("signer", [{"issuer": 1}, "identity"]),
    ],
)
def test_a_sealed_product_with_a_malformed_outcome_is_a_miss(
    tmp_path: Path, field: str, value: Any
) -> None:
    """Authentic bytes of the wrong shape (a future or foreign writer) are not a product."""
    doc, layouts, _ = product_parts(_product({}))
    store = ProductStore(tmp_path, AUTH)
    _sealed(store, doc, b"".join(layouts))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is not None
    doc["pointers"][0]["outcome"][field] = value
    _sealed(store, doc, b"".join(layouts))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("signer", [["issuer"], "identity"]),
        ("signer", ["issuer", 7]),
        ("signer", ["issuer"]),
        ("criteria", {"service": ["eks"]}),
        ("criteria", {"service": 1}),
        ("criteria", {"region": "eu"}),
    ],
)
def test_a_sealed_product_with_a_malformed_board_entry_is_a_miss(
    tmp_path: Path, where: str, value: Any
) -> None:
    """A board entry's signer and criteria are made once per value (shared by the pointers
    that hold them): one of another shape, unhashable or not, is still no product."""
    run = make_run(SIGNER, {(Phase.DEPLOYMENT, "operator-health"): "passed"})
    entry = BoardEntry(run, Criteria(service="eks", accelerator="h100"), "evidence/r/s/x.yaml")
    product = dataclasses.replace(
        _product({}), pointers=(dataclasses.replace(_product({}).pointers[0], entry=entry),)
    )
    doc, layouts, _ = product_parts(product)
    store = ProductStore(tmp_path, AUTH)
    _sealed(store, doc, b"".join(layouts))
    loaded = store.load(KEY, lambda signer: run.classification)
    assert loaded is not None and loaded.pointers[0].entry == entry
    stored = doc["pointers"][0]["entry"]
    if where == "signer":
        stored["run"]["signer"] = value
    else:
        stored["criteria"] = value
    _sealed(store, doc, b"".join(layouts))
    assert store.load(KEY, lambda signer: run.classification) is None


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


_KEEP = object()


def _span(
    doc: dict[str, Any], offset: Any = None, length: Any = None, sha: Any = None, steps: Any = _KEEP
) -> None:
    span = doc["document"]["layout"]
    assert len(span) == 4  # offset, length, sha256, number steps: each damaged alone below
    doc["document"]["layout"] = [
        span[0] if offset is None else offset,
        span[1] if length is None else length,
        span[2] if sha is None else sha,
        span[3] if steps is _KEEP else steps,
    ]


@pytest.mark.parametrize(
    "damage",
    [
        lambda doc, n: _span(doc, offset=-1),
        lambda doc, n: _span(doc, length=n + 1),
        lambda doc, n: _span(doc, offset=n - doc["document"]["layout"][1] + 1),
        lambda doc, n: _span(doc, length=1),
        lambda doc, n: _span(doc, length="9"),
        lambda doc, n: _span(doc, length=True),
        lambda doc, n: _span(doc, sha="ab"),
        lambda doc, n: _span(doc, sha="Z" * 64),
        lambda doc, n: _span(doc, sha=7),
        lambda doc, n: _span(doc, steps=4),
        lambda doc, n: _span(doc, steps=-1),
        lambda doc, n: _span(doc, steps=True),
        lambda doc, n: _span(doc, steps="0"),
        lambda doc, n: _span(doc, steps=None),
        lambda doc, n: doc["document"]["layout"].pop(),
        lambda doc, n: doc["document"].update(layout=[0, n]),
        lambda doc, n: doc["document"].update(layout=None),
        lambda doc, n: doc["document"]["head"].update(keys=None),
        lambda doc, n: doc["document"].pop("head"),
        lambda doc, n: doc.update(document={"path": "x"}),
        lambda doc, n: doc["document"]["text"].__setitem__(0, n - 1),
        lambda doc, n: doc["document"]["text"].__setitem__(2, "ab"),
        lambda doc, n: doc["document"]["text"].pop(),
        lambda doc, n: doc["document"].update(text=None),
        lambda doc, n: doc["document"].pop("text"),
    ],
    ids=[
        "negative-offset",
        "beyond-the-end",
        "shifted",
        "too-short",
        "length-not-int",
        "length-bool",
        "digest-short",
        "digest-not-hex",
        "digest-not-text",
        "steps-beyond",
        "steps-negative",
        "steps-bool",
        "steps-text",
        "steps-null",
        "no-steps",
        "no-digest",
        "no-span",
        "bad-head",
        "no-head",
        "a-dict-document",
        "text-beyond-the-end",
        "text-digest-short",
        "text-no-digest",
        "text-null",
        "no-text",
    ],
)
def test_a_sealed_product_with_a_damaged_span_or_head_is_a_miss(
    tmp_path: Path, damage: Any
) -> None:
    """Authentic bytes whose entries' spans or heads do not fit their file of laid-out entries
    are not a product: nothing beyond that file is ever read as an entry."""
    doc, layouts, _ = product_parts(_product({"n": 1}))
    store = ProductStore(tmp_path, AUTH)
    blob = b"".join(layouts)
    _sealed(store, doc, blob)
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None and loaded == _product({"n": 1})
    damage(doc["pointers"][0], len(blob))
    _sealed(store, doc, blob)
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None


@pytest.mark.parametrize(
    "plant",
    [
        lambda path, blob: path.unlink(),
        lambda path, blob: path.write_bytes(blob[:-1]),
        lambda path, blob: path.write_bytes(blob + b" "),
        lambda path, blob: (path.unlink(), path.mkdir()),
        lambda path, blob: (path.unlink(), os.mkfifo(path)),
        lambda path, blob: (path.rename(path.with_name("real")), path.symlink_to("real")),
    ],
    ids=["missing", "shorter", "longer", "a-folder", "a-fifo", "a-link"],
)
def test_a_product_whose_file_of_entries_is_not_what_it_names_is_a_miss(
    tmp_path: Path, plant: Any
) -> None:
    """The file of laid-out entries is not sealed: anything but a regular file of the size the
    sealed part names is a miss when the product is read (never followed, never blocking)."""
    store = ProductStore(tmp_path, AUTH)
    store.store(_product({"n": 1}))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is not None
    path = store._file(KEY, LAYOUTS_SUFFIX)
    plant(path, path.read_bytes())
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None


def test_an_entry_changed_to_the_same_size_raises_and_its_file_goes(tmp_path: Path) -> None:
    """A change the size does not show is found when the entry's text is read: `LayoutError`
    (the build evaluates again, `generator.build`), the file removed, the failure counted, so
    the next read of the product is a miss."""
    reset_failures()
    store = ProductStore(tmp_path, AUTH)
    store.store(_product({"n": 1}))
    path = store._file(KEY, LAYOUTS_SUFFIX)
    path.write_bytes(path.read_bytes().replace(b'"n": 1', b'"n": 2'))
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None
    entry = loaded.pointers[0].document
    assert entry["path"] == "evidence/r/s/sha256-x.yaml"  # the sealed head still answers
    with pytest.raises(LayoutError):
        entry["n"]
    assert not path.exists()
    assert failures() == {f"recipe layouts {path.name}"}
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None
    reset_failures()


def _relabel(product: RecipeProduct, label: str) -> RecipeProduct:
    """`product` (as read back) with its first entry renamed, as a build stores it again."""
    first = product.pointers[0]
    renamed = {**plain(first.document), "signer": {"label": label}}
    return dataclasses.replace(
        product, pointers=(dataclasses.replace(first, document=renamed), *product.pointers[1:])
    )


def _two_pointers() -> RecipeProduct:
    one = _product({"n": 1})
    second = dataclasses.replace(
        one.pointers[0], path="evidence/r/s/sha256-y.yaml", document={"path": "y", "m": [2]}
    )
    return dataclasses.replace(one, pointers=(one.pointers[0], second))


def test_a_product_stored_again_keeps_its_entries_in_place_and_appends(tmp_path: Path) -> None:
    """A reused product stored again keeps the bytes of its file and appends the renamed
    entry's text: the entries this build read from that file still find their text where it
    was, and the product reads back renamed."""
    store = ProductStore(tmp_path, AUTH)
    store.store(_two_pointers())
    path = store._file(KEY, LAYOUTS_SUFFIX)
    before = path.read_bytes()
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None
    kept_entry = loaded.pointers[1].document
    store.store(_relabel(loaded, "renamed"))
    after = path.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert kept_entry == {"path": "y", "m": [2]}  # read from the file as it is now
    again = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert again is not None
    assert plain(again.pointers[0].document)["signer"] == {"label": "renamed"}
    assert again.pointers[1].document == {"path": "y", "m": [2]}


def test_a_product_stored_again_appends_to_its_file_in_place(tmp_path: Path) -> None:
    """The renamed entry's text is appended to the same file (the same inode, its bytes never
    read back and written again)."""
    store = ProductStore(tmp_path, AUTH)
    store.store(_two_pointers())
    path = store._file(KEY, LAYOUTS_SUFFIX)
    inode = path.stat().st_ino
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None
    store.store(_relabel(loaded, "renamed"))
    assert path.stat().st_ino == inode
    again = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert again is not None and plain(again.pointers[0].document)["signer"]["label"] == "renamed"


def _linked(path: Path) -> Path:
    """`path` made a symbolic link to its own bytes, elsewhere; that file."""
    real = path.with_name("elsewhere")
    path.rename(real)
    path.symlink_to(real.name)
    return real


def _hard_linked(path: Path) -> Path:
    """`path` given a second name (a file outside the cache, hard-linked in); that name."""
    other = path.parent / "outside"
    os.link(path, other)
    return other


def _fifo(path: Path) -> Path:
    """`path` replaced by a FIFO nobody reads; the FIFO."""
    path.unlink()
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("plant", [_linked, _hard_linked, _fifo], ids=["link", "hard-link", "fifo"])
def test_a_planted_file_of_entries_is_never_appended_to(tmp_path: Path, plant: Any) -> None:
    """A product stored again never appends through a link, to a file with another name (a
    file outside the cache hard-linked in) or to a FIFO (never waited on): the product stays as
    it was and the planted file is untouched."""
    store = ProductStore(tmp_path, AUTH)
    store.store(_two_pointers())
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None
    renamed = _relabel(loaded, "renamed")  # the renamed entry read before the file is planted
    path = store._file(KEY, LAYOUTS_SUFFIX)
    planted = plant(path)
    before = None if planted.is_fifo() else planted.read_bytes()
    header = store._file(KEY).read_bytes()
    storing = threading.Thread(target=store.store, args=(renamed,), daemon=True)
    storing.start()
    storing.join(timeout=10)
    assert not storing.is_alive(), "waited on a FIFO"
    assert store._file(KEY).read_bytes() == header
    if before is not None:
        assert planted.read_bytes() == before


def test_a_file_mostly_of_text_no_entry_names_is_written_afresh(tmp_path: Path) -> None:
    store = ProductStore(tmp_path, AUTH)
    store.store(_product({"n": 1}))
    path = store._file(KEY, LAYOUTS_SUFFIX)
    for label in ("a", "b", "c"):
        loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
        assert loaded is not None
        store.store(_relabel(loaded, label))
        size = path.stat().st_size
        fresh = len(b"".join(product_parts(_relabel(loaded, label))[1]))
        assert size < 3 * fresh  # never more text no entry names than text it names, and more
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None and plain(loaded.pointers[0].document)["signer"]["label"] == "c"


def test_a_file_written_afresh_carries_each_kept_entry_s_stored_text(tmp_path: Path) -> None:
    """An entry not renamed keeps its stored text (as data/pointers.json holds it) through a
    file written afresh: copied with its sha256, and it reads back as that text."""
    store = ProductStore(tmp_path, AUTH)
    store.store(_two_pointers())
    path = store._file(KEY, LAYOUTS_SUFFIX)
    inode = path.stat().st_ino
    while path.stat().st_ino == inode:  # appended until most of it is text no entry names
        loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
        assert loaded is not None
        store.store(_relabel(loaded, f"{path.stat().st_size}"))
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None
    for pointer in loaded.pointers:
        entry = pointer.document
        assert isinstance(entry, LaidOutEntry)
        expected = finish_layout(entry.layout, ENTRY_PAD, entry.steps)
        assert entry.finished_text(ENTRY_PAD) == expected


def test_a_kept_file_cut_short_leaves_the_product_as_it_was(tmp_path: Path) -> None:
    store = ProductStore(tmp_path, AUTH)
    store.store(_two_pointers())
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None
    renamed = _relabel(loaded, "renamed")
    path = store._file(KEY, LAYOUTS_SUFFIX)
    path.write_bytes(path.read_bytes()[:-1])
    store.store(renamed)  # not stored: the file it keeps is not what it names
    header = store._file(KEY).read_bytes()
    assert b"renamed" not in header
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None  # cut short


@pytest.mark.parametrize(
    ("document", "steps"),
    [({"n": 1, "s": "node-1"}, 0), ({"floor": 750.0}, 2), ({"tiny": 1e-7, "floor": 750.0}, 3)],
    ids=["none", "point-zero", "both"],
)
def test_a_stored_entry_keeps_the_number_steps_of_its_text(
    tmp_path: Path, document: dict[str, Any], steps: int
) -> None:
    """The steps are searched for once, when the entry is first stored, and travel sealed with
    it, also when the product is stored again over its own file (a signer renamed)."""
    store = ProductStore(tmp_path, AUTH)
    store.store(_product(document))
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None
    assert loaded.pointers[0].document.steps == steps  # type: ignore[attr-defined]
    store.store(loaded)
    again = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert again is not None and again.pointers[0].document.steps == steps  # type: ignore[attr-defined]


@pytest.mark.parametrize("history", [None, "", "0123456789abcdef" * 2 + "01234567"])
def test_the_commit_a_product_depends_on_reads_back(tmp_path: Path, history: str | None) -> None:
    product = dataclasses.replace(_product({"n": 1}), history=history)
    store = ProductStore(tmp_path, AUTH)
    store.store(product)
    loaded = store.load(KEY, lambda signer: pytest.fail("no board entry"))
    assert loaded is not None and loaded.history == history


@pytest.mark.parametrize("history", [7, True, ["ab"], "XYZ", "ab cd", "<script>"])
def test_a_sealed_product_naming_no_commit_it_could_be_is_a_miss(
    tmp_path: Path, history: Any
) -> None:
    doc, layouts, _ = product_parts(_product({"n": 1}))
    store = ProductStore(tmp_path, AUTH)
    doc["history"] = history
    _sealed(store, doc, b"".join(layouts))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None
    del doc["history"]
    _sealed(store, doc, b"".join(layouts))
    assert store.load(KEY, lambda signer: pytest.fail("no board entry")) is None
