"""Golden pages for the sample fixture set (regenerate with UPDATE_GOLDEN=1).

Markdown pages are golden as `<page>.md`; recipe pages, which are finished HTML bodies placed
into the page shell, as `recipes/<recipe>.html`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from generator.site.pages import SiteModel, render_pages, render_recipe_pages
from generator.site.resources import locate

GOLDEN = Path(__file__).resolve().parent / "golden"


def rendered(documents: dict[str, Any]) -> dict[str, str]:
    model = SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )
    pages = render_pages(model, locate().pages)
    for path, page in render_recipe_pages(model, locate().pages).items():
        pages[path[:-3] + ".html"] = page.body
    return pages


def test_golden_markdown(documents: dict[str, Any]) -> None:
    pages = rendered(documents)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        for old in [*GOLDEN.rglob("*.md"), *GOLDEN.rglob("*.html")]:
            old.unlink()
        for rel, text in pages.items():
            target = GOLDEN / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
    expected = {
        p.relative_to(GOLDEN).as_posix(): p.read_text(encoding="utf-8")
        for p in [*GOLDEN.rglob("*.md"), *GOLDEN.rglob("*.html")]
    }
    if not expected:
        pytest.fail("no golden files; run with UPDATE_GOLDEN=1 once and review them")
    assert sorted(pages) == sorted(expected)
    for rel, text in pages.items():
        assert text == expected[rel], f"{rel} differs from its golden file"


def test_rendering_is_deterministic(documents: dict[str, Any]) -> None:
    assert rendered(documents) == rendered(documents)


def test_every_recipe_and_source_has_a_page(documents: dict[str, Any]) -> None:
    pages = rendered(documents)
    recipes = {
        t["recipe"]
        for g in documents["index"]["groups"]
        for d in g["dashboards"]
        for t in d["tabs"]
    }
    assert {f"recipes/{r}.html" for r in recipes} <= set(pages)
    slugs = {s["slug"] for s in documents["index"]["sources"].values()}
    assert {f"sources/{s}.md" for s in slugs} <= set(pages)


def test_recipe_page_facts(documents: dict[str, Any]) -> None:
    page = rendered(documents)["recipes/gb300-oke-ubuntu-training-gpustack-oci-managed.html"]
    assert (
        "aicr recipe --service oke --accelerator gb300 --os ubuntu --intent training "
        "--profile gpuStack=oci-managed"
    ) in page
    assert "<td><em>not reported</em></td>" in page  # minimal bundle: driver stripped
    assert "minimal bundle" in page
    kube = rendered(documents)["recipes/h100-eks-ubuntu-training-kubeflow.html"]
    assert "<tr><td>NVIDIA CI</td><td>376.4</td><td>300</td><td>270</td>" in kube
    assert "909.3" in kube and "700" in kube
    assert "not counted" in kube


def test_rejected_page_lists_every_problem(documents: dict[str, Any]) -> None:
    page = rendered(documents)["rejected.md"]
    bad = [
        p
        for p in documents["pointers"]["pointers"]
        if p["verify"]["exit"] >= 2 or p["verify"]["pending"]
    ]
    assert len(bad) == 4
    for p in bad:
        assert p["path"].split("/")[-1][:24] in page
    assert "integrity" in page and "filename-digest" in page and "pending signature" in page
