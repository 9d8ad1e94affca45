"""The signer allowlist (spec 7): strict schema, anti-sybil validation, RE2 classification.

`identityPattern`s are compiled with Google RE2 (`import re2`), the engine family of Go's
`regexp`: no lookarounds or backreferences (such a pattern is rejected here, as Go would fail to
compile it), `$` means end of text, and `\\d` is ASCII only. Matching uses `fullmatch`, and an
identity or issuer with a line break never matches anything.

The pattern narrowness rules live in `_allowlist_patterns`, the public signer names
(`display_label`, `organisation_of`) in `_allowlist_display`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from generator.errors import AllowlistError, Location, YamlError
from generator.model import (
    AllowlistEntry,
    Classification,
    SignerClass,
    SignerIdentity,
    SourceSlug,
)
from generator.tree._allowlist_display import _has_line_break, display_label, organisation_of
from generator.tree._allowlist_patterns import _re2_options, _scan_pattern
from generator.tree.pointer import schema_version_ok
from generator.tree.safeio import ALLOWLIST_LIMIT, read_bounded
from generator.tree.yamlio import load_yaml

__all__ = [
    "CLASS_KEYS",
    "UNLISTED",
    "Allowlist",
    "display_label",
    "load_allowlist",
    "organisation_of",
    "parse_allowlist",
]

CLASS_KEYS: tuple[tuple[str, SignerClass], ...] = (
    ("firstParty", SignerClass.FIRST_PARTY),
    ("community", SignerClass.COMMUNITY),
    ("partner", SignerClass.PARTNER),
)
"""YAML key -> class, in classification order."""

_TOP_KEYS = frozenset({"schemaVersion"} | {k for k, _ in CLASS_KEYS})
_ENTRY_KEYS = frozenset({"label", "issuer", "source", "identityPattern"})
_SLUG = re.compile(r"[0-9a-f]{32}")

UNLISTED = Classification(signer_class=SignerClass.COMMUNITY, allowlisted=False, entry=None)
"""The classification of a signer no entry matches: community, reported only."""


@dataclass(frozen=True)
class Allowlist:
    """A validated allowlist. `digest` is `sha256:<hex>` of the file bytes (for cache keys)."""

    entries: tuple[AllowlistEntry, ...]
    digest: str
    _compiled: Mapping[int, Any] = field(default_factory=dict, repr=False, compare=False)

    def classify(self, signer: SignerIdentity) -> Classification:
        """Classify a (verified) signer: slug match in any class first, then the first pattern
        entry in the order firstParty, community, partner with the exact issuer; else unlisted."""
        if (
            not signer.issuer
            or not signer.identity
            or _has_line_break(signer.issuer)
            or _has_line_break(signer.identity)
        ):
            return UNLISTED
        slug = signer.slug
        for entry in self.entries:
            if entry.source is not None and entry.source == slug:
                return Classification(entry.signer_class, True, entry)
        for index, entry in enumerate(self.entries):
            if entry.identity_pattern is None or entry.issuer != signer.issuer:
                continue
            if self._compiled[index].fullmatch(signer.identity) is not None:
                return Classification(entry.signer_class, True, entry)
        return UNLISTED


def _err(
    message: str, file: str, key: str | None, *, expected: str, found: str, hint: str
) -> AllowlistError:
    return AllowlistError(
        message, location=Location(file, key), expected=expected, found=found, hint=hint
    )


def _opt_str(entry: dict[str, Any], key: str, file: str, where: str) -> str | None:
    value = entry.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _err(
            f"{key} is not a string",
            file,
            f"{where}.{key}",
            expected="a string",
            found=repr(value),
            hint="quote the value",
        )
    return value


@dataclass
class _Seen:
    """What the entries so far have claimed, for the anti-sybil checks (private to parsing)."""

    labels: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    prefixes: dict[tuple[str, str], str] = field(default_factory=dict)


def parse_allowlist(data: bytes, *, file: str) -> Allowlist:
    """Parse and validate allowlist bytes (spec 7); raise `AllowlistError` naming file and key."""
    doc = _document(data, file)
    entries: list[AllowlistEntry] = []
    compiled: dict[int, Any] = {}
    seen = _Seen()
    for class_key, signer_class in CLASS_KEYS:
        items = doc.get(class_key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise _err(
                f"{class_key} is not a list",
                file,
                class_key,
                expected="a list of entries",
                found=type(items).__name__,
                hint="use [] for an empty class",
            )
        for position, item in enumerate(items):
            where = f"{class_key}[{position}]"
            label, issuer, source, pattern = _entry_fields(item, file, where)
            if label is not None:
                _claim_label(seen, label, file, where)
            if source is not None:
                _claim_source(seen, source, file, where)
            else:
                assert pattern is not None
                compiled[len(entries)] = _claim_pattern(seen, issuer, pattern, file, where)
            entries.append(
                AllowlistEntry(
                    signer_class=signer_class,
                    issuer=issuer,
                    label=label,
                    source=SourceSlug(source) if source is not None else None,
                    identity_pattern=pattern,
                    position=position,
                )
            )
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return Allowlist(entries=tuple(entries), digest=digest, _compiled=compiled)


def _document(data: bytes, file: str) -> dict[Any, Any]:
    """The allowlist as a mapping with only the known top-level keys and a 1.0.x schema."""
    try:
        doc = load_yaml(data, file=file)
    except YamlError as exc:
        raise AllowlistError(
            exc.message,
            location=exc.location,
            expected=exc.expected,
            found=exc.found,
            hint=exc.hint,
        ) from exc
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise _err(
            "allowlist is not a mapping",
            file,
            None,
            expected="schemaVersion plus firstParty, community and partner lists",
            found=type(doc).__name__,
            hint="start from aicr's recipes/evidence/allowlist.yaml",
        )
    unknown = sorted(str(k) for k in doc if k not in _TOP_KEYS)
    if unknown:
        raise _err(
            "unknown top-level key",
            file,
            unknown[0],
            expected="schemaVersion, firstParty, community, partner",
            found=", ".join(unknown),
            hint="fix the typo; the schema is strict",
        )
    if schema_version_ok(doc.get("schemaVersion")) is None:
        raise _err(
            "unsupported allowlist schemaVersion",
            file,
            "schemaVersion",
            expected="1.0 or 1.0.x",
            found=repr(doc.get("schemaVersion")),
            hint="set schemaVersion: 1.0.0",
        )
    return doc


def _entry_fields(
    item: Any, file: str, where: str
) -> tuple[str | None, str, str | None, str | None]:
    """One entry's (label, issuer, source, identityPattern), by the strict entry schema."""
    if not isinstance(item, dict):
        raise _err(
            "entry is not a mapping",
            file,
            where,
            expected="label?, issuer and source or identityPattern",
            found=repr(item),
            hint="write each entry as a mapping",
        )
    if "identity" in item:
        raise _err(
            "cleartext identity in the allowlist",
            file,
            f"{where}.identity",
            expected="source (the 32-hex slug) or identityPattern",
            found="an identity: key",
            hint="replace it with source: sha256(issuer + '\\n' + identity)[:32]; "
            "cleartext identities are never committed",
        )
    extra = sorted(str(k) for k in item if k not in _ENTRY_KEYS)
    if extra:
        raise _err(
            "unknown entry key",
            file,
            f"{where}.{extra[0]}",
            expected="label, issuer, source, identityPattern",
            found=", ".join(extra),
            hint="fix the typo; the schema is strict",
        )
    label = _opt_str(item, "label", file, where)
    issuer = _opt_str(item, "issuer", file, where)
    source = _opt_str(item, "source", file, where)
    pattern = _opt_str(item, "identityPattern", file, where)
    if issuer is None:
        raise _err(
            "entry has no issuer",
            file,
            f"{where}.issuer",
            expected="the OIDC issuer URL",
            found="nothing",
            hint="add issuer: e.g. https://github.com/login/oauth",
        )
    if _has_line_break(issuer):
        raise _err(
            "issuer contains a line break",
            file,
            f"{where}.issuer",
            expected="a single-line URL",
            found=repr(issuer),
            hint="remove the line break",
        )
    if (source is None) == (pattern is None):
        raise _err(
            "entry needs exactly one of source and identityPattern",
            file,
            where,
            expected="exactly one of source / identityPattern",
            found="both" if source is not None else "neither",
            hint="use source for people, identityPattern for CI workflows",
        )
    return label, issuer, source, pattern


