"""The demo scenario file (`recipes/demo/scenario.yaml`) parsed into frozen, checked declarations.

The scenario says what the demo evidence tree must show: signers and how the allowlist lists them,
recipes (criteria, profile, components, NCCL floors, whether an overlay exists and whether it moved
on), named check sets, and one entry per signed, rejected or pending run. Parsing is pure: bytes
in, declarations out; every problem is an `InputError` naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from generator.errors import InputError, Location
from generator.model import Phase, PredicateType, SignerIdentity
from generator.testing._demo_decls import (
    _CLASSES,
    _TYPES,
    Bandwidth,
    CountedRun,
    Listing,
    Measured,
    Outcome,
    PendingRun,
    RecipeDecl,
    RejectedRun,
    RunDecl,
    Scenario,
    ScenarioRun,
    SignerDecl,
    Tamper,
)
from generator.testing._demo_parse import (
    _bandwidth,
    _components,
    _fail,
    _map,
    _outcome,
    _str,
    _time,
)

__all__ = [
    "Bandwidth",
    "CountedRun",
    "Listing",
    "Measured",
    "Outcome",
    "PendingRun",
    "RecipeDecl",
    "RejectedRun",
    "RunDecl",
    "Scenario",
    "ScenarioRun",
    "SignerDecl",
    "Tamper",
    "parse_scenario",
]


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
    ptype = _predicate_type(doc.get("type"), file, where)
    gpu_nodes = _gpu_nodes(doc.get("gpuNodes"), file, where)
    run = RunDecl(
        index=where,
        recipe=recipe,
        signer=signer,
        at=_time(doc.get("at"), file, f"{where}.at"),
        aicr=_str(doc.get("aicr"), file, f"{where}.aicr"),
        predicate_type=ptype,
        full=bool(doc.get("full")),
        checks=_checks(doc.get("checks"), sets, doc.get("override"), file, where),
        bandwidth=_bandwidth(doc.get("bandwidth") or {}, file, f"{where}.bandwidth"),
        gpu_nodes=gpu_nodes,
    )
    return run, doc


def _predicate_type(ptype: Any, file: str, where: str) -> PredicateType:
    """A run's `type:` (v1, v2 or v3)."""
    if ptype not in _TYPES:
        raise _fail(
            file,
            f"{where}.type",
            "unknown predicate type",
            expected="v1, v2 or v3",
            found=ptype,
            hint="v3 for new evidence",
        )
    return _TYPES[ptype]


def _gpu_nodes(gpu_nodes: Any, file: str, where: str) -> int | None:
    """A run's optional `gpuNodes:` count."""
    if gpu_nodes is not None and (isinstance(gpu_nodes, bool) or not isinstance(gpu_nodes, int)):
        raise _fail(
            file,
            f"{where}.gpuNodes",
            "not a count",
            expected="an integer",
            found=gpu_nodes,
            hint="e.g. 2",
        )
    return gpu_nodes


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
