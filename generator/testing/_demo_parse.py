"""Small checked readers the scenario parser is built from; each problem is an `InputError`
naming the file and the key."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from generator.errors import InputError, Location
from generator.testing._demo_decls import _STATUSES, Bandwidth, Measured, Outcome


def _fail(file: str, key: str, message: str, *, expected: str, found: Any, hint: str) -> InputError:
    return InputError(
        message, location=Location(file, key), expected=expected, found=repr(found)[:120], hint=hint
    )


def _map(value: Any, file: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(
            file,
            key,
            "not a mapping",
            expected="a mapping",
            found=value,
            hint="write it as `key: value` pairs",
        )
    return {str(k): v for k, v in value.items()}


def _str(value: Any, file: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(
            file,
            key,
            "not a non-empty string",
            expected="a string",
            found=value,
            hint="quote the value",
        )
    return value


def _time(value: Any, file: str, key: str) -> datetime:
    text = _str(value, file, key)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None or not text.endswith("Z"):
        raise _fail(
            file,
            key,
            "not an RFC 3339 UTC time",
            expected="YYYY-MM-DDTHH:MM:SSZ",
            found=value,
            hint='quote it, e.g. "2026-10-02T09:14:05Z"',
        )
    return moment.astimezone(UTC)


def _components(value: Any, file: str, key: str) -> tuple[tuple[str, str], ...]:
    items = _map(value, file, key)
    return tuple((name, _str(v, file, f"{key}.{name}")) for name, v in items.items())


def _outcome(value: Any, file: str, key: str) -> Outcome:
    """`pass`, `fail[: message]`, `other[: message]`, `skip[: reason]`, or a mapping
    `{result: fail, message: ..., trace: ...}` for a failure with a CTRF trace."""
    if isinstance(value, dict):
        doc = _map(value, file, key)
        unknown = sorted(set(doc) - {"result", "message", "trace"})
        if unknown:
            raise _fail(
                file,
                f"{key}.{unknown[0]}",
                "unknown key of a check result",
                expected="result, message, trace",
                found=unknown[0],
                hint="give the result, and a message and trace for a failure",
            )
        result = _outcome(doc.get("result"), file, f"{key}.result")
        message = doc.get("message")
        trace = doc.get("trace")
        return Outcome(
            result.status,
            result.reason if message is None else _str(message, file, f"{key}.message"),
            None if trace is None else _str(trace, file, f"{key}.trace"),
        )
    text = _str(value, file, key)
    if text in _STATUSES:
        return Outcome(_STATUSES[text])
    word, sep, rest = text.partition(":")
    if sep and word in ("fail", "other"):
        return Outcome(_STATUSES[word], rest.strip() or None)
    if text == "skip" or text.startswith("skip:"):
        reason = text.partition(":")[2].strip()
        return Outcome("skipped", reason or None)
    raise _fail(
        file,
        key,
        "unknown check result",
        expected="pass, fail[: message], other[: message], skip[: reason]",
        found=value,
        hint="use one of the four results",
    )


def _bandwidth(value: Any, file: str, key: str) -> dict[str, Bandwidth]:
    out: dict[str, Bandwidth] = {}
    for check, raw in _map(value, file, key).items():
        where = f"{key}.{check}"
        if isinstance(raw, bool):
            raise _fail(
                file,
                where,
                "not a bandwidth",
                expected="GB/s or a result",
                found=raw,
                hint="give a number or pass/fail/skip",
            )
        out[check] = (
            Measured(float(raw)) if isinstance(raw, int | float) else _outcome(raw, file, where)
        )
    return out
