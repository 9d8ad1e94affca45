"""The page cache's document digests (`generator.site.recipepages._digest`): equal documents
give equal digests, different ones different digests, and the documents a build renders from
are plain JSON, which is what lets the digest write them as JSON."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.build import BuildOptions
from generator.evaluate import evaluate
from generator.site.recipepages import _digest

REPO = Path(__file__).resolve().parents[2]
JSON_TYPES = (dict, list, str, int, float, bool, type(None))


def _plain_json(value: Any, where: str = "") -> list[str]:
    """Where `value` holds anything but JSON's own types (exactly: no tuple, no subclass)."""
    kind = type(value)
    if kind not in JSON_TYPES:
        return [f"{where or '/'}: {kind.__name__}"]
    found: list[str] = []
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                found.append(f"{where}/{key!r}: a {type(key).__name__} key")
            found.extend(_plain_json(item, f"{where}/{key}"))
    elif kind is list:
        for n, item in enumerate(value):
            found.extend(_plain_json(item, f"{where}/{n}"))
    return found


def test_the_documents_a_build_renders_from_are_plain_json(tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", recipes)
    options = BuildOptions.flat(
        recipes=recipes,
        out=tmp_path / "out",
        cache=tmp_path / "cache",
        offline=True,
        quiet=True,
        oci_layouts=(recipes / "bundles",),
        trust_root=recipes / "trust" / "trusted_root.json",
        source_date_epoch=1_790_000_000,
    )
    documents = evaluate(options.evaluation).documents
    assert documents["pointers"]["pointers"] and documents["series"]
    assert _plain_json(dict(documents)) == []


@dataclasses.dataclass(frozen=True)
class _Point:
    x: int


class _Text(str):
    pass


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (1, 1.0),
        (1, True),
        (0, None),
        ("a", "b"),
        ({"a": 1}, {"a": 2}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # another order: a miss, never a wrong hit
        ([1, [2]], [1, 2]),
        ({"x": 1}, _Point(1)),  # a dataclass is not the dict it would be written as
        ("a", _Text("a")),  # nor a subclass the string
        (2**64, 2**64 + 1),  # beyond orjson: pickled
        ({1: "a"}, {"1": "a"}),  # a key that is not a string: pickled
    ],
)
def test_different_values_give_different_digests(one: Any, other: Any) -> None:
    assert _digest(one) != _digest(other)


@pytest.mark.parametrize(
    "value",
    [{"a": [1, 2.5, None, True, "é<>&"]}, 2**70, {1: "a"}, _Point(3), _Text("x")],
)
def test_equal_values_give_equal_digests(value: Any) -> None:
    copy = _Point(value.x) if isinstance(value, _Point) else type(value)(value)
    assert _digest(value) == _digest(copy)


def test_the_commit_mark_is_a_secret_of_the_page_cache(tmp_path: Path) -> None:
    """What tries to make the commit mark known or shared: it is the same for one cache key
    (bodies kept across commits), another for another key (a mark learnt from one cache does
    nothing on another), never the commit or a fixed string, and fresh for every build without
    a cache."""
    from generator.cacheauth import CacheAuth
    from generator.site.build import commit_mark
    from generator.site.pagecache import PageCache

    def mark(secret: bytes, name: str) -> str:
        return commit_mark(PageCache(tmp_path / name, CacheAuth(secret)))

    one = mark(b"k" * 32, "a")
    assert len(one) == 40 and set(one) <= set("0123456789abcdef")
    assert mark(b"k" * 32, "b") == one
    assert mark(b"j" * 32, "c") != one
    assert commit_mark(None) != commit_mark(None)
