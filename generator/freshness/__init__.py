"""Digest freshness: is the recipe an attestation signed still the current recipe?

For each verified attestation the signed `predicate.recipe.digest` is compared with the recipe's
current digest, computed with the canonicalizer of the attestation's predicate type (legacy for
v1/v2, v3 for v3). Where the current digest comes from, first that applies:

1. `--digests FILE`: a precomputed map `{<recipe>: {legacy: <hex>, v3: <hex>}}` (provider
   `digests-file`);
2. `aicr evidence digest -r recipes/overlays/<overlay>.yaml [--profile name=value]` with an aicr
   binary, for `RecipeMetadata` overlays that need aicr's recipe builder (provider `aicr`);
3. `recipes/overlays/<recipe>.yaml` when it is a hydrated `RecipeResult` (profile baked in),
   computed natively (provider `native`);
4. otherwise `unknown`, never shown as fresh.

Providers are small objects behind one `DigestProvider` protocol so the pure comparison stays
testable with fakes; only `AicrProvider` runs a subprocess.

One module per concern: `compare` (the comparison), `providers` (where current digests come
from), `memo` (answers remembered across builds), `history` (git), `explain` (why evidence is
stale: the canonical diff and the commits since).
"""

from generator.freshness.compare import (
    HEX64,
    UNKNOWN,
    DigestProvider,
    FreshnessResult,
    compare,
)
from generator.freshness.explain import (
    DIFF_LINE_LIMIT,
    StaleExplainer,
    StaleExplanation,
    canonical_diff,
    overlay_file,
)
from generator.freshness.history import git_commit_known, git_commits_since, git_toplevel
from generator.freshness.memo import MEMO_FORMAT, ContentMemo
from generator.freshness.providers import (
    AicrProvider,
    DigestsFileProvider,
    NativeProvider,
    OverlayListing,
    listed_overlay,
    providers_for,
)

__all__ = [
    "DIFF_LINE_LIMIT",
    "HEX64",
    "MEMO_FORMAT",
    "UNKNOWN",
    "AicrProvider",
    "ContentMemo",
    "DigestProvider",
    "DigestsFileProvider",
    "FreshnessResult",
    "NativeProvider",
    "OverlayListing",
    "StaleExplainer",
    "StaleExplanation",
    "canonical_diff",
    "compare",
    "git_commit_known",
    "git_commits_since",
    "git_toplevel",
    "listed_overlay",
    "overlay_file",
    "providers_for",
]
