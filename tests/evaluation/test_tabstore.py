"""generator.evaluate.tabstore: a tab is kept only for the same runs, organisations and limits,
and every byte read back is checked: a kept tab that was tampered with, moved, grown, linked or
cut is a miss (or, for its tab document's text, found when read), never a different site.

The end-to-end tests build a private copy of the demo tree (`test_incremental.Tree`) on one
warm cache and compare the output with a cold build of the same tree, byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

import generator.evaluate.evaluation as evaluation_module
import generator.evaluate.tabstore as tabstore
from generator.build import run_build
from generator.cacheauth import CacheAuth, Purpose
from generator.corroborate import Board, KeptTab, Tab
from generator.evaluate import Evaluation
from generator.evaluate.tabstore import TAB_SUFFIX, TEXT_SUFFIX, TabStore, finish_storing
from generator.manifest import MANIFEST_PATH
from tests._evidence_fakes import identity, make_run
from tests.evaluation.test_incremental import (
    H100,
    Tree,
    allowlist,
    assert_same_as_cold,
    files,
    pointers,
    seen,
    tree,
    verified,
)

__all__ = ["seen", "tree", "verified"]  # the fixtures, shared with test_incremental

ALL_TABS = 9
"""The demo's recipe tabs (eight recipe folders and one flat pending copy)."""


def _kinds(evaluation: Evaluation) -> tuple[int, int]:
    """How many of the board's tabs were (made, kept)."""
    tabs = evaluation.board.tabs
    return sum(isinstance(t, Tab) for t in tabs), sum(isinstance(t, KeptTab) for t in tabs)


def _kept_files(tree: Tree, suffix: str = TAB_SUFFIX) -> list[Path]:
    return sorted((tree.cache / "tabs").glob(f"*{suffix}"))


def _warm(tree: Tree) -> None:
    """The first build (every tab made and kept), then the evaluation memo dropped, so the next
    build evaluates the unchanged tree again from the recipe products and the kept tabs."""
    _, first = tree.build()
    assert _kinds(first)[1] == 0
    assert len(_kept_files(tree)) == len(_kept_files(tree, TEXT_SUFFIX)) == len(first.board.tabs)
    tree.forget_memo()


def test_an_unchanged_tree_keeps_every_tab_and_publishes_the_cold_site(tree: Tree) -> None:
    _warm(tree)
    out, evaluation = tree.build()
    assert _kinds(evaluation) == (0, len(evaluation.board.tabs))
    assert_same_as_cold(tree, out)


def test_a_removed_pointer_makes_its_recipe_tab_only(tree: Tree) -> None:
    _warm(tree)
    pointers(tree.recipes / H100)[0].unlink()
    out, evaluation = tree.build()
    made = [t.recipe for t in evaluation.board.tabs if isinstance(t, Tab)]
    assert made == ["h100-eks-ubuntu-training-kubeflow"]
    assert _kinds(evaluation)[1] == len(evaluation.board.tabs) - 1
    assert_same_as_cold(tree, out)
    # the tab that was replaced is gone from the cache; the new one is kept
    assert len(_kept_files(tree)) == len(evaluation.board.tabs)


def _relabel(tree: Tree) -> None:
    text = allowlist(tree).read_text(encoding="utf-8")
    new = text.replace("label: acme-cloud/nightly\n", "label: other-org/nightly\n")
    assert new != text
    allowlist(tree).write_text(new, encoding="utf-8")


def test_a_renamed_signer_of_a_forge_organisation_keeps_every_tab(tree: Tree) -> None:
    """A workflow identity on github.com counts for its GitHub organisation, whatever its
    label: the tabs hold no label (the sources do), so every tab is kept."""
    _warm(tree)
    _relabel(tree)
    out, evaluation = tree.build()
    assert _kinds(evaluation) == (0, len(evaluation.board.tabs))
    assert_same_as_cold(tree, out)


