"""Why a test failed travels into pointers.json: the CTRF message and the head of its trace
(else stdout), bounded; passing and skipped tests carry nothing."""

from __future__ import annotations

import json

from generator.ctrf import parse_ctrf
from generator.facts.failure import failure_reason
from generator.limits import LIMITS
from generator.model import Phase


def _report(tests: list[dict[str, object]]) -> bytes:
    return json.dumps({"results": {"tool": {"name": "t"}, "summary": {}, "tests": tests}}).encode()


def test_a_failed_test_keeps_its_message_and_the_head_of_its_trace() -> None:
    trace = "\n".join(f"frame {i} " + "x" * 400 for i in range(50))
    report = parse_ctrf(
        _report(
            [
                {"name": "a", "status": "failed", "message": "m" * 5000, "trace": trace},
                {"name": "b", "status": "failed", "stdout": ["out 1", "out 2"]},
                {"name": "c", "status": "passed", "message": "fine", "trace": "t"},
                {"name": "d", "status": "skipped", "message": "no gpu"},
                {"name": "e", "status": "other"},
            ]
        ),
        Phase("performance"),
        file="ctrf/performance.json",
    )
    by = {t.name: failure_reason(t) for t in report.tests}
    a = by["a"]
    assert a is not None
    assert isinstance(a["message"], str) and len(a["message"]) == LIMITS.failure_message_chars
    excerpt = a["excerpt"]
    assert isinstance(excerpt, list) and len(excerpt) == LIMITS.failure_lines
    assert excerpt[0].startswith("frame 0 ")
    assert all(len(line) <= LIMITS.failure_line_chars for line in excerpt)
    assert by["b"] == {"message": None, "excerpt": ["out 1", "out 2"]}
    assert by["c"] is None and by["d"] is None
    assert by["e"] == {"message": None, "excerpt": []}  # an unknown status fails closed


def test_the_pointer_document_carries_the_failure_of_failed_tests_only(f: type) -> None:
    from generator.data import evidence_document
    from generator.model import CtrfTest, TestResult

    failed = CtrfTest(
        "nccl", "failed", TestResult.FAIL, message="251 < 270", trace="at line 1\nat line 2"
    )
    ev = f.make_evidence(
        ctrf_reports={Phase.PERFORMANCE: f.ctrf(Phase.PERFORMANCE, failed, ("ok", "passed"))}
    )
    tests = {t["name"]: t for t in evidence_document(ev)["tests"]}
    assert tests["nccl"]["failure"] == {
        "message": "251 < 270",
        "excerpt": ["at line 1", "at line 2"],
    }
    assert "failure" not in tests["ok"]
