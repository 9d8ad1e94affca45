"""Why a test failed, in a few bounded lines: its CTRF `message` and the head of its `trace`
(else of its `stdout`), for the page cell of a failed or errored test.

Pure and cheap (slices of strings the parser already holds): it runs once per failed test.
"""

from __future__ import annotations

from generator.limits import LIMITS
from generator.model import CtrfTest, TestResult

__all__ = ["failure_reason"]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_reason(test: CtrfTest) -> dict[str, object] | None:
    """`{"message": str | None, "excerpt": [str, ...]}` for a failed test, else None.

    The excerpt is the first `LIMITS.failure_lines` lines of the trace (the stdout when there is
    no trace), each at most `LIMITS.failure_line_chars` characters; the message at most
    `LIMITS.failure_message_chars`."""
    if test.result is not TestResult.FAIL:
        return None
    message = test.message.strip() if test.message else ""
    source: list[str] = []
    if test.trace and test.trace.strip():
        source = test.trace.strip("\n").splitlines()[: LIMITS.failure_lines]
    elif test.stdout:
        source = list(test.stdout[: LIMITS.failure_lines])
    return {
        "message": _clip(message, LIMITS.failure_message_chars) if message else None,
        "excerpt": [_clip(line, LIMITS.failure_line_chars) for line in source],
    }
