"""The recipe identity seam: canonical recipe digests, recipe names and board coordinates.

`canonical` reproduces aicr's recipe digest (yaml.v3 canonical YAML, legacy and V3); `names` holds
`RecipeNameFor`, profile selections, `CoordinateFor` and its inverse, and the registry order the
board sorts by. `recipe_digest_of` backs `evidence-dashboard recipe-digest` (the file is read by
`generator.recipefile`: this package reads no file).
"""

from __future__ import annotations

from generator.model import PredicateType, Sha256Hex
from generator.recipe.canonical import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DEPTH,
    canonicalize,
    digest_for_predicate_type,
    document_kind,
    recipe_digest,
)
from generator.recipe.names import (
    ACCELERATOR_ORDER,
    AXES,
    INTENT_ORDER,
    OS_ORDER,
    PLATFORM_ORDER,
    SERVICE_ORDER,
    Coordinate,
    CoordinateError,
    ProfileError,
    coordinate_for,
    criteria_from_coordinate,
    parse_profile,
    profile_segment,
    profile_selection_for,
    recipe_name_for,
    sort_key,
)

__all__ = [
    "ACCELERATOR_ORDER",
    "AXES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "INTENT_ORDER",
    "OS_ORDER",
    "PLATFORM_ORDER",
    "SERVICE_ORDER",
    "Coordinate",
    "CoordinateError",
    "ProfileError",
    "canonicalize",
    "coordinate_for",
    "criteria_from_coordinate",
    "digest_for_predicate_type",
    "document_kind",
    "parse_profile",
    "profile_segment",
    "profile_selection_for",
    "recipe_digest",
    "recipe_digest_of",
    "recipe_name_for",
    "sort_key",
]


def recipe_digest_of(
    data: bytes, predicate_type: str | None, *, source: str
) -> tuple[Sha256Hex, str | None]:
    """The canonical digest of a YAML document, plus a warning when it is an unhydrated overlay.

    `predicate_type` picks the canonicalizer (V3 for the v3 URI, legacy for any other string;
    None means v3). An overlay (`kind: RecipeMetadata`) is hashed as written, which is not what
    aicr attests: aicr hydrates it through its recipe builder first. `source` names the
    document in errors and the warning (generator.recipefile reads it from a file).
    """
    digest = digest_for_predicate_type(data, predicate_type or PredicateType.V3, source=source)
    warning = None
    if document_kind(data, source=source) == "RecipeMetadata":
        warning = (
            f"{source} is an overlay (kind: RecipeMetadata); aicr attests the hydrated recipe, "
            f"so this digest will not match predicate.recipe.digest. The current digest needs "
            f"aicr's recipe builder: `aicr evidence digest -r {source}`."
        )
    return digest, warning
