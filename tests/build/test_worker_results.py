"""What verification workers send back: equal verdicts with their parsed strings shared,
pointers.json entries as their text, and assessments equal to the build process's own."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from generator.data.gojson import go_json_bytes, subtree_layout
from generator.data.laidout import LaidOutEntry, head_of
from generator.evaluate.pool import _interned, _laid_out_entry, _shared_strings
from tests.data.test_laid_out import FULL as ENTRY
from tests.data.test_laid_out import _cases

CASES = _cases()


def test_interning_keeps_every_value_and_type() -> None:
    value: Any = {"a": ["x" * 10, ("y", 1, 2.5, None, True)], "b": {"c": "z" * 200}, 3: b"raw"}
    copy = pickle.loads(pickle.dumps(value))
    out = _interned(copy)
    assert out == value
    assert type(out["a"][1]) is tuple and type(out[3]) is bytes


def test_equal_strings_become_one_object() -> None:
    first = _interned(pickle.loads(pickle.dumps({"key": "value", "long": "v" * 100})))
    second = _interned(pickle.loads(pickle.dumps({"key": "value", "long": "v" * 100})))
    (k1,), (k2,) = [k for k in first if k == "key"], [k for k in second if k == "key"]
    assert k1 is k2 and first["key"] is second["key"]
    assert first["long"] == second["long"]  # long strings are left as they are


def test_a_verdict_without_evidence_is_returned_as_is() -> None:
    class NoEvidence:
        evidence = None

    verdict: Any = NoEvidence()
    assert _shared_strings(verdict) is verdict


def test_workers_assess_exactly_as_the_build_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cache misses are verified and assessed (freshness, pointers.json entry, board entry) in
    worker processes; the documents equal those of a one-process evaluation."""
    import generator.evaluate.evaluation as evaluation
    import generator.evaluate.pool as pool
    from generator.build import BuildOptions, evaluate
    from generator.model import RejectedPointer

    recipes = Path(__file__).resolve().parents[2] / "recipes"
    if not (recipes / "evidence").is_dir() or not (recipes / "bundles").is_dir():
        pytest.fail(
            "the demo tree recipes/ (committed in this repo) is absent or incomplete: "
            "restore it with git checkout, or regenerate it with `make demo`"
        )

    def options(name: str, jobs: int) -> BuildOptions:
        return BuildOptions.flat(
            recipes=recipes,
            out=tmp_path / name / "site",
            trust_root=recipes / "trust" / "trusted_root.json",
            oci_layouts=(recipes / "bundles",),
            offline=True,
            cache=tmp_path / name / "cache",
            jobs=jobs,
            quiet=True,
            source_date_epoch=1_790_000_000,
        )

    made: list[int] = []
    real = evaluation.verify_pointers

    def counting(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        made.append(len(out.assessed))
        return out

    monkeypatch.setattr(pool, "_MIN_PER_WORKER", 1)
    monkeypatch.setattr(evaluation, "verify_pointers", counting)
    alone = evaluate(options("one", 1).evaluation)
    spread = evaluate(options("two", 2).evaluation)
    assert made[0] == 0 and made[1] == sum(
        1
        for r in spread.records
        if r.verdict is not None  # duplicates are verified too
        and not isinstance(r.pointer, RejectedPointer)
    ), made
    assert spread.documents == alone.documents
    # the workers sent each entry back as its text (cheaper to send, and kept as it is); the
    # build's own are objects
    sent = spread.documents["pointers"]["pointers"]
    assert sent and all(type(e) is LaidOutEntry for e in sent if e.get("duplicateOf") is None)
    assert all(type(e) is dict for e in alone.documents["pointers"]["pointers"])
    assert [(r.path, r.classification, r.label, r.freshness) for r in spread.records] == [
        (r.path, r.classification, r.label, r.freshness) for r in alone.records
    ]

    def memo_entries(name: str) -> Any:
        memo = tmp_path / name / "cache" / "freshness" / "memo.json"
        # the saved memo is sealed: a tag line, then the JSON (generator.cacheauth)
        return json.loads(memo.read_bytes().split(b"\n", 1)[1])["entries"]

    assert memo_entries("two") == memo_entries("one")


@pytest.mark.parametrize("doc", CASES, ids=lambda d: ",".join(sorted(d))[:40])
def test_a_worker_lays_out_an_entry_as_the_build_would(doc: dict[str, Any]) -> None:
    """A verification worker sends each pointers.json entry back as its text: the entry reads
    as the one it made, and its text is the layout the build would write it from."""
    entry = _laid_out_entry(doc)
    assert type(entry) is LaidOutEntry
    assert entry == doc and entry.layout == subtree_layout(doc)
    assert entry.head() == head_of(doc)
    assert go_json_bytes({"pointers": [entry]}) == go_json_bytes({"pointers": [doc]})


@pytest.mark.parametrize(
    "unwritable", [{"count": 1 << 70}, {"text": "\ud800"}], ids=["beyond-64-bits", "surrogate"]
)
def test_an_entry_orjson_cannot_write_exactly_travels_as_it_is(
    unwritable: dict[str, Any],
) -> None:
    doc = {**ENTRY, "evidence": {**ENTRY["evidence"], **unwritable}}
    assert _laid_out_entry(doc) is doc


@pytest.mark.parametrize("doc", CASES, ids=lambda d: ",".join(sorted(d))[:40])
def test_a_worker_searches_an_entrys_number_steps_so_the_build_does_not(
    doc: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The number steps of a worker's entry are searched in the worker, travel back with its
    text, and are the ones the build stores in the recipe's product: it does not search them
    again (a search here would fail the test)."""
    import generator.evaluate.products as products
    from generator.data.gonumbers import number_steps

    entry = _laid_out_entry(doc)
    assert type(entry) is LaidOutEntry
    assert entry.steps is not None and entry.steps == number_steps(entry.layout)
    back = pickle.loads(pickle.dumps(entry))
    assert back.steps == entry.steps and back == doc

    def no_search(layout: bytes) -> int:
        raise AssertionError("the build searched a worker's entry for its number steps again")

    monkeypatch.setattr(products, "number_steps", no_search)
    layout, head, digest, steps = products._laid_out(back)
    assert (layout, head, steps) == (entry.layout, entry.head(), entry.steps)
    assert go_json_bytes({"pointers": [back]}) == go_json_bytes({"pointers": [doc]})
