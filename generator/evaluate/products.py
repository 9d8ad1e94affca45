"""The per-recipe products: what evaluating one recipe's pointers made, kept between builds.

A product holds, for each usable pointer file of one recipe (`generator.evaluate.perrecipe`
says which and under which key): the outcome of its verdict (`StoredOutcome`: how it counts and
who signed it), its data/pointers.json entry as a pointer that duplicates none (its signer's
label is the current allowlist's when reused), and its board entry (without the signer's
classification, which is asked of the current allowlist when the product is read), plus the
classification of every signer its verdicts name but for the label, so a product is only reused
while the allowlist still classifies those signers the same way. The verdict itself is not
kept: everything a build makes of it is in those entries, and reading 10,000 verdicts back
cost a build on the maintainer's loop about a second.

A product is stored (`generator.evaluate.productstore`) as its JSON part, sealed, and a file of
the `subtree_layout` text of each pointer's entry (`product_bytes`), which the JSON part names by
offset, length and sha256, with which of Go's number steps change the text (searched for once:
`generator.data.gonumbers.number_steps`). A reused entry is read back as a `LaidOutEntry`: the
few fields every build reads are in the JSON part, and its text is read (and checked against
its sha256) only when asked: data/pointers.json is written from it by the data helper, which
checks it too (`generator.data.spool`), and the page keys take its sha256. Reading back checks
the exact shape (`product_from_json`): every entry's span lies within the file of the size the
product names, and anything else is a `ProductFormatError`. Nothing executable is ever loaded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from generator.corroborate import BoardEntry
from generator.data.gojson import finish_layout, orjson_layout
from generator.data.gonumbers import STEPS, number_steps
from generator.data.laidout import ENTRY_PAD, LaidOutEntry, LayoutFile, Span, head_of, plain
from generator.evaluate.productentries import (
    ProductFormatError,
    entry_from,
    entry_json,
    signer_from,
    text,
)
from generator.model import (
    Classification,
    Pending,
    Rejected,
    SignerIdentity,
    Verdict,
    Verified,
    VerifyExit,
)

__all__ = [
    "PRODUCT_VERSION",
    "PointerProduct",
    "ProductFormatError",
    "RecipeProduct",
    "ReusedPointer",
    "StoredKind",
    "StoredOutcome",
    "classification_mark",
    "MAX_LAYOUTS_BYTES",
    "layouts_size",
    "product_bytes",
    "product_from_json",
    "product_parts",
]

PRODUCT_VERSION = "recipe-product/v8"
MAX_LAYOUTS_BYTES = 256 << 20
"""A file of laid-out entries larger than this is not read (a few MB per recipe)."""


class StoredKind(StrEnum):
    """The kind of a definite verdict (the only kinds a product holds)."""

    VERIFIED = "Verified"
    PENDING = "Pending"
    REJECTED = "Rejected"


_KINDS = {Verified: StoredKind.VERIFIED, Pending: StoredKind.PENDING, Rejected: StoredKind.REJECTED}
_EXITS = {
    StoredKind.VERIFIED: {0: VerifyExit.VALID, 1: VerifyExit.VALID_WITH_FAILURES},
    StoredKind.PENDING: {0: VerifyExit.VALID},
    StoredKind.REJECTED: {2: VerifyExit.INVALID},
}
"""The exit codes each kind of verdict has."""


@dataclass(frozen=True)
class StoredOutcome:
    """What a reused pointer's verdict still answers: how the build summary counts it (its
    kind and exit code) and who signed it (classified and named by the current allowlist)."""

    kind: StoredKind
    exit: VerifyExit
    signer: SignerIdentity | None

    @classmethod
    def of(cls, verdict: Verdict) -> StoredOutcome:
        """The outcome of a definite verdict; ValueError for another."""
        kind = _KINDS.get(type(verdict))
        if kind is None:
            raise ValueError(f"a product holds only definite verdicts, not {type(verdict)}")
        signer = verdict.signer if isinstance(verdict, Verified | Rejected) else None
        return cls(kind, verdict.exit, signer)


@dataclass(frozen=True)
class ReusedPointer:
    """A pointer file whose recipe's product was reused: its path and its verdict's outcome
    (its data and board entries came from the product)."""

    path: str
    outcome: StoredOutcome


@dataclass(frozen=True)
class PointerProduct:
    """What one usable pointer file of a recipe evaluated to."""

    path: str
    outcome: StoredOutcome
    document: Mapping[str, Any]
    """Its data/pointers.json entry as a pointer that duplicates no other."""
    entry: BoardEntry | None
    """Its board entry (before each bundle is counted once), or None."""

    def document_as(self, duplicate: str | None, label: str | None) -> Mapping[str, Any]:
        """Its data/pointers.json entry as this build writes it: the duplicate it is now, and
        its signer named by the current allowlist (a product does not depend on labels). The
        stored entry itself (laid out, not parsed) when neither changes it."""
        signer = self.document.get("signer")
        relabel = isinstance(signer, dict) and signer.get("label") != label
        if duplicate is None and not relabel:
            return self.document
        made = plain(self.document)
        if duplicate is not None:
            made["duplicateOf"] = duplicate
        signer = made.get("signer")
        if isinstance(signer, dict) and signer.get("label") != label:
            made["signer"] = {**signer, "label": label}
        return made


@dataclass(frozen=True)
class RecipeProduct:
    """One recipe's product under its key, and the classification marks it was made under."""

    key: str
    signers: tuple[tuple[SignerIdentity, str], ...]
    """Every signer the verdicts name, with its `classification_mark` when made."""
    pointers: tuple[PointerProduct, ...]
    history: str | None = None
    """The git commit the tree was at when the product was made, when the product depends on
    it ("" outside a repository): one of its entries explains stale evidence, which names the
    commits since the attested one (`generator.freshness.explain`). None: the product reads no
    history, and stands at any commit."""


