"""The demo scenario file (`recipes/demo/scenario.yaml`) parsed into frozen, checked declarations.

The scenario says what the demo evidence tree must show: signers and how the allowlist lists them,
recipes (criteria, profile, components, NCCL floors, whether an overlay exists and whether it moved
on), named check sets, and one entry per signed, rejected or pending run. Parsing is pure: bytes
in, declarations out; every problem is an `InputError` naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import yaml

from generator.errors import InputError, Location
from generator.model import FailureClass, Phase, PredicateType, SignerClass, SignerIdentity

_TYPES = {"v1": PredicateType.V1, "v2": PredicateType.V2, "v3": PredicateType.V3}
_CLASSES = {
    "community": SignerClass.COMMUNITY,
    "partner": SignerClass.PARTNER,
    "first-party": SignerClass.FIRST_PARTY,
}
_STATUSES = {"pass": "passed", "fail": "failed", "other": "other"}


class Tamper(StrEnum):
    """How a rejected run goes wrong, and the failure class the verifier must report."""

    MODIFIED_CTRF = "modified-ctrf"
    FOREIGN_AUTHORITY = "foreign-authority"
    CLAIMED_OTHER_IDENTITY = "claimed-other-identity"

    @property
    def failure_class(self) -> FailureClass:
        return FailureClass.INTEGRITY if self is Tamper.MODIFIED_CTRF else FailureClass.SIGNATURE


@dataclass(frozen=True)
class Listing:
    """How the allowlist lists a signer: by its 32-hex source slug, or by an identity pattern."""

    signer_class: SignerClass
    label: str
    pattern: str | None = None


@dataclass(frozen=True)
class SignerDecl:
    """A named signer; `listing` None means unlisted (verified, reported, never counted)."""

    key: str
    identity: SignerIdentity
    listing: Listing | None


@dataclass(frozen=True)
class RecipeDecl:
    """One recipe: criteria, optional profile, signed components, current components, floors."""

    name: str
    criteria: Mapping[str, str]
    profile: tuple[str, str] | None
    components: tuple[tuple[str, str], ...]
    current_components: tuple[tuple[str, str], ...] | None
    floors: Mapping[str, float]
    overlay: bool


@dataclass(frozen=True)
class Outcome:
    """A CTRF outcome: `status` is a CTRF status; `reason` is a skip reason."""

    status: str
    reason: str | None = None


@dataclass(frozen=True)
class Measured:
    """A measured NCCL bandwidth in GB/s (full bundles carry the number in stdout)."""

    gbps: float


Bandwidth = Measured | Outcome


@dataclass(frozen=True)
class RunDecl:
    """One run as the scenario states it (signed, rejected or pending alike)."""

    index: str
    recipe: str
    signer: str | None
    at: datetime
    aicr: str
    predicate_type: PredicateType
    full: bool
    checks: Mapping[Phase, Mapping[str, Outcome]]
    bandwidth: Mapping[str, Bandwidth]
    gpu_nodes: int | None


@dataclass(frozen=True)
class CountedRun:
    """A run that verifies (exit 0 or 1)."""

    run: RunDecl


@dataclass(frozen=True)
class RejectedRun:
    """A run the verifier must reject with `tamper.failure_class`."""

    run: RunDecl
    tamper: Tamper
    signed_bandwidth: Mapping[str, Bandwidth]
    certificate: str | None


@dataclass(frozen=True)
class PendingRun:
    """An unsigned run behind a flat pending pointer."""

    run: RunDecl


ScenarioRun = CountedRun | RejectedRun | PendingRun


@dataclass(frozen=True)
class Scenario:
    """The whole demo scenario."""

    seed: str
    authority_valid_from: datetime
    repository: str
    signers: Mapping[str, SignerDecl]
    recipes: Mapping[str, RecipeDecl]
    runs: tuple[ScenarioRun, ...]


# --------------------------------------------------------------------------- parsing helpers


def _fail(file: str, key: str, message: str, *, expected: str, found: Any, hint: str) -> InputError:
    return InputError(
        message, location=Location(file, key), expected=expected, found=repr(found)[:120], hint=hint
    )


def _map(value: Any, file: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(
            file,
            key,
            "not a mapping",
            expected="a mapping",
            found=value,
            hint="write it as `key: value` pairs",
        )
    return {str(k): v for k, v in value.items()}


def _str(value: Any, file: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(
            file,
            key,
            "not a non-empty string",
            expected="a string",
            found=value,
            hint="quote the value",
        )
    return value


def _time(value: Any, file: str, key: str) -> datetime:
    text = _str(value, file, key)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None or not text.endswith("Z"):
        raise _fail(
            file,
            key,
            "not an RFC 3339 UTC time",
            expected="YYYY-MM-DDTHH:MM:SSZ",
            found=value,
            hint='quote it, e.g. "2026-10-02T09:14:05Z"',
        )
    return moment.astimezone(UTC)


def _components(value: Any, file: str, key: str) -> tuple[tuple[str, str], ...]:
    items = _map(value, file, key)
    return tuple((name, _str(v, file, f"{key}.{name}")) for name, v in items.items())


def _outcome(value: Any, file: str, key: str) -> Outcome:
    text = _str(value, file, key)
    if text in _STATUSES:
        return Outcome(_STATUSES[text])
    if text == "skip" or text.startswith("skip:"):
        reason = text.partition(":")[2].strip()
        return Outcome("skipped", reason or None)
    raise _fail(
        file,
        key,
        "unknown check result",
        expected="pass, fail, other, skip[: reason]",
        found=value,
        hint="use one of the four results",
    )


def _bandwidth(value: Any, file: str, key: str) -> dict[str, Bandwidth]:
    out: dict[str, Bandwidth] = {}
    for check, raw in _map(value, file, key).items():
        where = f"{key}.{check}"
        if isinstance(raw, bool):
            raise _fail(
                file,
                where,
                "not a bandwidth",
                expected="GB/s or a result",
                found=raw,
                hint="give a number or pass/fail/skip",
            )
        out[check] = (
            Measured(float(raw)) if isinstance(raw, int | float) else _outcome(raw, file, where)
        )
    return out


def _signer(key: str, raw: Any, file: str) -> SignerDecl:
    where = f"signers.{key}"
    doc = _map(raw, file, where)
    identity = SignerIdentity(
        _str(doc.get("issuer"), file, f"{where}.issuer"),
        _str(doc.get("identity"), file, f"{where}.identity"),
    )
    listing = None
    if "allowlist" in doc:
        entry = _map(doc["allowlist"], file, f"{where}.allowlist")
        cls = entry.get("class")
        if cls not in _CLASSES:
            raise _fail(
                file,
                f"{where}.allowlist.class",
                "unknown signer class",
                expected="community, partner or first-party",
                found=cls,
                hint="pick one of the allowlist classes",
            )
        by = entry.get("by", "source")
        pattern = None
        if by == "pattern":
            pattern = _str(entry.get("pattern"), file, f"{where}.allowlist.pattern")
        elif by != "source":
            raise _fail(
                file,
                f"{where}.allowlist.by",
                "unknown listing",
                expected="source or pattern",
                found=by,
                hint="list people by source, CI workflows by pattern",
            )
        listing = Listing(
            _CLASSES[cls], _str(entry.get("label"), file, f"{where}.allowlist.label"), pattern
        )
    return SignerDecl(key, identity, listing)


def _recipe(name: str, raw: Any, file: str) -> RecipeDecl:
    where = f"recipes.{name}"
    doc = _map(raw, file, where)
    criteria = {
        k: _str(v, file, f"{where}.criteria.{k}")
        for k, v in _map(doc.get("criteria"), file, f"{where}.criteria").items()
    }
    profile = None
    if "profile" in doc:
        text = _str(doc["profile"], file, f"{where}.profile")
        left, sep, right = text.partition("=")
        if not sep or not left or not right:
            raise _fail(
                file,
                f"{where}.profile",
                "not a profile selection",
                expected="name=value",
                found=text,
                hint="e.g. gpuStack=oci-managed",
            )
        profile = (left, right)
    floors: dict[str, float] = {}
    for check, value in _map(doc.get("floors") or {}, file, f"{where}.floors").items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(
                file,
                f"{where}.floors.{check}",
                "not a number",
                expected="GB/s",
                found=value,
                hint="e.g. 300",
            )
        floors[check] = float(value)
    current = doc.get("currentComponents")
    return RecipeDecl(
        name=name,
        criteria=criteria,
        profile=profile,
        components=_components(doc.get("components"), file, f"{where}.components"),
        current_components=None
        if current is None
        else _components(current, file, f"{where}.currentComponents"),
        floors=floors,
        overlay=not bool(doc.get("noOverlay")),
    )


def _checks(
    name: Any, sets: Mapping[str, Any], override: Any, file: str, where: str
) -> dict[Phase, dict[str, Outcome]]:
    if name not in sets:
        raise _fail(
            file,
            f"{where}.checks",
            "unknown check set",
            expected=", ".join(sorted(sets)),
            found=name,
            hint="name a set from `checks:`",
        )
    out: dict[Phase, dict[str, Outcome]] = {}
    base = _map(sets[name], file, f"checks.{name}")
    for layer, key in (
        (base, f"checks.{name}"),
        (_map(override or {}, file, f"{where}.override"), f"{where}.override"),
    ):
        for phase_name, entries in layer.items():
            try:
                phase = Phase(phase_name)
            except ValueError:
                raise _fail(
                    file,
                    f"{key}.{phase_name}",
                    "unknown phase",
                    expected="deployment, performance or conformance",
                    found=phase_name,
                    hint="readiness writes no CTRF; use one of the three",
                ) from None
            target = out.setdefault(phase, {})
            for check, value in _map(entries, file, f"{key}.{phase_name}").items():
                target[check] = _outcome(value, file, f"{key}.{phase_name}.{check}")
    return out


def _run(
    raw: Any,
    file: str,
    where: str,
    sets: Mapping[str, Any],
    signers: Mapping[str, Any],
    recipes: Mapping[str, Any],
    *,
    signed: bool,
) -> tuple[RunDecl, dict[str, Any]]:
    doc = _map(raw, file, where)
    recipe = _str(doc.get("recipe"), file, f"{where}.recipe")
    if recipe not in recipes:
        raise _fail(
            file,
            f"{where}.recipe",
            "unknown recipe",
            expected="a key of `recipes:`",
            found=recipe,
            hint="declare the recipe first",
        )
    signer = None
    if signed:
        signer = _str(doc.get("signer"), file, f"{where}.signer")
        if signer not in signers:
            raise _fail(
                file,
                f"{where}.signer",
                "unknown signer",
                expected="a key of `signers:`",
                found=signer,
                hint="declare the signer first",
            )
    ptype = doc.get("type")
    if ptype not in _TYPES:
        raise _fail(
            file,
            f"{where}.type",
            "unknown predicate type",
            expected="v1, v2 or v3",
            found=ptype,
            hint="v3 for new evidence",
        )
    gpu_nodes = doc.get("gpuNodes")
    if gpu_nodes is not None and (isinstance(gpu_nodes, bool) or not isinstance(gpu_nodes, int)):
        raise _fail(
            file,
            f"{where}.gpuNodes",
            "not a count",
            expected="an integer",
            found=gpu_nodes,
            hint="e.g. 2",
        )
    run = RunDecl(
        index=where,
        recipe=recipe,
        signer=signer,
        at=_time(doc.get("at"), file, f"{where}.at"),
        aicr=_str(doc.get("aicr"), file, f"{where}.aicr"),
        predicate_type=_TYPES[ptype],
        full=bool(doc.get("full")),
        checks=_checks(doc.get("checks"), sets, doc.get("override"), file, where),
        bandwidth=_bandwidth(doc.get("bandwidth") or {}, file, f"{where}.bandwidth"),
        gpu_nodes=gpu_nodes,
    )
    return run, doc


def parse_scenario(data: bytes, *, file: str) -> Scenario:
    """Parse scenario bytes; raise `InputError` naming the file and key of the first problem."""
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise InputError(
            "the scenario is not valid YAML",
            location=Location(file),
            expected="a YAML mapping",
            found=str(exc).splitlines()[0],
            hint="fix the syntax",
        ) from exc
    top = _map(doc, file, "(document)")
    signers = {k: _signer(k, v, file) for k, v in _map(top.get("signers"), file, "signers").items()}
    recipes = {k: _recipe(k, v, file) for k, v in _map(top.get("recipes"), file, "recipes").items()}
    sets = _map(top.get("checks"), file, "checks")
    runs: list[ScenarioRun] = []
    for section in ("runs", "rejected", "pending"):
        items = top.get(section) or []
        if not isinstance(items, list):
            raise _fail(
                file,
                section,
                "not a list",
                expected="a list of runs",
                found=items,
                hint="start each run with `- `",
            )
        for i, raw in enumerate(items):
            where = f"{section}[{i}]"
            run, entry = _run(raw, file, where, sets, signers, recipes, signed=section != "pending")
            if section == "runs":
                runs.append(CountedRun(run))
            elif section == "pending":
                runs.append(PendingRun(run))
            else:
                runs.append(_rejected(run, entry, signers, file, where))
    return Scenario(
        seed=_str(top.get("seed"), file, "seed"),
        authority_valid_from=_time(top.get("authorityValidFrom"), file, "authorityValidFrom"),
        repository=_str(top.get("repository"), file, "repository"),
        signers=signers,
        recipes=recipes,
        runs=tuple(runs),
    )


def _rejected(
    run: RunDecl, entry: Mapping[str, Any], signers: Mapping[str, Any], file: str, where: str
) -> RejectedRun:
    try:
        tamper = Tamper(str(entry.get("tamper")))
    except ValueError:
        raise _fail(
            file,
            f"{where}.tamper",
            "unknown tamper",
            expected=", ".join(t.value for t in Tamper),
            found=entry.get("tamper"),
            hint="pick one of the supported tampers",
        ) from None
    expect = entry.get("expect")
    if expect != tamper.failure_class.value:
        raise _fail(
            file,
            f"{where}.expect",
            "expectation does not match the tamper",
            expected=tamper.failure_class.value,
            found=expect,
            hint=f"{tamper.value} is caught as {tamper.failure_class.value}",
        )
    signed_bw: dict[str, Bandwidth] = dict(run.bandwidth)
    certificate = None
    if tamper is Tamper.MODIFIED_CTRF:
        signed_bw = _bandwidth(entry.get("signedBandwidth"), file, f"{where}.signedBandwidth")
        if set(signed_bw) != set(run.bandwidth) or not run.bandwidth:
            raise _fail(
                file,
                f"{where}.signedBandwidth",
                "signed and claimed checks differ",
                expected=", ".join(sorted(run.bandwidth)) or "at least one NCCL check",
                found=", ".join(sorted(signed_bw)),
                hint="give the honest number for every check the CTRF is rewritten for",
            )
    if tamper is Tamper.CLAIMED_OTHER_IDENTITY:
        certificate = _str(entry.get("certificate"), file, f"{where}.certificate")
        if certificate not in signers or certificate == run.signer:
            raise _fail(
                file,
                f"{where}.certificate",
                "not another declared signer",
                expected="a key of `signers:` other than `signer`",
                found=certificate,
                hint="name who really signed",
            )
    return RejectedRun(run, tamper, signed_bw, certificate)
