"""The built site in Debian Chromium: content, charts, dark mode, routes, offline, escaping."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.site.build import SiteInputs, build_site
from tests.site.conftest import DATA, artifacts_dir, serve

pytestmark = pytest.mark.browser
KUBE = "h100-eks-ubuntu-training-kubeflow"


class Site:
    """A built site served on loopback, with a page that records requests and errors."""

    def __init__(self, base: str, browser: Any) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1300, "height": 1000})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def go(self, path: str) -> Any:
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("networkidle")
        return self.page

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(artifacts_dir() / f"site-{name}.png"), full_page=True)

    def outside(self) -> list[str]:
        return [
            u for u in self.requests if not u.startswith(self.base) and not u.startswith("data:")
        ]


def build_and_serve(tmp: Path, documents: dict[str, Any], browser: Any) -> Iterator[Site]:
    out = tmp / "site"
    out.mkdir()
    server, base = serve(out)
    try:
        build_site(
            SiteInputs(
                index=documents["index"],
                series=documents["series"],
                pointers=documents["pointers"],
                build_info=documents["build_info"],
                preview=False,
                site_url=base,
            ),
            out=out,
            config=None,
            work_dir=tmp / "work",
            data_dir=None,
        )
        site = Site(base, browser)
        yield site
        site.context.close()
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Any], browser: Any
) -> Iterator[Site]:
    yield from build_and_serve(tmp_path_factory.mktemp("browser"), documents, browser)


def test_overview_lists_every_recipe_with_state(site: Site, documents: dict[str, Any]) -> None:
    page = site.go("")
    tabs = [t for g in documents["index"]["groups"] for d in g["dashboards"] for t in d["tabs"]]
    for t in tabs:
        row = page.locator(f".catalog-row[data-recipe='{t['recipe']}']")
        assert row.count() == 1
        label = documents["index"]["states"][t["rollup"]]["label"]
        assert label in row.locator("td").nth(1).inner_text()
    page.select_option("[data-filter='service']", "gke")
    visible = page.locator(".catalog-row:visible")
    assert visible.count() == sum(1 for t in tabs if t["coord"]["service"] == "gke")
    page.select_option("[data-filter='service']", "")
    page.select_option("[data-filter='state']", "CONTESTED")
    assert page.locator(".catalog-row:visible").count() == 1
    site.shot("overview")
    assert site.outside() == [] and site.errors == []


def _open_tab(page: Any, tab: str) -> None:
    page.locator(f".ev-tab-labels label[for='{tab}']").click()
    page.wait_for_selector(f".ev-panel[data-tab='{tab}']", state="visible")


def _chart_matches_table(page: Any) -> None:
    _open_tab(page, "bandwidth")
    page.wait_for_selector(".evidence-chart[data-kind='latest'][data-drawn='1'] .main-svg")
    chart = page.locator(".evidence-chart[data-kind='latest']").first
    ys = chart.evaluate("el => el.data[0].y")
    xs = chart.evaluate("el => el.data[0].x")
    table = chart.locator("xpath=following::table[1]")
    measured = [
        float(t)
        for t in table.locator("tbody tr td:nth-child(2)").all_inner_texts()
        if t.strip() != "not reported"
    ]
    assert ys == measured and len(xs) == len(ys)
    assert 376.4 in ys
    floor_trace = chart.evaluate("el => el.data[1].y[0]")
    assert floor_trace == 300


def test_recipe_page_direct_load(site: Site) -> None:
    page = site.go(f"recipes/{KUBE}/")
    assert page.locator(".evidence-grid:visible .grid-row").count() == 8
    assert "not counted" in page.locator(".evidence-grid:visible thead").inner_text()
    # one line per consensus cell: the grid stays compact
    cell = page.locator(".evidence-grid:visible td.consensus").first
    line = cell.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    assert cell.bounding_box()["height"] < 2.6 * line
    assert "organisations" in (cell.get_attribute("title") or "")
    site.shot("recipe")
    page.fill("[data-grid='filter']", "nccl")
    assert page.locator(".evidence-grid:visible .grid-row:visible").count() == 2
    assert page.locator(".ev-panel[data-tab='hardware']").is_hidden()
    _open_tab(page, "hardware")
    hw = page.locator(".ev-panel[data-tab='hardware'] table").filter(has_text="GPU model")
    assert hw.count() == 1
    runs = page.locator(".ev-panel[data-tab='hardware'] table").filter(has_text="attested")
    signers = runs.locator("thead th").count() - 1  # one column per signer's latest run
    assert signers == 3 and hw.locator("thead th").count() == signers + 2
    assert page.locator(".evidence-grid").first.is_hidden()
    _chart_matches_table(page)
    assert page.url.endswith("#bandwidth")
    assert site.outside() == [] and site.errors == []


def test_tabs_follow_the_hash_and_page_fits(site: Site) -> None:
    page = site.go("recipes/gb200-eks-ubuntu-training/#evidence")
    page.wait_for_selector(".ev-panel[data-tab='evidence']", state="visible")
    assert page.locator(".ev-panel[data-tab='checks']").is_hidden()
    card = page.locator(".pointer-card").filter(has_text="stale").first
    why = card.locator("details.stale-why")
    assert why.get_attribute("open") is None  # collapsed until asked
    why.locator("summary").first.click()
    assert "recipes: bump gpu-operator to v25.3.0" in why.inner_text()
    why.locator("details.stale-diff summary").click()
    assert "+      version: v25.3.0" in why.locator("pre.diff").inner_text()
    site.shot("recipe-stale")
    for path in ["", f"recipes/{KUBE}/", "rejected/"]:
        page = site.go(path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= page.viewport_size["width"], path


def test_stale_filter_and_freshness_column(site: Site, documents: dict[str, Any]) -> None:
    page = site.go("")
    stale = page.locator(".catalog-row[data-recipe='gb200-eks-ubuntu-training'] td.freshness")
    text = " ".join(stale.inner_text().split())
    assert re.search(r"stale \([0-9a-f]{12}… vs current [0-9a-f]{12}…\)", text), text
    unknown = page.locator(".catalog-row[data-recipe='b200-gke-ubuntu-inference'] td.freshness")
    first, *why = unknown.inner_text().strip().splitlines()
    assert first.endswith("unknown") and "could not be computed" in " ".join(why)
    fresh = page.locator(f".catalog-row[data-recipe='{KUBE}'] td.freshness")
    assert fresh.inner_text().strip().endswith("fresh")
    page.check("[data-filter='stale']")
    visible = page.locator(".catalog-row:visible")
    assert visible.count() == 1
    assert visible.first.get_attribute("data-recipe") == "gb200-eks-ubuntu-training"
    page.click(".filter-reset")
    assert page.locator(".catalog-row:visible").count() == len(
        [t for g in documents["index"]["groups"] for d in g["dashboards"] for t in d["tabs"]]
    )


def test_dark_mode_recolours_chart(site: Site) -> None:
    page = site.go(f"recipes/{KUBE}/#bandwidth")
    page.wait_for_selector(".evidence-chart[data-themed='default']")
    before = page.locator(".evidence-chart .xtick text").first.evaluate(
        "el => getComputedStyle(el).fill"
    )
    page.locator("label[for='__palette_1']").first.click()
    page.wait_for_selector(".evidence-chart[data-themed='slate']")
    after = page.locator(".evidence-chart .xtick text").first.evaluate(
        "el => getComputedStyle(el).fill"
    )
    assert before != after
    site.shot("recipe-dark")
    page.locator("label[for='__palette_0']").first.click()
    page.wait_for_selector(".evidence-chart[data-themed='default']")


def test_instant_navigation_draws_chart(site: Site) -> None:
    page = site.go("")
    page.evaluate("window.__stayed = true")
    page.locator(f".catalog-row[data-recipe='{KUBE}'] a").click()
    page.wait_for_url(f"**/recipes/{KUBE}/")
    _chart_matches_table(page)
    assert page.evaluate("window.__stayed === true")  # no full reload: instant navigation
    page.locator("a[href$='rejected/']").first.click()
    page.wait_for_url("**/rejected/")
    assert page.locator("text=rejected").count() > 0
    assert site.errors == [] and site.outside() == []


@pytest.mark.parametrize(
    ("route", "expect"),
    [
        ("#/eks/h100-ubuntu/training-kubeflow", f"recipes/{KUBE}/"),
        (
            "#/oke/gb300-ubuntu/training-gpustack-oci-managed",
            "recipes/gb300-oke-ubuntu-training-gpustack-oci-managed/",
        ),
    ],
)
def test_aicr_hash_route_lands_on_recipe(site: Site, route: str, expect: str) -> None:
    page = site.go(route)
    page.wait_for_url("**/" + expect)
    assert page.url.endswith(expect)


def test_aicr_hash_route_source_and_group(site: Site, documents: dict[str, Any]) -> None:
    src, info = next(
        (s, i) for s, i in documents["index"]["sources"].items() if i["label"] == "NVIDIA CI"
    )
    page = site.go(f"#/eks/h100-ubuntu/training-kubeflow/{src}")
    page.wait_for_url(f"**/sources/{info['slug']}/")
    page = site.go("#/gke")
    page.wait_for_function("document.querySelector(\"[data-filter='service']\").value === 'gke'")
    assert page.locator(".catalog-row:visible").count() == 2


def test_rejected_pointer_shown_as_rejected(site: Site) -> None:
    page = site.go("recipes/l40s-lke-ubuntu-inference/")
    card = page.locator(".pointer-card[data-verdict='rejected']").first
    assert "rejected" in card.inner_text() and "integrity" in card.inner_text()
    assert page.locator(".pointer-card[data-verdict='pending']").count() == 1
    site.shot("recipe-rejected")
    page = site.go("rejected/")
    assert "filename-digest" in page.inner_text("article")
    site.shot("rejected")


HOSTILE_NAME = '<script>alert("t")</script>|x'
HOSTILE_LABEL = '<img src=x onerror=alert("l")> [l](javascript:alert(1)) | `b`'


def hostile(documents: dict[str, Any]) -> dict[str, Any]:
    docs = copy.deepcopy(documents)
    for info in docs["index"]["sources"].values():
        info["label"] = HOSTILE_LABEL + info["label"]
    for g in docs["index"]["groups"]:
        for d in g["dashboards"]:
            for t in d["tabs"]:
                for grid in [t["combined"], *t["versions"]]:
                    for row in grid["tests"]:
                        row["name"] = HOSTILE_NAME + row["name"]
    for p in docs["pointers"]["pointers"]:
        if p["verify"]["failureCause"]:
            p["verify"]["failureCause"]["hint"] = '"><svg onload=alert("h")>'
            p["verify"]["failureCause"]["detail"] = "stdout: </div><script>alert(2)</script>"
        if p["evidence"]:
            p["evidence"]["logUrl"] = "javascript:alert('log')"
            for t in p["evidence"]["tests"]:
                t["skipReason"] = "<b>bold</b> | reason"
    return docs


def test_hostile_strings_render_as_text(
    tmp_path: Path, documents: dict[str, Any], browser: Any
) -> None:
    for site in build_and_serve(tmp_path, hostile(documents), browser):
        for path in [
            "",
            f"recipes/{KUBE}/",
            "recipes/l40s-lke-ubuntu-inference/",
            "rejected/",
            "sources/",
        ]:
            page = site.go(path)
            page.wait_for_timeout(300)
            assert page.locator("article script, article img, article svg[onload]").count() == 0
            assert page.locator("a[href^='javascript:']").count() == 0
            text = page.inner_text("article")
            if path.startswith("recipes/h100"):
                assert HOSTILE_NAME + "gpu-operator-health" in text
            if path == "rejected/":
                assert "</div><script>alert(2)</script>" in text
        site.shot("hostile")
        assert site.dialogs == []
        assert site.outside() == []


def test_fixture_is_the_contract(documents: dict[str, Any]) -> None:
    # the browser tests rely on these facts of the sample set
    raw = json.loads((DATA / "pointers.json").read_text())
    assert any(p["verify"]["pending"] for p in raw["pointers"])
    assert documents["index"]["meta"]["counts"]["recipes"] == 8