def test_a_changed_organisation_makes_the_tabs_of_its_signer_again(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What tries to reuse a tab across an organisation change: with organisations read from
    the allowlist labels, renaming a signer changes the organisation its runs count for, which
    is in a tab's key (products are reused: labels are not in their keys), so the tabs that
    signer's runs are on are made again, and the site is the cold build's."""

    def by_label(signer: Any, classification: Any) -> str:
        entry = classification.entry
        return str(entry.label) if entry is not None and entry.label else signer.identity

    monkeypatch.setattr(evaluation_module, "organisation_of", by_label)
    _warm(tree)
    _relabel(tree)
    out, evaluation = tree.build()
    made = {t.recipe for t in evaluation.board.tabs if isinstance(t, Tab)}
    assert made == {"gb300-eks-ubuntu-inference-dynamo"}
    assert evaluation.recipes_evaluated == 0
    assert_same_as_cold(tree, out)


def _same_as_cold_but_the_cache_report(tree: Tree, out: Path, failed: int) -> None:
    """`out` is the cold build's site but for the cache report (build-info.json, which the
    manifest lists), which counts `failed` authentication failures; the next build, from
    what this one kept, is the cold build's site to the byte."""
    report = {"data/build-info.json", MANIFEST_PATH}
    made, cold = files(out), files(tree.cold())
    assert sorted(made) == sorted(cold)
    assert [n for n in cold if made[n] != cold[n] and n not in report] == []
    info = json.loads((out / "data" / "build-info.json").read_bytes())
    assert info["cache"] == {"authenticationFailures": failed}
    tree.forget_memo()
    again, evaluation = tree.build()
    assert _kinds(evaluation) == (0, len(evaluation.board.tabs))
    assert_same_as_cold(tree, again)


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_tampered_tab_is_a_counted_miss_and_the_site_is_still_the_cold_one(
    tree: Tree,
) -> None:
    _warm(tree)
    for path in _kept_files(tree):
        _flip_last_byte(path)  # in the sealed series text
    out, evaluation = tree.build()
    assert _kinds(evaluation) == (len(evaluation.board.tabs), 0)
    _same_as_cold_but_the_cache_report(tree, out, len(evaluation.board.tabs))


def test_a_tab_moved_under_another_key_is_a_miss(tree: Tree) -> None:
    """A kept tab's tag is bound to its key: two tabs swapped by name are both misses."""
    _warm(tree)
    first, second = _kept_files(tree)[:2]
    swap = first.with_suffix(".swap")
    os.replace(first, swap)
    os.replace(second, first)
    os.replace(swap, second)
    out, evaluation = tree.build()
    assert _kinds(evaluation)[0] == 2
    _same_as_cold_but_the_cache_report(tree, out, 2)


