"""Freshness at its edges: digests that differ only in their last hex digit, providers that
decline (the next one must be asked), and the digest map's 64-hex rule at 63, 64 and 65."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.freshness import (
    DigestsFileProvider,
    FreshnessResult,
    StaleExplainer,
    compare,
    listed_overlay,
)
from generator.freshness.explain import canonical_diff
from generator.model import Canonicalizer, Freshness, PredicateType

SIGNED = "0123456789abcdef" * 4


@dataclass
class _Provider:
    """A fake provider answering `answer` (None: "I cannot tell") and recording each question."""

    name: str
    answer: str | None
    asked: list[tuple[str, str | None, Canonicalizer]] = field(default_factory=list)

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer) -> str | None:
        self.asked.append((recipe, profile, canonicalizer))
        return self.answer


@pytest.mark.parametrize("position", [0, 11, 12, 31, 62, 63])
def test_digests_differing_in_one_hex_digit_are_stale(position: int) -> None:
    """A shared prefix of any length, even 63 digits, is not the same recipe."""
    flipped = "f" if SIGNED[position] != "f" else "e"
    current = SIGNED[:position] + flipped + SIGNED[position + 1 :]
    result = compare(SIGNED, PredicateType.V3, "r", None, [_Provider("p", current)])
    assert result == FreshnessResult(Freshness.STALE, SIGNED, current, "p")


def test_an_equal_digest_is_fresh() -> None:
    result = compare(SIGNED, PredicateType.V3, "r", None, [_Provider("p", str(SIGNED))])
    assert result == FreshnessResult(Freshness.FRESH, SIGNED, SIGNED, "p")


def test_a_digest_that_differs_only_by_letter_case_is_not_fresh() -> None:
    result = compare(SIGNED, PredicateType.V3, "r", None, [_Provider("p", SIGNED.upper())])
    assert result.state is Freshness.STALE


def test_a_prefix_of_the_signed_digest_is_not_fresh() -> None:
    for current in (SIGNED[:63], SIGNED[:12], SIGNED + "0"):
        result = compare(SIGNED, PredicateType.V3, "r", None, [_Provider("p", current)])
        assert result.state is Freshness.STALE, current


def test_a_declining_provider_passes_the_question_to_the_next() -> None:
    first, second, third = _Provider("a", None), _Provider("b", SIGNED), _Provider("c", "0" * 64)
    result = compare(SIGNED, PredicateType.V1, "rec", "prof", [first, second, third])
    assert result == FreshnessResult(Freshness.FRESH, SIGNED, SIGNED, "b")
    assert first.asked == [("rec", "prof", Canonicalizer.LEGACY)]
    assert second.asked == [("rec", "prof", Canonicalizer.LEGACY)]
    assert third.asked == []  # the first answer wins; later providers are not asked


def test_the_first_answer_wins_even_when_a_later_provider_would_say_fresh() -> None:
    first, second = _Provider("a", "0" * 64), _Provider("b", SIGNED)
    result = compare(SIGNED, PredicateType.V3, "rec", None, [first, second])
    assert (result.state, result.provider, result.current) == (Freshness.STALE, "a", "0" * 64)
    assert second.asked == []


@pytest.mark.parametrize("count", [0, 1, 3])
def test_when_every_provider_declines_the_state_is_unknown(count: int) -> None:
    providers = [_Provider(f"p{i}", None) for i in range(count)]
    result = compare(SIGNED, PredicateType.V3, "rec", None, providers)
    assert result == FreshnessResult(Freshness.UNKNOWN, SIGNED, None, None)
    assert all(len(p.asked) == 1 for p in providers)


def test_an_empty_signed_digest_is_never_fresh() -> None:
    assert compare("", PredicateType.V3, "r", None, []) == FreshnessResult(
        Freshness.UNKNOWN, None, None, None
    )


@pytest.mark.parametrize("ptype", list(PredicateType))
def test_each_predicate_type_asks_for_its_own_canonicalizer(ptype: PredicateType) -> None:
    provider = _Provider("p", SIGNED)
    compare(SIGNED, ptype, "r", None, [provider])
    assert provider.asked == [("r", None, ptype.canonicalizer)]


def test_describe_names_both_digests_when_stale() -> None:
    stale = FreshnessResult(Freshness.STALE, "a" * 64, "b" * 64, "p")
    assert stale.describe() == f"stale ({'a' * 12}… vs current {'b' * 12}…)"
    assert FreshnessResult(Freshness.FRESH, "a" * 64, "a" * 64, "p").describe() == "fresh"


@pytest.mark.parametrize(
    "value, ok",
    [
        ("a" * 64, True),
        ("a" * 63, False),
        ("a" * 65, False),
        ("A" * 64, False),
        ("g" + "a" * 63, False),
        (" " + "a" * 63, False),
        (64, False),
    ],
)
def test_the_digest_map_takes_only_64_lowercase_hex(
    tmp_path: Path, value: object, ok: bool
) -> None:
    table = tmp_path / "digests.json"
    table.write_text(json.dumps({"r": {"v3": value}}))
    if ok:
        provider = DigestsFileProvider.load(table)
        assert provider.current("r", None, Canonicalizer.V3) == value
        assert provider.current("r", None, Canonicalizer.LEGACY) is None
        assert provider.current("other", None, Canonicalizer.V3) is None
    else:
        with pytest.raises(InputError) as info:
            DigestsFileProvider.load(table)
        assert info.value.location is not None and info.value.location.file == str(table)


def test_the_digest_map_refuses_an_unknown_canonicalizer(tmp_path: Path) -> None:
    table = tmp_path / "digests.json"
    table.write_text(json.dumps({"r": {"v4": "a" * 64}}))
    with pytest.raises(InputError):
        DigestsFileProvider.load(table)


@pytest.mark.parametrize(
    "listed", ["H100-eks.yaml", "h100-eks.YAML", "h100-eks.yaml.bak", "h100-ek.yaml"]
)
def test_an_overlay_is_found_only_under_its_exact_name(tmp_path: Path, listed: str) -> None:
    """A pointer's recipe name must not pick up another recipe's overlay by letter case."""
    (tmp_path / listed).write_text("kind: RecipeResult\n")
    assert listed_overlay(tmp_path, "h100-eks") is None
    (tmp_path / "h100-eks.yaml").write_text("kind: RecipeResult\n")
    assert listed_overlay(tmp_path, "h100-eks") == tmp_path / "h100-eks.yaml"


# ------------------------------------------------------------------ the stale diff's line cap

DIFF_CAP = 200
"""A stale card shows at most this many diff lines, and says when there were more. Written out
here: a test that read `DIFF_LINE_LIMIT` would move with it."""
_SIGNED_RECIPE = b"apiVersion: aicr.run/v1\nkind: RecipeResult\ncomponentRefs:\n    - name: x\n"


def _current_with_diff_of(lines: int) -> bytes:
    """A current overlay whose canonical diff against `_SIGNED_RECIPE` has exactly `lines` lines:
    each added component adds two (`name`, `version`), an odd count one more (`note`)."""
    base = canonical_diff(_SIGNED_RECIPE, _SIGNED_RECIPE + b"    - name: c\n", Canonicalizer.V3)
    pairs, odd = divmod(lines - len(base), 2)
    assert pairs >= 0
    items = b"".join(b"    - name: c%04d\n      version: v1\n" % i for i in range(pairs))
    extra = b"      note: n\n" if odd else b""
    current = _SIGNED_RECIPE + items + b"    - name: c\n" + extra
    full = canonical_diff(_SIGNED_RECIPE, current, Canonicalizer.V3, limit=10 * lines)
    assert len(full) == lines, (len(full), lines)
    return current


@pytest.mark.parametrize(
    ("lines", "shown", "truncated"),
    [
        (DIFF_CAP - 1, DIFF_CAP - 1, False),
        (DIFF_CAP, DIFF_CAP, False),
        (DIFF_CAP + 1, DIFF_CAP, True),
    ],
)
def test_a_stale_diff_of_exactly_the_cap_is_whole_one_line_more_is_cut_and_says_so(
    tmp_path: Path, lines: int, shown: int, truncated: bool
) -> None:
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    (overlays / "r.yaml").write_bytes(_current_with_diff_of(lines))
    why = StaleExplainer(overlays).explain("r", None, _SIGNED_RECIPE, Canonicalizer.V3, None)
    assert (len(why.diff), why.truncated) == (shown, truncated)
