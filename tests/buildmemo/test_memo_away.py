"""The memo's big data files are left in the site they were published in: a build the memo
answers reads them back from there, each checked against its sealed digest, and anything
else found there (changed, missing, a link, a FIFO, too big) is a miss that evaluates again
and publishes what a full evaluation publishes."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import generator.buildmemo as buildmemo
import generator.memofiles as memofiles
from generator.build import BuildOptions, run_build
from generator.cacheauth import CacheAuth, Purpose
from tests._support import demo_build

REPO = Path(__file__).resolve().parents[2]
THRESHOLD = 4096
BIG = ["index.json", "pointers.json"]
"""Two of the demo's data files over `THRESHOLD`."""


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's documents are KBs: make its biggest count as big."""
    monkeypatch.setattr(memofiles, "LINKED_BYTES", THRESHOLD)


def _options(tree: Path, out: Path, cache: Path) -> BuildOptions:
    opts: BuildOptions = demo_build(tree, out, cache, source_date_epoch=1_790_000_000)
    return opts


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _memo_folder(cache: Path) -> Path:
    (folder,) = (cache / "evaluation").iterdir()
    return folder


def _meta(cache: Path) -> dict[str, object]:
    folder = _memo_folder(cache)
    body = CacheAuth.from_environment().open(
        Purpose.MEMO, (folder / "meta.json").read_bytes(), folder.name.encode(), "memo"
    )
    assert body is not None
    meta: dict[str, object] = json.loads(body)
    return meta


def test_big_files_stay_in_the_site_and_a_hit_restores_them(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run_build(_options(tree, tmp_path / "a", cache))
    data = _memo_folder(cache) / "data"
    assert not first.from_memo
    published = tmp_path / "a" / "data"
    meta = _meta(cache)
    kept = meta["files"]
    assert isinstance(kept, dict)
    big = sorted(n for n in kept if "/" not in n and (published / n).stat().st_size > THRESHOLD)
    assert big == BIG and [name for name in big if (data / name).exists()] == []  # not copied
    assert meta["away"] == {"site": str(published.absolute()), "files": big}
    second = run_build(_options(tree, tmp_path / "b", cache))
    assert second.from_memo and second.auth_failures == 0
    assert _files(tmp_path / "b") == _files(tmp_path / "a")
    for name in BIG:  # restored into the memo, with the mode the site's files have
        assert (data / name).read_bytes() == (tmp_path / "a" / "data" / name).read_bytes()
        assert (tmp_path / "b" / "data" / name).stat().st_mode & 0o777 == (
            tmp_path / "a" / "data" / "build-info.json"
        ).stat().st_mode & 0o777
    shutil.rmtree(tmp_path / "a")  # restored: the memo answers without the first site
    third = run_build(_options(tree, tmp_path / "c", cache))
    assert third.from_memo and _files(tmp_path / "c") == _files(tmp_path / "b")


def _changed(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b'"', b"'", 1))


def _removed(path: Path) -> None:
    path.unlink()


def _linked(path: Path) -> None:
    """The same bytes, but through a link: never followed."""
    keep = path.with_name("kept-" + path.name)
    os.replace(path, keep)
    path.symlink_to(keep)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _grown(path: Path) -> None:
    with path.open("ab") as fh:
        fh.write(b" ")


@pytest.mark.parametrize("damage", [_changed, _removed, _linked, _fifo, _grown])
@pytest.mark.parametrize("name", BIG)
def test_a_big_file_not_as_published_is_a_miss(
    tree: Path, tmp_path: Path, damage: Callable[[Path], None], name: str
) -> None:
    cache = tmp_path / "cache"
    run_build(_options(tree, tmp_path / "a", cache))
    expected = _files(tmp_path / "a")
    damage(tmp_path / "a" / "data" / name)
    again = run_build(_options(tree, tmp_path / "b", cache))
    assert not again.from_memo  # evaluated again, never the file found there
    assert again.auth_failures == 0  # the site is not the cache: nothing was forged
    assert _files(tmp_path / "b") == expected
    assert [n for n in BIG if (_memo_folder(cache) / "data" / n).exists()] == []


def test_a_big_file_over_the_limit_is_never_read(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    run_build(_options(tree, tmp_path / "a", cache))
    monkeypatch.setattr(memofiles, "MAX_DATA_FILE_BYTES", 16)
    again = run_build(_options(tree, tmp_path / "b", cache))
    assert not again.from_memo and _files(tmp_path / "b") == _files(tmp_path / "a")


def test_a_restored_file_changed_in_the_memo_is_counted(tree: Path, tmp_path: Path) -> None:
    """Once restored, a big file is the memo's own: a change to it is a forged cache."""
    cache = tmp_path / "cache"
    run_build(_options(tree, tmp_path / "a", cache))
    assert run_build(_options(tree, tmp_path / "b", cache)).from_memo
    _changed(_memo_folder(cache) / "data" / "pointers.json")
    again = run_build(_options(tree, tmp_path / "c", cache))
    assert not again.from_memo and again.auth_failures == 1


@pytest.mark.parametrize("away", [{"site": "x", "files": "pointers.json"}, {"files": []}])
def test_a_malformed_away_record_is_a_miss(
    tree: Path, tmp_path: Path, away: dict[str, object]
) -> None:
    """A sealed meta is this program's own; still, a record of an unexpected shape (from
    another version) is a miss, never an error."""
    cache = tmp_path / "cache"
    run_build(_options(tree, tmp_path / "a", cache))
    folder = _memo_folder(cache)
    meta = _meta(cache)
    meta["away"] = away
    buildmemo.EvaluationMemo(cache)._write_meta(folder, folder.name, meta)
    assert buildmemo.EvaluationMemo(cache).load(folder.name) is None


@pytest.mark.parametrize("name", ["../planted.json", "series/../../planted.json", ".."])
def test_an_away_name_outside_the_data_folder_is_never_written(
    tree: Path, tmp_path: Path, name: str
) -> None:
    """Even a sealed record naming a file outside data/ (with that file's digest) writes
    nothing outside it."""
    from generator.cacheauth import file_digest

    cache = tmp_path / "cache"
    run_build(_options(tree, tmp_path / "a", cache))
    folder = _memo_folder(cache)
    planted = b'{"planted": true}'
    (tmp_path / "a" / "planted.json").write_bytes(planted)
    meta = _meta(cache)
    files = meta["files"]
    assert isinstance(files, dict)
    files[name] = file_digest(planted)
    meta["away"] = {"site": str(tmp_path / "a" / "data"), "files": [name]}
    buildmemo.EvaluationMemo(cache)._write_meta(folder, folder.name, meta)
    assert buildmemo.EvaluationMemo(cache).load(folder.name) is None
    assert sorted(p.name for p in folder.iterdir()) == ["data", "meta.json"]
