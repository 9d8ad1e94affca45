"""Recipe pages come from one MkDocs-rendered shell; the page cache and the worker processes
must give exactly the pages a plain in-process render gives."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from generator.errors import BuildError
from generator.site.build import SiteInputs, build_site
from generator.site.mkdocs_adapter import BODY_MARKER, SHELL_NAME, SHELL_URL, TITLE_TOKEN, PageShell


def _inputs(documents: dict[str, Any]) -> SiteInputs:
    return SiteInputs(
        index=documents["index"],
        series=documents["series"],
        pointers=documents["pointers"],
        build_info=documents["build_info"],
    )


def _recipes(documents: dict[str, Any]) -> list[str]:
    return [
        t["recipe"]
        for g in documents["index"]["groups"]
        for d in g["dashboards"]
        for t in d["tabs"]
    ]


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_finish_escapes_the_title_and_sets_the_address() -> None:
    shell = PageShell.parse(
        f"<title>{TITLE_TOKEN} - site</title><link href='x/{SHELL_URL}'>"
        f"<h1>{TITLE_TOKEN}</h1>{BODY_MARKER}<footer/>",
        "shell.html",
    )
    page = shell.finish("r1", "<b>&", b"<p>body</p>").data.decode()
    assert page == (
        "<title>&lt;b&gt;&amp; - site</title><link href='x/recipes/r1/'>"
        "<h1>&lt;b&gt;&amp;</h1><p>body</p><footer/>"
    )


@pytest.mark.parametrize(
    "text", ["<html>no marker</html>", f"<html>{BODY_MARKER}{BODY_MARKER}</html>"]
)
def test_a_theme_that_loses_the_body_is_a_clear_error(text: str) -> None:
    with pytest.raises(BuildError) as caught:
        PageShell.parse(text, "site/recipes/_evidence-shell/index.html")
    diagnostics = caught.value.as_dict()
    assert "_evidence-shell" in json.dumps(diagnostics)
    assert "page.content" in json.dumps(diagnostics)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Any]) -> Path:
    root = tmp_path_factory.mktemp("shell")
    build_site(_inputs(documents), out=root / "site", config=None, work_dir=root / "w")
    return root / "site"


def test_no_trace_of_the_shell_is_published(built: Path) -> None:
    assert not (built / "recipes" / SHELL_NAME).exists()
    for path, data in _files(built).items():
        if path.endswith((".html", ".xml", ".json")):
            text = data.decode("utf-8")
            assert SHELL_NAME not in text and TITLE_TOKEN not in text and BODY_MARKER not in text, (
                path
            )


def test_every_recipe_page_is_a_full_page(built: Path, documents: dict[str, Any]) -> None:
    for recipe in _recipes(documents):
        text = (built / "recipes" / recipe / "index.html").read_text(encoding="utf-8")
        assert f"<title>{recipe} - " in text
        assert f"<h1>{recipe}</h1>" in text
        assert 'class="ev-tabs"' in text and 'class="md-footer' in text
        assert '<link rel="stylesheet" href="../../assets/' in text


def test_search_sitemap_and_tags_list_every_recipe(built: Path, documents: dict[str, Any]) -> None:
    recipes = _recipes(documents)
    index = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    located = {d["location"]: d for d in index["docs"]}
    sitemap = (built / "sitemap.xml").read_text(encoding="utf-8")
    unzipped = gzip.decompress((built / "sitemap.xml.gz").read_bytes()).decode("utf-8")
    tags = json.loads((built / "tags.json").read_text(encoding="utf-8"))
    tagged = {m["item"]["url"] for m in tags["mappings"]}
    for recipe in recipes:
        entry = located[f"recipes/{recipe}/"]
        assert entry["title"] == recipe and "Checks:" in entry["text"]
        assert entry["tags"]
        assert f"recipes/{recipe}/</loc>" in sitemap
        assert f"recipes/{recipe}/" in tagged
    assert unzipped == sitemap
    assert sitemap.count("<url>") == sitemap.count("</url>")


def test_cached_builds_equal_a_plain_build(
    tmp_path: Path, built: Path, documents: dict[str, Any]
) -> None:
    cache = tmp_path / "pages"
    expected = _files(built)
    for n in range(2):  # the first fills the cache, the second reads it
        out = tmp_path / f"site{n}"
        build_site(
            _inputs(documents), out=out, config=None, work_dir=tmp_path / f"w{n}", page_cache=cache
        )
        assert _files(out) == expected
    names = {p.name for p in cache.iterdir()}
    assert sum(1 for n in names if n.endswith(".html")) == len(_recipes(documents))
    assert sum(1 for n in names if n.startswith("markdown-")) == 1


def test_a_changed_recipe_is_rendered_again_and_stale_entries_go(
    tmp_path: Path, documents: dict[str, Any]
) -> None:
    cache = tmp_path / "pages"
    build_site(
        _inputs(documents),
        out=tmp_path / "a",
        config=None,
        work_dir=tmp_path / "w1",
        page_cache=cache,
    )
    before = {p.name for p in cache.iterdir()}
    changed = json.loads(json.dumps(documents))
    tab = changed["index"]["groups"][0]["dashboards"][0]["tabs"][0]
    tab["coord"]["platform"] = "changed-platform"
    build_site(
        _inputs(changed),
        out=tmp_path / "b",
        config=None,
        work_dir=tmp_path / "w2",
        page_cache=cache,
    )
    after = {p.name for p in cache.iterdir()}
    assert len(after) == len(before)
    assert len(after - before) == 2  # that recipe's page and the Markdown pages
    page = (tmp_path / "b" / "recipes" / tab["recipe"] / "index.html").read_text("utf-8")
    assert "changed-platform" in page


def test_a_corrupt_cache_entry_is_rendered_again(
    tmp_path: Path, built: Path, documents: dict[str, Any]
) -> None:
    cache = tmp_path / "pages"
    build_site(
        _inputs(documents),
        out=tmp_path / "a",
        config=None,
        work_dir=tmp_path / "w1",
        page_cache=cache,
    )
    for entry in cache.iterdir():
        if entry.name.startswith("markdown-"):
            entry.write_text("{not json", encoding="utf-8")
    build_site(
        _inputs(documents),
        out=tmp_path / "b",
        config=None,
        work_dir=tmp_path / "w2",
        page_cache=cache,
    )
    assert _files(tmp_path / "b") == _files(built)


def test_the_caller_data_folder_is_copied_not_moved(
    tmp_path: Path, documents: dict[str, Any]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "index.json").write_text("{}", encoding="utf-8")
    build_site(
        _inputs(documents), out=tmp_path / "s", config=None, work_dir=tmp_path / "w", data_dir=data
    )
    assert (data / "index.json").is_file()
    assert (tmp_path / "s" / "data" / "index.json").is_file()
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "index.json").write_text("{}", encoding="utf-8")
    build_site(
        _inputs(documents),
        out=tmp_path / "t",
        config=None,
        work_dir=tmp_path / "w2",
        data_dir=moved,
        move_data=True,
    )
    assert not moved.exists()
    assert (tmp_path / "t" / "data" / "index.json").is_file()


def test_the_theme_lists_the_same_static_files_without_walking_hidden_folders(
    tmp_path: Path,
) -> None:
    """MkDocs drops every theme file under a hidden folder; not walking them (Material's
    14,000 icons) must give it exactly the static files it copied before."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import Files

    from generator.site.mkdocs_adapter import _list_no_hidden_folders

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# t\n", encoding="utf-8")
    overrides = tmp_path / "overrides"
    for name in (".hidden/a.css", "b.css", "sub/.deeper/c.js", "sub/d.js", "sub/.e.js"):
        (overrides / name).parent.mkdir(parents=True, exist_ok=True)
        (overrides / name).write_text("x", encoding="utf-8")
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(
        "site_name: t\ntheme:\n  name: material\n  custom_dir: overrides\n", encoding="utf-8"
    )
    cfg = load_config(config_file=str(config_file))
    plain = Files([])
    plain.add_files_from_theme(cfg.theme.get_env(), cfg)
    _list_no_hidden_folders(cfg.theme)
    env = cfg.theme.get_env()
    pruned = Files([])
    pruned.add_files_from_theme(env, cfg)
    assert [f.src_uri for f in pruned] == [f.src_uri for f in plain]
    assert {"b.css", "sub/d.js"} <= {f.src_uri for f in pruned}
    assert not any(name.startswith(".icons/") for name in env.list_templates())
    assert env.get_template("main.html") is not None  # templates load as before
