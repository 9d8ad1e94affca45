"""Read and validate a `--bundle-refs` file: a YAML or JSON list of digest-pinned entries."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import re2

from generator import strictjson
from generator.errors import EvidenceDashError, InputError, Location
from generator.model import (
    OciDigest,
    PointerLocation,
    RecipeName,
    SignerIdentity,
)

SCHEMA_VERSION = "bundle-ref"
"""The `schema_version` of a pointer derived from a bundle ref (it never came from a file)."""


MAX_FILE_BYTES = 1 << 20


MAX_CANDIDATES = 8


_KEYS = frozenset({"ref", "issuer", "identityPattern", "recipe"})


_PINNED = re.compile(
    r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9._:/-]*/[A-Za-z0-9._/-]+)"
    r"@(?P<digest>sha256:[0-9a-f]{64})$"
)


_EXAMPLE = (
    "- ref: ghcr.io/nvidia/aicr-evidence@sha256:<64 hex>\n"
    "  issuer: https://token.actions.githubusercontent.com\n"
    "  identityPattern: '^https://github\\.com/NVIDIA/aicr/...$'"
)


NO_MATCH_HINT = (
    "check the --bundle-refs entry's identityPattern and issuer against the workflow "
    "that signed the bundle (the pattern must match the whole certificate SAN)"
)


@dataclass(frozen=True)
class BundleRefEntry:
    """One validated bundle-refs entry. `index` is its position in the file (0-based)."""

    index: int
    ref: str
    digest: OciDigest
    issuer: str
    identity_pattern: str
    recipe: RecipeName | None = None

    @property
    def path(self) -> str:
        """The synthetic record path: `bundle-refs/<index>-sha256-<hex>`."""
        return f"bundle-refs/{self.index}-{self.digest.replace(':', '-')}"

    @property
    def location(self) -> PointerLocation:
        return PointerLocation(path=self.path, folder_recipe=None, folder_source=None)

    def matches(self, signer: SignerIdentity) -> bool:
        """The entry's policy: issuer exactly equal, SAN fully matched by the RE2 pattern."""
        return (
            signer.issuer == self.issuer
            and _compiled(self.identity_pattern).fullmatch(signer.identity) is not None
        )


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


def _bad(
    file: str, index: int | None, key: str | None, message: str, *, expected: str, found: str
) -> InputError:
    where = "" if index is None else f"[{index}]" + (f".{key}" if key else "")
    return InputError(
        f"bundle-refs entry {where or '(file)'}: {message}"
        if index is not None
        else f"bundle-refs file: {message}",
        location=Location(file, where or None),
        expected=expected,
        found=found,
        hint="fix the entry in the --bundle-refs file; an entry looks like:\n" + _EXAMPLE,
    )


def _text(entry: Mapping[str, Any], key: str, file: str, index: int) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _bad(
            file,
            index,
            key,
            f"{key} must be a non-empty string",
            expected="a string",
            found=repr(value)[:80],
        )
    if any(c in value for c in "\n\r\x00"):
        raise _bad(
            file,
            index,
            key,
            f"{key} contains a line break",
            expected="one line",
            found=repr(value)[:80],
        )
    return value


def parse_bundle_refs(data: bytes, *, file: str) -> tuple[BundleRefEntry, ...]:
    """Validate a bundle-refs document (a YAML or JSON list). Raises `InputError`."""
    return tuple(_entry(raw, index, file) for index, raw in enumerate(_document(data, file)))


def _document(data: bytes, file: str) -> list[Any]:
    """The document as a list: JSON when it starts with `[`, else YAML (the safe loader)."""
    from generator.tree.yamlio import load_yaml  # lazy: the YAML parsers load only when read

    try:
        doc = (
            strictjson.loads(data) if data.lstrip().startswith(b"[") else load_yaml(data, file=file)
        )
    except (ValueError, UnicodeDecodeError) as exc:
        over = isinstance(exc, strictjson.JsonLimitError)
        raise _bad(
            file,
            None,
            None,
            strictjson.problem(exc) if over else "not valid JSON",
            expected="a JSON or YAML list",
            found=type(exc).__name__,
        ) from exc
    except EvidenceDashError as exc:
        raise _bad(
            file,
            None,
            None,
            f"not valid YAML: {exc.message}",
            expected="a JSON or YAML list",
            found="unparseable YAML",
        ) from exc
    if not isinstance(doc, list):
        raise _bad(
            file,
            None,
            None,
            "the document must be a list of entries",
            expected="a list",
            found=type(doc).__name__,
        )
    return doc


def _entry(raw: Any, index: int, file: str) -> BundleRefEntry:
    """One entry: known keys only, a digest-pinned ref, an issuer and an RE2 identity pattern."""
    if not isinstance(raw, dict):
        raise _bad(
            file,
            index,
            None,
            "an entry must be a mapping",
            expected="a mapping",
            found=type(raw).__name__,
        )
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise _bad(
            file,
            index,
            unknown[0],
            f"unknown key {unknown[0]!r}",
            expected="ref, issuer, identityPattern, recipe",
            found=", ".join(unknown),
        )
    ref = _text(raw, "ref", file, index)
    pinned = _PINNED.match(ref)
    if pinned is None:
        raise _bad(
            file,
            index,
            "ref",
            "ref must be pinned by digest",
            expected="<registry>/<repo>@sha256:<64 lowercase hex>",
            found=ref[:200],
        )
    issuer = _text(raw, "issuer", file, index)
    pattern = _text(raw, "identityPattern", file, index)
    try:
        _compiled(pattern)
    except re2.error as exc:
        raise _bad(
            file,
            index,
            "identityPattern",
            "identityPattern is not a valid RE2 expression",
            expected="an RE2 (Go regexp) pattern",
            found=f"{pattern[:120]} ({exc})",
        ) from exc
    recipe = raw.get("recipe")
    if recipe is not None:
        recipe = _text(raw, "recipe", file, index)
    return BundleRefEntry(
        index=index,
        ref=ref,
        digest=OciDigest(pinned.group("digest")),
        issuer=issuer,
        identity_pattern=pattern,
        recipe=RecipeName(recipe) if recipe else None,
    )


def load_bundle_refs(path: Path) -> tuple[BundleRefEntry, ...]:
    """Read and validate a `--bundle-refs` file (at most 1 MiB). Raises `InputError`."""
    display = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InputError(
            "cannot read the bundle-refs file",
            location=Location(display),
            expected="a readable YAML or JSON file",
            found=type(exc).__name__,
            hint="check the --bundle-refs path",
        ) from exc
    if len(data) > MAX_FILE_BYTES:
        raise InputError(
            "the bundle-refs file is too large",
            location=Location(display),
            expected=f"at most {MAX_FILE_BYTES} bytes",
            found="more",
            hint="list fewer bundles per file",
        )
    return parse_bundle_refs(data, file=display)
