"""The embedded demo tree: it never drifts from its scenario, passes the tree gate as intended,
carries the content the scenario describes, and the full engine verifies it offline exactly as
`recipes/demo/expected.json` says."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.bundle.layout import OciLayoutSource
from generator.errors import InputError, UsageError
from generator.freshness import NativeProvider
from generator.model import ConsensusState, OciDigest, Phase, PredicateType, SignerIdentity
from generator.testing.demo import (
    EXPECTED_FILE,
    OUTPUT_DIRS,
    DemoReport,
    ExpectPending,
    ExpectRejected,
    ExpectVerified,
    generate_demo,
    main,
)
from generator.testing.demo_scenario import parse_scenario
from generator.tree import check_tree, load_allowlist
from generator.tree.pointer import parse_pointer

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "recipes"
SCENARIO = RECIPES / "demo" / "scenario.yaml"
NCCL_LINE = re.compile(r"^NCCL All Reduce bandwidth \(([^)]+)\): ([0-9]+(?:\.[0-9]+)?) GB/s$")
CONSTRAINT_LINE = re.compile(r"^Constraint: (>= [0-9.]+) \u2192 (true|false)$")


def tree_files(root: Path) -> dict[str, bytes]:
    """Every generated file under a recipes folder, by relative path."""
    found: dict[str, bytes] = {}
    for name in OUTPUT_DIRS:
        for path in sorted((root / name).rglob("*")):
            if path.is_file():
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    expected = root / EXPECTED_FILE
    if expected.is_file():
        found[EXPECTED_FILE] = expected.read_bytes()
    return found


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((RECIPES / EXPECTED_FILE).read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def scenario_doc() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(SCENARIO.read_bytes())
    return doc


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoReport]:
    out = tmp_path_factory.mktemp("demo") / "recipes"
    return out, generate_demo(SCENARIO, out)


@pytest.fixture(scope="module")
def layout() -> OciLayoutSource:
    return OciLayoutSource(RECIPES / "bundles")


def pointers() -> Iterator[tuple[str, Any]]:
    """(path relative to recipes/, parsed pointer) for every committed pointer."""
    for path in sorted((RECIPES / "evidence").rglob("*.yaml")):
        if path.name == "allowlist.yaml":
            continue
        rel = path.relative_to(RECIPES).as_posix()
        yield rel, parse_pointer(path.read_bytes(), file=rel)


def bundle_files(layout: OciLayoutSource, pointer: Any) -> dict[str, bytes]:
    found = layout.find_digest(OciDigest(str(pointer.bundle.digest)))
    assert found is not None, f"{pointer.bundle.digest} is not in recipes/bundles"
    return dict(found.files)


# --------------------------------------------------------------------------- drift


def test_regenerating_gives_byte_identical_files(regenerated: tuple[Path, DemoReport]) -> None:
    out, report = regenerated
    committed = tree_files(RECIPES)
    fresh = tree_files(out)
    assert sorted(fresh) == sorted(committed), "regenerate with `python -m generator.testing.demo`"
    drifted = [p for p in fresh if fresh[p] != committed[p]]
    assert drifted == []
    assert sorted(report.files) == sorted(fresh)


def test_regenerating_in_place_is_stable(tmp_path: Path) -> None:
    out = tmp_path / "recipes"
    generate_demo(SCENARIO, out)
    first = tree_files(out)
    generate_demo(SCENARIO, out)
    assert tree_files(out) == first


def test_the_tree_stays_small() -> None:
    size = sum(p.stat().st_size for p in (RECIPES / "bundles").rglob("*") if p.is_file())
    assert size < 5 * 1024 * 1024


def test_main_writes_the_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(SCENARIO), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "evidence" / "allowlist.yaml").is_file()
    assert "pointers" in capsys.readouterr().out


def test_refuses_to_overwrite_a_foreign_evidence_tree(tmp_path: Path) -> None:
    (tmp_path / "evidence").mkdir()
    allowlist = tmp_path / "evidence" / "allowlist.yaml"
    allowlist.write_text("schemaVersion: 1.0.0\n", encoding="utf-8")
    with pytest.raises(UsageError):
        generate_demo(SCENARIO, tmp_path)
    assert allowlist.read_text(encoding="utf-8") == "schemaVersion: 1.0.0\n"
    assert main([str(SCENARIO), "--out", str(tmp_path)]) == UsageError.exit_code


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda d: d["runs"][0].update(signer="nobody"), "runs[0].signer"),
        (lambda d: d["runs"][0].update(recipe="nope"), "runs[0].recipe"),
        (lambda d: d["runs"][0].update(type="v9"), "runs[0].type"),
        (lambda d: d["runs"][0].update(at="2026-10-02 09:14"), "runs[0].at"),
        (lambda d: d["runs"][0].update(checks="missing"), "runs[0].checks"),
        (lambda d: d["rejected"][0].update(expect="signature"), "rejected[0].expect"),
        (lambda d: d["rejected"][0].update(tamper="swap"), "rejected[0].tamper"),
        (lambda d: d["rejected"][2].update(certificate="nimbus"), "rejected[2].certificate"),
        (
            lambda d: d["checks"]["training"].update(readiness={"x": "pass"}),
            "checks.training.readiness",
        ),
        (
            lambda d: d["signers"]["nimbus"]["allowlist"].update({"class": "vip"}),
            "signers.nimbus.allowlist.class",
        ),
        (
            lambda d: d["checks"]["training"]["deployment"].update({"operator-health": "flaky"}),
            "checks.training.deployment.operator-health",
        ),
        (
            lambda d: d["runs"][0].update(
                override={"conformance": {"dra-support": {"result": "fail", "stack": "x"}}}
            ),
            "runs[0].override.conformance.dra-support.stack",
        ),
        (
            lambda d: d["runs"][0].update(
                override={"conformance": {"dra-support": {"result": "fail", "trace": 3}}}
            ),
            "runs[0].override.conformance.dra-support.trace",
        ),
    ],
)
def test_scenario_errors_name_the_key(scenario_doc: dict[str, Any], edit: Any, key: str) -> None:
    doc = json.loads(json.dumps(scenario_doc))
    edit(doc)
    with pytest.raises(InputError) as caught:
        parse_scenario(yaml.safe_dump(doc).encode(), file="scenario.yaml")
    assert caught.value.location is not None
    assert caught.value.location.key == key


def test_a_failure_may_carry_its_message_and_trace(scenario_doc: dict[str, Any]) -> None:
    doc = json.loads(json.dumps(scenario_doc))
    doc["runs"][0]["override"] = {
        "deployment": {"operator-health": "fail: pods crash-looping"},
        "conformance": {
            "dra-support": {"result": "fail", "message": "no DeviceClass", "trace": "at x.go:1"},
            "gang-scheduling": "other: timed out",
        },
    }
    plan = parse_scenario(yaml.safe_dump(doc).encode(), file="scenario.yaml")
    checks = plan.runs[0].run.checks
    health = checks[Phase.DEPLOYMENT]["operator-health"]
    assert (health.status, health.reason, health.trace) == ("failed", "pods crash-looping", None)
    dra = checks[Phase.CONFORMANCE]["dra-support"]
    assert (dra.status, dra.reason, dra.trace) == ("failed", "no DeviceClass", "at x.go:1")
    gang = checks[Phase.CONFORMANCE]["gang-scheduling"]
    assert (gang.status, gang.reason) == ("other", "timed out")


def test_legacy_runs_at_two_versions_cannot_both_be_fresh(
    scenario_doc: dict[str, Any], tmp_path: Path
) -> None:
    doc = json.loads(json.dumps(scenario_doc))
    (v1,) = [r for r in doc["runs"] if r["type"] == "v1"]
    extra = dict(v1)
    extra.update(at="2026-09-10T00:00:00Z", aicr="v0.12.2", signer="acme-ci")
    doc["runs"].append(extra)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(InputError, match="freshness"):
        generate_demo(path, tmp_path / "out")


# --------------------------------------------------------------------------- scenario intent


def test_the_scenario_covers_what_the_demo_must_show(scenario_doc: dict[str, Any]) -> None:
    assert len(scenario_doc["recipes"]) >= 8
    assert "gb300-oke-ubuntu-training-gpustack-oci-managed" in scenario_doc["recipes"]
    signers = scenario_doc["signers"]
    classes = [s.get("allowlist", {}).get("class") for s in signers.values()]
    assert {"community", "partner", None} <= set(classes) and len(signers) >= 4
    runs = scenario_doc["runs"] + scenario_doc["rejected"] + scenario_doc["pending"]
    assert {r["type"] for r in runs} == {"v1", "v2", "v3"}
    assert {r["expect"] for r in scenario_doc["rejected"]} >= {"signature", "integrity"}
    assert len(scenario_doc["pending"]) == 1


def test_every_pointer_has_an_expectation(
    expected: dict[str, Any], regenerated: tuple[Path, DemoReport]
) -> None:
    paths = [p for p, _ in pointers()]
    assert sorted(expected["pointers"]) == sorted(paths)
    report = regenerated[1]
    kinds = {type(e) for e in report.expectations.values()}
    assert kinds == {ExpectVerified, ExpectRejected, ExpectPending}
    assert {
        e.failure_class.value for e in report.expectations.values() if isinstance(e, ExpectRejected)
    } == {"signature", "integrity"}
    assert {
        e.freshness.value for e in report.expectations.values() if isinstance(e, ExpectVerified)
    } == {"fresh", "stale", "unknown"}


def test_allowlist_lists_exactly_the_listed_signers(scenario_doc: dict[str, Any]) -> None:
    allowlist = load_allowlist(RECIPES / "evidence" / "allowlist.yaml")
    text = (RECIPES / "evidence" / "allowlist.yaml").read_text(encoding="utf-8")
    for key, decl in scenario_doc["signers"].items():
        signer = SignerIdentity(decl["issuer"], decl["identity"])
        got = allowlist.classify(signer)
        listing = decl.get("allowlist")
        if listing is None:
            assert not got.allowlisted, key
            assert signer.slug not in text
            continue
        assert got.allowlisted, key
        assert got.entry is not None and got.entry.label == listing["label"]
        assert str(got.signer_class) == listing["class"]
        if listing["by"] == "source":
            assert got.entry.source == signer.slug
        else:
            assert got.entry.identity_pattern == listing["pattern"]
    assert "identity:" not in text


def test_tree_gate_flags_only_the_unlisted_signers(expected: dict[str, Any]) -> None:
    strict_pending = check_tree(RECIPES, allow_pending=True)
    assert [v.path for v in strict_pending] == expected["treeViolations"]
    assert all("not in the allowlist" in v.message for v in strict_pending)
    assert len(strict_pending) == 2
    strict = check_tree(RECIPES)
    pending = [p for p, e in expected["pointers"].items() if e["pending"]]
    assert sorted(v.path for v in strict) == sorted(expected["treeViolations"] + pending)


def test_pointer_shapes(expected: dict[str, Any]) -> None:
    types = set()
    for path, pointer in pointers():
        want = expected["pointers"][path]
        types.add(pointer.bundle.predicate_type)
        if want["pending"]:
            assert path.count("/") == 1 and pointer.signer is None
        else:
            assert pointer.signer is not None and path.split("/")[2] == pointer.signer.identity.slug
            assert pointer.signer.rekor_log_index is not None
            assert path.endswith(str(pointer.bundle.digest).replace(":", "-") + ".yaml")
    assert types == set(PredicateType)


# --------------------------------------------------------------------------- bundle content


def _ctrf(files: dict[str, bytes], phase: str) -> list[dict[str, Any]]:
    if f"ctrf/{phase}.json" not in files:
        return []
    tests: list[dict[str, Any]] = json.loads(files[f"ctrf/{phase}.json"])["results"]["tests"]
    return tests


def _predicate(files: dict[str, bytes]) -> dict[str, Any]:
    predicate: dict[str, Any] = json.loads(files["statement.intoto.json"])["predicate"]
    return predicate


def test_bundles_tell_one_consistent_story(layout: OciLayoutSource) -> None:
    for path, pointer in pointers():
        files = bundle_files(layout, pointer)
        predicate = _predicate(files)
        recipe = yaml.safe_load(files["recipe.yaml"])
        assert recipe["kind"] == "RecipeResult"
        criteria = recipe["criteria"]
        fp = predicate["fingerprint"]
        assert fp["accelerator"]["value"] == criteria["accelerator"], path
        assert fp["os"]["value"] == criteria["os"], path
        if criteria["service"] != "generic":
            assert fp["service"]["value"] == criteria["service"], path
        assert re.fullmatch(r"1\.33\.[0-9]+", fp["k8sVersion"]["value"]), path
        assert fp["gpuNodeCount"]["value"] <= fp["nodeCount"]["value"]
        assert predicate["criteriaMatch"]["matched"] is True, path
        assert re.fullmatch(r"[0-9a-f]{40}", predicate["aicrCommit"])
        for image in predicate["validatorImages"]:
            assert image["digest"] == "" and image["image"].endswith(":" + predicate["aicrVersion"])
        assert recipe["metadata"]["version"] == predicate["aicrVersion"]
        ptype = pointer.bundle.predicate_type
        if ptype is PredicateType.V1:
            assert "profile" not in predicate and pointer.profile is None
        if pointer.profile is not None:
            assert predicate["profile"]["selection"] == pointer.profile
            assert re.fullmatch(r"[0-9a-f]{64}", predicate["profile"]["policyDescriptorIdentity"])
            assert path.split("/")[1].endswith("-" + pointer.profile.replace("=", "-").lower())
        snapshot = yaml.safe_load(files["snapshot.yaml"])
        subtypes = {
            (m["type"], s["subtype"]): s["data"]
            for m in snapshot["measurements"]
            for s in m["subtypes"]
        }
        assert subtypes[("K8s", "server")]["version"] == "v" + fp["k8sVersion"]["value"]
        full = "redaction" not in predicate
        assert (("GPU", "smi") in subtypes) is full, path
        if full:
            assert {"driver", "cuda-version"} <= set(subtypes[("GPU", "smi")])
            assert "node.kubernetes.io/instance-type" in subtypes[("NodeTopology", "label")]
        for phase in ("deployment", "performance", "conformance"):
            for test in _ctrf(files, phase):
                if not full:
                    assert "stdout" not in test and "message" not in test, path


def _floors(files: dict[str, bytes]) -> dict[str, str]:
    recipe = yaml.safe_load(files["recipe.yaml"])
    constraints = ((recipe.get("validation") or {}).get("performance") or {}).get("constraints", [])
    return {c["name"]: c["value"] for c in constraints}


def test_nccl_numbers_match_the_scenario(
    layout: OciLayoutSource, scenario_doc: dict[str, Any], expected: dict[str, Any]
) -> None:
    stated: dict[tuple[str, str], Any] = {}
    for run in scenario_doc["runs"]:
        for check, value in (run.get("bandwidth") or {}).items():
            stated[(run["recipe"], run["at"])] = (check, value)
    seen = 0
    for path, pointer in pointers():
        if expected["pointers"][path]["exit"] == 2:
            continue
        files = bundle_files(layout, pointer)
        key = (pointer.recipe, _predicate(files)["attestedAt"])
        perf = _ctrf(files, "performance")
        if key not in stated:
            assert perf == [], path
            continue
        check, value = stated[key]
        (test,) = [t for t in perf if t["name"] == check]
        floors = _floors(files)
        if isinstance(value, float):
            lines = test["stdout"]
            measured = [NCCL_LINE.match(line) for line in lines]
            numbers = [float(m.group(2)) for m in measured if m and m.group(1) == check]
            assert numbers == [value], path
            constraint = [CONSTRAINT_LINE.match(line) for line in lines]
            (hit,) = [c for c in constraint if c]
            assert hit.group(1) == floors[check]
            threshold = float(floors[check].removeprefix(">= "))
            passes = value >= 0.9 * threshold
            assert hit.group(2) == ("true" if passes else "false")
            assert (test["status"] == "passed") is passes
            seen += 1
        elif value == "pass":
            assert test["status"] == "passed" and "stdout" not in test
        else:
            assert test["status"] == "skipped"
            assert test.get("message") == value.partition(":")[2].strip()
    assert seen >= 6


def test_the_headline_numbers(layout: OciLayoutSource) -> None:
    found: dict[str, tuple[float, str]] = {}
    for _, pointer in pointers():
        files = bundle_files(layout, pointer)
        for test in _ctrf(files, "performance"):
            for line in test.get("stdout", []):
                m = NCCL_LINE.match(line)
                if m:
                    found.setdefault(
                        f"{m.group(1)}={m.group(2)}", (0.0, _floors(files)[m.group(1)])
                    )
    assert found["nccl-all-reduce-bw-net=376.40"][1] == ">= 300"
    assert found["nccl-all-reduce-bw-nvls=909.30"][1] == ">= 700"


def test_skip_reasons_are_carried_in_full_bundles(
    layout: OciLayoutSource, scenario_doc: dict[str, Any]
) -> None:
    reason = scenario_doc["checks"]["training"]["conformance"]["cluster-autoscaling"]
    reason = reason.partition(":")[2].strip()
    messages = set()
    for _, pointer in pointers():
        files = bundle_files(layout, pointer)
        for test in _ctrf(files, "conformance"):
            if test["name"] == "cluster-autoscaling":
                assert test["status"] == "skipped"
                messages.add(test.get("message"))
    assert messages == {reason, None}  # None: minimal bundles strip the message


def test_overlays_give_the_expected_freshness(
    expected: dict[str, Any], layout: OciLayoutSource
) -> None:
    provider = NativeProvider(RECIPES / "overlays")
    states = set()
    for path, pointer in pointers():
        want = expected["pointers"][path]
        if want["freshness"] is None:
            continue
        signed = _predicate(bundle_files(layout, pointer))["recipe"]["digest"]
        current = provider.current(
            pointer.recipe, pointer.profile, pointer.bundle.predicate_type.canonicalizer
        )
        state = "unknown" if current is None else "fresh" if current == signed else "stale"
        assert state == want["freshness"], path
        states.add((state, pointer.bundle.predicate_type))
    assert ("fresh", PredicateType.V1) in states and ("fresh", PredicateType.V2) in states
    assert ("fresh", PredicateType.V3) in states and ("stale", PredicateType.V3) in states


# --------------------------------------------------------------------------- the full engine


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from generator.build import BuildOptions, run_build

    tmp = tmp_path_factory.mktemp("build")
    run_build(
        BuildOptions.flat(
            recipes=RECIPES,
            out=tmp / "site",
            oci_layouts=(RECIPES / "bundles",),
            trust_root=RECIPES / "trust" / "trusted_root.json",
            offline=True,
            cache=tmp / "cache",
            data_only=True,
            quiet=True,
            jobs=1,
        )
    )
    return tmp / "site" / "data"


def test_engine_gives_every_pointer_its_expected_verdict(
    built: Path, expected: dict[str, Any]
) -> None:
    records = json.loads((built / "pointers.json").read_text(encoding="utf-8"))["pointers"]
    got = {}
    for r in records:
        cause = r["verify"]["failureCause"]
        got[r["path"]] = {
            "exit": r["verify"]["exit"],
            "class": cause["class"] if cause else None,
            "pending": r["verify"]["pending"],
            "freshness": r["freshness"]["state"]
            if r["verify"]["exit"] in (0, 1) and not r["verify"]["pending"]
            else None,
            "allowlisted": None if r["verify"]["exit"] == 2 else r["signer"]["allowlisted"],
        }
    assert got == expected["pointers"]


def test_engine_shows_every_state(built: Path) -> None:
    index = json.loads((built / "index.json").read_text(encoding="utf-8"))
    rows: set[str] = set()
    rollups: set[str] = set()
    for group in index["groups"]:
        for dashboard in group["dashboards"]:
            for tab in dashboard["tabs"]:
                rollups.add(tab["rollup"])
                rollups.update(tab["combined"]["phaseRollup"].values())
                rows.update(t["consensus"] for t in tab["combined"]["tests"])
    row_states = {s.value for s in ConsensusState} - {"PARTIAL"}
    assert rows == row_states
    assert "PARTIAL" in rollups
    assert index["meta"]["counts"]["recipes"] >= 8


def test_engine_reads_the_bandwidth_numbers(built: Path) -> None:
    records = json.loads((built / "pointers.json").read_text(encoding="utf-8"))["pointers"]
    measured = {
        (b["check"], b["measured"], b["floor"])
        for r in records
        if r["evidence"]
        for b in r["evidence"]["bandwidth"]
    }
    assert ("nccl-all-reduce-bw-net", 376.4, 300.0) in measured
    assert ("nccl-all-reduce-bw-nvls", 909.3, 700.0) in measured
    assert any(m is None for _, m, _ in measured)  # minimal bundles carry no number
