"""Honest headlines: a recipe's caveats travel with its state on every page that shows it."""

from __future__ import annotations

import copy
import re
import weakref
from typing import Any

import pytest

from generator.site.caveats import CaveatKind, CountedSigner, headline
from generator.site.environment import badges_for, environment
from generator.site.pages import SiteModel, search_summary
from generator.site.resources import locate
from tests.site.test_golden import rendered

KUBE = "h100-eks-ubuntu-training-kubeflow"  # CONFIRMED and clean in the sample data
PHASES = ("deployment", "performance", "conformance")


def _pointer(src: str, *, fresh: str = "fresh", when: str = "2026-09-01T00:00:00Z") -> Any:
    return {
        "signer": {"allowlisted": True, "sourceId": src},
        "freshness": {"state": fresh},
        "evidence": {"loggedAt": when},
    }


def _tab(state: str = "CONFIRMED", *, one_org: bool = False, perf: str = "CONFIRMED") -> Any:
    return {
        "rollup": state,
        "combined": {
            "phaseRollup": {"deployment": "CONFIRMED", "performance": perf, "conformance": state},
            "tests": [{"consensus": "CONFIRMED", "oneOrg": one_org}, {"consensus": "SINGLE"}],
        },
    }


SIGNERS = (CountedSigner("a", "A lab", "a-org"), CountedSigner("b", "B lab", "b-org"))
BUILD = "2026-09-19T00:00:00Z"


def test_clean_confirmed_has_no_caveat() -> None:
    h = headline(_tab(), PHASES, [_pointer("a"), _pointer("b")], 0, SIGNERS, BUILD)
    assert h.clean and h.kinds == "" and h.text == ""


def test_every_caveat_is_named_in_words() -> None:
    latest = [_pointer("a", fresh="stale"), _pointer("b", when="2025-01-01T00:00:00Z")]
    h = headline(_tab(one_org=True, perf="UNTESTED"), PHASES, latest, 2, SIGNERS, BUILD)
    assert [c.kind for c in h.caveats] == [
        CaveatKind.STALE,
        CaveatKind.ONE_ORG,
        CaveatKind.PHASE_WITHOUT_EVIDENCE,
        CaveatKind.OLD,
        CaveatKind.REJECTED,
    ]
    assert "1 of 2 counted attestations" in h.caveats[0].text
    assert h.caveats[0].short == "stale 1/2"
    assert "performance" in h.caveats[2].text
    assert "1 of 2 counted attestations older than" in h.caveats[3].text
    assert "2 pointers" in h.caveats[4].text
    assert not h.clean


def test_two_counted_signers_of_one_org_are_a_caveat_even_without_row_flags() -> None:
    same = (CountedSigner("a", "A lab", "acme"), CountedSigner("b", "A ci", "acme"))
    h = headline(_tab(), PHASES, [_pointer("a"), _pointer("b")], 0, same, BUILD)
    assert [c.kind for c in h.caveats] == [CaveatKind.ONE_ORG]


def test_unlisted_evidence_is_not_counted_as_stale() -> None:
    unlisted = {**_pointer("x", fresh="stale"), "signer": {"allowlisted": False}}
    h = headline(_tab(), PHASES, [_pointer("a"), _pointer("b"), unlisted], 0, SIGNERS, BUILD)
    assert h.clean


def _caveated(documents: dict[str, Any]) -> dict[str, Any]:
    """The sample data with KUBE's counted attestations stale and its passes from one org."""
    docs = copy.deepcopy(documents)
    for p in docs["pointers"]["pointers"]:
        if p.get("recipe") == KUBE and p["signer"].get("allowlisted"):
            p["freshness"] = {**(p.get("freshness") or {}), "state": "stale"}
    for g in docs["index"]["groups"]:
        for d in g["dashboards"]:
            for t in d["tabs"]:
                if t["recipe"] == KUBE:
                    for row in t["combined"]["tests"]:
                        if row["consensus"] == "CONFIRMED":
                            row["oneOrg"] = True
    return docs


def _row(overview: str, recipe: str) -> str:
    return overview.split(f'data-recipe="{recipe}"', 1)[1].split("</tr>", 1)[0]


def test_overview_row_carries_caveats_and_names_the_signers(documents: dict[str, Any]) -> None:
    clean = _row(rendered(documents)["index.md"], KUBE)
    assert "headline-clean" in clean and "with caveats" not in clean
    assert 'data-clean="1"' in clean
    assert "Acme Cloud Lab" in clean and "NVIDIA CI" in clean and "(nvidia)" in clean
    row = _row(rendered(_caveated(documents))["index.md"], KUBE)
    assert "headline-caveated" in row and "Confirmed, with caveats" in row
    assert 'data-clean="0"' in row
    assert re.search(r"stale \d/\d", row) and "one org" in row


