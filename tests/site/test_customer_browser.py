"""The customer's view in Debian Chromium: page weight, CSP, contrast, phones, no JavaScript.

Every test runs on two sites, each built once per module and served on loopback: the
hand-written sample data, and the customer fixture tree (tests/site/fixtures/customer, signed
by the demo seam at test time and built through the CLI). Each test opens its own browser
context (fresh cache, its own viewport or JavaScript setting).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generator.site.build import SiteInputs, build_site
from tests.site.conftest import artifacts_dir, serve

pytestmark = pytest.mark.browser
KUBE = "h100-eks-ubuntu-training-kubeflow"  # has bandwidth charts on both sites


@dataclass(frozen=True)
class Served:
    name: str
    out: Path
    base: str
    browser: Any
    #: A source page of an allowlisted signer, and a state the overview has a stale row in.
    source: str
    stale_state: str

    def context(self, **options: Any) -> Any:
        return self.browser.new_context(**{"viewport": {"width": 1300, "height": 1000}, **options})

    def shot(self, page: Any, name: str, **options: Any) -> None:
        """A screenshot kept under tests/artifacts (or $TEST_ARTIFACTS), named by site."""
        prefix = "site" if self.name == "sample" else self.name
        page.screenshot(path=str(artifacts_dir() / f"{prefix}-{name}.png"), **options)


def _build_sample(tmp: Path, out: Path, base: str, documents: dict[str, Any]) -> str:
    build_site(
        SiteInputs(
            index=documents["index"],
            series=documents["series"],
            pointers=documents["pointers"],
            build_info=documents["build_info"],
            site_url=base,
        ),
        out=out,
        config=None,
        work_dir=tmp / "work",
        data_dir=None,
    )
    return next(i["slug"] for i in documents["index"]["sources"].values() if i["allowlisted"])


@pytest.fixture(scope="module", params=["sample", "customer"])
def served(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    documents: dict[str, Any],
    browser: Any,
) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp(f"served-{request.param}")
    out = tmp / "site"
    if request.param == "customer":  # a private copy: a test below adds a page to it
        shutil.copytree(request.getfixturevalue("customer_site"), out, symlinks=True)
    else:
        out.mkdir()
    server, base = serve(out)
    try:
        if request.param == "customer":
            source = sorted(p.name for p in (out / "sources").iterdir() if p.is_dir())[0]
            state = "CONFIRMED"  # gb200-eks-ubuntu-training: confirmed, both attestations stale
        else:
            source = _build_sample(tmp, out, base, documents)
            state = "CONTESTED"
        yield Served(request.param, out, base, browser, source, state)
    finally:
        server.shutdown()


class Recorder:
    """A page that records every response (with its size) and every console error."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.responses: list[Any] = []
        self.errors: list[str] = []
        self.page.on("response", lambda r: self.responses.append(r))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def go(self, url: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_load_state("networkidle")
        return self.page

    def urls(self) -> list[str]:
        return [r.url for r in self.responses]

    def bytes(self) -> int:
        return sum(len(r.body()) for r in self.responses if r.status == 200)


# --------------------------------------------------------------------------- light pages


def test_overview_loads_no_plotly_and_stays_light(served: Served) -> None:
    context = served.context()
    rec = Recorder(context)
    rec.go(served.base)
    assert not [u for u in rec.urls() if "plotly" in u]
    total = rec.bytes()
    assert total < 600_000, f"overview transferred {total} bytes"
    assert rec.errors == []
    context.close()


def test_recipe_page_loads_plotly_only_to_draw_a_chart(served: Served) -> None:
    context = served.context()
    rec = Recorder(context)
    page = rec.go(f"{served.base}recipes/{KUBE}/")
    assert not [u for u in rec.urls() if "plotly" in u]  # the charts sit in a hidden tab
    page.locator(".ev-tab-labels label[for='bandwidth']").click()
    page.wait_for_selector(".evidence-chart[data-drawn='1'] .main-svg")
    assert [u for u in rec.urls() if "plotly" in u] == [
        f"{served.base}assets/js/plotly-basic.min.js"
    ]
    assert rec.errors == []
    context.close()


def test_csp_refuses_an_inline_script_smuggled_into_a_page(served: Served) -> None:
    text = (served.out / "index.html").read_text(encoding="utf-8")
    probe = served.out / "csp-probe" / "index.html"
    probe.parent.mkdir(exist_ok=True)
    injected = '<script>document.documentElement.dataset.pwned = "1"</script>'
    probe.write_text(text.replace("</body>", injected + "</body>", 1), encoding="utf-8")
    context = served.context()
    rec = Recorder(context)
    page = rec.go(f"{served.base}csp-probe/")
    assert page.evaluate("document.documentElement.dataset.pwned") is None
    assert any("Content Security Policy" in e for e in rec.errors)
    # the theme's own (hashed) inline scripts did run: Material's helpers are defined
    assert page.evaluate("typeof window.__md_get") == "function"
    context.close()


# --------------------------------------------------------------------------- contrast

CONTRAST_JS = (Path(__file__).resolve().parent / "contrast.js").read_text(encoding="utf-8")


def _page_types(served: Served) -> list[str]:
    return [
        "",
        f"recipes/{KUBE}/",
        f"recipes/{KUBE}/#evidence",
        f"sources/{served.source}/",
        "about/",
        "rejected/",
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_meets_wcag_aa_contrast(served: Served, scheme: str) -> None:
    context = served.context(color_scheme=scheme)
    rec = Recorder(context)
    failures: dict[str, list[Any]] = {}
    for path in _page_types(served):
        page = rec.go(served.base + path)
        expected = "slate" if scheme == "dark" else "default"
        assert page.evaluate("document.body.dataset.mdColorScheme") == expected
        # measure the settled page, not a colour or opacity half-way through a transition
        page.add_style_tag(content="*, *::before { transition: none !important; }")
        found = page.evaluate(CONTRAST_JS)
        assert found["checked"] > 30, path  # the audit saw the page's text
        if found["failures"]:
            failures[path or "overview"] = found["failures"][:10]
    context.close()
    assert failures == {}


# --------------------------------------------------------------------------- phones

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}

LAYOUT_JS = """() => {
  const de = document.documentElement;
  const boxes = [...document.querySelectorAll("table")].filter(t => t.offsetParent).map(t => {
    let box = t.parentElement;
    while (box && getComputedStyle(box).overflowX !== "auto") { box = box.parentElement; }
    const wide = t.getBoundingClientRect().width > (box || de).clientWidth + 1;
    const cue = box ? getComputedStyle(box, "::before").content : "none";
    return {wide, boxed: !!box, overflow: box ? box.getAttribute("data-overflow") : null, cue};
  });
  return {scroll: de.scrollWidth, width: de.clientWidth, boxes};
}"""


def test_phone_pages_do_not_overflow_and_wide_tables_scroll_with_a_cue(served: Served) -> None:
    context = served.context(**PHONE)
    rec = Recorder(context)
    wide_seen = 0
    for path in _page_types(served):
        page = rec.go(served.base + path)
        found = page.evaluate(LAYOUT_JS)
        assert found["scroll"] <= found["width"], f"{path or 'overview'} overflows the page"
        for box in found["boxes"]:
            if box["wide"]:
                wide_seen += 1
                assert box["boxed"] and box["overflow"] == "1", path
                assert "scroll sideways" in box["cue"], path
    served.shot(page, "phone-rejected")
    assert wide_seen >= 2  # the overview catalog and the recipe grid at least
    assert rec.errors == []
    context.close()


@pytest.mark.parametrize("width", [1280, 1440, 1600, 1920])
def test_a_laptop_or_desktop_sees_the_whole_overview_table_without_a_cue(
    served: Served, width: int
) -> None:
    """From a laptop's 1280 px up the overview table fits its box: no sideways scroll and no
    cue saying there is one (Material's larger type from 1600 px included)."""
    context = served.context(viewport={"width": width, "height": 900})
    rec = Recorder(context)
    found = rec.go(served.base).evaluate(LAYOUT_JS)
    assert found["scroll"] <= found["width"]
    assert found["boxes"], "the overview shows its catalog table"
    for box in found["boxes"]:
        assert not box["wide"], f"a table is wider than its box at {width} px"
        assert box["overflow"] is None
        assert "scroll sideways" not in box["cue"]
    context.close()


COMMANDS_JS = """() => [...document.querySelectorAll(".check-yourself")].filter(d => {
  d.open = true;
  return d.getClientRects().length > 0;  // cards of the lens on display
}).flatMap(d => [...d.querySelectorAll("pre code")]).map(code => {
  const style = getComputedStyle(code);
  const box = code.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const line = parseFloat(style.lineHeight);
  const natural = w => {  // the word's width on one line
    w.style.whiteSpace = "nowrap";
    const width = w.getBoundingClientRect().width;
    w.style.whiteSpace = "";
    return width;
  };
  const split = [...code.querySelectorAll(".word")]
    .filter(w => w.getBoundingClientRect().height > 1.5 * line && natural(w) <= box)
    .map(w => w.textContent);
  const range = document.createRange();
  range.selectNodeContents(code);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  const copied = selection.toString();
  return {text: code.textContent, copied, split, words: code.querySelectorAll(".word").length};
})"""


def test_phone_commands_wrap_between_words_and_copy_as_printed(served: Served) -> None:
    """At 390 px an option such as --new-bundle-format stays whole (never "--new-" and
    "bundle-format" on two lines); what a reader selects and copies is the command itself."""
    context = served.context(**PHONE)
    rec = Recorder(context)
    blocks = rec.go(served.base + f"recipes/{KUBE}/#evidence").evaluate(COMMANDS_JS)
    assert blocks, "the recipe page prints commands"
    for block in blocks:
        assert block["words"] >= 3 and block["text"].count(" ") == block["words"] - 1
        assert block["split"] == [], block["text"]
        assert block["copied"] == block["text"]
    assert any("--new-bundle-format" in b["text"] for b in blocks)
    context.close()


CHART_JS = """el => {
  const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1;
  const apart = (a, b) => a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
  const svg = el.querySelector(".main-svg").getBoundingClientRect();
  const box = el.getBoundingClientRect();
  const labels = [...el.querySelectorAll(".ytick text, .xtick text")].map(t => t.getBoundingClientRect())
    .filter(r => r.width > 0);
  const legend = el.querySelector(".legend").getBoundingClientRect();
  let overlaps = 0;
  labels.forEach((a, i) => {
    labels.slice(i + 1).forEach(b => { if (!apart(a, b)) overlaps += 1; });
    if (!apart(a, legend)) overlaps += 1;
  });
  return {fits: inside(svg, box), labelsInside: labels.every(r => inside(r, box)), overlaps,
          orientation: el.data[0].orientation || "v", count: labels.length};
}"""


def test_phone_chart_fits_its_box_with_labels_apart(served: Served) -> None:
    context = served.context(**PHONE)
    rec = Recorder(context)
    page = rec.go(f"{served.base}recipes/{KUBE}/")
    page.locator(".ev-tab-labels label[for='bandwidth']").click()
    page.wait_for_selector(".evidence-chart[data-kind='latest'][data-drawn='1'] .main-svg")
    chart = page.locator(".evidence-chart[data-kind='latest']").first
    chart.scroll_into_view_if_needed()
    found = chart.evaluate(CHART_JS)
    served.shot(page, "phone-chart")
    assert found["orientation"] == "h"  # signer names read across, not rotated
    assert found["fits"] and found["labelsInside"]
    assert found["count"] >= 3 and found["overlaps"] == 0
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    context.close()


# --------------------------------------------------------------------------- no JavaScript


def test_without_javascript_controls_hide_and_charts_leave_their_tables(served: Served) -> None:
    context = served.context(java_script_enabled=False)
    page = context.new_page()
    page.goto(served.base)
    assert page.locator(".catalog-row").first.is_visible()
    assert page.locator("#overview-filters").is_hidden()
    page.goto(f"{served.base}recipes/{KUBE}/")
    assert page.locator(".grid-controls").is_hidden()
    assert page.locator(".evidence-grid").first.is_visible()
    page.locator(".ev-tab-labels label[for='bandwidth']").click()  # CSS-only tabs
    charts = page.locator(".evidence-chart")
    assert charts.count() >= 1
    for i in range(charts.count()):
        chart = charts.nth(i)
        assert chart.is_hidden()  # no blank box
        kind = chart.get_attribute("data-kind")
        table = chart.locator("xpath=following-sibling::*[1]")
        if kind == "history":
            assert table.evaluate("el => el.tagName === 'DETAILS' && el.open")
        assert (
            table.locator("table").first.is_visible() if kind == "history" else table.is_visible()
        )
    served.shot(page, "nojs-bandwidth", full_page=True)
    context.close()


# --------------------------------------------------------------------------- URL state


def test_filter_and_lens_state_live_in_the_url_and_survive_reload(served: Served) -> None:
    context = served.context()
    rec = Recorder(context)
    page = rec.go(served.base)
    page.select_option("[data-filter='state']", served.stale_state)
    page.check("[data-filter='stale']")
    page.wait_for_function("location.search.includes('stale=1')")
    assert f"state={served.stale_state}" in page.url and "stale=1" in page.url
    shared = page.url
    shown = page.locator(".catalog-row:visible").count()
    page.reload()
    page.wait_for_load_state("networkidle")
    assert page.locator("[data-filter='state']").input_value() == served.stale_state
    assert page.locator("[data-filter='stale']").is_checked()
    assert page.locator(".catalog-row:visible").count() == shown >= 1
    page.check("[data-filter='clean']")
    page.wait_for_function("location.search.includes('clean=1')")
    assert "clean=1" in page.url and page.locator(".catalog-row:visible").count() == 0
    fresh = context.new_page()  # a shared link opens the same view
    fresh.goto(shared)
    fresh.wait_for_load_state("networkidle")
    assert fresh.locator(".catalog-row:visible").count() == shown
    page = rec.go(f"{served.base}recipes/{KUBE}/")
    page.check("[data-grid='nonpassing']")
    page.fill("[data-grid='filter']", "nccl")
    page.wait_for_function("location.search.includes('filter=nccl')")
    assert "nonpassing=1" in page.url and "filter=nccl" in page.url
    rows = page.locator(".evidence-grid:visible .grid-row:visible").count()
    page.reload()
    page.wait_for_load_state("networkidle")
    assert page.locator("[data-grid='nonpassing']").is_checked()
    assert page.locator("[data-grid='filter']").input_value() == "nccl"
    assert page.locator(".evidence-grid:visible .grid-row:visible").count() == rows
    assert rec.errors == []
    context.close()


# --------------------------------------------------------------------------- anchors

#: Each kind of anchored thing on a recipe page, and the prefix its id starts with.
ANCHORED = {".pointer-card": "ev-", "tr.grid-row": "check-", "tr.history-row": "history-"}
FAILING = "h100-aks-ubuntu-inference-dynamo"  # the customer tree's recipe with a rejected item
REJECTED_CARD = re.compile(r'<div class="pointer-card verdict-rejected" id="(ev-[^"]+)"')


def _ids(page: Any, selector: str) -> list[str]:
    return [str(i) for i in page.locator(selector).evaluate_all("els => els.map(e => e.id)")]


def test_every_card_grid_row_test_and_rejected_item_has_a_stable_anchor(served: Served) -> None:
    context = served.context()
    rec = Recorder(context)
    cards: dict[str, str] = {}  # pointer path -> its card's id on its recipe page
    recipes = sorted(p.name for p in (served.out / "recipes").iterdir() if p.is_dir())
    assert recipes
    for recipe in recipes:
        page = rec.go(f"{served.base}recipes/{recipe}/")
        for selector, prefix in ANCHORED.items():
            ids = _ids(page, selector)
            assert ids or selector == "tr.history-row", (recipe, selector)  # no tests, no history
            assert all(i.startswith(prefix) and len(i) > len(prefix) for i in ids), (recipe, ids)
        every = _ids(page, "[id]")
        assert len(every) == len(set(every)), recipe  # an anchor names one thing on its page
        for card in page.locator(".pointer-card").all():
            cards[str(card.get_attribute("data-path"))] = str(card.get_attribute("id"))
    page = rec.go(f"{served.base}rejected/")
    rejected = page.locator(".pointer-card.verdict-rejected").all()
    assert rejected
    shared = 0
    for card in rejected:
        anchor, path = card.get_attribute("id"), str(card.get_attribute("data-path"))
        assert anchor and anchor.startswith("ev-"), path
        if path in cards:  # the same item has the same anchor on its recipe page
            assert cards[path] == anchor, path
            shared += 1
    assert shared >= 1
    if served.name == "customer":
        page = rec.go(f"{served.base}recipes/{FAILING}/")
        (mine,) = _ids(page, ".pointer-card.verdict-rejected")
        assert mine in _ids(rec.go(f"{served.base}rejected/"), ".pointer-card")
    assert rec.errors == []
    context.close()


LANDED_JS = """id => { const el = document.getElementById(id);
  if (!el) { return false; }
  const r = el.getBoundingClientRect();
  return r.height > 0 && r.bottom > 0 && r.top < window.innerHeight; }"""


def _targets(served: Served) -> tuple[str, list[str]]:
    """A recipe page holding a rejected card, and anchors on it that open something hidden
    by default: the rejected card (Evidence tab), a grid row of a hidden lens if the page has
    one, a test's history row."""
    rejected = REJECTED_CARD.findall((served.out / "rejected" / "index.html").read_text("utf-8"))
    for recipe in sorted(p.name for p in (served.out / "recipes").iterdir() if p.is_dir()):
        text = (served.out / "recipes" / recipe / "index.html").read_text(encoding="utf-8")
        card = next((i for i in REJECTED_CARD.findall(text) if i in rejected), None)
        if card is None:
            continue
        anchors = [card, *re.findall(r'<tr class="history-row" id="([^"]+)"', text)[:1]]
        hidden = text.split('<div class="grid-lens"')[1:]
        hidden = [lens for lens in hidden if lens.split(">", 1)[0].endswith(" hidden")]
        if hidden:
            anchors += re.findall(r'<tr class="grid-row" id="([^"]+)"', hidden[0])[:1]
        return recipe, anchors
    raise AssertionError("no recipe page holds a rejected card")


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "nojs"])
def test_an_anchor_lands_on_its_target_and_survives_reload(
    served: Served, javascript: bool
) -> None:
    recipe, anchors = _targets(served)
    if served.name == "customer":
        assert recipe == FAILING and len(anchors) == 3  # card, history row, hidden-lens row
    context = served.context(java_script_enabled=javascript)
    rec = Recorder(context)
    page = rec.page
    for url in [f"{served.base}rejected/#{anchors[0]}"] + [
        f"{served.base}recipes/{recipe}/#{a}" for a in anchors
    ]:
        anchor = url.rpartition("#")[2]
        rec.go(f"{served.base}about/")  # arrive from elsewhere, as a shared link does
        rec.go(url)
        page.wait_for_function(LANDED_JS, arg=anchor, timeout=5000)
        assert page.url.endswith(f"#{anchor}"), (url, page.url)  # the anchor stays shareable
        page.reload()
        page.wait_for_load_state("networkidle")
        page.wait_for_function(LANDED_JS, arg=anchor, timeout=5000)
        assert page.url.endswith(f"#{anchor}"), (url, page.url)
    assert rec.errors == []
    context.close()


COPY_TARGETS_JS = """() => [...document.querySelectorAll("pre > code")].map(code => {
  const button = code.parentElement.querySelector("[data-clipboard-target]");
  const target = button && button.getAttribute("data-clipboard-target");
  return [code.textContent.slice(0, 60), target ? document.querySelector(target) === code : null];
})"""


def test_every_copy_button_copies_its_own_block(served: Served) -> None:
    """Material names a block for its copy button by the id of the block or of its nearest
    ancestor with one: blocks inside an anchored card or grid row need ids of their own, or
    every button in the card copies the card's first block."""
    context = served.context()
    rec = Recorder(context)
    recipes = sorted(p.name for p in (served.out / "recipes").iterdir() if p.is_dir())
    checked = 0
    for path in [*(f"recipes/{r}/" for r in recipes), "rejected/"]:
        page = rec.go(served.base + path)
        blocks = page.evaluate(COPY_TARGETS_JS)
        assert [b for b in blocks if b[1] is not True] == [], path
        checked += len(blocks)
    assert checked > 0
    assert rec.errors == []
    context.close()
