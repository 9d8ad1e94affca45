"""The data contract: Go-compatible JSON, documents valid against the shipped schemas, and
byte-identical output for the same inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from generator.corroborate import Board, BoardEntry, board_entry, build_board
from generator.data import (
    SCHEMA_FILES,
    FreshnessInfo,
    PointerRecord,
    build_info_document,
    default_build_time,
    go_json,
    index_document,
    pointers_document,
    schema_text,
    series_documents,
    series_file_name,
    write_data,
)
from generator.errors import BuildError
from generator.model import (
    FailureCause,
    FailureClass,
    Freshness,
    NoVerdict,
    ParsedPointer,
    Pending,
    Phase,
    PointerLocation,
    Rejected,
    RejectedPointer,
    Step,
    StepStatus,
    SubRow,
)

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
DEP, PERF, CONF = Phase.DEPLOYMENT, Phase.PERFORMANCE, Phase.CONFORMANCE


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"b": 1, "a": [1, 2]}, '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'),
        ({"x": "<a&b>"}, '{\n  "x": "\\u003ca\\u0026b\\u003e"\n}\n'),
        ({"x": "é ✓"}, '{\n  "x": "é ✓"\n}\n'),
        ({"x": "a\u2028b\u2029"}, '{\n  "x": "a\\u2028b\\u2029"\n}\n'),
        ({"<k>": []}, '{\n  "\\u003ck\\u003e": []\n}\n'),
        ([], "[]\n"),
        ({"x": None, "y": 1.5, "z": True}, '{\n  "x": null,\n  "y": 1.5,\n  "z": true\n}\n'),
    ],
)
def test_go_json(obj: Any, expected: str) -> None:
    assert go_json(obj) == expected
    assert json.loads(go_json(obj)) == obj


def test_go_json_writes_nan_as_null() -> None:
    assert go_json({"x": float("nan")}) == '{\n  "x": null\n}\n'


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_text(name))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


# --------------------------------------------------------------------------- a board with every state


def rich_entries(
    f: type, recipe_doc: dict[str, Any] | None = None, conformance: Any = None
) -> list[BoardEntry]:
    """Two tabs; rows CONFIRMED, SINGLE, CONTESTED, FAILING, UNTESTED; two versions; a reported
    signer; an all-not-run signer; a PARTIAL tab."""
    a, b, c, stranger = (f.identity(o) for o in ("acme", "beta", "gamma", "stranger"))
    base_recipe = recipe_doc or {
        "criteria": {
            "service": "eks",
            "accelerator": "h100",
            "os": "ubuntu",
            "intent": "training",
            "platform": "kubeflow",
        }
    }

    def ev(
        seed: str,
        when: str,
        version: str,
        results: dict[Phase, list[tuple[str, str]]],
        recipe: dict[str, Any] | None = None,
        name: str = "h100-eks-ubuntu-training-kubeflow",
        extra: dict[str, Any] | None = None,
    ):  # type: ignore[no-untyped-def]
        reports = {p: f.ctrf(p, *tests) for p, tests in results.items()}
        if conformance is not None and name == "h100-eks-ubuntu-training-kubeflow":
            reports[CONF] = conformance
        pred = {"aicrVersion": version, **(extra or {})}
        return f.make_evidence(
            seed=seed,
            attested_at=when,
            recipe=recipe or base_recipe,
            ctrf_reports=reports,
            predicate=pred,
            name=name,
        )

    full = {
        DEP: [
            ("operator-health", "passed"),
            ("expected-resources", "passed"),
            ("gpu-operator-version", "passed"),
            ("check-nvidia-smi", "failed"),
        ],
        PERF: [("nccl-all-reduce-bw-net", "passed")],
    }
    second = {
        DEP: [
            ("operator-health", "passed"),
            ("expected-resources", "failed"),
            ("check-nvidia-smi", "failed"),
        ],
        PERF: [("nccl-all-reduce-bw-net", "skipped")],
    }
    out = []
    triples = [
        (a, True, ev("a1", "2026-09-18T10:00:00Z", "v0.14.2", full)),
        (a, True, ev("a0", "2026-09-01T10:00:00Z", "v0.13.0", second)),
        (b, True, ev("b1", "2026-09-19T02:57:39Z", "v0.14.2", second)),
        (stranger, False, ev("s1", "2026-09-17T00:00:00Z", "v0.14.2", full)),
        (
            c,
            True,
            ev("c1", "2026-09-16T00:00:00Z", "v0.14.2", {CONF: [("dra-support", "skipped")]}),
        ),
        (
            a,
            True,
            ev(
                "g1",
                "2026-09-10T00:00:00Z",
                "v0.14.2",
                {DEP: [("operator-health", "passed")], CONF: [("dra-support", "skipped")]},
                recipe={
                    "criteria": {
                        "service": "gke",
                        "accelerator": "h100",
                        "os": "cos",
                        "intent": "training",
                    }
                },
                name="h100-gke-cos-training-gpustack-bundle-installer",
                extra={"profile": {"selection": "gpuStack=bundle-installer"}},
            ),
        ),
    ]
    for signer, listed, evidence in triples:
        out.append(
            board_entry(
                f.make_verified(evidence, signer),
                f.classified(listed),
                f.make_pointer(evidence, signer),
                origin=evidence.recipe_name,
            )
        )
    return out


def rich_board(f: type, **kw: Any) -> Board:
    return build_board(rich_entries(f, **kw), organisation_of=f.org_of, naming=f.naming)


def loc(path: str) -> PointerLocation:
    parts = path.split("/")
    return PointerLocation(
        path, parts[1] if len(parts) > 2 else None, parts[2] if len(parts) > 3 else None
    )


def rich_records(f: type) -> list[PointerRecord]:
    signer = f.identity("acme")
    ev = f.make_evidence(
        seed="p1",
        predicate={"redaction": None},
        snapshot={
            "measurements": [
                {
                    "type": "GPU",
                    "subtypes": [
                        {"subtype": "smi", "data": {"driver": "570.1", "cuda-version": "12.8"}}
                    ],
                }
            ]
        },
        recipe={
            "criteria": {"service": "eks"},
            "componentRefs": [{"name": "gpu-operator", "version": "v25.3.0"}],
            "validation": {
                "performance": {
                    "constraints": [{"name": "nccl-all-reduce-bw-net", "value": ">= 300"}]
                }
            },
        },
        ctrf_reports={PERF: f.ctrf(PERF, ("nccl-all-reduce-bw-net", "passed"))},
    )
    steps = (
        Step(
            1,
            "materialize-bundle",
            StepStatus.PASSED,
            "ok",
            (SubRow("digest", "sha256:x", beyond_aicr=True),),
        ),
        Step(2, "signature-verify", StepStatus.FAILED, "bad"),
    )
    verified = f.make_verified(ev, signer)
    pointer = f.make_pointer(ev, signer)
    pending_ev = f.make_evidence(seed="p2")
    cause = FailureCause(FailureClass.SIGNATURE, "certificate does not match", "re-sign")
    transient = FailureCause(FailureClass.TRANSIENT, "registry timed out", "retry", http_status=503)
    base = "evidence/h100-eks-ubuntu-training-kubeflow"
    return [
        PointerRecord(
            ParsedPointer(loc(f"{base}/{signer.slug}/sha256-1.yaml"), pointer),
            verified,
            f.classified(),
            "acme/aicr-evidence",
            freshness=FreshnessInfo(Freshness.FRESH, "b" * 64, "b" * 64, "native"),
        ),
        PointerRecord(
            ParsedPointer(loc(f"{base}/{signer.slug}/sha256-2.yaml"), pointer),
            verified,
            f.classified(),
            "acme/aicr-evidence",
            duplicate_of=f"{base}/{signer.slug}/sha256-1.yaml",
            freshness=FreshnessInfo(Freshness.STALE, "b" * 64, "c" * 64, "aicr"),
            verified_at="2026-09-19T03:00:00Z",
        ),
        PointerRecord(
            ParsedPointer(loc("evidence/pending.yaml"), f.make_pointer(pending_ev, None)),
            Pending((), pending_ev),
        ),
        PointerRecord(
            ParsedPointer(loc(f"{base}/{signer.slug}/sha256-3.yaml"), pointer),
            Rejected(steps, cause, signer),
            f.classified(False),
        ),
        PointerRecord(
            ParsedPointer(loc(f"{base}/{signer.slug}/sha256-4.yaml"), pointer),
            NoVerdict(steps[:1], transient),
        ),
        PointerRecord(
            RejectedPointer(
                loc("evidence/bad/zz/sha256-5.yaml"),
                "filename-digest",
                "file name does not match bundle.digest",
                "rename it",
                recipe="bad",
            )
        ),
        PointerRecord(ParsedPointer(loc(f"{base}/{signer.slug}/sha256-6.yaml"), pointer)),
    ]


def test_board_has_every_state(f: type) -> None:
    from generator.model import ConsensusState as S

    board = rich_board(f)
    rows = {r.consensus for t in board.tabs for g in (t.combined, *t.versions) for r in g.rows}
    assert rows == {S.CONFIRMED, S.SINGLE, S.CONTESTED, S.FAILING, S.UNTESTED}
    assert S.PARTIAL in {t.rollup for t in board.tabs}
    assert any(r.reported for t in board.tabs for r in t.combined.rows)


def test_index_validates_and_carries_the_contract(f: type) -> None:
    board = rich_board(f)
    doc = json.loads(go_json(index_document(board, build_time="2026-09-19T02:57:39Z")))
    validator("index.schema.json").validate(doc)
    assert doc["schema"] == "aicr-corroboration/v1"
    assert doc["meta"]["generatedAt"] == "2026-09-19 02:57 UTC"
    assert doc["meta"]["counts"] == {"recipes": 2, "csps": 2, "sources": len(board.sources)}
    assert doc["meta"]["counts"]["sources"] == 4  # the all-not-run signer is still registered
    tabs = [t for g in doc["groups"] for d in g["dashboards"] for t in d["tabs"]]
    assert [t["recipe"] for t in tabs] == [
        "h100-eks-ubuntu-training-kubeflow",
        "h100-gke-cos-training-gpustack-bundle-installer",
    ]
    eks = tabs[0]
    assert [v["aicrVer"] for v in eks["versions"]] == ["v0.14.2", "v0.13.0"]
    assert eks["combined"]["aicrVer"] == ""
    assert set(eks["combined"]["phaseRollup"]) == {"deployment", "performance", "conformance"}
    assert "profile" not in eks and tabs[1]["profileSelection"] == "gpuStack=bundle-installer"
    assert sum(eks["tally"].values()) == len(eks["combined"]["tests"])


def test_series_validate_and_name_their_files(f: type) -> None:
    docs = series_documents(rich_board(f))
    assert set(docs) == {
        "h100-eks-ubuntu-training-kubeflow",
        "h100-gke-cos-training-gpustack-bundle-installer",
    }
    check = validator("series.schema.json")
    for recipe, doc in docs.items():
        check.validate(doc)
        assert doc["recipe"] == recipe and doc["builds"]
        for columns in doc["builds"].values():
            assert [c["newest"] for c in columns] == [True] + [False] * (len(columns) - 1)
            for column in columns:
                assert set(column["results"]) == {r["name"] for r in doc["rows"]}


def test_pointers_validate_with_every_outcome(f: type) -> None:
    doc = json.loads(go_json(pointers_document(reversed(rich_records(f)))))
    validator("pointers.schema.json").validate(doc)
    paths = [p["path"] for p in doc["pointers"]]
    assert paths == sorted(paths)
    by_exit = {p["verify"]["exit"] for p in doc["pointers"]}
    assert by_exit == {0, 2, 3}
    rejected = next(p for p in doc["pointers"] if p["verify"]["rule"])
    assert rejected["bundle"] is None and rejected["verify"]["failureCause"]["class"] == "schema"
    pending = next(p for p in doc["pointers"] if p["verify"]["pending"])
    assert pending["signer"]["claimed"] is None and pending["evidence"] is not None
    first = next(p for p in doc["pointers"] if p["path"].endswith("sha256-1.yaml"))
    assert first["evidence"]["bandwidth"][0]["floor"] == 300.0
    assert {h["key"]: h["value"] for h in first["evidence"]["hardware"]}["driver"] == "570.1"
    assert {p["freshness"]["state"] for p in doc["pointers"]} == {"fresh", "stale", "unknown"}


def build_info() -> dict[str, Any]:
    return build_info_document(
        build_time="2026-09-19T02:57:39Z",
        commit="abc1234",
        source_url=None,
        verifier="sigstore 4.5.1",
        trust_name="public-good",
        trust_production=True,
        trust_refreshed=None,
        trusted_registries=["ghcr.io"],
        preview=False,
    )


def test_build_info_validates() -> None:
    validator("build-info.schema.json").validate(build_info())


@pytest.mark.parametrize(
    ("schema", "breaker"),
    [
        ("index.schema.json", lambda d: d.update(schema="aicr-corroboration/v2")),
        (
            "index.schema.json",
            lambda d: d["groups"][0]["dashboards"][0]["tabs"][0]["combined"]["tests"][0].update(
                consensus="PARTIAL"
            ),
        ),
        ("index.schema.json", lambda d: d["meta"].update(generatedAt="2026-09-19T02:57:39Z")),
        ("index.schema.json", lambda d: d["sources"].update({"short": {}})),
        ("index.schema.json", lambda d: d.update(unexpected=1)),
    ],
)
def test_broken_index_fails_validation(f: type, schema: str, breaker: Any) -> None:
    doc = json.loads(go_json(index_document(rich_board(f), build_time="x")))
    validator(schema).validate(doc)
    breaker(doc)
    with pytest.raises(jsonschema.ValidationError):
        validator(schema).validate(doc)


def test_broken_series_and_pointers_fail_validation(f: type) -> None:
    series = next(iter(series_documents(rich_board(f)).values()))
    src = next(iter(series["builds"]))
    series["builds"][src][0]["results"]["operator-health"] = "passed"
    with pytest.raises(jsonschema.ValidationError):
        validator("series.schema.json").validate(series)
    pointers = pointers_document(rich_records(f))
    pointers["pointers"][0]["verify"]["exit"] = 4
    with pytest.raises(jsonschema.ValidationError):
        validator("pointers.schema.json").validate(pointers)


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "../x", "a\\b", ".x"])
def test_series_file_name_rejects_unsafe_slugs(bad: str) -> None:
    with pytest.raises(BuildError):
        series_file_name(bad)


def test_default_build_time(f: type) -> None:
    board = rich_board(f)
    assert default_build_time(board) == "2026-09-19T02:57:39Z"
    assert default_build_time(board, 0) == "1970-01-01T00:00:00Z"


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_write_data_is_deterministic(f: type, tmp_path: Path) -> None:
    outputs = []
    for i, order in enumerate((1, -1)):
        entries = rich_entries(f)[::order]
        board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
        out = tmp_path / f"site{i}"
        written = write_data(
            out,
            board=board,
            records=rich_records(f)[::order],
            build_time=default_build_time(board),
            build_info=build_info(),
        )
        assert all(p.is_file() for p in written)
        outputs.append(tree_bytes(out))
    assert outputs[0] == outputs[1]
    names = set(outputs[0])
    assert {"data/index.json", "data/pointers.json", "data/build-info.json"} <= names
    assert {f"data/schema/{n}" for n in SCHEMA_FILES} <= names
    assert "data/series/h100-eks-ubuntu-training-kubeflow.json" in names
    index = json.loads(outputs[0]["data/index.json"])
    validator("index.schema.json").validate(index)
    assert outputs[0]["data/index.json"].endswith(b"}\n")


@pytest.mark.fixtures
def test_fixture_derived_outputs_validate(f: type) -> None:
    testdata = FIXTURES / "aicr-tree" / "testdata"
    if not testdata.is_dir():
        pytest.skip("shared fixtures (aicr-tree) are not present")
    from generator.ctrf import parse_ctrf

    recipe = yaml.safe_load((testdata / "summary-bundle" / "recipe.yaml").read_text())
    recipe["criteria"]["platform"] = "kubeflow"
    ctrf_file = next((testdata / "corroborate-gcs").rglob("conformance.json"))
    report = parse_ctrf(ctrf_file.read_bytes(), CONF, file=ctrf_file.name)
    board = rich_board(f, recipe_doc=recipe, conformance=report)
    doc = index_document(board, build_time="2026-09-19T02:57:39Z")
    validator("index.schema.json").validate(json.loads(go_json(doc)))
    names = {r["name"] for r in doc["groups"][0]["dashboards"][0]["tabs"][0]["combined"]["tests"]}
    assert {t.name for t in report.tests} <= names
    for series in series_documents(board).values():
        validator("series.schema.json").validate(series)