def test_a_tampered_tab_text_is_found_when_read_and_the_build_evaluates_again(
    tree: Tree,
) -> None:
    """The tab document's text is not sealed: the same size, other bytes. Its sha256 (in the
    sealed head) does not check when the text is read (writing data/index.json): the file is
    removed, the build evaluates again once and publishes the cold site."""
    _warm(tree)
    victim = _kept_files(tree, TEXT_SUFFIX)[0]
    intact = victim.read_bytes()
    data = bytearray(intact)
    data[len(data) // 2] ^= 0x20
    victim.write_bytes(bytes(data))
    out = tree.root / "after-damage"
    tree.seen.clear()
    run_build(tree.options(out, tree.cache))
    assert len(tree.seen) == 2  # the first evaluation found the damage; the second published
    assert victim.read_bytes() == intact  # removed when found, and kept again when made
    assert _kinds(tree.seen[-1])[0] == 1
    _same_as_cold_but_the_cache_report(tree, out, 1)


@pytest.mark.parametrize("how", ["cut", "grown", "missing", "link"])
def test_a_tab_text_of_another_size_or_kind_is_a_miss(tree: Tree, how: str) -> None:
    _warm(tree)
    victim = _kept_files(tree, TEXT_SUFFIX)[0]
    data = victim.read_bytes()
    if how == "cut":
        victim.write_bytes(data[:-1])
    elif how == "grown":
        victim.write_bytes(data + b" ")
    elif how == "missing":
        victim.unlink()
    else:
        elsewhere = tree.root / "elsewhere.tablayout"
        shutil.move(victim, elsewhere)
        victim.symlink_to(elsewhere)
    out, evaluation = tree.build()
    assert _kinds(evaluation)[0] == 1
    assert_same_as_cold(tree, out)


def test_a_kept_tab_over_the_size_limit_is_not_read(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    _warm(tree)
    monkeypatch.setattr(tabstore, "MAX_TAB_BYTES", 16)
    out, evaluation = tree.build()
    assert _kinds(evaluation) == (len(evaluation.board.tabs), 0)
    assert_same_as_cold(tree, out)


def test_a_kept_tab_that_is_a_link_is_not_followed(tree: Tree) -> None:
    _warm(tree)
    victim = _kept_files(tree)[0]
    elsewhere = tree.root / "elsewhere.tab"
    shutil.move(victim, elsewhere)
    victim.symlink_to(elsewhere)
    out, evaluation = tree.build()
    assert _kinds(evaluation)[0] == 1
    assert_same_as_cold(tree, out)


# --------------------------------------------------------------------------- the store itself

AUTH = CacheAuth(b"t" * 40)
KEY = "b" * 64


def _store(tmp_path: Path, products: dict[str, str] | None = None) -> TabStore:
    return TabStore(tmp_path, AUTH, products or {"a.yaml": "k1", "b.yaml": "k2"})


def _run(name: str = "acme") -> Any:
    return make_run(identity(name), {})


def test_a_tab_key_names_each_run_its_product_its_classification_and_organisation(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    runs = [_run(), _run()]
    base = store.key("p", runs, ["a.yaml", "b.yaml"], ["o1", "o2"], "limits")
    assert base is not None and len(base) == 64
    assert store.key("p", runs, ["a.yaml", "b.yaml"], ["o1", "o2"], "limits") == base
    others = [
        store.key("q", runs, ["a.yaml", "b.yaml"], ["o1", "o2"], "limits"),
        store.key("p", runs, ["b.yaml", "a.yaml"], ["o1", "o2"], "limits"),
        store.key("p", runs, ["a.yaml", "b.yaml"], ["o1", "o3"], "limits"),
        store.key("p", runs, ["a.yaml", "b.yaml"], ["o1", "o2"], "other limits"),
        _store(tmp_path, {"a.yaml": "k1", "b.yaml": "k3"}).key(
            "p", runs, ["a.yaml", "b.yaml"], ["o1", "o2"], "limits"
        ),
    ]
    assert base not in others and len(set(others)) == len(others)


@pytest.mark.parametrize(
    ("runs", "origins", "orgs"),
    [
        (2, ["a.yaml", "c.yaml"], ["o1", "o2"]),  # a run whose product is unknown
        (2, ["a.yaml", ""], ["o1", "o2"]),  # a run without an origin
        (2, ["a.yaml"], ["o1", "o2"]),  # fewer origins than runs
        (2, ["a.yaml", "b.yaml"], ["o1"]),  # fewer organisations than runs
        (0, [], []),
    ],
    ids=["unknown-product", "no-origin", "short-origins", "short-orgs", "empty"],
)
def test_a_tab_with_a_run_that_cannot_be_named_has_no_key(
    tmp_path: Path, runs: int, origins: list[str], orgs: list[str]
) -> None:
    made = [_run() for _ in range(runs)]
    assert _store(tmp_path).key("p", made, origins, orgs, "limits") is None


def test_a_tab_whose_names_orjson_refuses_has_no_key(tmp_path: Path) -> None:
    """A pointer path with a lone surrogate (a file name that is not UTF-8) names no tab:
    the tab is made, never an error."""
    store = _store(tmp_path, {"a\udc80.yaml": "k1"})
    assert store.key("p", [_run()], ["a\udc80.yaml"], ["o1"], "limits") is None


def _sealed(tmp_path: Path, head: Any, series: bytes = b"{}", text: bytes = b"{}") -> TabStore:
    store = _store(tmp_path)
    (tmp_path / f"{KEY}{TEXT_SUFFIX}").write_bytes(text)
    body = orjson.dumps(head) + b"\n" + series
    AUTH.write_sealed(tmp_path / f"{KEY}{TAB_SUFFIX}", Purpose.TAB, body, KEY.encode())
    return store


def _head(**changes: Any) -> dict[str, Any]:
    import hashlib

    head: dict[str, Any] = {
        "doc": {
            "keys": [],
            "known": {},
            "parts": {},
            "size": 2,
            "sha256": hashlib.sha256(b"{}").hexdigest(),
        },
        "series": {"keys": [], "known": {}, "parts": {}, "steps": 0},
        "checks": {},
        "omitted": dict.fromkeys(tabstore._OMITTED, 0),
    }
    for where, value in changes.items():
        part, _, field = where.partition("__")
        if field:
            head[part][field] = value
        else:
            head[part] = value
    return head


def test_an_authentic_kept_tab_of_the_expected_shape_reads_back(tmp_path: Path) -> None:
    kept = _sealed(tmp_path, _head()).kept(KEY)
    assert kept is not None
    assert dict(kept.doc) == {} and dict(kept.series) == {}


@pytest.mark.parametrize(
    "changes",
    [
        {"doc__size": 3},
        {"doc__size": -1},
        {"doc__sha256": "00"},
        {"doc__keys": ["recipe"]},
        {"series__steps": 99},
        {"series__parts": {"builds": {"keys": [], "known": {}}}},
        {"checks": {"a/b": 1}},
        {"checks": []},
        {"omitted": {"versions": 0}},
        {"omitted": dict.fromkeys(tabstore._OMITTED, -1)},
        {"doc": None},
        {"doc__keys": None},
        {"series": []},
    ],
    ids=[
        "text-size",
        "negative-size",
        "short-sha256",
        "keys-not-in-text",
        "unknown-steps",
        "part-not-a-key",
        "check-not-a-state",
        "checks-not-an-object",
        "omitted-fields",
        "negative-omitted",
        "no-doc",
        "keys-not-a-list",
        "series-not-an-object",
    ],
)
def test_an_authentic_kept_tab_of_another_shape_is_a_miss(
    tmp_path: Path, changes: dict[str, Any]
) -> None:
    """Authentic bytes (a key that leaked, a bug of an earlier version) still have to be
    exactly the shape `_kept_bytes` writes, or the tab is made again."""
    kept = _sealed(tmp_path, _head(**changes)).kept(KEY)
    if kept is not None:  # a head that names keys its text lacks: found when parsed
        with pytest.raises(ValueError, match="other keys"):
            dict(kept.doc.items())
        return
    assert kept is None


def test_a_kept_tab_without_a_head_line_is_a_miss(tmp_path: Path) -> None:
    store = _store(tmp_path)
    AUTH.write_sealed(tmp_path / f"{KEY}{TAB_SUFFIX}", Purpose.TAB, b"{}", KEY.encode())
    (tmp_path / f"{KEY}{TEXT_SUFFIX}").write_bytes(b"{}")
    assert store.kept(KEY) is None


def test_storing_removes_the_tabs_this_build_did_not_read(tmp_path: Path) -> None:
    store = _sealed(tmp_path, _head())
    stale = tmp_path / f"{'c' * 64}{TAB_SUFFIX}"
    stale.write_bytes(b"x")
    (tmp_path / f"{'c' * 64}{TEXT_SUFFIX}").write_bytes(b"x")
    assert store.kept(KEY) is not None
    store.store(Board(groups=(), sources={}, criteria={}, newest_attested_at=None), {})
    finish_storing()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"{KEY}{TAB_SUFFIX}",
        f"{KEY}{TEXT_SUFFIX}",
    ]
