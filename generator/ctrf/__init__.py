"""Parse CTRF reports (`ctrf/<phase>.json`) into the model, with aicr's status buckets.

Status mapping (aicr `BucketStatus`): passed -> pass; failed, other and any unknown status ->
fail (fail closed); skipped and pending -> not-run. A test missing from a signer's run is not-run
too, which the corroboration seam applies. Duplicate test names: the last entry wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator import strictjson
from generator.errors import InputError, Location
from generator.limits import LIMITS
from generator.model import CtrfReport, CtrfTest, Phase, TestResult

__all__ = ["MAX_TESTS", "bucket_status", "parse_ctrf"]

_BUCKETS: Mapping[str, TestResult] = {
    "passed": TestResult.PASS,
    "failed": TestResult.FAIL,
    "other": TestResult.FAIL,
    "skipped": TestResult.NOT_RUN,
    "pending": TestResult.NOT_RUN,
}

MAX_TESTS = LIMITS.tests_per_report
"""Most tests one report may list (`generator.limits`). aicr's suites run dozens; every test becomes a check with a
row on the recipe page and in `index.json`, so a 100,000-test report would take the whole build
down (hundreds of MB, minutes of rendering). Larger reports fail the bundle's CTRF check."""


def bucket_status(status: str) -> TestResult:
    """aicr's `BucketStatus`: unknown statuses fail closed."""
    return _BUCKETS.get(status, TestResult.FAIL)


def parse_ctrf(data: bytes, phase: Phase, *, file: str) -> CtrfReport:
    """Parse one CTRF report. Raises `InputError` naming `file` when it is not CTRF JSON."""
    try:
        doc = strictjson.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(
            f"CTRF report {strictjson.problem(exc)}"
            if isinstance(exc, strictjson.JsonLimitError)
            else "CTRF report is not valid JSON",
            location=Location(file),
            expected="a CTRF JSON document",
            found=str(exc),
            hint="re-run `aicr validate --emit-attestation` to regenerate the bundle",
        ) from exc
    results = doc.get("results") if isinstance(doc, dict) else None
    tests_raw = results.get("tests") if isinstance(results, dict) else None
    if not isinstance(tests_raw, list):
        raise InputError(
            "CTRF report has no results.tests list",
            location=Location(file, "results.tests"),
            expected="a list of test objects",
            found=type(tests_raw).__name__,
            hint="check that the file is a CTRF report",
        )
    if len(tests_raw) > MAX_TESTS:
        raise InputError(
            "CTRF report lists too many tests",
            location=Location(file, "results.tests"),
            expected=f"at most {MAX_TESTS} tests",
            found=str(len(tests_raw)),
            hint="split the run or drop duplicate entries",
        )
    by_name: dict[str, CtrfTest] = {}
    for raw in tests_raw:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
            continue
        by_name.pop(raw["name"], None)  # the last entry wins, at its own position
        by_name[raw["name"]] = _test(raw)
    summary_raw = results.get("summary") if isinstance(results, dict) else None
    summary = (
        {
            k: int(v)
            for k, v in (summary_raw or {}).items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        if isinstance(summary_raw, dict)
        else {}
    )
    tool = results.get("tool") if isinstance(results, dict) else None
    tool_name = tool.get("name") if isinstance(tool, dict) else None
    return CtrfReport(
        phase=phase,
        tests=tuple(by_name.values()),
        summary=summary,
        tool=str(tool_name) if tool_name else None,
    )


def _test(raw: Mapping[str, Any]) -> CtrfTest:
    status = raw.get("status")
    status_text = status if isinstance(status, str) else "unknown"
    stdout = raw.get("stdout")
    lines = tuple(str(s) for s in stdout) if isinstance(stdout, list) else ()
    duration = raw.get("duration")
    extra = raw.get("extra")
    message = raw.get("message")
    return CtrfTest(
        name=str(raw["name"]),
        status=status_text,
        result=bucket_status(status_text),
        duration_ms=float(duration) if isinstance(duration, int | float) else None,
        message=str(message) if isinstance(message, str) else None,
        stdout=lines,
        extra=dict(extra) if isinstance(extra, dict) else {},
    )