def _claim_label(seen: _Seen, label: str, file: str, where: str) -> None:
    """Each label once."""
    if label in seen.labels:
        raise _err(
            "duplicate label",
            file,
            f"{where}.label",
            expected="each label once",
            found=f"{label!r}, also at {seen.labels[label]}",
            hint="give each entry its own label",
        )
    seen.labels[label] = where


def _claim_source(seen: _Seen, source: str, file: str, where: str) -> None:
    """A 32-hex slug, once across all classes."""
    if not _SLUG.fullmatch(source):
        raise _err(
            "source is not a 32-hex slug",
            file,
            f"{where}.source",
            expected="32 lowercase hex characters",
            found=f"{source!r} ({len(source)} characters)",
            hint="compute sha256(issuer + '\\n' + identity)[:32]; "
            "older 12-character slugs are no longer accepted",
        )
    if source in seen.sources:
        raise _err(
            "duplicate source",
            file,
            f"{where}.source",
            expected="each source once across all classes",
            found=f"{source}, also at {seen.sources[source]}",
            hint="the classes are disjoint; keep one entry",
        )
    seen.sources[source] = where


def _claim_pattern(seen: _Seen, issuer: str, pattern: str, file: str, where: str) -> Any:
    """An anchored, narrow RE2 pattern whose (issuer, literal prefix) no other entry has."""
    scanned = _scan_pattern(pattern)
    if isinstance(scanned, str):
        raise _err(
            "identityPattern is too broad",
            file,
            f"{where}.identityPattern",
            expected="^<literal path>@<ref pattern>$ with wildcards only in the ref",
            found=f"{pattern!r}: {scanned}",
            hint="escape the literal part (\\.) and wildcard only right of @",
        )
    try:
        regex = re2.compile(pattern, _re2_options())
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise _err(
            "identityPattern does not compile as RE2 (Go regexp)",
            file,
            f"{where}.identityPattern",
            expected="an RE2 pattern (no lookarounds, no backreferences)",
            found=f"{pattern!r}: {detail}",
            hint="rewrite the pattern without Perl-only syntax",
        ) from None
    prefix = (issuer, scanned[0])
    if prefix in seen.prefixes:
        raise _err(
            "overlapping identityPattern",
            file,
            f"{where}.identityPattern",
            expected="no two patterns with the same issuer and literal prefix",
            found=f"same prefix {scanned[0]!r} as {seen.prefixes[prefix]}",
            hint="merge the two entries",
        )
    seen.prefixes[prefix] = where
    return regex


def load_allowlist(path: Path, *, display: str | None = None) -> Allowlist:
    """Read (bounded, no symlinks) and parse an allowlist file."""
    shown = display if display is not None else path.name
    return parse_allowlist(read_bounded(path, ALLOWLIST_LIMIT, display=shown), file=shown)