def classification_mark(classification: Classification) -> str:
    """Everything of a classification a product depends on, as text: the class, whether it
    is allowlisted, and the allowlist entry but for its label and its place in the file. The
    label only names the signer, and is stamped into a reused pointer's entry as the current
    allowlist says it (`generator.evaluate.evaluation`), so renaming a signer re-evaluates
    nothing; the place is for messages only, so an entry added or removed above another (or
    the entries reordered) re-evaluates no recipe of the signers whose entry merely moved."""
    entry = classification.entry
    return json.dumps(
        [
            str(classification.signer_class),
            classification.allowlisted,
            None
            if entry is None
            else [str(entry.signer_class), entry.issuer, entry.source, entry.identity_pattern],
        ]
    )


# --------------------------------------------------------------------------- to and from JSON


def product_parts(
    product: RecipeProduct, kept: LayoutFile | None = None
) -> tuple[dict[str, Any], list[bytes], int]:
    """The product's JSON part, its pointers' entries' layouts, each followed by the entry's
    text as data/pointers.json holds it (`finish_layout` at `ENTRY_PAD`, which the data helper
    copies instead of making it again: `generator.data.spool`), all of which the JSON part
    names by offset, length and sha256, and how many bytes of them it names. With `kept`, the file
    the product is stored over: its entries whose text lies there keep their place (not read),
    and the layouts returned go after its `kept.size` bytes. TypeError for an entry orjson
    does not write exactly."""
    layouts: list[bytes] = []
    pointers = []
    offset = 0 if kept is None else kept.size
    live = 0
    for p in product.pointers:
        document = p.document
        stays = _kept_places(document, kept)
        if stays is not None:
            head, place, text = stays
            pointers.append(_pointer_json(p, {"head": head, "layout": place, "text": text}))
            live += place[1] + text[1]
            continue
        layout, head, digest, steps = _laid_out(document)
        entry_text, text_digest = _entry_text(document, layout, steps)
        place = [offset, len(layout), digest.hex(), steps]
        text = [offset + len(layout), len(entry_text), text_digest.hex()]
        pointers.append(_pointer_json(p, {"head": head, "layout": place, "text": text}))
        layouts += (layout, entry_text)
        offset += len(layout) + len(entry_text)
        live += len(layout) + len(entry_text)
    doc = {
        "version": PRODUCT_VERSION,
        "key": product.key,
        "signers": [[s.issuer, s.identity, mark] for s, mark in product.signers],
        "pointers": pointers,
        "history": product.history,
        "layouts": offset,
    }
    return doc, layouts, live


