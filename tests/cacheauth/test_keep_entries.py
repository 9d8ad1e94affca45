"""generator.cacheauth's helpers for keyed cache folders: an entry is named only by a sha256
key (no other name reaches a path, inside the folder or out of it), and a build's clean-up
removes exactly what it did not use."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cacheauth import keep_only_entries, keyed_entry

KEY = "ab" * 32


def test_a_sha256_key_names_an_entry_in_its_folder(tmp_path: Path) -> None:
    assert keyed_entry(tmp_path, KEY, ".json", "tab") == tmp_path / f"{KEY}.json"


@pytest.mark.parametrize(
    "key",
    ["../" + "a" * 61, "A" * 64, "a" * 63, "a" * 65, "", "/" + "a" * 63, "a" * 63 + "\0"],
    ids=["parent", "upper-case", "short", "long", "empty", "absolute", "nul"],
)
def test_anything_but_a_sha256_key_names_no_entry(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="not a tab key"):
        keyed_entry(tmp_path, key, ".json", "tab")


def test_keep_only_entries_removes_the_rest_and_leaves_folders(tmp_path: Path) -> None:
    for name in ("keep.json", "stale.json", "stale.layouts"):
        (tmp_path / name).write_text("x")
    (tmp_path / "folder").mkdir()  # not an entry a store writes: not removed (unlink fails)
    keep_only_entries(tmp_path, {"keep.json"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "keep.json"]


def test_keep_only_entries_of_a_missing_folder_does_nothing(tmp_path: Path) -> None:
    keep_only_entries(tmp_path / "absent", {"x"})
