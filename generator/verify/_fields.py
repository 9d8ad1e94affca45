"""Small readers of predicate fields shared by the steps: nested get, numbers, times, phases."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from generator.model import Pending, Phase, Verdict, Verified

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    value: Any = data
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _num_eq(value: object, want: int) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value) == float(want)


def _normalize_time(value: object) -> str | None:
    """RFC 3339 to UTC `YYYY-MM-DDTHH:MM:SSZ` (whole seconds), or None when unparsable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)


def _phase_failures(predicate: Mapping[str, Any]) -> bool:
    phases = predicate.get("phases") or {}
    return isinstance(phases, dict) and any(
        isinstance(v, dict) and _count(v.get("failed")) > 0 for v in phases.values()
    )


def _phase_summary(predicate: Mapping[str, Any], phase: Phase) -> str:
    value = _get(predicate, "phases", phase.value) or {}
    return ", ".join(f"{k} {_count(value.get(k))}" for k in ("passed", "failed", "skipped"))


def phase_failures_recorded(verdict: Verdict) -> bool:
    """True when a valid verdict's predicate records a failed test (aicr exit 1)."""
    if isinstance(verdict, Verified | Pending):
        return _phase_failures(verdict.evidence.predicate)
    return False


def _posix_parts(path: str) -> list[str]:
    """`PurePosixPath(path).parts` of a relative path, without building a path object."""
    return [part for part in path.split("/") if part and part != "."]


def _schema_version_ok(value: object) -> bool:
    return isinstance(value, str) and (value == "1.0" or value.startswith("1.0."))