def test_overview_has_a_no_caveats_filter(documents: dict[str, Any]) -> None:
    overview = rendered(documents)["index.md"]
    assert 'data-filter="clean" value="1"> no caveats' in overview


def test_recipe_state_box_and_search_carry_caveats(documents: dict[str, Any]) -> None:
    docs = _caveated(documents)
    page = rendered(docs)[f"recipes/{KUBE}.html"]
    box = page.split('<div class="admonition', 1)[1].split("</div>\n<div", 1)[0]
    assert "state-caveated" in box and "Recipe state: Confirmed, with caveats" in box
    assert "counted attestations signed an older recipe" in box
    assert "one organisation" in box
    model = SiteModel(docs["index"], docs["series"], docs["pointers"], docs["build_info"])
    tab = next(t for t in model.tabs if t.recipe == KUBE)
    text = search_summary(model, tab)
    assert "with caveats: stale" in text and "one organisation" in text
    clean = SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )
    assert "no caveats" in search_summary(clean, next(t for t in clean.tabs if t.recipe == KUBE))


def test_source_page_shows_the_caveated_headline(documents: dict[str, Any]) -> None:
    docs = _caveated(documents)
    pages = rendered(docs)
    src = next(
        s
        for s, i in docs["index"]["sources"].items()
        if i["allowlisted"] and i["label"] == "NVIDIA CI"
    )
    page = pages[f"sources/{docs['index']['sources'][src]['slug']}.md"]
    item = page.split(f">{KUBE}</a>:", 1)[1].split("</li>", 1)[0]
    assert "Confirmed, with caveats" in item and "one org" in item


def test_unknown_freshness_says_why(documents: dict[str, Any]) -> None:
    docs = copy.deepcopy(documents)
    for p in docs["pointers"]["pointers"]:
        if p.get("recipe") == KUBE and p["signer"].get("allowlisted"):
            p["freshness"] = {"state": "unknown", "signed": "ab" * 32, "current": None}
    pages = rendered(docs)
    row = _row(pages["index.md"], KUBE)
    assert "? unknown" in row and "digest of this recipe as it stands could not be computed" in row
    box = pages[f"recipes/{KUBE}.html"].split("<strong>Freshness:</strong>", 1)[1]
    assert "because the digest of this recipe as it stands could not be computed" in box
    for p in docs["pointers"]["pointers"]:
        if p.get("recipe") == KUBE and p["signer"].get("allowlisted"):
            p["freshness"] = {"state": "unknown", "signed": None, "current": None}
    assert "records no recipe digest" in _row(rendered(docs)["index.md"], KUBE)


def test_about_page_shows_the_time_placeholder_as_text(documents: dict[str, Any]) -> None:
    about = rendered(documents)["about.md"]
    assert 'say "verified at &lt;time&gt;"' in about
    assert "<time>" not in about


def test_a_headline_is_rendered_once_per_model_and_never_shown_for_another(
    documents: dict[str, Any],
) -> None:
    """The overview and every source page show a recipe's headline, rendered once per model
    (`Badges.headline`): a second model of other documents, in the same process and page
    environment, shows its own, and every page of one model shows the same one."""
    caveated = rendered(_caveated(documents))
    clean = rendered(documents)
    assert "with caveats" in _row(caveated["index.md"], KUBE)
    assert "with caveats" not in _row(clean["index.md"], KUBE)
    assert rendered(_caveated(documents)) == caveated
    for pages in (caveated, clean):
        shown = _row(pages["index.md"], KUBE).split('<td class="overall">', 1)[1]
        shown = shown.split("</td>", 1)[0]
        sources = [p for name, p in pages.items() if name.startswith("sources/") and KUBE in p]
        assert sources and all(f">{KUBE}</a>: {shown}</li>" in page for page in sources)


def test_shared_badges_draw_no_headline_and_a_models_badges_do_not_keep_it(
    documents: dict[str, Any],
) -> None:
    """Headlines come only from a model's own badges; those hold their model weakly, so a
    model whose pages are rendered is freed as soon as the build lets it go (no cycle)."""
    env = environment(locate().pages)
    with pytest.raises(TypeError):
        badges_for(env, None).headline(KUBE)
    model = SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )
    assert "headline" in badges_for(env, model).headline(KUBE)
    gone = weakref.ref(model)
    del model
    assert gone() is None
