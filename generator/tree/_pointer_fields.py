"""The field grammar of pointer files: RFC 3339 times, `name=value` profiles, schema versions,
and the `PointerError` builder every pointer rule raises through; also the claimed signer block.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from generator.errors import Location, PointerError
from generator.model import ClaimedSigner, SignerIdentity

_PROFILE_SIDE = re.compile(r"[A-Za-z0-9._-]+")


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})"
)


def _fail(
    rule: str, message: str, file: str, key: str | None, *, expected: str, found: str, hint: str
) -> PointerError:
    return PointerError(
        message, rule=rule, location=Location(file, key), expected=expected, found=found, hint=hint
    )


def _show(value: Any) -> str:
    """A short, one-line rendering of a found value for messages."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def normalise_rfc3339(value: str) -> str | None:
    """`YYYY-MM-DDTHH:MM:SSZ` in UTC for an RFC 3339 timestamp, or None if it is not one.

    Fractional seconds are truncated, as aicr truncates `attestedAt` to whole seconds.
    """
    m = _RFC3339.fullmatch(value)
    if m is None:
        return None
    year, month, day, hour, minute, second = map(int, m.groups()[:6])
    zone = m.group(8)
    if zone in ("Z", "z"):
        if year >= 1000:  # already UTC: checked by datetime, written without converting
            try:
                datetime(year, month, day, hour, minute, second)
            except ValueError:
                return None
            return f"{year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"
        tz: timezone = UTC
    else:
        sign = -1 if zone[0] == "-" else 1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_profile(profile: str) -> tuple[str, str] | None:
    """Split a `name=value` profile per the 2.1 grammar, or None if it breaks the grammar."""
    if profile.count("=") != 1:
        return None
    name, value = profile.split("=")
    if not _PROFILE_SIDE.fullmatch(name) or not _PROFILE_SIDE.fullmatch(value):
        return None
    return name, value


def profile_segment(name: str, value: str) -> str:
    """The recipe-name suffix segment of a profile: `lower(name)-lower(value)`."""
    return f"{name.lower()}-{value.lower()}"


def _string(doc: dict[str, Any], key: str) -> Any:
    """A field as aicr's Go struct sees it: absent or null reads as the empty string."""
    value = doc.get(key)
    return "" if value is None else value


def _schema_version(raw: Any) -> str | None:
    """The schemaVersion as text; an unquoted YAML `1.0` (a float) reads as "1.0", as in Go."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, float) and not isinstance(raw, bool) and raw == 1.0:
        return "1.0"
    return None


def schema_version_ok(raw: Any) -> str | None:
    """The accepted schemaVersion text (`1.0` or `1.0.x`), or None."""
    text = _schema_version(raw)
    if text is None:
        return None
    return text if text == "1.0" or text.startswith("1.0.") else None


def _signer(entry: dict[str, Any], file: str) -> ClaimedSigner | None:
    """The claimed signer block, or None when it is absent or null."""
    raw = entry.get("signer")
    if raw is None:
        return None
    key = "attestations[0].signer"
    if not isinstance(raw, dict):
        raise _fail(
            "signer-fields",
            "signer is not a mapping",
            file,
            key,
            expected="a mapping with identity and issuer",
            found=_show(raw),
            hint="remove signer for an unsigned pointer",
        )
    fields: dict[str, str] = {}
    for name in ("identity", "issuer"):
        value = raw.get(name)
        if not isinstance(value, str) or not value.strip():
            raise _fail(
                "signer-fields",
                f"signer.{name} is missing or empty",
                file,
                f"{key}.{name}",
                expected="a non-empty string",
                found=_show(value),
                hint="copy the certificate's identity and issuer",
            )
        if "\n" in value or "\r" in value:
            raise _fail(
                "signer-fields",
                f"signer.{name} contains a line break",
                file,
                f"{key}.{name}",
                expected="a single-line string",
                found=_show(value),
                hint="identities with line breaks are never accepted",
            )
        fields[name] = value
    index_raw = raw.get("rekorLogIndex")
    index: int | None = None
    if index_raw is not None:
        if isinstance(index_raw, bool) or not isinstance(index_raw, int) or index_raw < 0:
            raise _fail(
                "rekor-log-index",
                "signer.rekorLogIndex is not a non-negative integer",
                file,
                f"{key}.rekorLogIndex",
                expected="an integer >= 0",
                found=_show(index_raw),
                hint="copy the first tlog entry's logIndex",
            )
        # aicr omits a zero index (Go zero value), so 0 and "absent" mean the same.
        index = index_raw or None
    return ClaimedSigner(
        identity=SignerIdentity(issuer=fields["issuer"], identity=fields["identity"]),
        rekor_log_index=index,
    )
