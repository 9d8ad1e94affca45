"""generator.site.sparedirs: a replaced output's recipe folders are emptied and given to the
next build, which moves them into its site only when they are empty real folders: nothing of
an earlier output, and nothing planted among the spare folders, reaches a site."""

from __future__ import annotations

import os
from pathlib import Path

from generator.build import BuildOptions, run_build
from generator.site.sparedirs import claim, place, spare, spare_path
from generator.site.swap import old_path


def _old_output(root: Path) -> Path:
    """A replaced output renamed away, with two recipe folders and a page besides."""
    old = root / "trash" / "old"
    for recipe in ("a", "b"):
        folder = old / "recipes" / recipe
        folder.mkdir(parents=True)
        (folder / "index.html").write_text("<p>old</p>")
        (folder / "deep").mkdir()
        (folder / "deep" / "x").write_text("x")
    (old / "recipes" / "stray.txt").write_text("stray")
    (old / "index.html").write_text("home")
    return old


def test_a_replaced_outputs_recipe_folders_are_kept_empty_beside_the_output(
    tmp_path: Path,
) -> None:
    out = tmp_path / "site"
    old = _old_output(tmp_path)
    spare(old, old_path(out))
    kept = spare_path(out)
    assert sorted(p.name for p in kept.iterdir()) == ["a", "b"]
    assert all(not any(p.iterdir()) for p in kept.iterdir())
    assert (old / "index.html").exists()  # the rest is the caller's to delete


def test_spare_folders_are_claimed_once(tmp_path: Path) -> None:
    out = tmp_path / "site"
    spare(_old_output(tmp_path), old_path(out))
    first, second = tmp_path / "work1", tmp_path / "work2"
    first.mkdir()
    second.mkdir()
    mine = claim(out, first)
    assert mine is not None and sorted(p.name for p in mine.iterdir()) == ["a", "b"]
    assert claim(out, second) is None
    assert not spare_path(out).exists()


def test_a_claimed_empty_folder_is_moved_into_place(tmp_path: Path) -> None:
    spare_folders = tmp_path / "spare"
    (spare_folders / "a").mkdir(parents=True)
    inode = os.stat(spare_folders / "a").st_ino
    site = tmp_path / "site" / "recipes"
    place(site / "a", spare_folders)
    assert os.stat(site / "a").st_ino == inode and not any((site / "a").iterdir())
    place(site / "b", spare_folders)  # none to move: made
    assert (site / "b").is_dir()


def test_a_planted_file_never_reaches_the_site(tmp_path: Path) -> None:
    """What tries to break the reuse: a spare folder that is not empty is not used."""
    spare_folders = tmp_path / "spare"
    (spare_folders / "a").mkdir(parents=True)
    (spare_folders / "a" / "index.html").write_text("<script>planted</script>")
    site = tmp_path / "site" / "recipes"
    place(site / "a", spare_folders)
    assert (site / "a").is_dir() and list((site / "a").iterdir()) == []


def test_a_planted_link_is_not_followed(tmp_path: Path) -> None:
    """A spare "folder" that is a link to somewhere else is not where pages are written."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spare_folders = tmp_path / "spare"
    spare_folders.mkdir()
    (spare_folders / "a").symlink_to(elsewhere)
    site = tmp_path / "site" / "recipes"
    place(site / "a", spare_folders)
    assert (site / "a").is_dir() and not (site / "a").is_symlink()
    (site / "a" / "index.html").write_text("page")
    assert list(elsewhere.iterdir()) == []


def test_a_spare_file_in_place_of_a_folder_is_not_used(tmp_path: Path) -> None:
    spare_folders = tmp_path / "spare"
    spare_folders.mkdir()
    (spare_folders / "a").write_text("not a folder")
    site = tmp_path / "site" / "recipes"
    place(site / "a", spare_folders)
    assert (site / "a").is_dir() and list((site / "a").iterdir()) == []


def test_an_existing_folder_is_kept(tmp_path: Path) -> None:
    spare_folders = tmp_path / "spare"
    (spare_folders / "a").mkdir(parents=True)
    site = tmp_path / "site" / "recipes"
    (site / "a").mkdir(parents=True)
    (site / "a" / "feed.xml").write_text("feed")
    place(site / "a", spare_folders)
    assert (site / "a" / "feed.xml").exists() and (spare_folders / "a").exists()


def test_builds_into_one_output_recycle_its_recipe_folders_and_publish_the_same_site(
    tmp_path: Path,
) -> None:
    """The third build's recipe folders are the first build's (emptied when the second
    replaced it), and its site is byte for byte the second's (the same tree)."""
    repo = Path(__file__).resolve().parents[2] / "recipes"
    out = tmp_path / "site"
    options = BuildOptions.flat(
        recipes=repo,
        out=out,
        cache=tmp_path / "cache",
        offline=True,
        quiet=True,
        oci_layouts=(repo / "bundles",),
        trust_root=repo / "trust" / "trusted_root.json",
        reevaluate=True,  # every build publishes a site (the evaluation memo never answers)
    )

    def folders() -> dict[str, int]:
        return {p.name: p.stat().st_ino for p in (out / "recipes").iterdir() if p.is_dir()}

    def files() -> dict[str, bytes]:
        return {
            p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()
        }

    run_build(options)
    first = folders()
    run_build(options)
    second = files()
    assert sorted(p.name for p in spare_path(out).iterdir()) == sorted(first)
    run_build(options)
    assert folders() == first
    assert files() == second
