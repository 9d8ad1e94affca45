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
