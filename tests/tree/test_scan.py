"""Tree walking and the pointer contract gate on hand-made trees, one rule per case."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from generator.errors import AllowlistError, InputError
from generator.model import ParsedPointer, RejectedPointer, source_slug
from generator.tree.allowlist import load_allowlist
from generator.tree.pointer import RULES
from generator.tree.scan import LAYOUT_RULES, Violation, check_tree, scan_tree


def _scan(tree: Any, allow_pending: bool = True) -> Any:
    allowlist = load_allowlist(tree.evidence / "allowlist.yaml")
    return scan_tree(tree.root, allowlist=allowlist, allow_pending=allow_pending)


def _only(tree: Any, allow_pending: bool = True) -> Any:
    files = _scan(tree, allow_pending).files
    assert len(files) == 1, files
    return files[0]


def _rule(tree: Any, allow_pending: bool = True) -> str:
    found = _only(tree, allow_pending)
    assert isinstance(found, RejectedPointer), found
    assert found.message and found.hint
    assert found.rule in LAYOUT_RULES or found.rule in RULES
    return found.rule


def test_clean_signed_pointer(tree: Any, kit: Any) -> None:
    path = tree.nested(kit.pointer_doc())
    found = _only(tree)
    assert isinstance(found, ParsedPointer)
    assert found.location.path == path
    assert found.location.folder_recipe == "h100-eks-ubuntu-training"
    assert found.location.folder_source == source_slug(kit.GH_OAUTH, kit.PERSON)
    assert not found.location.flat
    assert check_tree(tree.root) == ()


def test_unparseable_pointer(tree: Any, kit: Any) -> None:
    tree.nested(kit.pointer_doc(), raw=b"a: [")
    assert _rule(tree) == "yaml"


def test_schema_invalid_pointer(tree: Any, kit: Any) -> None:
    doc = kit.pointer_doc()
    doc["schemaVersion"] = "2.0.0"
    tree.nested(doc)
    assert _rule(tree) == "schema-version"
    (violation,) = check_tree(tree.root)
    assert violation.message.startswith("invalid pointer:")


def test_folder_recipe_mismatch(tree: Any, kit: Any) -> None:
    tree.nested(kit.pointer_doc(), recipe_dir="gb200-other")
    assert _rule(tree) == "recipe-folder"


def test_unsigned_nested_pointer(tree: Any, kit: Any) -> None:
    tree.nested(kit.pointer_doc(identity=None))
    assert _rule(tree) == "unsigned-nested"


def test_signer_folder_squat(tree: Any, kit: Any) -> None:
    victim = source_slug(kit.GH_ACTIONS, kit.WORKFLOW)
    tree.nested(kit.pointer_doc(), source_dir=victim)
    assert _rule(tree) == "source-folder"
    (violation,) = check_tree(tree.root)
    assert "squat" in violation.message


def test_file_name_must_equal_digest(tree: Any, kit: Any) -> None:
    tree.nested(kit.pointer_doc(), name="sha256-" + "0" * 64 + ".yaml")
    assert _rule(tree) == "file-name"


def test_file_name_with_colon_form(tree: Any, kit: Any) -> None:
    doc = kit.pointer_doc()
    tree.nested(doc, name=doc["attestations"][0]["bundle"]["digest"] + ".yaml")
    assert _rule(tree) == "file-name"


def test_nested_unpushed_pointer(tree: Any, kit: Any) -> None:
    doc = kit.pointer_doc()
    doc["attestations"][0]["bundle"].update(oci="", digest="")
    tree.nested(doc, name="run.yaml")
    assert _rule(tree) == "file-name"


def test_first_party_pointer(tree: Any, kit: Any) -> None:
    tree.nested(kit.pointer_doc(issuer=kit.GH_ACTIONS, identity=kit.UAT))
    assert _rule(tree) == "first-party"


def test_unlisted_signer_is_parsed_by_scan_but_a_gate_violation(tree: Any, kit: Any) -> None:
    path = tree.nested(kit.pointer_doc(identity="stranger@example.org"))
    assert isinstance(_only(tree), ParsedPointer)
    assert check_tree(tree.root) == (
        Violation(
            path,
            f"signer (source {source_slug(kit.GH_OAUTH, 'stranger@example.org')}) is not in "
            "the allowlist",
        ),
    )


def test_flat_pending_pointer(tree: Any, kit: Any) -> None:
    path = tree.flat(kit.pointer_doc(identity=None))
    found = _only(tree, allow_pending=True)
    assert isinstance(found, ParsedPointer) and found.pointer.pending
    assert found.location.flat and found.location.path == path
    assert _rule(tree, allow_pending=False) == "pending-not-allowed"
    assert len(check_tree(tree.root)) == 1
    assert check_tree(tree.root, allow_pending=True) == ()


def test_signed_flat_pointer(tree: Any, kit: Any) -> None:
    tree.flat(kit.pointer_doc())
    assert _rule(tree) == "signed-flat"


def test_flat_pointer_named_after_another_recipe(tree: Any, kit: Any) -> None:
    tree.flat(kit.pointer_doc(identity=None), name="other.yaml")
    assert _rule(tree) == "flat-name"


def test_flat_unpushed_pointer(tree: Any, kit: Any) -> None:
    doc = kit.pointer_doc(identity=None)
    doc["attestations"][0]["bundle"].update(oci="", digest="")
    tree.flat(doc)
    assert _rule(tree) == "flat-unpushed"


def test_plain_file_at_root(tree: Any) -> None:
    (tree.evidence / "README.md").write_text("hi")
    assert _rule(tree) == "unexpected-file"


def test_plain_file_where_source_folder_expected(tree: Any, kit: Any) -> None:
    folder = tree.evidence / "h100-eks-ubuntu-training"
    folder.mkdir()
    (folder / "sha256-abc.yaml").write_bytes(kit.dump(kit.pointer_doc()))
    found = _only(tree)
    assert isinstance(found, RejectedPointer) and found.rule == "unexpected-file"
    assert found.recipe == "h100-eks-ubuntu-training"


def test_non_yaml_and_subfolders_in_source_are_ignored(tree: Any, kit: Any) -> None:
    path = tree.nested(kit.pointer_doc())
    source = tree.root / Path(path).parent
    (source / "notes.txt").write_text("x")
    (source / "sub.yaml").mkdir()
    (source / "sub.yaml" / "deep.yaml").write_text("x")
    assert [f.location.path for f in _scan(tree).files] == [path]


def test_symlinked_pointer_is_not_followed(tree: Any, kit: Any, tmp_path: Path) -> None:
    doc = kit.pointer_doc()
    real = tmp_path / "outside.yaml"
    real.write_bytes(kit.dump(doc))
    path = tree.nested(doc, raw=b"placeholder")
    target = tree.root / path
    target.unlink()
    target.symlink_to(real)
    assert _rule(tree) == "symlink"


@pytest.mark.parametrize("level", ["recipe", "source"])
def test_symlinked_folder_is_not_followed(tree: Any, kit: Any, tmp_path: Path, level: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    path = tree.nested(kit.pointer_doc())
    recipe_dir = tree.root / Path(path).parent.parent
    if level == "recipe":
        recipe_dir.rename(elsewhere)
        recipe_dir.symlink_to(elsewhere, target_is_directory=True)
    else:
        source_dir = tree.root / Path(path).parent
        source_dir.rename(elsewhere)
        source_dir.symlink_to(elsewhere, target_is_directory=True)
    assert _rule(tree) == "symlink"


def test_fifo_pointer_is_refused(tree: Any, kit: Any) -> None:
    path = tree.nested(kit.pointer_doc())
    target = tree.root / path
    target.unlink()
    os.mkfifo(target)
    assert _rule(tree) == "not-regular"


def test_fifo_at_root_is_refused(tree: Any) -> None:
    os.mkfifo(tree.evidence / "pipe.yaml")
    assert _rule(tree) == "not-regular"


def test_oversize_pointer_is_refused(tree: Any, kit: Any) -> None:
    tree.nested(kit.pointer_doc(), raw=kit.dump(kit.pointer_doc()) + b" " * (1024 * 1024))
    assert _rule(tree) == "oversize"


def test_duplicate_digest_first_by_path_is_kept(tree: Any, kit: Any) -> None:
    first = tree.nested(kit.pointer_doc("a-recipe", seed="same"))
    second = tree.nested(kit.pointer_doc("b-recipe", seed="same"))
    scan = _scan(tree)
    assert dict(scan.duplicate_of) == {second: first}
    assert [p.location.path for p in scan.usable] == [first]
    violations = check_tree(tree.root)
    assert [v.path for v in violations] == [second]
    assert first in violations[0].message


def test_flat_copy_of_signed_digest_is_a_duplicate(tree: Any, kit: Any) -> None:
    # the flat file sorts before the folder of a *later* recipe; the signed pointer still wins
    signed = tree.nested(kit.pointer_doc("z-recipe", seed="same"))
    flat = tree.flat(kit.pointer_doc("a-recipe", seed="same", identity=None))
    scan = _scan(tree)
    assert dict(scan.duplicate_of) == {flat: signed}
    (violation,) = check_tree(tree.root, allow_pending=True)
    assert violation.path == flat and "flat pointer repeats" in violation.message


def test_files_are_sorted_by_path(tree: Any, kit: Any) -> None:
    paths = [tree.nested(kit.pointer_doc(r, seed=r)) for r in ("c-r", "a-r", "b-r")]
    paths.append(tree.flat(kit.pointer_doc("a-r", seed="flat", identity=None)))
    found = [f.location.path for f in _scan(tree).files]
    assert found == sorted(paths, key=lambda p: p.split("/"))
    assert found.index("evidence/a-r.yaml") > found.index(paths[1])


def test_first_failure_wins_one_line_per_file(tree: Any, kit: Any) -> None:
    doc = kit.pointer_doc(identity="stranger@example.org")
    doc["recipe"] = "elsewhere"
    tree.nested(doc, recipe_dir="h100-eks-ubuntu-training", name="wrong.yaml")
    (violation,) = check_tree(tree.root)
    assert "does not match directory" in violation.message


def test_str_of_violation_is_path_colon_message() -> None:
    assert str(Violation("evidence/x.yaml", "bad")) == "evidence/x.yaml: bad"


# ------------------------------------------------------------------ operational errors


def test_missing_evidence_root(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        check_tree(tmp_path)


def test_evidence_root_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "evidence").symlink_to(tmp_path / "real", target_is_directory=True)
    with pytest.raises(InputError):
        check_tree(tmp_path)


def test_missing_allowlist_is_operational(tree: Any) -> None:
    (tree.evidence / "allowlist.yaml").unlink()
    with pytest.raises(InputError) as info:
        check_tree(tree.root)
    assert info.value.location is not None
    assert info.value.location.file == "evidence/allowlist.yaml"


def test_invalid_allowlist_is_operational(tree: Any) -> None:
    tree.write_allowlist("schemaVersion: 1.0.0\ncommunity: [{issuer: x, identity: me}]\n")
    with pytest.raises(AllowlistError):
        check_tree(tree.root)


def test_explicit_allowlist_path(tree: Any, kit: Any, tmp_path: Path) -> None:
    path = tree.nested(kit.pointer_doc())
    other = tmp_path / "empty-allowlist.yaml"
    other.write_text("schemaVersion: 1.0.0\n")
    (violation,) = check_tree(tree.root, allowlist_path=other)
    assert violation.path == path and "allowlist" in violation.message


def test_rejected_flat_pointer_names_its_recipe_for_display(tree: Any, kit: Any) -> None:
    doc = kit.pointer_doc("h100-x", identity=None)
    doc["schemaVersion"] = "9"
    tree.flat(doc)
    found = _only(tree)
    assert isinstance(found, RejectedPointer) and found.rule == "schema-version"
    assert found.recipe == "h100-x"


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="permission bits do not stop root"
)
def test_unreadable_pointer(tree: Any, kit: Any) -> None:
    path = tree.root / tree.nested(kit.pointer_doc())
    path.chmod(0)
    try:
        assert _rule(tree) == "unreadable"
    finally:
        path.chmod(0o644)