def _kept_places(
    document: Mapping[str, Any], kept: LayoutFile | None
) -> tuple[dict[str, Any], list[Any], list[Any]] | None:
    """The head, layout place and text place of an entry whose layout and text both lie in
    `kept` (they stay there), else None."""
    if kept is None or not isinstance(document, LaidOutEntry):
        return None
    span, finished = document.span, document.finished
    if span is None or finished is None or span.file is not kept or finished.file is not kept:
        return None
    place = [span.offset, span.length, span.sha256.hex(), span.steps]
    return document.head(), place, [finished.offset, finished.length, finished.sha256.hex()]


def _entry_text(document: Mapping[str, Any], layout: bytes, steps: int) -> tuple[bytes, bytes]:
    """An entry's text as data/pointers.json holds it, and its sha256: the stored one when it
    has one (checked as it is read), else finished from `layout` now."""
    if isinstance(document, LaidOutEntry) and document.finished is not None:
        stored = document.finished_text(ENTRY_PAD)
        if stored is not None:
            return stored, document.finished.sha256
    text = finish_layout(layout, ENTRY_PAD, steps)
    return text, hashlib.sha256(text).digest()


def _laid_out(document: Mapping[str, Any]) -> tuple[bytes, dict[str, Any], bytes, int]:
    """An entry's layout text, head, the text's sha256 and its number steps
    (`generator.data.gonumbers.number_steps`: searched for once, when first stored)."""
    if isinstance(document, LaidOutEntry):
        layout, steps = document.layout, document.steps
        return (
            layout,
            document.head(),
            document.sha256,
            number_steps(layout) if steps is None else steps,
        )
    layout = orjson_layout(document)
    return layout, head_of(document), hashlib.sha256(layout).digest(), number_steps(layout)


def product_bytes(
    product: RecipeProduct, kept: LayoutFile | None = None
) -> tuple[bytes, bytes, bool]:
    """A product as stored: its JSON part (sealed) and its pointers' entries' layouts (the file
    of laid-out entries); with `kept` (see `product_parts`), the layouts to append to that
    file's first `kept.size` bytes, and whether they are so (False: the file holds more text
    no entry names than entries' text, and is written afresh). TypeError for what orjson does
    not write exactly."""
    if kept is not None:
        doc, layouts, live = product_parts(product, kept)
        if live >= doc["layouts"] - live:
            return _dumps(doc), b"".join(layouts), True
    doc, layouts, _ = product_parts(product)
    return _dumps(doc), b"".join(layouts), False


def _pointer_json(p: PointerProduct, document: dict[str, Any]) -> dict[str, Any]:
    signer = p.outcome.signer
    return {
        "path": p.path,
        "outcome": {
            "kind": str(p.outcome.kind),
            "exit": int(p.outcome.exit),
            "signer": None if signer is None else [signer.issuer, signer.identity],
        },
        "document": document,
        "entry": None if p.entry is None else entry_json(p.entry),
    }


def layouts_size(doc: Any) -> int:
    """The size of the file of laid-out entries a product's JSON part names; ProductFormatError
    for anything but a size."""
    size = doc.get("layouts") if isinstance(doc, dict) else None
    if type(size) is not int or not 0 <= size <= MAX_LAYOUTS_BYTES:
        raise ProductFormatError(f"not the size of a file of laid-out entries: {size!r}")
    return size


