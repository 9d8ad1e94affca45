"""The in-process recipe memo: keyed by the exact bytes and predicate type, bounded."""

from __future__ import annotations

from generator.model import PredicateType
from generator.verify.recipememo import RecipeMemo


def test_the_key_is_the_full_digest_of_the_bytes_and_the_predicate_type() -> None:
    a = RecipeMemo.key(b"kind: RecipeResult\n", PredicateType.V3)
    assert a == RecipeMemo.key(b"kind: RecipeResult\n", PredicateType.V3.value)
    assert a != RecipeMemo.key(b"kind: RecipeResult\n ", PredicateType.V3)
    assert a != RecipeMemo.key(b"kind: RecipeResult\n", "https://example.com/legacy/v1")


def test_a_hit_returns_what_was_put_and_a_miss_returns_none() -> None:
    memo = RecipeMemo()
    key = RecipeMemo.key(b"x", PredicateType.V3)
    assert memo.get(key) is None
    memo.put(key, {"a": 1}, "d" * 64, 1)
    assert memo.get(key) == ({"a": 1}, "d" * 64)
    assert memo.get(RecipeMemo.key(b"y", PredicateType.V3)) is None


def test_entries_are_bounded_in_count_least_recently_used_first() -> None:
    memo = RecipeMemo(max_entries=2, max_bytes=1000)
    keys = [RecipeMemo.key(bytes([n]), "t") for n in range(3)]
    memo.put(keys[0], {}, "0", 1)
    memo.put(keys[1], {}, "1", 1)
    assert memo.get(keys[0]) is not None  # now the most recently used
    memo.put(keys[2], {}, "2", 1)
    assert len(memo) == 2
    assert memo.get(keys[1]) is None
    assert memo.get(keys[0]) is not None and memo.get(keys[2]) is not None


def test_entries_are_bounded_in_bytes() -> None:
    memo = RecipeMemo(max_entries=100, max_bytes=10)
    big = RecipeMemo.key(b"big", "t")
    memo.put(big, {}, "x", 11)
    assert memo.get(big) is None  # one over the limit is never kept
    first, second = RecipeMemo.key(b"1", "t"), RecipeMemo.key(b"2", "t")
    memo.put(first, {}, "1", 6)
    memo.put(second, {}, "2", 4)
    assert memo.get(first) is not None and memo.get(second) is not None  # exactly at the limit
    memo.put(RecipeMemo.key(b"3", "t"), {}, "3", 1)
    assert memo.get(first) is None and len(memo) == 2


def test_clear_forgets_everything() -> None:
    memo = RecipeMemo(max_entries=4, max_bytes=4)
    memo.put(RecipeMemo.key(b"1", "t"), {}, "1", 4)
    memo.clear()
    assert len(memo) == 0
    memo.put(RecipeMemo.key(b"2", "t"), {}, "2", 4)
    assert len(memo) == 1
