"""A build over its previous output links every file it would write byte for byte the same
(`generator.quickwrite.write_or_link`), never writes into the output it replaces, and
publishes exactly what a build writing every file afresh publishes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import generator.evaluate.output as output_module
import generator.forkedcall as forkedcall
from generator.build import run_build
from generator.buildmemo import EvaluationMemo
from generator.site.prestage import Prestage
from tests._support import demo_build

REPO = Path(__file__).resolve().parents[2]
CHANGED = "gb200-gke-cos-training-slurm-gpustack-bundle-installer"
UNCHANGED = "h200-k0s-ubuntu-training"


def _files(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root`: its bytes and its inode."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_ino)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _bytes(files: dict[str, tuple[bytes, int]]) -> dict[str, bytes]:
    return {name: data for name, (data, _) in files.items()}


def _record_taken(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """The recipes each later build takes from the pages linked ahead for it (forks made
    sound: other tests leave idle threads behind, and a build forks only with none)."""
    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)
    taken: list[set[str]] = []
    take = Prestage.take

    def recording(self: Prestage, *args: Any, **kwargs: Any) -> set[str]:
        taken.append(take(self, *args, **kwargs))
        return taken[-1]

    monkeypatch.setattr(Prestage, "take", recording)
    return taken


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def test_a_rebuild_links_what_it_would_write_again_and_leaves_the_old_output_untouched(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    run_build(demo_build(tree, out, cache))
    # The same first output, every file of it also named elsewhere: a build over it may link
    # nothing (a file of two names is never linked), so it writes every file afresh.
    fresh = tmp_path / "fresh"
    shutil.copytree(out, fresh, symlinks=True)
    pins = tmp_path / "pins"
    for n, path in enumerate(p for p in fresh.rglob("*") if p.is_file() and not p.is_symlink()):
        pins.mkdir(exist_ok=True)
        os.link(path, pins / str(n))
    before = _files(out)
    pinned = _files(fresh)

    # one change: a pointer of one recipe removed
    sorted((tree / "evidence" / CHANGED).rglob("sha256-*.yaml"))[0].unlink()
    kept: list[Path] = []

    def keep(old: Path) -> None:  # the replaced output, kept aside to be looked at
        kept.append(tmp_path / f"replaced-{len(kept)}")
        os.rename(old, kept[-1])

    monkeypatch.setattr(output_module, "retire", keep)
    run_build(demo_build(tree, out, cache))
    run_build(demo_build(tree, fresh, tmp_path / "fresh-cache", reevaluate=True))
    replaced = kept[0]

    after, written = _files(out), _files(fresh)
    assert _bytes(after) == _bytes(written)  # linked or written, the same site
    assert _bytes(_files(replaced)) == _bytes(before)  # the old output was never written into
    linked = {n for n, (_, inode) in after.items() if n in before and before[n][1] == inode}
    assert not {n for n, (_, inode) in written.items() if n in pinned and pinned[n][1] == inode}
    linkable = [
        n
        for n in after
        if n.startswith(("badges/", "data/series/"))
        or (n.startswith("recipes/") and n.endswith(("/index.html", "/feed.xml")))
    ]
    assert len(linkable) > 20
    for name in linkable:  # linked exactly when unchanged
        assert (name in linked) == (name in before and before[name][0] == after[name][0]), name
    assert f"recipes/{UNCHANGED}/index.html" in linked
    assert f"recipes/{CHANGED}/index.html" not in linked  # its page changed
    assert all(after[n][0] == before[n][0] for n in linked)


def test_a_rebuild_takes_the_unchanged_recipe_pages_a_child_linked_ahead(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    run_build(demo_build(tree, out, cache))
    taken = _record_taken(monkeypatch)
    before = _files(out)
    sorted((tree / "evidence" / CHANGED).rglob("sha256-*.yaml"))[0].unlink()
    run_build(demo_build(tree, out, cache))
    fresh = tmp_path / "fresh"
    run_build(demo_build(tree, fresh, tmp_path / "fresh-cache", reevaluate=True))
    after = _files(out)
    assert _bytes(after) == _bytes(_files(fresh))
    assert len(taken) == 1  # the cold build has no earlier output to link ahead from
    assert UNCHANGED in taken[0] and CHANGED not in taken[0]
    for recipe in taken[0]:  # the replaced output's own page, as the build would link it
        page = f"recipes/{recipe}/index.html"
        assert after[page] == before[page]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".evidence-build-")]


def test_the_memo_links_the_series_files_of_the_memo_it_replaces(
    tree: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    run_build(demo_build(tree, tmp_path / "a", cache))
    memo_root = EvaluationMemo(cache).root
    (first,) = (p for p in memo_root.iterdir() if not p.name.startswith("."))
    series = {
        p.name: (p.read_bytes(), p.stat().st_ino) for p in (first / "data" / "series").iterdir()
    }
    sorted((tree / "evidence" / CHANGED).rglob("sha256-*.yaml"))[0].unlink()
    run_build(demo_build(tree, tmp_path / "b", cache))
    (second,) = (p for p in memo_root.iterdir() if not p.name.startswith("."))
    assert second != first
    now = {p.name: p.stat().st_ino for p in (second / "data" / "series").iterdir()}
    assert f"{UNCHANGED}.json" in now
    for name, inode in now.items():  # linked exactly when unchanged
        same = (
            name in series and (second / "data" / "series" / name).read_bytes() == series[name][0]
        )
        assert (inode == series.get(name, (b"", -1))[1]) == same, name
    # and nothing of the cache is a name of a published file
    published = {p.stat().st_ino for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert not published & {p.stat().st_ino for p in second.rglob("*") if p.is_file()}


def test_a_rebuild_without_a_folder_to_link_ahead_into_builds_as_before(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    run_build(demo_build(tree, out, cache))
    mkdtemp = output_module.tempfile.mkdtemp
    refused: list[str] = []

    def no_folder_to_link_ahead(*args: Any, **kwargs: Any) -> str:
        if not refused:  # the first folder a rebuild makes is the one for linking ahead
            refused.append(str(kwargs.get("dir")))
            raise PermissionError("no folder here")
        return mkdtemp(*args, **kwargs)

    monkeypatch.setattr(output_module.tempfile, "mkdtemp", no_folder_to_link_ahead)
    sorted((tree / "evidence" / CHANGED).rglob("sha256-*.yaml"))[0].unlink()
    run_build(demo_build(tree, out, cache))
    monkeypatch.undo()
    fresh = tmp_path / "fresh"
    run_build(demo_build(tree, fresh, tmp_path / "fresh-cache", reevaluate=True))
    assert refused == [str(tmp_path)]
    assert _bytes(_files(out)) == _bytes(_files(fresh))


@pytest.mark.parametrize(
    "change", ["pointer removed", "pointer added", "label changed", "new commit"]
)
def test_a_rebuild_over_its_output_publishes_the_cold_site_for_each_kind_of_change(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    pointer = sorted((tree / "evidence" / CHANGED).rglob("sha256-*.yaml"))[0]
    stash = tmp_path / "stash.yaml"
    if change == "pointer added":
        shutil.move(pointer, stash)  # the first build is without it
    run_build(demo_build(tree, out, cache, commit="1" * 40))
    taken = _record_taken(monkeypatch)
    if change == "pointer removed":
        pointer.unlink()
    elif change == "pointer added":
        shutil.move(stash, pointer)
    elif change == "label changed":
        allowlist = tree / "evidence" / "allowlist.yaml"
        text = allowlist.read_text(encoding="utf-8")
        allowlist.write_text(text.replace("label: nimbus-ai", "label: nimbus"), encoding="utf-8")
    commit = ("2" if change == "new commit" else "1") * 40
    run_build(demo_build(tree, out, cache, commit=commit))
    fresh = tmp_path / "fresh"
    run_build(demo_build(tree, fresh, tmp_path / "fresh-cache", reevaluate=True, commit=commit))
    assert _bytes(_files(out)) == _bytes(_files(fresh))
    assert len(taken) == 1
    if change == "new commit":
        assert taken[0] == set()  # every page's footer names the commit: another shell
    elif change == "label changed":
        assert taken[0] == set()  # every page's key covers the sources' labels
    else:
        assert UNCHANGED in taken[0] and CHANGED not in taken[0]
