"""Limits on every JSON and YAML document a contributor or a registry hands the build.

One frozen dataclass, `ParseLimits`, holds them; `PARSE_LIMITS` is what the build uses. The one
JSON reader (`generator.strictjson.loads`) and the one YAML reader
(`generator.tree.yamlio.load_yaml`) enforce them before or while they build Python data, so a
hostile document (nested 10,000 deep, a billion-laughs alias bomb, a million-item list) is that
item's rejection with a reason, never a `RecursionError` or a build that runs out of memory.
The README's "Limits on contributor input" table lists the same values.

Byte caps on what is *fetched* (layers, manifests, Sigstore bundles) are
`generator.bundle.types.Limits`; these apply to any document once its bytes are in hand.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["LISTING_LIMITS", "PARSE_LIMITS", "ParseLimits"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class ParseLimits:
    """Bounds on one parsed document. Each value is the largest accepted (the limit itself
    passes, one more is refused)."""

    document_bytes: int = 16 * MiB
    """Size of one document as read (its bytes). The largest legal input is a 10 MiB CTRF
    report or Sigstore bundle, or a 16 MiB `--digests` file."""
    depth: int = 64
    """Nesting of arrays/objects (JSON) or sequences/mappings (YAML); a scalar at the top is
    depth 0, `[1]` is depth 1. aicr documents nest fewer than 10 levels."""
    string_chars: int = 1 * MiB
    """Characters in one string or key (YAML: one scalar). The longest legal strings are the
    base64 DSSE payloads inside Sigstore bundles (tens of KiB)."""
    container_items: int = 100_000
    """Items in one array or members of one object (YAML: entries of one sequence or mapping)."""
    total_items: int = 1_000_000
    """Values in the whole document, containers included (YAML: nodes after every alias is
    expanded, which is what bounds a billion-laughs bomb)."""
    yaml_aliases: int = 10_000
    """Alias uses (`*name`) in one YAML document."""


PARSE_LIMITS = ParseLimits()
"""The limits every contributor or registry document is read under."""

LISTING_LIMITS = replace(PARSE_LIMITS, document_bytes=64 * MiB, container_items=2_000_000,
                         total_items=20_000_000)
"""The limits for the top-level `index.json` of an OCI layout (or of the bundle cache, which is
one): it lists every bundle and referrer, about two entries of ~330 bytes per bundle, so its size
grows with the tree (64 MiB is its byte cap, `INDEX_FILE_CAP`). Depth and string length stay."""
