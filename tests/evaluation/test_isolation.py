"""One pointer can fail, the build cannot: a fault while fetching, verifying or assessing one
pointer becomes that pointer's exit-3 `internal` record, in-process and in the worker pool."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import generator.evaluate.assess as assess
import generator.evaluate.engine as engine_module
import generator.evaluate.pool as pool
from generator.build import run_build
from generator.evaluate.engine import Engine
from generator.model import BundleRef, RecipeName
from tests.evaluation.conftest import EvidenceTree


class FaultySource:
    """A bundle source that raises `error` for one bundle digest and serves the rest from the
    real source it wraps."""

    def __init__(self, real: Any, digest: str, error: BaseException) -> None:
        self.real = real
        self.digest = digest
        self.error = error

    def fetch(self, ref: BundleRef) -> Any:
        if str(ref.digest) == self.digest:
            raise self.error
        return self.real.fetch(ref)


class FaultyProvider:
    """A freshness provider that raises `error` for one recipe (an assessment fault)."""

    name = "native"

    def __init__(self, recipe: str, error: BaseException) -> None:
        self.recipe = recipe
        self.error = error

    def current(self, recipe: RecipeName, profile: str | None, canonicalizer: Any) -> str | None:
        if recipe == self.recipe:
            raise self.error
        return None


def _tree(evidence_tree: EvidenceTree, count: int) -> list[str]:
    """`count` passing bundles of one signer for one recipe, plus one for another recipe."""
    for day in range(1, count + 1):
        evidence_tree.sign(attested_at=f"2026-09-{day:02d}T12:00:00Z")
    evidence_tree.sign("b200")
    paths = evidence_tree.add(*evidence_tree.bundles)
    evidence_tree.write()
    return paths


def _with_faulty_source(monkeypatch: pytest.MonkeyPatch, digest: str, error: BaseException) -> None:
    real_with_source = engine_module._with_source  # what adds the bundle source to an engine

    def engine(*args: Any, **kwargs: Any) -> Engine:
        real = real_with_source(*args, **kwargs)
        return Engine(real.trust, FaultySource(real.source, digest, error), real.verdicts)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module, "_with_source", engine)


ERRORS: list[Callable[[], BaseException]] = [
    lambda: RuntimeError("the source lost its footing"),
    lambda: RecursionError("maximum recursion depth exceeded"),
    lambda: MemoryError("no room for this bundle"),
]


@pytest.mark.parametrize("jobs", [1, 2], ids=["in-process", "two-workers"])
@pytest.mark.parametrize("make_error", ERRORS, ids=["runtime", "recursion", "memory"])
def test_a_fetch_fault_is_one_pointers_internal_record(
    evidence_tree: EvidenceTree,
    monkeypatch: pytest.MonkeyPatch,
    jobs: int,
    make_error: Callable[[], BaseException],
) -> None:
    """The bundle source raises for one pointer (inside a worker chunk of several when
    `jobs` is 2): that pointer is exit 3, class `internal`, naming the exception; every other
    pointer is verified and the build succeeds."""
    paths = _tree(evidence_tree, 16)  # 17 misses over 2 workers: chunks of 2
    victim = paths[5]
    error = make_error()
    _with_faulty_source(monkeypatch, str(evidence_tree.bundles[5].digest), error)
    monkeypatch.setattr(pool, "_MIN_PER_WORKER", 1)

    options = evidence_tree.options(jobs=jobs, data_only=True)
    summary = run_build(options)  # raises on a build failure

    pointers = {
        p["path"]: p
        for p in json.loads((options.output.out / "data" / "pointers.json").read_bytes())[
            "pointers"
        ]
    }
    failed = pointers[victim]["verify"]
    assert failed["exit"] == 3
    cause = failed["failureCause"]
    assert cause["class"] == "internal"
    assert f"{type(error).__name__}: {error}" in cause["detail"]
    assert "report" in cause["hint"]
    others = [p["verify"]["exit"] for path, p in pointers.items() if path != victim]
    assert others == [0] * (len(paths) - 1)
    assert (summary.verified, summary.no_verdict) == (len(paths) - 1, 1)


@pytest.mark.parametrize("jobs", [1, 2], ids=["in-process", "two-workers"])
def test_an_assessment_fault_is_one_pointers_internal_record(
    evidence_tree: EvidenceTree, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """Assessing one verified pointer raises (its freshness provider fails): that pointer
    is exit 3 `internal`; the others are verified and counted."""
    paths = _tree(evidence_tree, 16)
    victim = paths[-1]  # the only b200 pointer
    faulty = FaultyProvider("b200-eks-ubuntu-training", RecursionError("too deep"))
    monkeypatch.setattr(assess, "freshness_providers", lambda *a, **k: [faulty])
    monkeypatch.setattr(pool, "_MIN_PER_WORKER", 1)

    options = evidence_tree.options(jobs=jobs, data_only=True)
    summary = run_build(options)

    pointers = {
        p["path"]: p
        for p in json.loads((options.output.out / "data" / "pointers.json").read_bytes())[
            "pointers"
        ]
    }
    cause = pointers[victim]["verify"]["failureCause"]
    assert pointers[victim]["verify"]["exit"] == 3
    assert cause["class"] == "internal"
    assert "assessment" in cause["detail"] and "RecursionError: too deep" in cause["detail"]
    assert [p["verify"]["exit"] for path, p in pointers.items() if path != victim] == [0] * (
        len(paths) - 1
    )
    assert summary.verified == len(paths) - 1


def test_a_lost_worker_chunk_marks_only_its_pointers(
    evidence_tree: EvidenceTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk that cannot come back from its worker at all (here: its result cannot be sent
    back) makes its own pointers `internal`, not the build fail."""
    paths = _tree(evidence_tree, 16)
    victim = paths[3]
    real_chunk = pool._worker_chunk

    def chunk(items: Any) -> Any:
        results, memo, failed = real_chunk(items)
        if any(item.location.path == victim for item, _key in items):
            # cannot be pickled
            return results + [(victim, lambda: None, None, None)], memo, failed
        return results, memo, failed

    # sent to the workers by name, as the real one is
    chunk.__module__, chunk.__qualname__ = pool.__name__, "_worker_chunk"
    monkeypatch.setattr(pool, "_worker_chunk", chunk)
    monkeypatch.setattr(pool, "_MIN_PER_WORKER", 1)
    options = evidence_tree.options(jobs=2, data_only=True)
    run_build(options)

    pointers = {
        p["path"]: p
        for p in json.loads((options.output.out / "data" / "pointers.json").read_bytes())[
            "pointers"
        ]
    }
    internal = sorted(
        path
        for path, p in pointers.items()
        if (p["verify"]["failureCause"] or {}).get("class") == "internal"
    )
    assert victim in internal and len(internal) <= 2  # the chunk holds two pointers
    assert all(p["verify"]["exit"] == 0 for path, p in pointers.items() if path not in internal)


