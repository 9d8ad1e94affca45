"""Tests listed per pointer in pointers.json are bounded, non-passing first, and counted."""

from __future__ import annotations

from generator.data import evidence_document
from generator.limits import LIMITS
from generator.model import Phase


def test_pointer_lists_at_most_the_limit_with_failures_first(f: type) -> None:
    count = LIMITS.tests_per_pointer + 40
    tests = [(f"check-{i:05d}", "passed") for i in range(count)]
    tests[-1] = (tests[-1][0], "failed")
    tests[-2] = (tests[-2][0], "skipped")
    ev = f.make_evidence(ctrf_reports={Phase.CONFORMANCE: f.ctrf(Phase.CONFORMANCE, *tests)})
    doc = evidence_document(ev)
    assert len(doc["tests"]) == LIMITS.tests_per_pointer
    assert doc["truncated"] == {"tests": 40}
    names = [t["name"] for t in doc["tests"]]
    assert tests[-1][0] in names and tests[-2][0] in names
    assert names == sorted(names)  # report order kept


def test_small_report_is_listed_whole_without_a_count(f: type) -> None:
    ev = f.make_evidence(
        ctrf_reports={Phase.CONFORMANCE: f.ctrf(Phase.CONFORMANCE, ("a", "passed"))}
    )
    doc = evidence_document(ev)
    assert [t["name"] for t in doc["tests"]] == ["a"] and "truncated" not in doc
