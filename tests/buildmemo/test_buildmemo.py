"""The evaluation memo: an identical tree is answered from the cache, any change evaluates
again, and what is reused gives byte for byte the output a full evaluation gives."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from generator.build import BuildOptions, run_build
from generator.buildmemo import EvaluationMemo, evaluation_inputs, fingerprint, tree_digest
from generator.options import EvaluationOptions, MemoRole, TrustMode, memo_role

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A private copy of the embedded demo tree (signed bundles, trust root, overlays)."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def _options(tree: Path, out: Path, cache: Path, **extra: object) -> BuildOptions:
    return BuildOptions.flat(
        recipes=tree,
        out=out,
        cache=cache,
        offline=True,
        quiet=True,
        oci_layouts=(tree / "bundles",),
        trust_root=tree / "trust" / "trusted_root.json",
        source_date_epoch=1_790_000_000,
        **extra,
    )  # type: ignore[arg-type]


def _files(root: Path, *leave_out: str) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).as_posix() not in leave_out
    }


def test_an_unchanged_tree_is_not_evaluated_again(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run_build(_options(tree, tmp_path / "a", cache))
    second = run_build(_options(tree, tmp_path / "b", cache))
    full = run_build(_options(tree, tmp_path / "c", tmp_path / "other", reevaluate=True))
    assert not first.from_memo and second.from_memo and not full.from_memo
    assert second.as_dict()["evaluation"] == "reused"
    assert {k: v for k, v in second.as_dict().items() if k not in ("out", "evaluation")} == {
        k: v for k, v in first.as_dict().items() if k not in ("out", "evaluation")
    }
    assert _files(tmp_path / "b") == _files(tmp_path / "a") == _files(tmp_path / "c")


@pytest.mark.parametrize("change", ["pointer", "allowlist", "overlay", "new-file"])
def test_any_input_change_evaluates_again(tree: Path, tmp_path: Path, change: str) -> None:
    cache = tmp_path / "cache"
    run_build(_options(tree, tmp_path / "a", cache))
    pointer = next((tree / "evidence").rglob("sha256-*.yaml"))
    if change == "pointer":
        pointer.write_bytes(pointer.read_bytes() + b"# edited\n")
    elif change == "allowlist":
        allow = tree / "evidence" / "allowlist.yaml"
        allow.write_bytes(allow.read_bytes() + b"\n# edited\n")
    elif change == "overlay":
        overlay = next((tree / "overlays").glob("*.yaml"))
        overlay.write_bytes(overlay.read_bytes() + b"\n# edited\n")
    else:
        (pointer.parent / "notes.txt").write_text("x", encoding="utf-8")
    again = run_build(_options(tree, tmp_path / "b", cache))
    assert not again.from_memo


def test_options_that_reach_the_evaluation_are_in_the_key(tree: Path, tmp_path: Path) -> None:
    base = _options(tree, tmp_path / "a", tmp_path / "cache")
    key = fingerprint(base.evaluation, None)
    assert key is not None
    assert (
        fingerprint(_options(tree, tmp_path / "other-out", tmp_path / "c2").evaluation, None) == key
    )
    for changed in (
        _options(tree, tmp_path / "a", tmp_path / "cache", preview=True),
        _options(tree, tmp_path / "a", tmp_path / "cache", commit="abc"),
        base.replace(source_date_epoch=1),
    ):
        assert fingerprint(changed.evaluation, None) != key


def test_an_online_production_build_is_never_memoized(tree: Path, tmp_path: Path) -> None:
    online = BuildOptions.flat(recipes=tree, out=tmp_path / "a", offline=False)
    assert fingerprint(online.evaluation, None) is None


def test_a_damaged_memo_is_ignored(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run_build(_options(tree, tmp_path / "a", cache))
    (folder,) = (cache / "evaluation").iterdir()
    (folder / "data" / "pointers.json").write_bytes(b"{not json")
    again = run_build(_options(tree, tmp_path / "b", cache))
    assert not again.from_memo
    assert again.auth_failures == 1  # its data/ no longer matches the sealed digests
    # build-info.json's cache report differs, and so does its digest in the site manifest
    leave_out = ("data/build-info.json", "data/manifest.json")
    assert _files(tmp_path / "b", *leave_out) == _files(tmp_path / "a", *leave_out)
    assert len(list((cache / "evaluation").iterdir())) == 1  # rewritten, one evaluation kept


def test_an_evaluation_with_no_verdict_is_not_kept(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    options = _options(tree, tmp_path / "a", cache)
    key = fingerprint(options.replace(oci_layouts=()).evaluation, None)
    summary = run_build(options.replace(oci_layouts=()))
    assert summary.no_verdict > 0  # offline without the layout: bundles cannot be read
    assert key is not None
    assert EvaluationMemo(cache).load(key) is None


def test_the_tree_digest_sees_names_bytes_and_links(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.yaml").write_bytes(b"x")
    first = tree_digest(tmp_path)
    (tmp_path / "a" / "f.yaml").write_bytes(b"y")
    second = tree_digest(tmp_path)
    (tmp_path / "a" / "link.yaml").symlink_to("f.yaml")
    third = tree_digest(tmp_path)
    assert len({first, second, third}) == 3


def test_reused_and_reevaluated_builds_render_no_page_again(tree: Path, tmp_path: Path) -> None:
    """The documents read back from the memo differ in Python types from those first built
    (lists for tuples); the page cache must still answer every page, and so must a
    re-evaluation of the same tree."""
    cache = tmp_path / "cache"

    def pages() -> dict[str, int]:
        return {p.name: p.stat().st_mtime_ns for p in (cache / "pages").iterdir()}

    run_build(_options(tree, tmp_path / "a", cache))
    first = pages()
    assert run_build(_options(tree, tmp_path / "b", cache)).from_memo
    assert pages() == first
    assert not run_build(_options(tree, tmp_path / "c", cache, reevaluate=True)).from_memo
    assert pages() == first
    assert _files(tmp_path / "c") == _files(tmp_path / "b") == _files(tmp_path / "a")


def test_every_evaluation_option_says_how_it_reaches_the_key(tree: Path, tmp_path: Path) -> None:
    """The key is derived from the option groups an evaluation depends on: each of their
    fields declares its memo role, and every one that is not `MemoRole.NONE` is in the key."""
    options = _options(tree, tmp_path / "a", tmp_path / "cache").evaluation
    declared = {
        f"{group.name}.{item.name}": memo_role(item)
        for group in dataclasses.fields(EvaluationOptions)
        for item in dataclasses.fields(getattr(options, group.name))
    }
    assert set(evaluation_inputs(options, None)) == {
        name for name, role in declared.items() if role is not MemoRole.NONE
    }
    # the options that shaped the old hand-kept list are all still covered
    assert {
        "tree.recipes",
        "tree.bundle_refs",
        "tree.commit",
        "tree.source_url",
        "engine.trust_mode",
        "engine.trust_root",
        "engine.oci_layouts",
        "engine.registry_mirrors",
        "engine.trusted_registries",
        "engine.registry_auth",
        "engine.offline",
        "freshness.aicr",
        "freshness.digests",
        "policy.allow_pending",
        "stamp.preview",
        "stamp.publisher_identity",
        "stamp.publisher_issuer",
        "clock.source_date_epoch",
    } <= set(evaluation_inputs(options, None))


def test_an_option_added_without_a_memo_role_is_refused() -> None:
    """A new evaluation option that does not say how it reaches the key makes the
    fingerprint fail loudly instead of silently reusing a stale evaluation."""

    @dataclasses.dataclass(frozen=True)
    class Grown:
        offline: bool = dataclasses.field(default=True, metadata={"memo": MemoRole.VALUE})
        new_knob: int = 3

    @dataclasses.dataclass(frozen=True)
    class Options:
        engine: Grown = Grown()

    with pytest.raises(TypeError, match="new_knob"):
        evaluation_inputs(Options(), None)


@pytest.mark.parametrize(
    "change",
    [
        {"allow_private_registries": ("127.0.0.1:5000",)},
        {"trust_mode": TrustMode.STAGING},
        {"publisher_identity": "https://example.org/w.yml@refs/heads/main"},
        {"registry_mirrors": {"ghcr.io": "http://127.0.0.1:5000"}},
    ],
)
def test_each_evaluation_option_changes_the_key(
    tree: Path, tmp_path: Path, change: dict[str, object]
) -> None:
    base = _options(tree, tmp_path / "a", tmp_path / "cache")
    assert fingerprint(base.replace(**change).evaluation, None) != fingerprint(
        base.evaluation, None
    )
