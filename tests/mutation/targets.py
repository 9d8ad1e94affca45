"""The trust core under mutation: each module where a bug changes a verdict, and its tests.

Each target names the pytest selection that exercises it, so a mutant runs a few seconds of tests
rather than the suite. `scopes` limits a large module to the functions and classes that decide
(by name, so code motion and reformatting do not move the boundary; a test checks each exists).
Tests marked `slow` (deadline drips that wait out a real deadline) are left out by marker,
never by a word of their name, which would drop fast tests too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Target:
    """One mutated module and the pytest arguments (files, node ids, `-k`) that test it."""

    path: str
    tests: tuple[str, ...]
    scopes: tuple[str, ...] | None = None
    """Top-level (or dotted) function/class names to mutate, `<module>` for module-level code;
    None: the whole module."""
    extra: tuple[str, ...] = ()
    strings: bool = True
    """False where every short string constant is display text (colours, icons), not a rule."""

    def pytest_args(self, root: Path) -> list[str]:
        """The test selection, without files that do not exist (yet) under `root`."""
        present = [t for t in self.tests if (root / t.split("::")[0]).exists()]
        return [*present, *self.extra]


_PIPELINE_TESTS = (
    "tests/verify/test_boundaries.py",
    "tests/verify/test_pipeline_boundaries.py",
    "tests/verify/test_candidates_boundaries.py",
    "tests/verify/test_pipeline.py",
    "tests/verify/test_pipeline_paths.py",
    "tests/verify/test_fast_paths.py",
    "tests/verify/test_identity.py",
)
"""The tests of aicr's five steps (`verify/pipeline.py` and the private step modules)."""
_REGISTRY_TESTS = (
    "tests/bundle/test_boundaries.py",
    "tests/bundle/test_registry_config_boundaries.py",
    "tests/bundle/test_registry_body_boundaries.py",
    "tests/bundle/test_registry_redirect_boundaries.py",
    "tests/bundle/test_registry_auth_boundaries.py",
    "tests/bundle/test_registry_http_boundaries.py",
    "tests/bundle/test_registry.py",
    "tests/bundle/test_registry_hardening.py",
)
"""The tests of the registry client (`bundle/registry.py` and its private layers)."""
_NOT_SLOW = ("-m", "not slow")
"""Leaves out the tests marked `slow` (the trickling-registry drips, each waiting out a real
deadline) and nothing else: a `-k` word would also drop every fast test whose name holds it."""
_ALLOWLIST_TESTS = (
    "tests/tree/test_allowlist_boundaries.py",
    "tests/tree/test_allowlist.py",
    "tests/hostile/test_allowlist_regex.py",
)
"""The tests of the allowlist (`tree/allowlist.py` and its private pattern and display rules)."""
_FRESHNESS_TESTS = (
    "tests/freshness/test_boundaries.py",
    "tests/freshness/test_provider_boundaries.py",
    "tests/freshness/test_freshness.py",
    "tests/freshness/test_memo.py",
)
"""The tests of the freshness comparison, its digest providers and the content memo."""

TARGETS: tuple[Target, ...] = (
    Target(
        "generator/verify/policy.py",
        (
            "tests/verify/test_boundaries.py",
            "tests/verify/test_policy.py",
            "tests/verify/test_identity.py",
        ),
    ),
    Target(
        "generator/verify/trustmemo.py",
        ("tests/verify/test_trustmemo.py",),
    ),
    Target(
        "generator/verify/signature.py",
        (
            "tests/verify/test_signature_boundaries.py",
            "tests/verify/test_boundaries.py",
            "tests/verify/test_sigstore_real.py",
            "tests/verify/test_identity.py",
            "tests/verify/test_windows.py",
        ),
    ),
    Target(
        "generator/verify/pipeline.py",
        _PIPELINE_TESTS,
        scopes=(
            "verify_pointer",
            "_fetch_failure",
            "verify_materialized",
            "_step1",
            "_unsigned_step2",
            "_step5",
        ),
    ),
    Target(
        "generator/verify/_signed.py",
        _PIPELINE_TESTS,
        scopes=(
            "_step2",
            "_verified_rows",
            "_none_verified",
            "_check_statement",
            "predicate_type_problem",
        ),
    ),
    Target(
        "generator/verify/_statement.py",
        _PIPELINE_TESTS,
        scopes=("_step3",),
    ),
    Target(
        "generator/verify/_manifest.py",
        _PIPELINE_TESTS,
        scopes=(
            "_local_path",
            "_step4",
            "_manifest_entries",
            "_inventory",
            "_entry_problem",
            "_phase_digests",
        ),
    ),
    Target(
        "generator/verify/_fields.py",
        _PIPELINE_TESTS,
        scopes=("_sha", "_posix_parts", "_schema_version_ok"),
    ),
    Target(
        "generator/verify/_recipe_match.py",
        _PIPELINE_TESTS,
        scopes=("_recipe_identity", "_digest_problem", "_profile_problem", "_pointer_problem"),
    ),
    Target(
        "generator/tree/allowlist.py",
        _ALLOWLIST_TESTS,
    ),
    Target(
        "generator/tree/_allowlist_patterns.py",
        _ALLOWLIST_TESTS,
    ),
    Target(
        "generator/tree/_allowlist_display.py",
        _ALLOWLIST_TESTS,
    ),
    Target(
        "generator/freshness/compare.py",
        _FRESHNESS_TESTS,
        scopes=("<module>", "FreshnessResult", "compare", "_is_hex64"),
    ),
    Target(
        "generator/freshness/providers.py",
        _FRESHNESS_TESTS,
        scopes=(
            "DigestsFileProvider",
            "listed_overlay",
            "OverlayListing",
            "NativeProvider",
            "AicrProvider",
        ),
    ),
    Target(
        "generator/freshness/memo.py",
        _FRESHNESS_TESTS,
        scopes=("<module>", "ContentMemo", "_code_fingerprint"),
    ),
    Target(
        "generator/freshness/explain.py",
        ("tests/freshness/test_explain_reads.py", "tests/freshness/test_explain.py"),
        scopes=("<module>",),
    ),
    Target(
        "generator/corroborate/states.py",
        (
            "tests/corroborate/test_consensus_boundaries.py",
            "tests/corroborate",
        ),
        strings=False,
    ),
    Target("generator/corroborate/grid.py", ("tests/corroborate",)),
    Target(
        "generator/tree/safeio.py",
        (
            "tests/tree/test_boundaries.py",
            "tests/tree/test_safeio.py",
        ),
    ),
    Target(
        "generator/bundle/registry.py",
        _REGISTRY_TESTS,
        extra=_NOT_SLOW,
    ),
    Target(
        "generator/bundle/_registry_config.py",
        _REGISTRY_TESTS,
        extra=_NOT_SLOW,
    ),
    Target(
        "generator/bundle/_registry_http.py",
        _REGISTRY_TESTS,
        extra=_NOT_SLOW,
    ),
    Target(
        "generator/bundle/_registry_auth.py",
        _REGISTRY_TESTS,
        extra=_NOT_SLOW,
    ),
    Target(
        "generator/bundle/oci.py",
        (
            "tests/bundle/test_boundaries.py",
            "tests/bundle/test_layout.py",
            "tests/bundle/test_registry.py",
        ),
    ),
    Target(
        "generator/site/escape.py",
        (
            "tests/site/test_escape_boundaries.py",
            "tests/site/test_escape.py",
        ),
    ),
)
