"""The per-recipe products: what evaluating one recipe's pointers made, kept between builds.

A product holds, for each usable pointer file of one recipe (`generator.evaluate.perrecipe`
says which and under which key): its settled verdict, its freshness, its data/pointers.json
entry as a pointer that duplicates none (its signer's label is the current allowlist's when
reused), and its board entry (without the signer's classification, which is asked of the
current allowlist when the product is read), plus the classification of every signer its
verdicts name but for the label, so a product is only reused while the allowlist still
classifies those signers the same way.

Products are stored one file per key under `<cache>/recipes/`, sealed with an HMAC tag
(`generator.cacheauth`, purpose `recipe`) bound to the key, so an authentic product cannot stand
in for another. Every byte read back is hostile until checked: a file that is a link or not a
regular file, larger than `MAX_PRODUCT_BYTES`, whose tag does not check (a flipped byte, a
truncation, another key's product) or whose content is not exactly the expected shape is a miss,
and its recipe is evaluated again; a failed tag is counted as an authentication failure. Nothing
executable is ever loaded: the products are JSON.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from generator.cacheauth import CacheAuth, Purpose, read_cache_file
from generator.corroborate import BoardEntry
from generator.data import FreshnessExplanation, FreshnessInfo, freshness_document
from generator.facts import Criteria
from generator.model import (
    Classification,
    Freshness,
    OciDigest,
    Pending,
    Phase,
    RecipeName,
    Rejected,
    Run,
    Sha256Hex,
    SignerIdentity,
    TestResult,
    Verdict,
    Verified,
)
from generator.verify.serialize import VerdictFormatError, verdict_from_json, verdict_to_json

__all__ = [
    "MAX_PRODUCT_BYTES",
    "PRODUCT_VERSION",
    "PointerProduct",
    "ProductFormatError",
    "ProductStore",
    "RecipeProduct",
    "classification_mark",
]

PRODUCT_VERSION = "recipe-product/v1"
MAX_PRODUCT_BYTES = 64 << 20
"""A product file larger than this is not read (a recipe's product is a few MB at most)."""


class ProductFormatError(ValueError):
    """A stored product does not have the expected shape."""


@dataclass(frozen=True)
class PointerProduct:
    """What one usable pointer file of a recipe evaluated to."""

    path: str
    verdict: Verdict
    """Its verdict, settled (`Evidence.settle`)."""
    freshness: FreshnessInfo
    document: Mapping[str, Any]
    """Its data/pointers.json entry as a pointer that duplicates no other."""
    entry: BoardEntry | None
    """Its board entry (before each bundle is counted once), or None."""

    def document_as(self, duplicate: str | None, label: str | None) -> dict[str, Any]:
        """Its data/pointers.json entry as this build writes it: the duplicate it is now, and
        its signer named by the current allowlist (a product does not depend on labels)."""
        made = dict(self.document)
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


def classification_mark(classification: Classification) -> str:
    """Everything of a classification a product depends on, as text: the class, whether it
    is allowlisted, and the allowlist entry but for its label. The label only names the
    signer, and is stamped into a reused pointer's entry as the current allowlist says it
    (`generator.evaluate.evaluation`), so renaming a signer re-evaluates nothing."""
    entry = classification.entry
    return json.dumps(
        [
            str(classification.signer_class),
            classification.allowlisted,
            None
            if entry is None
            else [
                str(entry.signer_class),
                entry.issuer,
                entry.source,
                entry.identity_pattern,
                entry.position,
            ],
        ]
    )


# --------------------------------------------------------------------------- to and from JSON


def product_to_json(product: RecipeProduct) -> dict[str, Any]:
    return {
        "version": PRODUCT_VERSION,
        "key": product.key,
        "signers": [[s.issuer, s.identity, mark] for s, mark in product.signers],
        "pointers": [_pointer_json(p) for p in product.pointers],
    }


def _pointer_json(p: PointerProduct) -> dict[str, Any]:
    verdict = p.verdict
    if isinstance(verdict, Verified | Pending) and verdict.evidence.settled:
        # a settled evidence has let its documents go; what is left is written as it is
        verdict = dataclasses.replace(
            verdict, evidence=dataclasses.replace(verdict.evidence, settled=False)
        )
    return {
        "path": p.path,
        "verdict": verdict_to_json(verdict),
        "freshness": freshness_document(p.freshness),
        "document": p.document,
        "entry": None if p.entry is None else _entry_json(p.entry),
    }


def _entry_json(entry: BoardEntry) -> dict[str, Any]:
    run = entry.run
    return {
        "origin": entry.origin,
        "criteria": entry.criteria.as_dict(),
        "run": {
            "recipe": run.recipe,
            "signer": [run.signer.issuer, run.signer.identity],
            "runId": run.run_id,
            "aicrVersion": run.aicr_version,
            "aicrCommit": run.aicr_commit,
            "k8sVersion": run.k8s_version,
            "attestedAt": run.attested_at,
            "evidenceRef": run.evidence_ref,
            "recipeDigest": run.recipe_digest,
            "results": [
                [str(ph.value), name, str(r.value)] for (ph, name), r in run.results.items()
            ],
            "bundleDigest": run.bundle_digest,
            "profile": run.profile,
            "skipReasons": [
                [str(ph.value), name, why] for (ph, name), why in run.skip_reasons.items()
            ],
            "loggedAt": run.logged_at,
        },
    }


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ProductFormatError(f"expected a string, found {type(value).__name__}")
    return value


def _optional(value: Any) -> str | None:
    return None if value is None else _text(value)


def product_from_json(
    doc: Any,
    key: str,
    classify: Callable[[SignerIdentity], Classification],
    *,
    plain: bool = False,
) -> RecipeProduct:
    """The product `product_to_json` wrote, its board entries' classifications asked of
    `classify`. Raises `ProductFormatError` for anything else. `plain` says the product holds
    no tagged value (`verdict_from_json`), so its documents are taken as parsed."""
    try:
        if not isinstance(doc, dict) or doc.get("version") != PRODUCT_VERSION:
            raise ProductFormatError("not a recipe product of this version")
        if doc.get("key") != key:
            raise ProductFormatError("a product for another key")
        signers = tuple(
            (SignerIdentity(_text(issuer), _text(identity)), _text(mark))
            for issuer, identity, mark in doc["signers"]
        )
        pointers = tuple(_pointer_from(p, classify, plain) for p in doc["pointers"])
    except ProductFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProductFormatError(f"malformed recipe product: {exc!r}") from exc
    return RecipeProduct(key, signers, pointers)


def _pointer_from(
    doc: Mapping[str, Any], classify: Callable[[SignerIdentity], Classification], plain: bool
) -> PointerProduct:
    try:
        verdict = verdict_from_json(doc["verdict"], plain=plain)
    except VerdictFormatError as exc:
        raise ProductFormatError(str(exc)) from exc
    if not isinstance(verdict, Verified | Pending | Rejected):
        raise ProductFormatError("a product holds only definite verdicts")
    if isinstance(verdict, Verified | Pending):
        verdict = dataclasses.replace(verdict, evidence=verdict.evidence.settle())
    document = doc["document"]
    if not isinstance(document, dict):
        raise ProductFormatError("a pointer document is not an object")
    entry = doc["entry"]
    return PointerProduct(
        path=_text(doc["path"]),
        verdict=verdict,
        freshness=_freshness_from(doc["freshness"]),
        document=document,
        entry=None if entry is None else _entry_from(entry, classify),
    )


def _freshness_from(doc: Mapping[str, Any]) -> FreshnessInfo:
    why = doc["explanation"]
    explanation = None
    if why is not None:
        commits = why["commits"]
        explanation = FreshnessExplanation(
            diff=tuple(_text(line) for line in why["diff"]),
            commits=None if commits is None else tuple(_text(c) for c in commits),
            truncated=bool(why["truncated"]),
        )
    return FreshnessInfo(
        state=Freshness(doc["state"]),
        signed=_optional(doc["signed"]),
        current=_optional(doc["current"]),
        provider=_optional(doc["provider"]),
        explanation=explanation,
    )


_PHASES = {p.value: p for p in Phase}
_RESULTS = {r.value: r for r in TestResult}
"""Value -> member, looked up as a dict (hundreds of thousands of times in a build: calling an
enum class costs several times more). An unknown value raises KeyError: a malformed product."""


def _entry_from(
    doc: Mapping[str, Any], classify: Callable[[SignerIdentity], Classification]
) -> BoardEntry:
    run = doc["run"]
    issuer, identity = run["signer"]
    signer = SignerIdentity(_text(issuer), _text(identity))
    criteria = doc["criteria"]
    logged_at = run["loggedAt"]
    return BoardEntry(
        run=Run(
            recipe=RecipeName(_text(run["recipe"])),
            signer=signer,
            classification=classify(signer),
            run_id=_text(run["runId"]),
            aicr_version=_text(run["aicrVersion"]),
            aicr_commit=_optional(run["aicrCommit"]),
            k8s_version=_text(run["k8sVersion"]),
            attested_at=_text(run["attestedAt"]),
            evidence_ref=_text(run["evidenceRef"]),
            recipe_digest=Sha256Hex(_text(run["recipeDigest"])),
            results={(_PHASES[ph], _text(name)): _RESULTS[r] for ph, name, r in run["results"]},
            bundle_digest=OciDigest(_text(run["bundleDigest"])),
            profile=_optional(run["profile"]),
            skip_reasons={
                (_PHASES[ph], _text(name)): _text(why) for ph, name, why in run["skipReasons"]
            },
            logged_at=_text(logged_at),
        ),
        criteria=Criteria(**{_text(k): _text(v) for k, v in criteria.items()}),
        origin=_text(doc["origin"]),
    )


# --------------------------------------------------------------------------- the store


def _dumps(doc: Any) -> bytes:
    try:
        return orjson.dumps(doc)
    except TypeError:  # what orjson does not write (an integer beyond 64 bits, ...)
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _loads(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)  # integers beyond 64 bits; anything else raises again


class ProductStore:
    """The recipe products under `<cache>/recipes/`, one sealed file per key."""

    def __init__(self, root: Path, auth: CacheAuth) -> None:
        self.root = root
        self.auth = auth

    def _file(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a product key: {key!r}")
        return self.root / f"{key}.json"

    def load(
        self, key: str, classify: Callable[[SignerIdentity], Classification]
    ) -> RecipeProduct | None:
        """The product stored under `key`, or None (absent, unreadable, too large, failing
        its tag, or malformed): never an error."""
        stored = read_cache_file(self._file(key), MAX_PRODUCT_BYTES)
        if stored is None:
            return None
        body = self.auth.open(Purpose.RECIPE, stored, key.encode(), f"recipe product {key}")
        if body is None:
            return None
        # Every tagged value is an object with a `$` key, so text without `"$` holds none (a
        # string holding `"$` is written `\"$`, which only costs the slower decoding).
        plain = b'"$' not in body
        try:
            return product_from_json(_loads(body), key, classify, plain=plain)
        except (ProductFormatError, ValueError):
            return None

    def store(self, product: RecipeProduct) -> None:
        """Keep `product` (written whole, then renamed into place); failures only cost the
        next build."""
        try:
            body = _dumps(product_to_json(product))
            self.auth.write_sealed(
                self._file(product.key), Purpose.RECIPE, body, product.key.encode()
            )
        except (OSError, ValueError, TypeError):
            pass

    def keep_only(self, keys: Iterable[str]) -> None:
        """Remove every stored product but those of `keys` (the current build's)."""
        wanted = {f"{key}.json" for key in keys}
        try:
            with os.scandir(self.root) as entries:
                names = [e.name for e in entries]
        except OSError:
            return
        for name in names:
            if name not in wanted:
                with contextlib.suppress(OSError):
                    os.unlink(self.root / name)
