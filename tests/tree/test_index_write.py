"""`index --write` writes inside the repository only: no symlink below the repository root is
followed (generator.safewrite), and the file is replaced atomically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import InputError
from generator.safewrite import WriteRefusedError, write_below
from generator.tree import default_index_path, load_allowlist, render_index


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stderr


@pytest.fixture()
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the repository (the repository is the test's tmp_path)."""
    return tmp_path_factory.mktemp("outside")


def _populated(tree: Any, kit: Any) -> str:
    tree.nested(kit.pointer_doc("b-recipe", seed="1"))
    return render_index(tree.root, load_allowlist(tree.evidence / "allowlist.yaml"))


def test_symlinked_index_file_is_refused(tree: Any, kit: Any, outside: Path) -> None:
    _populated(tree, kit)
    victim = outside / "victim.yaml"
    victim.write_text("precious\n", encoding="utf-8")
    index = default_index_path(tree.root)
    index.parent.mkdir(parents=True)
    index.symlink_to(victim)
    code, err = _run("index", "--recipes", str(tree.root), "--write")
    assert code == 2, err
    assert str(index) in err and "symbolic link" in err and "next step" in err
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert index.is_symlink()


def test_symlinked_parent_folder_is_refused(tree: Any, kit: Any, outside: Path) -> None:
    _populated(tree, kit)
    (tree.root.parent / "pkg").mkdir()
    (tree.root.parent / "pkg" / "evidence").symlink_to(outside, target_is_directory=True)
    code, err = _run("index", "--recipes", str(tree.root), "--write")
    assert code == 2, err
    assert str(tree.root.parent / "pkg" / "evidence") in err and "symbolic link" in err
    assert list(outside.iterdir()) == []


def test_index_option_outside_the_repository_is_refused(tree: Any, kit: Any, outside: Path) -> None:
    _populated(tree, kit)
    code, err = _run(
        "index", "--recipes", str(tree.root), "--write", "--index", str(outside / "pointers.yaml")
    )
    assert code == 2, err
    assert "not below the repository root" in err
    assert list(outside.iterdir()) == []


def test_normal_write_works_and_is_atomic(tree: Any, kit: Any) -> None:
    expected = _populated(tree, kit)
    index = default_index_path(tree.root)
    index.parent.mkdir(parents=True)
    index.write_text("old index\n", encoding="utf-8")
    with index.open(encoding="utf-8") as reader:  # a reader that opened the old file
        code, err = _run("index", "--recipes", str(tree.root), "--write")
        assert code == 0, err
        assert reader.read() == "old index\n"  # replaced by rename, not rewritten in place
    assert index.read_text(encoding="utf-8") == expected
    assert sorted(p.name for p in index.parent.iterdir()) == ["pointers.yaml"]


def test_write_creates_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.txt"
    assert write_below(tmp_path, target, b"data") == target
    assert target.read_bytes() == b"data"


def test_a_link_at_or_above_the_root_is_trusted(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "repo").symlink_to(real, target_is_directory=True)
    write_below(tmp_path / "repo", tmp_path / "repo" / "x.txt", b"ok")
    assert (real / "x.txt").read_bytes() == b"ok"


def test_target_that_is_a_folder_or_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(WriteRefusedError, match="not a regular file"):
        write_below(tmp_path, tmp_path / "dir", b"x")
    (tmp_path / "file").write_text("f", encoding="utf-8")
    with pytest.raises(WriteRefusedError, match="not a folder"):
        write_below(tmp_path, tmp_path / "file" / "x", b"x")
    assert isinstance(WriteRefusedError("m"), InputError)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]
