"""The evaluation memo: an identical tree is answered from the cache, any change evaluates
again, and what is reused gives byte for byte the output a full evaluation gives."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import generator.build as build_module
from generator.build import BuildOptions, run_build
from generator.buildmemo import EvaluationMemo, evaluation_inputs, fingerprint
from generator.evaluate.memoize import output_key
from generator.folderdigest import tree_digest
from generator.options import EvaluationOptions, MemoRole, TrustMode, memo_role
from generator.site.resources import SiteResources, locate
from tests._support import demo_build

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A private copy of the embedded demo tree (signed bundles, trust root, overlays)."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def _options(tree: Path, out: Path, cache: Path, **extra: object) -> BuildOptions:
    opts: BuildOptions = demo_build(tree, out, cache, source_date_epoch=1_790_000_000, **extra)
    return opts


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


def test_known_digests_stand_in_for_reading_only_when_they_are_right(tmp_path: Path) -> None:
    """`tree_digest(known=...)`: a correct size and sha256 give the digest reading gives; a
    wrong sha256 of the right size changes it (so it is used); another size is read again."""
    import hashlib

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.json").write_bytes(b"content")
    (tmp_path / "g.json").write_bytes(b"other")
    honest = tree_digest(tmp_path)
    right = {"a/f.json": (7, hashlib.sha256(b"content").digest())}
    assert tree_digest(tmp_path, right) == honest
    wrong = {"a/f.json": (7, hashlib.sha256(b"CONTENT").digest())}
    assert tree_digest(tmp_path, wrong) != honest
    stale_size = {"a/f.json": (6, hashlib.sha256(b"conten").digest())}
    assert tree_digest(tmp_path, stale_size) == honest


def test_the_record_of_a_published_site_is_its_folder_digest(tree: Path, tmp_path: Path) -> None:
    """The stamp takes the manifest's digests: right for the folder as published, and wrong
    (so the next build writes) for a listed file changed after its manifest."""
    from generator.evaluate.memoize import listed_digests

    out = tmp_path / "site"
    run_build(_options(tree, out, tmp_path / "cache"))
    listed = listed_digests(out)
    assert "data/index.json" in listed and "data/manifest.json" not in listed
    assert tree_digest(out, listed) == tree_digest(out)
    index = out / "data" / "index.json"
    data = index.read_bytes()
    index.write_bytes(data[:-2] + bytes([data[-2] ^ 1]) + data[-1:])
    assert tree_digest(out, listed) != tree_digest(out)


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


def test_a_recipe_product_depends_on_neither_the_commit_nor_what_only_the_site_shows(
    tree: Path, tmp_path: Path
) -> None:
    """The next commit of a PR changes `--commit` (and git's HEAD) but no recipe's product: the
    per-recipe inputs leave both out (the few products explaining stale evidence are bound to
    the commit themselves, `generator.evaluate.perrecipe`), the whole build's key does not."""
    options = _options(tree, tmp_path / "a", tmp_path / "cache").evaluation
    per_recipe = evaluation_inputs(options, None, per_recipe=True)
    assert "tree.commit" not in per_recipe and "tree.source_url" not in per_recipe
    assert per_recipe["tree.recipes"] == [str(Path(options.tree.recipes).absolute())]
    moved = options.replace(commit="a" * 40, source_url="https://example.test/evidence")
    assert evaluation_inputs(moved, None, per_recipe=True) == per_recipe
    assert evaluation_inputs(moved, None) != evaluation_inputs(options, None)


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


# --------------------------------------------------------------------------- an unchanged --out
# An unchanged build into a folder that already holds its site writes nothing (see
# generator.evaluate.memoize): the folder is hashed and compared with what the sealed memo
# recorded when it was published; any difference, in the site or in what it depends on, builds
# and writes as usual, which puts the folder right.


@pytest.fixture()
def writes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The output folders each build wrote (`write_output` calls)."""
    seen: list[Path] = []
    inner = build_module.write_output

    def spy(options: BuildOptions, *args: Any, **kwargs: Any) -> Any:
        seen.append(options.output.out)
        return inner(options, *args, **kwargs)

    monkeypatch.setattr(build_module, "write_output", spy)
    return seen


def _files_and_links(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def _mtimes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*")}


def test_a_second_identical_build_writes_nothing(
    tree: Path, tmp_path: Path, writes: list[Path]
) -> None:
    options = _options(tree, tmp_path / "out", tmp_path / "cache")
    first = run_build(options)
    written, times = _files_and_links(tmp_path / "out"), _mtimes(tmp_path / "out")
    second = run_build(options)
    third = run_build(options)
    assert (first.wrote, second.wrote, third.wrote) == (True, False, False)
    assert len(writes) == 1
    assert second.as_dict()["output"] == "unchanged" and first.as_dict()["output"] == "written"
    assert "nothing written" in second.describe()
    assert _files_and_links(tmp_path / "out") == written and _mtimes(tmp_path / "out") == times
    counted = ("pointers", "verified", "rejected", "pending", "noVerdict", "recipes", "buildTime")
    assert {k: second.as_dict()[k] for k in counted} == {k: first.as_dict()[k] for k in counted}
    # and it is what a build of its own, on a cache of its own, publishes
    cold = run_build(_options(tree, tmp_path / "cold", tmp_path / "cold-cache"))
    assert cold.wrote and _files_and_links(tmp_path / "cold") == written


def _edit(out: Path) -> None:
    page = out / "index.html"
    page.write_bytes(page.read_bytes().replace(b"Confirmed", b"Contested", 1))


def _add(out: Path) -> None:
    (out / "recipes" / "planted.html").write_text("<p>not built</p>", encoding="utf-8")


def _remove(out: Path) -> None:
    (out / "data" / "pointers.json").unlink()


def _link(out: Path) -> None:
    page = out / "about" / "index.html"
    target = out / "index.html"
    page.unlink()
    page.symlink_to(target)


def _truncate(out: Path) -> None:
    with (out / "data" / "index.json").open("r+b") as fh:
        fh.truncate(10)


@pytest.mark.parametrize("damage", [_edit, _add, _remove, _link, _truncate])
def test_any_change_to_the_published_folder_is_built_over(
    tree: Path, tmp_path: Path, writes: list[Path], damage: Any
) -> None:
    """The same byte count, mtime and names are not enough: the bytes themselves are compared."""
    options = _options(tree, tmp_path / "out", tmp_path / "cache")
    run_build(options)
    written = _files_and_links(tmp_path / "out")
    stat_before = {p: os.stat(p) for p in [tmp_path / "out" / "index.html"]}
    damage(tmp_path / "out")
    if damage is _edit:  # same length, same mtime: only the bytes tell
        page = tmp_path / "out" / "index.html"
        os.utime(page, ns=(stat_before[page].st_atime_ns, stat_before[page].st_mtime_ns))
        assert page.stat().st_size == stat_before[page].st_size
    again = run_build(options)
    assert again.wrote and len(writes) == 2
    assert _files_and_links(tmp_path / "out") == written  # put right
    assert not run_build(options).wrote  # and recorded again


def test_a_forged_or_damaged_record_writes_and_is_counted(
    tree: Path, tmp_path: Path, writes: list[Path]
) -> None:
    cache = tmp_path / "cache"
    options = _options(tree, tmp_path / "out", cache)
    run_build(options)
    (meta,) = (cache / "evaluation").glob("*/meta.json")
    sealed = bytearray(meta.read_bytes())
    sealed[-3] ^= 1
    meta.write_bytes(bytes(sealed))
    again = run_build(options)
    assert again.wrote and again.auth_failures == 1


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param({"site_url": "https://example.org/evidence/"}, id="site-url"),
        pytest.param({"reevaluate": True}, id="reevaluate"),
        pytest.param({"data_only": True}, id="data-only"),
    ],
)
def test_another_output_option_writes(
    tree: Path, tmp_path: Path, writes: list[Path], changed: dict[str, Any]
) -> None:
    options = _options(tree, tmp_path / "out", tmp_path / "cache")
    run_build(options)
    again = run_build(options.replace(**changed))
    assert again.wrote and len(writes) == 2


def test_a_changed_configuration_or_the_environment_it_reads_writes(
    tree: Path, tmp_path: Path, writes: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example configuration takes its site_url from $SITE_URL (`!ENV`)."""
    config = tmp_path / "site.yml"
    text = (REPO / "mkdocs.example.yml").read_text(encoding="utf-8")
    assert "!ENV [SITE_URL" in text
    config.write_text(text, encoding="utf-8")
    monkeypatch.delenv("SITE_URL", raising=False)
    options = _options(tree, tmp_path / "out", tmp_path / "cache", config=config)
    run_build(options)
    assert not run_build(options).wrote
    monkeypatch.setenv("SITE_URL", "https://example.org/elsewhere/")
    assert run_build(options).wrote
    assert "https://example.org/elsewhere/" in (tmp_path / "out" / "sitemap.xml").read_text()
    assert not run_build(options).wrote
    config.write_text(text.replace("site_name:", "site_name: Other #", 1), encoding="utf-8")
    assert run_build(options).wrote
    assert len(writes) == 3
    snippets = text + "\nmarkdown_extensions:\n  - pymdownx.snippets\n"
    config.write_text(snippets, encoding="utf-8")
    assert output_key(options, "k") is None  # it may read any file: always built


def test_the_output_key_sees_the_templates_the_assets_and_the_memo(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = _options(tree, tmp_path / "out", tmp_path / "cache")
    real = locate()
    base = output_key(options, "memo-a")
    assert base is not None and base == output_key(options, "memo-a")
    assert output_key(options, "memo-b") != base
    copy = tmp_path / "res"
    shutil.copytree(real.pages.parent, copy / "site_templates")
    shutil.copytree(real.assets, copy / "resources" / "assets")
    moved = SiteResources(
        pages=copy / "site_templates" / "pages",
        overrides=copy / "site_templates" / "overrides",
        assets=copy / "resources" / "assets",
        default_config=real.default_config,
    )
    monkeypatch.setattr("generator.evaluate.memoize.locate", lambda: moved)
    assert output_key(options, "memo-a") == base  # the same bytes elsewhere
    macros = moved.pages / "_macros.j2"
    macros.write_bytes(macros.read_bytes() + b"\n")
    templates_changed = output_key(options, "memo-a")
    assert templates_changed != base
    css = next(moved.assets.rglob("*.css"))
    css.write_bytes(css.read_bytes() + b"\n")
    assert output_key(options, "memo-a") not in (base, templates_changed)


def test_the_tree_digest_never_holds_a_big_file_in_memory(tmp_path: Path) -> None:
    """A contributor can commit a file of any size: it is hashed a chunk at a time (the
    digest is still that of its bytes)."""
    import tracemalloc

    big = tmp_path / "evidence" / "big.yaml"
    big.parent.mkdir()
    size = 48 << 20
    with big.open("wb") as fh:
        fh.truncate(size)  # sparse: 48 MiB of zeros without writing them
    tracemalloc.start()
    try:
        digest = tree_digest(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak} bytes held at once"
    big.write_bytes(b"\0" * (size - 1) + b"\1")  # the last byte is read too
    assert tree_digest(tmp_path) != digest


_WARM_PROBE = """
import sys
from pathlib import Path
import generator.cli.shell  # noqa: F401 - the CLI's imports count too
from generator.build import BuildOptions, run_build
tree, out, cache = (Path(a) for a in sys.argv[1:4])
summary = run_build(BuildOptions.flat(
    recipes=tree, out=out, cache=cache, offline=True, quiet=True,
    oci_layouts=(tree / "bundles",), trust_root=tree / "trust" / "trusted_root.json",
    source_date_epoch=1_790_000_000,
))
print(summary.wrote, summary.from_memo, "sigstore.models" in sys.modules, "requests" in sys.modules)
"""


def test_a_build_the_memo_answers_never_loads_sigstore(tree: Path, tmp_path: Path) -> None:
    """sigstore is a third of a second of imports: a build whose output is already published
    neither verifies nor parses a trust root, so it must not load it; one that verifies does.
    Nor does an offline build that asks no registry load the HTTP libraries (a tenth of a
    second), and a build that verifies nothing parses no trust root its cache has seen parse
    (`generator.verify.trustmemo`)."""
    import subprocess
    import sys

    args = [str(tree), str(tmp_path / "out"), str(tmp_path / "cache")]

    def probe() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", _WARM_PROBE, *args],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        return done.stdout.split()

    assert probe()[:3] == ["True", "False", "True"]  # evaluated and verified: sigstore loaded
    assert probe() == ["False", "True", "False", "False"]  # answered by the memo: neither
    sorted((tree / "evidence").glob("*/*/sha256-*.yaml"))[0].unlink()
    # evaluated again, every verdict from the cache, the trust root known to parse: neither
    assert probe() == ["True", "False", "False", "False"]


def test_a_memo_document_reads_back_as_the_same_values(tmp_path: Path) -> None:
    """Memo documents are parsed by orjson, and by Python's parser where orjson refuses (an
    integer beyond 64 bits): the values are the same either way, and a file that does not
    match its listed digest is never parsed."""
    import json as std_json

    from generator.cacheauth import file_digest
    from generator.memofiles import Changed as _Changed
    from generator.memofiles import Checked as _Checked

    docs = {
        "plain.json": b'{"a": [1, 2.5, -0.0, 1e-07, "\\u003c&"], "b": {"c": null}}',
        "big.json": b'{"n": 123456789012345678901234567890, "f": 1.5}',
    }
    for name, data in docs.items():
        (tmp_path / name).write_bytes(data)
    checked = _Checked(tmp_path, {name: file_digest(data) for name, data in docs.items()})
    for name, data in docs.items():
        assert checked.json(name) == std_json.loads(data)
    (tmp_path / "plain.json").write_bytes(docs["plain.json"].replace(b"2.5", b"3.5"))
    with pytest.raises(_Changed):
        _Checked(tmp_path, {"plain.json": file_digest(docs["plain.json"])}).json("plain.json")


def test_the_installed_libraries_are_what_an_upgrade_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.evaluate.memoize import installed_libraries

    site = tmp_path / "site-packages"
    (site / "lib-1.0.dist-info").mkdir(parents=True)
    (site / "old.egg-info").mkdir()
    (site / "old.egg-info" / "PKG-INFO").write_text("Version: 1\n", encoding="utf-8")
    (site / "module.py").write_text("", encoding="utf-8")
    path = [str(site), str(tmp_path / "missing"), str(tmp_path / "site-packages" / "module.py")]
    before = installed_libraries(path)
    assert [name.split(" ")[0] for name in before] == ["lib-1.0.dist-info", "old.egg-info"]
    assert installed_libraries(path) == before
    (site / "lib-1.0.dist-info").rename(site / "lib-1.1.dist-info")
    upgraded = installed_libraries(path)
    assert upgraded != before
    (site / "old.egg-info" / "PKG-INFO").write_text("Version: 2\n", encoding="utf-8")
    assert installed_libraries(path) != upgraded  # an egg-info's version is in PKG-INFO
    monkeypatch.chdir(site)
    assert installed_libraries([""]) == installed_libraries(path)  # "" is the working folder


@pytest.mark.parametrize("planted", ["fifo", "link"])
def test_a_planted_pkg_info_is_not_waited_on_or_followed(tmp_path: Path, planted: str) -> None:
    """The working folder is on the path, and a contributor's checkout may be it."""
    from generator.evaluate.memoize import installed_libraries

    info = tmp_path / "hostile.egg-info" / "PKG-INFO"
    info.parent.mkdir()
    if planted == "fifo":
        os.mkfifo(info)  # reading it would wait forever
    else:
        (tmp_path / "secret").write_text("elsewhere", encoding="utf-8")
        info.symlink_to(tmp_path / "secret")
    assert installed_libraries([str(tmp_path)]) == ["hostile.egg-info unreadable"]
