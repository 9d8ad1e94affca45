"""Evidence cards as view models: what one pointer file's card shows, read out of its record.

A recipe page holds one card per pointer (with its verification steps), the Rejected page one
per problem pointer and nothing else. `card_view` reads a pointer record of
`data/pointers.json` into a `Card`; the `pointer_card` macro of `_cards.j2` draws it. Python
decides what a card says; the template decides how it looks, and escapes every value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from generator.site.checkyourself import (
    RootNote,
    artifact_url,
    by_digest_commands,
    digest_ref,
    log_entry,
)
from generator.site.model import (
    COMMIT_URL,
    SiteModel,
    age,
    anchor,
    freshness_text,
    recipe_page,
    rel,
    verdict_of,
)

__all__ = [
    "BUNDLE_REFS",
    "Card",
    "Clock",
    "Fresh",
    "Identity",
    "Stale",
    "Step",
    "SubRow",
    "Why",
    "card_view",
    "fresh_view",
]

_FRESH_TITLE = {
    "fresh": "the signed recipe digest equals the current recipe digest",
    "stale": "the signed recipe digest differs from the current recipe: the result may not "
    "apply to the recipe as it is now",
    "unknown": "the current digest of this recipe could not be computed, so freshness is "
    "unknown (never shown as fresh)",
}
_VERDICT_WORDS = {
    "verified": ("✓", "verified"),
    "failures": ("✓", "verified, with failed checks"),
    "rejected": ("✗", "rejected"),
    "pending": ("…", "pending signature"),
    "no-verdict": ("?", "no verdict"),
}
_FRESH_ICON = {"fresh": "✓ ", "stale": "⚠ ", "unknown": "? "}
BUNDLE_REFS = "bundle-refs/"
"""The synthetic path prefix of runs brought in by `--bundle-refs` (no pointer file)."""


def _text(value: object) -> str:
    """A document value as text (`None` as empty, as the escapers write it)."""
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Fresh:
    """A pointer's freshness as an icon, words and what it means."""

    state: str
    icon: str
    text: str
    title: str


def fresh_view(fresh: Mapping[str, Any] | None) -> Fresh:
    """The freshness badge of a pointer's `freshness` object (unknown when missing)."""
    f = fresh or {}
    st = str(f.get("state", "unknown"))
    return Fresh(st, _FRESH_ICON.get(st, ""), freshness_text(f), _FRESH_TITLE.get(st, ""))


@dataclass(frozen=True)
class Why:
    """Why a pointer did not count: the failure class, its detail and the next step."""

    cls: str
    detail: str
    http_status: str
    rule: str
    hint: str


@dataclass(frozen=True)
class Clock:
    """A claimed attestedAt far from the verified transparency-log time."""

    skew: int
    days: str
    direction: str
    logged_at: str


@dataclass(frozen=True)
class Identity:
    """A signer identity and its OIDC issuer."""

    identity: str
    issuer: str


class SubRow(NamedTuple):
    """One key/value line under a verification step."""

    key: object
    value: object
    beyond_aicr: object


class Step(NamedTuple):
    """One verification step with its status, detail and sub-rows (named tuples: a card
    has dozens, and a tuple is several times cheaper to make than a frozen dataclass)."""

    name: object
    status: object
    detail: object
    sub: tuple[SubRow, ...]


@dataclass(frozen=True)
class CommitLine:
    """One commit that touched the recipe's overlay: its sha, link and subject."""

    sha: str
    url: str | None
    rest: str


@dataclass(frozen=True)
class Stale:
    """Why a pointer is stale: commits since the attested aicr commit, and the diff."""

    fresh: Fresh
    provider: str
    explained: bool
    commits: tuple[CommitLine, ...] | None
    aicr_commit: str
    diff: tuple[tuple[str, str], ...] | None
    truncated: bool


@dataclass(frozen=True)
class Card:
    """Everything an evidence card shows for one pointer file."""

    anchor: str
    verdict: str
    verdict_icon: str
    verdict_words: str
    path: str
    who: str
    href: str | None
    signer_class: str
    counted: bool
    omitted: str
    has_evidence: bool
    attested_at: str
    age: str
    fresh: Fresh | None
    recipe: str | None
    recipe_href: str | None
    why: Why | None
    verified_at: str
    reused_root: str
    clock: Clock | None
    aicr: str | None
    aicr_commit: str
    commit_url: str
    log_url: str
    oci: str
    oci_url: str | None
    first_party: bool
    pointer_url: str | None
    credentials: bool
    duplicate_of: str
    duplicate_judged: str
    stale: Stale | None
    verified: Identity | None
    claimed: Identity | None
    steps: tuple[Step, ...]
    ref: str
    ref_url: str | None
    log_index: str
    log_link: str | None
    commands: tuple[str, ...]
    root_note: RootNote | None


def _why(vf: Mapping[str, Any]) -> Why | None:
    fc = vf.get("failureCause")
    if not fc:
        return None
    return Why(
        _text(fc.get("class")),
        _text(fc.get("detail")),
        _text(fc.get("httpStatus") or ""),
        _text(vf.get("rule") or ""),
        _text(fc.get("hint") or ""),
    )


def _clock(p: Mapping[str, Any], ev: Mapping[str, Any] | None) -> Clock | None:
    skew = p.get("attestedAtSkew")
    if not isinstance(skew, int) or isinstance(skew, bool):
        return None
    return Clock(
        skew,
        f"{abs(skew) / 86400:.1f}",
        "after" if skew > 0 else "before",
        _text((ev or {}).get("loggedAt") or ""),
    )


