"""An unchanged build into a folder that already holds its site writes nothing (see
generator.evaluate.memoize): the folder is hashed, compared with what the sealed memo recorded
when it was published, and any difference, in the site or in what it depends on, builds and
writes as usual, which puts the folder right."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import generator.build as build_module
from generator.build import BuildOptions, run_build
from generator.evaluate.memoize import output_key
from generator.site.resources import SiteResources, locate

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


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


def _options(tree: Path, out: Path, cache: Path, **extra: Any) -> BuildOptions:
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
    )


def _files(root: Path) -> dict[str, bytes]:
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
    written, times = _files(tmp_path / "out"), _mtimes(tmp_path / "out")
    second = run_build(options)
    third = run_build(options)
    assert (first.wrote, second.wrote, third.wrote) == (True, False, False)
    assert len(writes) == 1
    assert second.as_dict()["output"] == "unchanged" and first.as_dict()["output"] == "written"
    assert "nothing written" in second.describe()
    assert _files(tmp_path / "out") == written and _mtimes(tmp_path / "out") == times
    counted = ("pointers", "verified", "rejected", "pending", "noVerdict", "recipes", "buildTime")
    assert {k: second.as_dict()[k] for k in counted} == {k: first.as_dict()[k] for k in counted}
    # and it is what a build of its own, on a cache of its own, publishes
    cold = run_build(_options(tree, tmp_path / "cold", tmp_path / "cold-cache"))
    assert cold.wrote and _files(tmp_path / "cold") == written


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
    written = _files(tmp_path / "out")
    stat_before = {p: os.stat(p) for p in [tmp_path / "out" / "index.html"]}
    damage(tmp_path / "out")
    if damage is _edit:  # same length, same mtime: only the bytes tell
        page = tmp_path / "out" / "index.html"
        os.utime(page, ns=(stat_before[page].st_atime_ns, stat_before[page].st_mtime_ns))
        assert page.stat().st_size == stat_before[page].st_size
    again = run_build(options)
    assert again.wrote and len(writes) == 2
    assert _files(tmp_path / "out") == written  # put right
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
