"""The signer allowlist (spec 7): strict schema, anti-sybil validation, RE2 classification.

`identityPattern`s are compiled with Google RE2 (`import re2`), the engine family of Go's
`regexp`: no lookarounds or backreferences (such a pattern is rejected here, as Go would fail to
compile it), `$` means end of text, and `\\d` is ASCII only. Matching uses `fullmatch`, and an
identity or issuer with a line break never matches anything.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import re2

from generator.errors import AllowlistError, Location, YamlError
from generator.model import (
    AllowlistEntry,
    Classification,
    SignerClass,
    SignerIdentity,
    SourceSlug,
)
from generator.tree.pointer import schema_version_ok
from generator.tree.safeio import ALLOWLIST_LIMIT, read_bounded
from generator.tree.yamlio import load_yaml

CLASS_KEYS: tuple[tuple[str, SignerClass], ...] = (
    ("firstParty", SignerClass.FIRST_PARTY),
    ("community", SignerClass.COMMUNITY),
    ("partner", SignerClass.PARTNER),
)
"""YAML key -> class, in classification order."""

_TOP_KEYS = frozenset({"schemaVersion"} | {k for k, _ in CLASS_KEYS})
_ENTRY_KEYS = frozenset({"label", "issuer", "source", "identityPattern"})
_SLUG = re.compile(r"[0-9a-f]{32}")
_METACHARS = frozenset(".*+?()[]{}|^$")
_FORGE_HOSTS = ("github.com", "gitlab.com")

UNLISTED = Classification(signer_class=SignerClass.COMMUNITY, allowlisted=False, entry=None)
"""The classification of a signer no entry matches: community, reported only."""


def _re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False
    return options


def _has_line_break(text: str) -> bool:
    return "\n" in text or "\r" in text


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


def _scan_pattern(pattern: str) -> tuple[str, str] | str:
    """Split an anchored pattern into (literal prefix, right part), or return why it is too broad.

    The prefix is the part left of the first unescaped `@`, with escapes removed. Left of `@`
    only literal characters and escaped punctuation (`\\.`) are allowed; an escaped letter or
    digit (`\\d`, `\\w`, `\\Q`) is a class or operator, not a literal, and is refused. Right of
    `@`, alternation at the top level is refused because it would escape the anchors.
    """
    if not pattern.startswith("^"):
        return "it must start with ^"
    body = pattern[1:]
    if not body.endswith("$"):
        return "it must end with $"
    # the final $ must itself be unescaped: count the backslashes before it
    trailing = len(body[:-1]) - len(body[:-1].rstrip("\\"))
    if trailing % 2 == 1:
        return "it must end with an unescaped $"
    body = body[:-1]
    literal: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            if i + 1 >= len(body):
                return "it ends with a lone backslash"
            nxt = body[i + 1]
            if nxt.isalnum():
                return f"\\{nxt} left of '@' is a character class or operator, not a literal"
            literal.append(nxt)
            i += 2
            continue
        if ch == "@":
            rest = body[i + 1 :]
            problem = _top_level_alternation(rest)
            return problem if problem else ("".join(literal), rest)
        if ch in _METACHARS:
            return f"the unescaped metacharacter {ch!r} appears left of '@'"
        literal.append(ch)
        i += 1
    return "it has no unescaped '@' (the OIDC subject shape <path>@<ref>)"


def _top_level_alternation(rest: str) -> str | None:
    """Why `rest` (right of `@`) is too broad, or None: a `|` outside groups escapes `^...$`."""
    depth = 0
    in_class = False
    i = 0
    while i < len(rest):
        ch = rest[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if rest[i + 1 : i + 2] == "^":
                i += 1
            if rest[i + 1 : i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return "a top-level '|' right of '@' would escape the ^...$ anchors"
        i += 1
    return None


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


def parse_allowlist(data: bytes, *, file: str) -> Allowlist:
    """Parse and validate allowlist bytes (spec 7); raise `AllowlistError` naming file and key."""
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

    entries: list[AllowlistEntry] = []
    compiled: dict[int, Any] = {}
    labels: dict[str, str] = {}
    sources: dict[str, str] = {}
    prefixes: dict[tuple[str, str], str] = {}
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
            if label is not None:
                if label in labels:
                    raise _err(
                        "duplicate label",
                        file,
                        f"{where}.label",
                        expected="each label once",
                        found=f"{label!r}, also at {labels[label]}",
                        hint="give each entry its own label",
                    )
                labels[label] = where
            if source is not None:
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
                if source in sources:
                    raise _err(
                        "duplicate source",
                        file,
                        f"{where}.source",
                        expected="each source once across all classes",
                        found=f"{source}, also at {sources[source]}",
                        hint="the classes are disjoint; keep one entry",
                    )
                sources[source] = where
            else:
                assert pattern is not None
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
                if prefix in prefixes:
                    raise _err(
                        "overlapping identityPattern",
                        file,
                        f"{where}.identityPattern",
                        expected="no two patterns with the same issuer and literal prefix",
                        found=f"same prefix {scanned[0]!r} as {prefixes[prefix]}",
                        hint="merge the two entries",
                    )
                prefixes[prefix] = where
                compiled[len(entries)] = regex
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


def load_allowlist(path: Path, *, display: str | None = None) -> Allowlist:
    """Read (bounded, no symlinks) and parse an allowlist file."""
    shown = display if display is not None else path.name
    return parse_allowlist(read_bounded(path, ALLOWLIST_LIMIT, display=shown), file=shown)


# --------------------------------------------------------------------------- display helpers


def _forge_repo(identity: str) -> tuple[str, str] | None:
    """(org, repo) of a github.com / gitlab.com workflow identity URL, else None."""
    if _has_line_break(identity) or not identity.startswith("https://"):
        return None
    parts = urlsplit(identity)
    if (parts.hostname or "").lower() not in _FORGE_HOSTS:
        return None
    segments = [s for s in parts.path.split("@", 1)[0].split("/") if s]
    if len(segments) < 2:
        return None
    return segments[0], segments[1]


def display_label(signer: SignerIdentity, classification: Classification) -> str:
    """A public, non-PII label for a signer.

    First that applies: the allowlist entry's `label`; `<org>/<repo>` of a github.com or
    gitlab.com workflow identity; the handle of a GitHub noreply address
    (`123+handle@users.noreply.github.com` -> `handle`); the local part of any other email; the
    host of any other URL identity; else the signer's 32-hex source slug. The raw email is never
    returned.
    """
    entry = classification.entry
    if entry is not None and entry.label:
        return entry.label
    identity = signer.identity
    repo = _forge_repo(identity)
    if repo is not None:
        return f"{repo[0]}/{repo[1]}"
    if "@" in identity and "://" not in identity and not _has_line_break(identity):
        local, _, domain = identity.rpartition("@")
        if domain.lower() == "users.noreply.github.com" and "+" in local:
            local = local.split("+", 1)[1]
        if local:
            return local
    if "://" in identity and not _has_line_break(identity):
        host = urlsplit(identity).hostname
        if host:
            return host
    try:
        return str(signer.slug)
    except ValueError:
        return "unknown signer"


def organisation_of(signer: SignerIdentity, classification: Classification) -> str:
    """What counts as one organisation for the distinct-organisations check.

    - a github.com / gitlab.com workflow identity: its org (first path segment), lowercased,
      because forge org names are case-insensitive (GitHub and GitLab orgs of the same name count
      as one: merging can only make corroboration harder, never easier);
    - any other allowlisted identity: its allowlist entry (the label, else the source slug, else
      the pattern), so one reviewed entry is one organisation;
    - anything else: the identity itself.
    """
    repo = _forge_repo(signer.identity)
    if repo is not None:
        return repo[0].lower()
    entry = classification.entry
    if classification.allowlisted and entry is not None:
        return entry.label or entry.source or entry.identity_pattern or signer.identity
    return signer.identity
