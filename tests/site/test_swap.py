"""generator.site.swap: atomic publishing and recovery after a kill between steps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.errors import BuildError
from generator.site.swap import old_path, publish_atomically, recover


def make(folder: Path, marker: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(marker)
    return folder


def test_first_publish(tmp_path: Path) -> None:
    out = tmp_path / "site"
    publish_atomically(make(tmp_path / "stage", "new"), out)
    assert (out / "index.html").read_text() == "new"
    assert not old_path(out).exists() and not (tmp_path / "stage").exists()


def test_replaces_previous_output(tmp_path: Path) -> None:
    out = make(tmp_path / "site", "old")
    publish_atomically(make(tmp_path / "stage", "new"), out)
    assert (out / "index.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_killed_after_moving_old_aside_rolls_back(tmp_path: Path) -> None:
    out = make(tmp_path / "site", "old")
    os.replace(out, old_path(out))  # step 1 done, then killed
    assert recover(out) == "rolled-back"
    assert (out / "index.html").read_text() == "old"
    assert not old_path(out).exists()


def test_killed_after_moving_new_in_finishes(tmp_path: Path) -> None:
    out = make(tmp_path / "site", "old")
    os.replace(out, old_path(out))
    os.replace(make(tmp_path / "stage", "new"), out)  # step 2 done, then killed
    assert recover(out) == "finished"
    assert (out / "index.html").read_text() == "new"
    assert not old_path(out).exists()


def test_next_publish_recovers_first(tmp_path: Path) -> None:
    out = make(tmp_path / "site", "old")
    os.replace(out, old_path(out))
    publish_atomically(make(tmp_path / "stage", "newer"), out)
    assert (out / "index.html").read_text() == "newer"
    assert not old_path(out).exists()


def test_clean_state(tmp_path: Path) -> None:
    assert recover(tmp_path / "site") == "clean"


def test_missing_staging_keeps_output(tmp_path: Path) -> None:
    out = make(tmp_path / "site", "old")
    with pytest.raises(BuildError):
        publish_atomically(tmp_path / "nope", out)
    assert (out / "index.html").read_text() == "old"


def test_retire_takes_the_replaced_output_away_before_the_swap_returns(tmp_path: Path) -> None:
    """`retire` is handed the replaced folder and moves it; the swap then leaves nothing for a
    later `recover` to find, and deletes nothing itself."""
    out = make(tmp_path / "site", "old")
    kept = tmp_path / "kept"
    handed: list[Path] = []

    def retire(old: Path) -> None:
        handed.append(old)
        os.rename(old, kept)

    publish_atomically(make(tmp_path / "stage", "new"), out, retire)
    assert handed == [old_path(out)]
    assert (out / "index.html").read_text() == "new"
    assert (kept / "index.html").read_text() == "old"
    assert recover(out) == "clean"


def test_a_retire_that_leaves_the_folder_in_place_still_gets_it_deleted(tmp_path: Path) -> None:
    out = make(tmp_path / "site", "old")
    publish_atomically(make(tmp_path / "stage", "new"), out, lambda old: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_first_publish_retires_nothing(tmp_path: Path) -> None:
    handed: list[Path] = []
    publish_atomically(make(tmp_path / "stage", "new"), tmp_path / "site", handed.append)
    assert handed == []
