"""Caveats that travel with a recipe's headline state (pure: the site model in, words out).

A green "Confirmed" tells a customer that two independent parties signed passing evidence.
When that is only partly so (the counted attestations signed an older recipe, every pass
comes from one organisation, a phase has no evidence, the evidence is old, or some of the
recipe's evidence was rejected), the headline must say so wherever it is shown: the
overview row, the recipe state box, the search index and the source pages. `headline`
computes those qualifiers once per recipe; the templates show them as words and a distinct
style, never as colour alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

__all__ = [
    "OLD_AFTER_DAYS",
    "Caveat",
    "CaveatKind",
    "CountedSigner",
    "Headline",
    "counted_signers",
    "headline",
]

OLD_AFTER_DAYS = 180
"""Counted evidence attested more than this many days before the build is called old."""


class CaveatKind(Enum):
    """What kind of qualifier a headline carries (the value is its CSS and filter name)."""

    STALE = "stale"
    ONE_ORG = "one-org"
    PHASE_WITHOUT_EVIDENCE = "phase-untested"
    OLD = "old"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Caveat:
    """One qualifier of a headline state, in words."""

    kind: CaveatKind
    text: str
    short: str


@dataclass(frozen=True)
class CountedSigner:
    """An allowlisted signer whose latest verified evidence a recipe counts."""

    source: str
    label: str
    org: str


@dataclass(frozen=True)
class Headline:
    """A recipe's headline state with the caveats that must be shown beside it."""

    state: str
    caveats: tuple[Caveat, ...]
    signers: tuple[CountedSigner, ...]

    @property
    def clean(self) -> bool:
        """No caveat at all (what the overview's "no caveats" filter keeps)."""
        return not self.caveats

    @property
    def kinds(self) -> str:
        """The caveat kinds, space separated (a `data-caveats` attribute value)."""
        return " ".join(c.kind.value for c in self.caveats)

    @property
    def text(self) -> str:
        """The caveats as one sentence fragment (search text, tooltips): `` when clean."""
        return "; ".join(c.text for c in self.caveats)


def _days_before(attested: str, build_time: str) -> int | None:
    try:
        a = datetime.fromisoformat(attested.replace("Z", "+00:00"))
        b = datetime.fromisoformat(build_time.replace("Z", "+00:00"))
    except ValueError:
        return None
    if a.tzinfo is None or b.tzinfo is None:
        return None
    return (b - a).days


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def counted_signers(
    latest: Sequence[Mapping[str, Any]],
    sources: Mapping[str, Mapping[str, Any]],
    label: Any,
) -> tuple[CountedSigner, ...]:
    """The allowlisted signers among each signer's latest evidence, with label and org."""
    out = []
    for p in latest:
        signer = p.get("signer") or {}
        if not signer.get("allowlisted"):
            continue
        src = str(signer.get("sourceId") or "")
        org = str((sources.get(src) or {}).get("org") or "")
        out.append(CountedSigner(src, str(label(src, p)), org))
    return tuple(out)


def headline(
    tab: Mapping[str, Any],
    phases: Sequence[str],
    latest: Sequence[Mapping[str, Any]],
    rejected: int,
    signers: tuple[CountedSigner, ...],
    build_time: str,
    *,
    old_after_days: int = OLD_AFTER_DAYS,
) -> Headline:
    """The headline of one index.json tab: its rollup state and every caveat that applies.

    `latest` is each signer's newest verified pointer for the recipe, `rejected` how many of
    the recipe's pointers were rejected. Caveats are listed in a fixed order: stale, one
    organisation, phases without evidence, old evidence, rejected evidence.
    """
    state = str(tab.get("rollup") or "UNTESTED")
    counted = [p for p in latest if (p.get("signer") or {}).get("allowlisted")]
    found = (
        _stale(counted),
        _one_org(tab, state, signers),
        _phases_without_evidence(tab, state, phases),
        _old(counted, build_time, old_after_days),
        _rejected(rejected),
    )
    return Headline(state, tuple(c for c in found if c is not None), signers)


def _stale(counted: Sequence[Mapping[str, Any]]) -> Caveat | None:
    """Counted attestations that signed an older recipe than the current one."""
    stale = sum(1 for p in counted if (p.get("freshness") or {}).get("state") == "stale")
    if not stale:
        return None
    return Caveat(
        CaveatKind.STALE,
        f"stale: {stale} of {_plural(len(counted), 'counted attestation')} signed an older recipe",
        f"stale {stale}/{len(counted)}",
    )


def _one_org(
    tab: Mapping[str, Any], state: str, signers: tuple[CountedSigner, ...]
) -> Caveat | None:
    """Confirmed checks (or a confirmed recipe) passed only by signers of one organisation."""
    tests = (tab.get("combined") or {}).get("tests") or []
    confirmed = [t for t in tests if t.get("consensus") == "CONFIRMED"]
    one_org = sum(1 for t in confirmed if t.get("oneOrg"))
    orgs = {s.org for s in signers if s.org}
    if not (one_org or (state == "CONFIRMED" and len(orgs) == 1)):
        return None
    return Caveat(
        CaveatKind.ONE_ORG,
        f"one organisation: {one_org} of {_plural(len(confirmed), 'confirmed check')} "
        "passed only by signers of one organisation",
        "one org",
    )


def _phases_without_evidence(
    tab: Mapping[str, Any], state: str, phases: Sequence[str]
) -> Caveat | None:
    """Phases of a tested recipe that no evidence covers."""
    if state == "UNTESTED":
        return None
    rollup = (tab.get("combined") or {}).get("phaseRollup") or {}
    empty = [ph for ph in phases if rollup.get(ph, "UNTESTED") == "UNTESTED"]
    if not empty:
        return None
    return Caveat(
        CaveatKind.PHASE_WITHOUT_EVIDENCE,
        f"no evidence for the {', '.join(empty)} phase{'' if len(empty) == 1 else 's'}",
        f"no {', '.join(empty)} evidence",
    )


def _old(
    counted: Sequence[Mapping[str, Any]], build_time: str, old_after_days: int
) -> Caveat | None:
    """Counted attestations logged more than `old_after_days` before the build."""
    old = 0
    for p in counted:
        ev = p.get("evidence") or {}
        days = _days_before(str(ev.get("loggedAt") or ev.get("attestedAt") or ""), build_time)
        if days is not None and days > old_after_days:
            old += 1
    if not old:
        return None
    return Caveat(
        CaveatKind.OLD,
        f"old: {old} of {_plural(len(counted), 'counted attestation')} older than "
        f"{old_after_days} days",
        f"old {old}/{len(counted)}",
    )


def _rejected(rejected: int) -> Caveat | None:
    """Pointers of the recipe whose evidence was rejected."""
    if not rejected:
        return None
    return Caveat(
        CaveatKind.REJECTED,
        f"rejected evidence: {_plural(rejected, 'pointer')} for this recipe "
        f"{'was' if rejected == 1 else 'were'} rejected (not counted)",
        f"{rejected} rejected",
    )
