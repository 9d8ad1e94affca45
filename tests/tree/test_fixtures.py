"""The real aicr evidence trees (NVIDIA/aicr and the yuanchen8911 fork) through the tree seam.

Expected counts come from reading the fixture files (see the shared fixtures README):

- upstream: exactly five violations: the two flat pointers (retired aicr.nvidia.com predicate
  type; they are also signed while flat, but the first failure wins) and the three pointers of
  the two slugs the upstream allowlist does not list.
- fork: seven flat unsigned pending pointers. Strict (default) gate: seven violations, one per
  flat file. With allow_pending: five of the seven repeat the digest of a signed pointer and are
  violations; the other two (vr200-rke2-ubuntu-inference-dynamo, vr200-rke2-ubuntu-training) are
  genuine pending pointers. Every fork signer is allowlisted, so no other violation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import AllowlistError
from generator.model import ParsedPointer, source_slug
from generator.tree import (
    check_tree,
    load_allowlist,
    parse_allowlist,
    parse_pointer,
    scan_tree,
)

pytestmark = pytest.mark.fixtures

UNLISTED = {"728b071aed7124418b1fa9c7f0521e24", "3be4483c0c6e439444ba6763efe9a586"}


def _nested(root: Path) -> list[Path]:
    return sorted((root / "evidence").glob("*/*/*.yaml"))


def test_upstream_gate_reports_exactly_five(aicr_tree: Path) -> None:
    root = aicr_tree / "upstream" / "recipes"
    violations = check_tree(root)
    assert len(violations) == 5
    flat = [v for v in violations if v.path.count("/") == 1]
    assert {v.path for v in flat} == {
        "evidence/h100-eks-ubuntu-inference-dynamo.yaml",
        "evidence/h100-gke-cos-inference-dynamo.yaml",
    }
    assert all("aicr.nvidia.com" in v.message for v in flat)
    listed = [v for v in violations if v not in flat]
    expected = [p.relative_to(root).as_posix() for p in _nested(root) if p.parent.name in UNLISTED]
    assert sorted(v.path for v in listed) == sorted(expected) and len(expected) == 3
    assert all("not in the allowlist" in v.message for v in listed)
    assert check_tree(root, allow_pending=True) == violations


def test_upstream_scan_every_nested_pointer_is_parsed(aicr_tree: Path) -> None:
    root = aicr_tree / "upstream" / "recipes"
    allowlist = load_allowlist(root / "evidence" / "allowlist.yaml")
    scan = scan_tree(root, allowlist=allowlist)
    nested = [f for f in scan.files if not f.location.flat]
    assert len(nested) == len(_nested(root)) == 17
    assert all(isinstance(f, ParsedPointer) for f in nested)
    for f in nested:
        assert isinstance(f, ParsedPointer) and f.pointer.signer is not None
        signer = f.pointer.signer.identity
        assert f.location.folder_source == source_slug(signer.issuer, signer.identity)
        assert (f.pointer.profile is not None) == (f.pointer.bundle.predicate_type.short == "v2")
    assert dict(scan.duplicate_of) == {}
    paths = [f.location.path for f in scan.files]
    assert paths == sorted(paths, key=lambda p: p.split("/"))


def test_fork_gate_strict_and_with_pending(aicr_tree: Path) -> None:
    root = aicr_tree / "fork" / "recipes"
    flat_files = sorted(
        p.relative_to(root).as_posix()
        for p in (root / "evidence").glob("*.yaml")
        if p.name != "allowlist.yaml"
    )
    assert len(flat_files) == 7
    strict = check_tree(root)
    assert [v.path for v in strict] == flat_files
    lenient = check_tree(root, allow_pending=True)
    assert len(lenient) == 5
    assert all("flat pointer repeats the bundle digest" in v.message for v in lenient)
    pending = set(flat_files) - {v.path for v in lenient}
    assert pending == {
        "evidence/vr200-rke2-ubuntu-inference-dynamo.yaml",
        "evidence/vr200-rke2-ubuntu-training.yaml",
    }


def test_fork_scan_dedupes_flat_copies(aicr_tree: Path) -> None:
    root = aicr_tree / "fork" / "recipes"
    allowlist = load_allowlist(root / "evidence" / "allowlist.yaml")
    scan = scan_tree(root, allowlist=allowlist)
    assert len(scan.files) == 28
    assert len(scan.duplicate_of) == 5
    for dup, first in scan.duplicate_of.items():
        assert dup.count("/") == 1 and first.count("/") == 3
    digests = [str(p.pointer.bundle.digest) for p in scan.usable]
    assert len(digests) == len(set(digests)) == 23
    pending = [p for p in scan.usable if p.pointer.pending]
    assert len(pending) == 2


def test_fork_allowlist_lists_the_atif_slug(aicr_tree: Path) -> None:
    allowlist = load_allowlist(aicr_tree / "fork" / "recipes" / "evidence" / "allowlist.yaml")
    labels = {str(e.source): e.label for e in allowlist.entries if e.source}
    assert labels["728b071aed7124418b1fa9c7f0521e24"] == "atif1996"


def test_old_allowlists(aicr_tree: Path) -> None:
    versions = sorted((aicr_tree / "versions").glob("*/recipes/evidence/allowlist.yaml"))
    assert versions
    for path in versions:
        data = path.read_bytes()
        if b"source: 7c4c0edc8c76\n" in data:  # 12-hex slug era
            with pytest.raises(AllowlistError):
                parse_allowlist(data, file="allowlist.yaml")
        else:
            assert parse_allowlist(data, file="allowlist.yaml").entries


def test_old_flat_versions_parse(aicr_tree: Path) -> None:
    for path in sorted((aicr_tree / "fork" / "versions").glob("*/recipes/evidence/*.yaml")):
        pointer = parse_pointer(path.read_bytes(), file=path.name)
        assert pointer.pending and path.name == f"{pointer.recipe}.yaml"


def test_yaml_backends_agree_on_every_fixture_file(aicr_tree: Path) -> None:
    from generator.errors import YamlError
    from generator.tree.yamlio import BACKENDS, load_yaml

    # PyYAML's libyaml parser and ruamel.yaml are both declared dependencies: a missing one
    # is a broken install, not a reason to compare nothing.
    assert len(BACKENDS) >= 2, f"expected two YAML event parsers, found {BACKENDS}"
    files = sorted(aicr_tree.rglob("*.yaml"))
    assert len(files) > 50
    for path in files:
        data = path.read_bytes()
        results = []
        for backend in BACKENDS:
            try:
                results.append(load_yaml(data, file=path.name, backend=backend))
            except YamlError as exc:
                results.append(("error", exc.message))
        assert all(r == results[0] for r in results), path.name
