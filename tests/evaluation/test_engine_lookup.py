"""A build whose verdicts all come from the cache never waits for the OCI layouts' index
before it has read and planned the tree, and an unusable layout still fails it.

`Engines.lookup` (trust root and verdict cache) answers the cache; `Engines.engine` adds the
bundle source, whose layouts a forked process indexes meanwhile. Both builds here are real:
the embedded demo tree, offline, its signed bundles in its OCI layout.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import generator.evaluate.engine as engine_module
import generator.evaluate.perrecipe as perrecipe
from generator.build import run_build
from generator.errors import InputError
from tests.cacheauth.conftest import REPO, options


@pytest.fixture()
def recipes(tmp_path: Path) -> Path:
    """A private copy of the embedded demo tree."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def _one_pointer_removed(recipes: Path) -> None:
    pointer = sorted((recipes / "evidence").glob("*/*/sha256-*.yaml"))[0]
    pointer.unlink()


def test_the_bundle_source_is_built_after_the_tree_is_planned(
    recipes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    run_build(options(recipes, tmp_path / "site", cache))
    _one_pointer_removed(recipes)
    events: list[str] = []
    make, with_source = perrecipe.RecipePlan.make, engine_module._with_source

    def planning(*args: object, **kwargs: object) -> object:
        events.append("plan")
        return make(*args, **kwargs)  # type: ignore[arg-type]

    def sourcing(*args: object, **kwargs: object) -> object:
        events.append("source")
        return with_source(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(perrecipe.RecipePlan, "make", planning)
    monkeypatch.setattr(engine_module, "_with_source", sourcing)
    shutil.rmtree(cache / "layouts")  # the layout is indexed (and checked) this time
    summary = run_build(options(recipes, tmp_path / "site", cache))
    assert summary.verified > 0 and not summary.from_memo
    assert events == ["plan", "source"]


def test_a_layout_whose_index_was_kept_is_not_read_when_no_bundle_is_needed(
    recipes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layout's `index.json` and blobs folder are what an earlier build indexed
    (`generator.bundle.layoutmemo`): a build the verdict cache answers builds no bundle
    source at all."""
    cache = tmp_path / "cache"
    run_build(options(recipes, tmp_path / "site", cache))
    _one_pointer_removed(recipes)
    events: list[str] = []
    with_source = engine_module._with_source

    def sourcing(*args: object, **kwargs: object) -> object:
        events.append("source")
        return with_source(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module, "_with_source", sourcing)
    summary = run_build(options(recipes, tmp_path / "site", cache))
    assert not summary.from_memo and events == []


def test_an_unusable_layout_still_fails_a_build_the_cache_answers(
    recipes: Path, tmp_path: Path
) -> None:
    cache, out = tmp_path / "cache", tmp_path / "site"
    run_build(options(recipes, out, cache))
    published = (out / "data" / "index.json").read_bytes()
    memo = cache / "tree" / "pointer-docs.json"
    remembered = memo.read_bytes()
    _one_pointer_removed(recipes)
    (recipes / "bundles" / "index.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        run_build(options(recipes, out, cache))
    assert "--oci-layout" in caught.value.message
    assert (out / "data" / "index.json").read_bytes() == published  # the site is kept
    assert memo.read_bytes() == remembered  # nothing of the failed build was kept


def _spied_prefetches(monkeypatch: pytest.MonkeyPatch, events: list[str]) -> list[Any]:
    """Every `IndexPrefetch` a build starts, with "prefetch", "fingerprint" and "closed"
    recorded in `events` as they happen."""
    import generator.build as build_module
    from generator.bundle.prefetch import IndexPrefetch
    from generator.evaluate.memoize import MemoSlot

    started: list[Any] = []
    real_start, real_close = engine_module.start_prefetch, IndexPrefetch.close
    real_for_build = MemoSlot.for_build

    def start(*args: Any) -> Any:
        events.append("prefetch")
        started.append(real_start(*args))
        return started[-1]

    def close(self: IndexPrefetch) -> None:
        events.append("closed")
        real_close(self)

    def fingerprint(*args: Any) -> Any:
        events.append("fingerprint")
        return real_for_build(*args)

    monkeypatch.setattr(engine_module, "start_prefetch", start)
    monkeypatch.setattr(build_module, "start_prefetch", start)
    monkeypatch.setattr(IndexPrefetch, "close", close)
    monkeypatch.setattr(MemoSlot, "for_build", staticmethod(fingerprint))
    return started


def test_the_layouts_are_indexed_from_before_the_fingerprint_by_one_child(
    recipes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold build starts indexing its layouts before it fingerprints the tree (which mostly
    waits for the tree's digest), and its engine uses that very prefetch: no second one."""
    events: list[str] = []
    started = _spied_prefetches(monkeypatch, events)
    sources: list[Any] = []
    with_source = engine_module._with_source

    def sourcing(options: Any, lookup: Any, indexes: Any) -> Any:
        sources.append(indexes)
        return with_source(options, lookup, indexes)

    monkeypatch.setattr(engine_module, "_with_source", sourcing)
    summary = run_build(options(recipes, tmp_path / "site", tmp_path / "cache"))
    assert summary.verified > 0
    assert events[:2] == ["prefetch", "fingerprint"]
    assert len(started) == 1 and sources == started
    assert events.count("closed") >= 1 and events[-1] == "closed"


def test_a_build_the_memo_answers_lets_its_prefetch_go(
    recipes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(options(recipes, out, cache))
    shutil.rmtree(cache / "layouts")  # the layout would be indexed again: a child is forked
    events: list[str] = []
    started = _spied_prefetches(monkeypatch, events)
    summary = run_build(options(recipes, out, cache))
    assert summary.from_memo
    assert events == ["prefetch", "fingerprint", "closed"]
    assert started[0]._process is None  # the child was stopped and reaped
