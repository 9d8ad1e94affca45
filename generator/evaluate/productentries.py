"""The board entries of the recipe products (`generator.evaluate.products`) to and from JSON:
each pointer's run and criteria, read back with the current allowlist's classification of its
signer. Anything but the exact shape raises `ProductFormatError`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from generator.corroborate import BoardEntry
from generator.facts import Criteria
from generator.model import (
    Classification,
    OciDigest,
    Phase,
    RecipeName,
    Run,
    Sha256Hex,
    SignerIdentity,
    TestResult,
)

__all__ = ["ProductFormatError", "entry_from", "entry_json", "signer_from", "text"]


class ProductFormatError(ValueError):
    """A stored product does not have the expected shape."""


_TEXT: dict[Phase | TestResult, str] = {m: str(m.value) for m in (*Phase, *TestResult)}
"""Each phase's and result's stored text, looked up (an enum's `.value` is a descriptor call:
about 0.06 s of storing a 10,000-attestation tree's products)."""


def entry_json(entry: BoardEntry) -> dict[str, Any]:
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
            "results": [[_TEXT[ph], name, _TEXT[r]] for (ph, name), r in run.results.items()],
            "bundleDigest": run.bundle_digest,
            "profile": run.profile,
            "skipReasons": [[_TEXT[ph], name, why] for (ph, name), why in run.skip_reasons.items()],
            "loggedAt": run.logged_at,
        },
    }


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise ProductFormatError(f"expected a string, found {type(value).__name__}")
    return value


def _optional(value: Any) -> str | None:
    return None if value is None else text(value)


_PHASES = {p.value: p for p in Phase}
_RESULTS = {r.value: r for r in TestResult}
"""Value -> member, looked up as a dict (hundreds of thousands of times in a build: calling an
enum class costs several times more). An unknown value raises KeyError: a malformed product."""


@lru_cache(maxsize=4096)
def signer_from(issuer: Any, identity: Any) -> SignerIdentity:
    """A stored signer, made once per pair (a tree has a handful: thousands of pointers share
    each; raises like `text`, or TypeError for an unhashable part)."""
    return SignerIdentity(text(issuer), text(identity))


@lru_cache(maxsize=4096)
def _criteria_from(items: tuple[tuple[Any, Any], ...]) -> Criteria:
    """Stored criteria, made once per value (a recipe's pointers share them)."""
    return Criteria(**{text(k): text(v) for k, v in items})


def entry_from(
    doc: Mapping[str, Any], classify: Callable[[SignerIdentity], Classification]
) -> BoardEntry:
    run = doc["run"]
    issuer, identity = run["signer"]
    signer = signer_from(issuer, identity)
    criteria = doc["criteria"]
    logged_at = run["loggedAt"]
    return BoardEntry(
        run=Run(
            recipe=RecipeName(text(run["recipe"])),
            signer=signer,
            classification=classify(signer),
            run_id=text(run["runId"]),
            aicr_version=text(run["aicrVersion"]),
            aicr_commit=_optional(run["aicrCommit"]),
            k8s_version=text(run["k8sVersion"]),
            attested_at=text(run["attestedAt"]),
            evidence_ref=text(run["evidenceRef"]),
            recipe_digest=Sha256Hex(text(run["recipeDigest"])),
            results={(_PHASES[ph], text(name)): _RESULTS[r] for ph, name, r in run["results"]},
            bundle_digest=OciDigest(text(run["bundleDigest"])),
            profile=_optional(run["profile"]),
            skip_reasons={
                (_PHASES[ph], text(name)): text(why) for ph, name, why in run["skipReasons"]
            },
            logged_at=text(logged_at),
        ),
        criteria=_criteria_from(tuple(criteria.items())),
        origin=text(doc["origin"]),
    )