def product_from_json(
    doc: Any,
    key: str,
    classify: Callable[[SignerIdentity], Classification],
    layouts: LayoutFile,
) -> RecipeProduct:
    """The product `product_parts` made, its pointers' entries laid out in `layouts` (of the
    size the product names: `layouts_size`), its board entries' classifications asked of
    `classify`. Raises `ProductFormatError` for anything else."""
    try:
        if not isinstance(doc, dict) or doc.get("version") != PRODUCT_VERSION:
            raise ProductFormatError("not a recipe product of this version")
        if doc.get("key") != key:
            raise ProductFormatError("a product for another key")
        if layouts.size != layouts_size(doc):
            raise ProductFormatError("a file of laid-out entries of another size")
        signers = tuple(
            (SignerIdentity(text(issuer), text(identity)), text(mark))
            for issuer, identity, mark in doc["signers"]
        )
        pointers = tuple(_pointer_from(p, classify, layouts) for p in doc["pointers"])
        history = doc["history"]
        if history is not None and (type(history) is not str or not _HEX.issuperset(history)):
            raise ProductFormatError(f"not a git commit: {history!r}")
    except ProductFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProductFormatError(f"malformed recipe product: {exc!r}") from exc
    return RecipeProduct(key, signers, pointers, history)


def _pointer_from(
    doc: Mapping[str, Any],
    classify: Callable[[SignerIdentity], Classification],
    layouts: LayoutFile,
) -> PointerProduct:
    entry = doc["entry"]
    return PointerProduct(
        path=text(doc["path"]),
        outcome=_outcome_from(doc["outcome"]),
        document=_document_from(doc["document"], layouts),
        entry=None if entry is None else entry_from(entry, classify),
    )


_HEX = frozenset("0123456789abcdef")


def _document_from(doc: Mapping[str, Any], layouts: LayoutFile) -> LaidOutEntry:
    """A pointer's entry: its head, and where its text lies in `layouts` (read when asked)."""
    span = doc["layout"]
    if type(span) is not list or len(span) != 4:
        raise ProductFormatError(f"not a layout's offset, length, digest and steps: {span!r}")
    steps = span[3]
    if type(steps) is not int or steps not in STEPS:
        raise ProductFormatError(f"not a layout's number steps: {steps!r}")
    entry = LaidOutEntry.from_head(_span_from(span[:3], layouts, steps), doc["head"])
    text = doc["text"]
    if type(text) is not list or len(text) != 3:
        raise ProductFormatError(f"not an entry text's offset, length and digest: {text!r}")
    entry.finished = _span_from(text, layouts)
    return entry


def _span_from(place: list[Any], layouts: LayoutFile, steps: int | None = None) -> Span:
    """A text's offset, length and sha256 (hex) in `layouts`, as a `Span`."""
    start, length, digest = place
    if type(start) is not int or type(length) is not int or type(digest) is not str:
        raise ProductFormatError(f"not a text's offset, length and digest: {place!r}")
    if start < 0 or length < 2 or start + length > layouts.size:
        raise ProductFormatError(f"a text beyond the product's layouts: {place!r}")
    if len(digest) != 64 or not _HEX.issuperset(digest):
        raise ProductFormatError(f"not a sha256: {digest!r}")
    return Span(layouts, start, length, bytes.fromhex(digest), steps)


def _outcome_from(doc: Mapping[str, Any]) -> StoredOutcome:
    kind = StoredKind(doc["kind"])
    code = doc["exit"]
    signer = doc["signer"]
    exits = _EXITS[kind]
    if type(code) is not int or code not in exits:
        raise ProductFormatError(f"not the exit code of a {kind} verdict: {code!r}")
    if signer is not None and (type(signer) is not list or len(signer) != 2):
        raise ProductFormatError(f"not a signer: {signer!r}")
    return StoredOutcome(
        kind,
        exits[code],
        None if signer is None else signer_from(signer[0], signer[1]),
    )


# --------------------------------------------------------------------------- the JSON part


def _dumps(doc: Any) -> bytes:
    """orjson's text, or TypeError for what orjson does not write (an integer beyond 64 bits,
    a lone surrogate): such a product is not kept, as orjson would read an integer it
    cannot hold back as a float (the recipe is evaluated again instead, exactly)."""
    return orjson.dumps(doc)
