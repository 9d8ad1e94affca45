"""Every limit the build puts on hostile input, in one place.

Two kinds, one frozen dataclass each:

- `ParseLimits` (`PARSE_LIMITS`): every JSON and YAML document a contributor or a registry hands
  the build. The one JSON reader (`generator.strictjson.loads`) and the one YAML reader
  (`generator.tree.yamlio.load_yaml`) enforce them before or while they build Python data, so a
  hostile document (nested 10,000 deep, a billion-laughs alias bomb, a million-item list) is
  that item's rejection with a reason, never a `RecursionError` or a build that runs out of
  memory. Byte caps on what is *fetched* (layers, manifests, Sigstore bundles) are
  `generator.bundle.types.Limits`. README: "Limits on contributor input".
- `OutputLimits` (`LIMITS`): counts and output size, what one report, recipe, signer and run may
  add. Signed input is small and cheap to make: a compact CTRF report of 10,000 tests is a few
  hundred KB, and a throw-away identity costs nothing. These limits bound what is *shown and
  written*; they never change what is *counted*: consensus, rollups and tallies are always
  computed over every row of every selected run, so a failing check that is not shown still
  makes the recipe fail. Whatever is left out is counted (`omitted` in `index.json` and the
  series files, `truncated` and `omitted` in `pointers.json`) and said in words on the page.
  README: "Limits on output".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["LIMITS", "LISTING_LIMITS", "PARSE_LIMITS", "OutputLimits", "ParseLimits"]

MiB = 1024 * 1024
MIB = MiB


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

LISTING_LIMITS = replace(
    PARSE_LIMITS, document_bytes=64 * MiB, container_items=2_000_000, total_items=20_000_000
)
"""The limits for the top-level `index.json` of an OCI layout (or of the bundle cache, which is
one): it lists every bundle and referrer, about two entries of ~330 bytes per bundle, so its size
grows with the tree (64 MiB is its byte cap, `INDEX_FILE_CAP`). Depth and string length stay."""


@dataclass(frozen=True)
class OutputLimits:
    """Every count and size limit in one place (the defaults are `LIMITS`)."""

    tests_per_report: int = 10_000
    """Tests one CTRF report may list; a larger report fails the bundle's CTRF check."""
    unlisted_signers: int = 20
    """Unlisted (not allowlisted) signers per recipe in grids and history, the lowest source
    ids first; the others get no column and no history, and rows only they report no row,
    though those rows still count as UNTESTED in the rollups (as without the limit: an
    unlisted signer never changes a row's state). Allowlisted signers are never left out."""
    versions_per_recipe: int = 10
    """aicr-version grids ("strict view" lenses) per recipe, newest versions first."""
    runs_per_signer: int = 10
    """Runs per signer in a recipe's history (`series`), newest first."""
    rows_per_grid: int = 2_000
    """Rows of one grid in `index.json`: the worst states first (failing, contested, untested,
    single, confirmed), then phase and name order; shown in phase and name order."""
    rows_per_recipe: int = 4_000
    """Rows over all grids of one recipe in `index.json` (the combined grid is filled first,
    then the versions, newest first)."""
    rows_per_series: int = 2_000
    """Rows of one recipe's history file, rows with a failure first."""
    rows_per_page: int = 2_000
    """Grid rows on one recipe page over all its lenses (the combined lens is filled first)."""
    tests_per_pointer: int = 250
    """Tests listed per pointer in `pointers.json` (and on its card), non-passing first."""
    cards_per_page: int = 200
    """Evidence cards on one recipe page: allowlisted signers' pointers first."""
    failure_message_chars: int = 600
    """Characters of a failed test's CTRF `message` kept in `pointers.json` (and on its page)."""
    failure_lines: int = 12
    """Lines of a failed test's CTRF `trace` (else `stdout`) kept as its excerpt."""
    failure_line_chars: int = 240
    """Characters per excerpt line."""
    """Evidence cards on one recipe page: allowlisted signers' pointers first."""
    page_bytes: int = 32 * MIB
    """Size of one page past which the build warns."""
    data_file_bytes: int = 128 * MIB
    """Size of one data file past which the build warns."""
    site_bytes: int = 1024 * MIB
    """The whole site's budget (GitHub Pages' limit is 1 GB)."""
    site_warn_share: float = 0.8
    """Share of `site_bytes` at which the build warns."""

    @property
    def site_warn_bytes(self) -> int:
        return int(self.site_bytes * self.site_warn_share)


LIMITS = OutputLimits()
"""The limits every build uses."""
