"""The pointer index: deterministic rendering, round trip through the loader, drift reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.tree import (
    default_index_path,
    index_drift,
    load_allowlist,
    load_yaml,
    render_index,
    write_index,
)


def _allowlist(tree: Any) -> Any:
    return load_allowlist(tree.evidence / "allowlist.yaml")


def _populate(tree: Any, kit: Any) -> dict[str, str]:
    return {
        "community": tree.nested(kit.pointer_doc("b-recipe", seed="1")),
        "reported": tree.nested(kit.pointer_doc("a-recipe", seed="2", identity="x@y.org")),
        "pending": tree.flat(kit.pointer_doc("a-recipe", seed="3", identity=None)),
        "dup": tree.flat(kit.pointer_doc("c-recipe", seed="1", identity=None)),
        "rejected": tree.flat(kit.pointer_doc("d-recipe", seed="4")),  # signed flat
    }


def test_render_index_content(tree: Any, kit: Any) -> None:
    paths = _populate(tree, kit)
    doc = load_yaml(render_index(tree.root, _allowlist(tree)).encode(), file="pointers.yaml")
    assert doc["schemaVersion"] == "1.0.0"
    entries = doc["pointers"]
    assert [e["path"] for e in entries] == [paths["reported"], paths["pending"], paths["community"]]
    assert [e["class"] for e in entries] == ["reported", "pending", "community"]
    assert entries[1]["source"] is None
    assert entries[2]["digest"] == kit.digest_of("1")
    assert entries[2]["source"] == paths["community"].split("/")[2]
    assert [e["recipe"] for e in entries] == ["a-recipe", "a-recipe", "b-recipe"]


def test_render_is_deterministic_and_empty_tree(tree: Any, kit: Any) -> None:
    allowlist = _allowlist(tree)
    empty = render_index(tree.root, allowlist)
    assert load_yaml(empty.encode(), file="p")["pointers"] == []
    _populate(tree, kit)
    assert render_index(tree.root, allowlist) == render_index(tree.root, allowlist)


def test_default_index_path(tmp_path: Path) -> None:
    assert default_index_path(tmp_path / "recipes") == (
        tmp_path / "pkg" / "evidence" / "index" / "pointers.yaml"
    )


def test_no_drift_after_write(tree: Any, kit: Any) -> None:
    _populate(tree, kit)
    allowlist = _allowlist(tree)
    path = write_index(tree.root, allowlist)
    assert path == default_index_path(tree.root)
    assert index_drift(tree.root, path, allowlist) == ()


def test_missing_index(tree: Any) -> None:
    path = default_index_path(tree.root)
    (violation,) = index_drift(tree.root, path, _allowlist(tree))
    assert violation.path == "pkg/evidence/index/pointers.yaml"
    assert "missing" in violation.message


def test_drift_new_and_stale_pointers(tree: Any, kit: Any) -> None:
    allowlist = _allowlist(tree)
    stale = tree.nested(kit.pointer_doc("old-recipe", seed="old"))
    path = write_index(tree.root, allowlist)
    (tree.root / stale).unlink()
    new = tree.nested(kit.pointer_doc("new-recipe", seed="new"))
    drift = index_drift(tree.root, path, allowlist)
    assert {v.path: v.message for v in drift}.keys() == {stale, new}
    by_path = {v.path: v.message for v in drift}
    assert "not listed" in by_path[new]
    assert "not a usable pointer" in by_path[stale]


def test_drift_changed_class(tree: Any, kit: Any) -> None:
    allowlist = _allowlist(tree)
    pointer = tree.nested(kit.pointer_doc("x-recipe", seed="1"))
    path = write_index(tree.root, allowlist)
    tree.write_allowlist("schemaVersion: 1.0.0\n")
    (violation,) = index_drift(tree.root, path, _allowlist(tree))
    assert violation.path == pointer and "class" in violation.message


def test_drift_formatting_only(tree: Any, kit: Any) -> None:
    allowlist = _allowlist(tree)
    tree.nested(kit.pointer_doc("x-recipe", seed="1"))
    path = write_index(tree.root, allowlist)
    path.write_text(path.read_text().replace("# Pointer index", "# edited index"))
    (violation,) = index_drift(tree.root, path, allowlist)
    assert violation.path == "pkg/evidence/index/pointers.yaml"
    assert "canonical" in violation.message


@pytest.mark.parametrize("content", [b"pointers: [", b"- just\n- a list\n"])
def test_drift_unusable_index(tree: Any, content: bytes) -> None:
    path = default_index_path(tree.root)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    (violation,) = index_drift(tree.root, path, _allowlist(tree))
    assert violation.path == "pkg/evidence/index/pointers.yaml"


def test_symlinked_index_is_not_followed(tree: Any, tmp_path: Path) -> None:
    allowlist = _allowlist(tree)
    real = tmp_path / "real.yaml"
    real.write_text(render_index(tree.root, allowlist))
    path = default_index_path(tree.root)
    path.parent.mkdir(parents=True)
    path.symlink_to(real)
    (violation,) = index_drift(tree.root, path, allowlist)
    assert "cannot be read" in violation.message