def test_a_bundle_refs_fault_is_one_entrys_internal_record(
    evidence_tree: EvidenceTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `--bundle-refs` entry whose fetch raises is that entry's `internal` record; the next
    entry and the pointers are verified."""
    import re

    from tests.evaluation.conftest import ALICE

    paths = _tree(evidence_tree, 2)
    first = evidence_tree.sign("gb200", attested_at="2026-09-03T12:00:00Z")
    second = evidence_tree.sign("gb200", attested_at="2026-09-04T12:00:00Z")
    evidence_tree.write()
    refs = evidence_tree.root / "refs.json"
    refs.write_text(
        json.dumps(
            [
                {
                    "ref": b.pinned_ref,
                    "issuer": ALICE.issuer,
                    "identityPattern": "^" + re.escape(ALICE.identity) + "$",
                }
                for b in (first, second)
            ]
        ),
        encoding="utf-8",
    )
    _with_faulty_source(monkeypatch, str(first.digest), RuntimeError("refs source broke"))

    options = evidence_tree.options(data_only=True, bundle_refs=refs)
    run_build(options)

    pointers = {
        p["path"]: p
        for p in json.loads((options.output.out / "data" / "pointers.json").read_bytes())[
            "pointers"
        ]
    }
    broken = pointers[f"bundle-refs/0-{first.digest.replace(':', '-')}"]["verify"]
    assert broken["exit"] == 3 and broken["failureCause"]["class"] == "internal"
    assert "RuntimeError: refs source broke" in broken["failureCause"]["detail"]
    assert pointers[f"bundle-refs/1-{second.digest.replace(':', '-')}"]["verify"]["exit"] == 0
    assert [pointers[p]["verify"]["exit"] for p in paths] == [0] * len(paths)