def _identity(found: Any) -> Identity | None:
    return Identity(_text(found["identity"]), _text(found["issuer"])) if found else None


def _steps(vf: Mapping[str, Any]) -> tuple[Step, ...]:
    """The steps with their values as the data holds them (the template's escaper writes
    None as empty)."""
    return tuple(
        Step(
            s.get("name"),
            s.get("status"),
            s.get("detail"),
            tuple(
                SubRow(r.get("key"), r.get("value"), r.get("beyondAicr"))
                for r in s.get("subRows") or ()
            ),
        )
        for s in vf.get("steps") or ()
    )


def _stale(fr: Mapping[str, Any], ev: Any, source: Any) -> Stale | None:
    if fr.get("state") != "stale":
        return None
    why = fr.get("explanation")
    commits = None
    if why and why.get("commits") is not None:
        commits = tuple(_commit_line(str(line), source) for line in why["commits"])
    diff = None
    if why and why.get("diff"):
        diff = tuple((_diff_class(str(line)), _text(line)) for line in why["diff"])
    return Stale(
        fresh_view(fr),
        _text(fr.get("provider") or ""),
        bool(why),
        commits,
        str(ev["aicrCommit"])[:12] if ev and ev.get("aicrCommit") else "",
        diff,
        bool(why and why.get("truncated")),
    )


def _commit_line(line: str, source: Any) -> CommitLine:
    sha = line.split(" ")[0]
    url = str(source).rstrip("/") + "/commit/" + sha if source else None
    return CommitLine(sha, url, line[len(sha) :])


def _diff_class(line: str) -> str:
    if line.startswith("+") and not line.startswith("+++"):
        return "diff-add"
    if line.startswith("-") and not line.startswith("---"):
        return "diff-del"
    return "diff-hunk" if line.startswith("@@") else "diff-ctx"


def _recipe_link(m: SiteModel, page: str, p: Mapping[str, Any]) -> str | None:
    recipe = p.get("recipe")
    return rel(page, recipe_page(str(recipe))) if m.has_recipe(recipe) else None


def card_view(m: SiteModel, page: str, p: Mapping[str, Any], show_recipe: bool = False) -> Card:
    """One pointer record as a card (`show_recipe` names its recipe, for the Rejected page)."""
    v = verdict_of(p)
    ev = p.get("evidence")
    sig = p.get("signer") or {}
    sid = sig.get("sourceId")
    vf = p.get("verify") or {}
    fr = p.get("freshness") or {}
    bi = m.build_info
    commit = _text((ev or {}).get("aicrCommit") or "")
    oci = _text((p.get("bundle") or {}).get("oci") or "")
    repo = oci.split("@")[0]
    path = _text(p.get("path"))
    first_party = path.startswith(BUNDLE_REFS)
    dup = _text(p.get("duplicateOf") or "")
    ref = digest_ref(p)
    log_index, log_link = log_entry(ev, bi)
    verified = _identity(sig.get("verified"))
    commands, root_note = by_digest_commands(p, ref, verified, first_party, bi)
    pointer_url = None
    if not first_party and bi.get("sourceUrl") and bi.get("commit"):
        pointer_url = f"{bi['sourceUrl']}/blob/{bi['commit']}/recipes/{p.get('path')}"
    return Card(
        anchor=anchor("ev", path),
        verdict=v,
        verdict_icon=_VERDICT_WORDS[v][0],
        verdict_words=_VERDICT_WORDS[v][1],
        path=path,
        who=m.label(sid, p),
        href=m.source_link(page, sid),
        signer_class=_text(sig.get("class") or "unlisted"),
        counted=bool(sig.get("allowlisted")),
        omitted=_text(p.get("omitted") or ""),
        has_evidence=bool(ev),
        attested_at=_text((ev or {}).get("attestedAt")),
        age=age((ev or {}).get("attestedAt"), m.build_time),
        fresh=fresh_view(fr) if ev and v in ("verified", "failures") else None,
        recipe=_text(p.get("recipe") or "unknown") if show_recipe else None,
        recipe_href=_recipe_link(m, page, p) if show_recipe else None,
        why=_why(vf),
        verified_at=_text(vf.get("verifiedAt") or ""),
        reused_root=_text((vf.get("reusedFrom") or {}).get("trustRoot") or ""),
        clock=_clock(p, ev),
        aicr=_text(ev.get("aicrVersion")) if ev else None,
        aicr_commit=commit,
        commit_url=COMMIT_URL + commit,
        log_url=_text((ev or {}).get("logUrl") or ""),
        oci=oci,
        oci_url="https://" + repo if oci and repo.startswith("ghcr.io/") else None,
        first_party=first_party,
        pointer_url=pointer_url,
        credentials=vf.get("anonymous") is False,
        duplicate_of=dup,
        duplicate_judged="counted once"
        if v in ("verified", "failures")
        else "judged on its own, and this pointer did not pass",
        stale=_stale(fr, ev, bi.get("sourceUrl")),
        verified=verified,
        claimed=_identity(sig.get("claimed")),
        steps=_steps(vf),
        ref=ref,
        ref_url=artifact_url(ref),
        log_index=log_index,
        log_link=log_link,
        commands=commands,
        root_note=root_note,
    )
