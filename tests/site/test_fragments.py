"""Finished-HTML fragments: cut out before MkDocs, put back after search, kept out of search."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.site.build import SiteInputs, build_site
from generator.site.mkdocs_adapter import (
    FRAGMENT_CLOSE,
    FRAGMENT_OPEN,
    fragment_slot,
    join_fragments,
    split_fragments,
)
from generator.site.pages import SiteModel, render_pages
from generator.site.resources import locate

DATA = Path(__file__).resolve().parent / "fixtures" / "data"


def test_split_then_join_restores_every_block() -> None:
    text = (
        f"# t\n\n{FRAGMENT_OPEN}\n<div>a &amp; b</div>\n{FRAGMENT_CLOSE}\nmiddle\n"
        f"{FRAGMENT_OPEN}\n<p>two</p>\n{FRAGMENT_CLOSE}\n"
    )
    markdown, blocks = split_fragments(text)
    assert blocks == ("<div>a &amp; b</div>\n", "<p>two</p>\n")
    assert "<div>" not in markdown and "middle" in markdown
    assert fragment_slot(0) in markdown and fragment_slot(1) in markdown
    assert join_fragments(markdown, blocks) == markdown.replace(
        fragment_slot(0), blocks[0]
    ).replace(fragment_slot(1), blocks[1])


@pytest.mark.parametrize(
    "text",
    [
        f"{FRAGMENT_OPEN}\nx\n",
        f"x\n{FRAGMENT_CLOSE}\n",
        f"{FRAGMENT_OPEN}\n{FRAGMENT_OPEN}\nx\n{FRAGMENT_CLOSE}\n",
    ],
)
def test_unbalanced_markers_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        split_fragments(text)


def test_join_leaves_unknown_slots_alone() -> None:
    assert join_fragments(f"a{fragment_slot(5)}b", ("x",)) == f"a{fragment_slot(5)}b"


def test_no_contributor_string_can_forge_a_slot(documents: dict[str, Any]) -> None:
    """Every page's Markdown part, once split, holds only slots the split itself wrote."""
    model = SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )
    for path, text in render_pages(model, locate().pages).items():
        markdown, blocks = split_fragments(text)
        found = re.findall(r"<!--evidence-fragment (\d+)-->", markdown)
        assert [int(n) for n in found] == list(range(len(blocks))), path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Any]) -> Path:
    root = tmp_path_factory.mktemp("fragments")
    out = root / "site"
    build_site(
        SiteInputs(
            index=documents["index"],
            series=documents["series"],
            pointers=documents["pointers"],
            build_info=documents["build_info"],
        ),
        out=out,
        config=None,
        work_dir=root / "work",
        data_dir=DATA,
    )
    return out


def test_built_pages_carry_the_blocks_and_no_slots(site: Path) -> None:
    for page in site.rglob("*.html"):
        assert "<!--evidence-fragment" not in page.read_text(encoding="utf-8"), page
    recipe = next((site / "recipes").glob("*/index.html")).read_text(encoding="utf-8")
    assert 'class="evidence-grid"' in recipe and 'class="pointer-card' in recipe
    assert 'id="catalog"' in (site / "index.html").read_text(encoding="utf-8")


def _index(site: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = json.loads(
        (site / "search" / "search_index.json").read_text(encoding="utf-8")
    )["docs"]
    return docs


def test_search_finds_recipes_tests_and_signer_labels(
    site: Path, documents: dict[str, Any]
) -> None:
    model = SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )
    entries = _index(site)
    for tab in model.tabs:
        text = " ".join(
            e["title"] + " " + e["text"]
            for e in entries
            if e["location"].startswith(f"recipes/{tab.recipe}/")
        )
        assert tab.recipe in text
        for row in tab.doc["combined"].get("tests", []):
            assert row["name"] in text, (tab.recipe, row["name"])
        for grid in [tab.doc["combined"], *tab.doc.get("versions", [])]:
            for row in grid.get("tests", []):
                for s in row.get("signers", []):
                    assert model.label(str(s["src"])) in text


def test_search_never_holds_identities_or_bulk(site: Path, documents: dict[str, Any]) -> None:
    whole = json.dumps(_index(site), ensure_ascii=False)
    for info in documents["index"].get("sources", {}).values():
        ident = str(info.get("signerId") or "")
        if "@" in ident or "/" in ident:
            assert ident not in whole
    for p in documents["pointers"].get("pointers", []):
        for side in ("verified", "claimed"):
            found = ((p.get("signer") or {}).get(side) or {}).get("identity")
            if found:
                assert str(found) not in whole
    assert "Signer identity" not in whole and "How to read this grid" not in whole
