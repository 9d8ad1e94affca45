"""Allowlist patterns that backtrack exponentially under Python's `re` match in bounded time.

Every `identityPattern` is compiled with RE2, so a pattern the allowlist accepts matches in
linear time; patterns RE2 cannot run (backreferences, lookaround) are refused when the allowlist
is read, never handed to a backtracking engine.
"""

from __future__ import annotations

import time

import pytest

from generator.errors import AllowlistError
from generator.model import SignerIdentity
from generator.tree.allowlist import parse_allowlist

ISSUER = "https://token.actions.githubusercontent.com"
WORKFLOW = "https://github.com/acme/ev/.github/workflows/p.yaml@refs/heads/"
PREFIX = r"^https://github\.com/acme/ev/\.github/workflows/p\.yaml@refs/heads/"
SLOW_FOR_PYTHON = [PREFIX + s for s in (r"(a+)+$", r"(a|a)*$", r"(a*)*b$", r"(.*a){20}$")]


def _allowlist(pattern: str) -> bytes:
    quoted = pattern.replace("'", "''")
    return (
        f"schemaVersion: 1.0.0\nfirstParty: []\ncommunity: []\npartner:\n"
        f"  - label: p\n    issuer: {ISSUER}\n    identityPattern: '{quoted}'\n"
    ).encode()


@pytest.mark.parametrize("pattern", SLOW_FOR_PYTHON)
def test_catastrophic_pattern_matches_in_bounded_time(pattern: str) -> None:
    allowlist = parse_allowlist(_allowlist(pattern), file="allowlist.yaml")
    hostile = SignerIdentity(ISSUER, WORKFLOW + "a" * 100_000 + "!")
    start = time.process_time()  # CPU time: the machine's load does not change it much
    for _ in range(20):
        result = allowlist.classify(hostile)
    cpu = time.process_time() - start
    assert not result.allowlisted
    assert cpu < 2.0, f"{pattern} took {cpu:.2f}s of CPU for 20 matches"
    # the pattern still works for an honest identity
    if "b$" not in pattern and "{20}" not in pattern:
        assert allowlist.classify(SignerIdentity(ISSUER, WORKFLOW + "aaa")).allowlisted


@pytest.mark.parametrize(
    "pattern", [PREFIX + s for s in (r"(a+)\1$", r"(?=a)a$", r"(?!b)a$", r"(?<=a)b$")]
)
def test_patterns_re2_cannot_run_are_refused(pattern: str) -> None:
    with pytest.raises(AllowlistError) as caught:
        parse_allowlist(_allowlist(pattern), file="allowlist.yaml")
    assert "allowlist.yaml" in caught.value.diagnostics()
    assert "RE2" in caught.value.diagnostics()
