"""A recipe page in Debian Chromium: why a check failed is one click from its cell; a cell's
run details (in its column's heading, once per column) are one click from the cell and open
from the keyboard (a `<details>` and a link, no tooltip, no JavaScript needed)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from tests.site.test_browser import Site, build_and_serve

pytestmark = pytest.mark.browser
FAILING = "gb200-eks-ubuntu-training"
MESSAGE = "NCCL bandwidth 251 GB/s is below the pass line 270 GB/s"


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Any], browser: Any
) -> Iterator[Site]:
    docs = copy.deepcopy(documents)
    for p in docs["pointers"]["pointers"]:
        for t in (p.get("evidence") or {}).get("tests") or ():
            if t["result"] == "fail":
                t["failure"] = {"message": MESSAGE, "excerpt": ["rank 0: 251.0 GB/s", "FAIL"]}
    yield from build_and_serve(tmp_path_factory.mktemp("detail"), docs, browser)


def test_the_failure_message_is_visible_one_click_from_the_cell(site: Site) -> None:
    page = site.go(f"recipes/{FAILING}/")
    cell = page.locator(".grid-lens:not([hidden]) td.cell-fail").first
    message = cell.locator(".failure-message")
    assert not message.is_visible()
    cell.locator("summary").click()
    message.wait_for(state="visible")
    assert MESSAGE in message.inner_text()
    assert "rank 0: 251.0 GB/s" in cell.locator(".failure-excerpt").inner_text()
    site.shot("failure-message")
    assert not site.errors


def test_the_run_panel_opens_from_the_keyboard(site: Site) -> None:
    page = site.go(f"recipes/{FAILING}/")
    head = page.locator(".grid-lens:not([hidden]) th.signer-col").first
    summary = head.locator("details.col-details > summary").first
    assert summary.evaluate("e => e.tabIndex") == 0  # in the tab order
    facts = head.locator("dl.cell-facts").first
    assert not facts.is_visible()
    summary.focus()
    page.keyboard.press("Enter")
    facts.wait_for(state="visible")
    text = facts.inner_text()
    for label in ("Run", "aicr", "Kubernetes", "Pointer", "Bundle"):
        assert label in text
    assert head.locator("a").first.inner_text().strip()  # the heading names the signer
    page.keyboard.press("Enter")
    facts.wait_for(state="hidden")
    site.shot("run-panel-keyboard")


@pytest.mark.parametrize("javascript", [True, False])
def test_the_run_details_are_one_click_from_a_cell(
    site: Site, browser: Any, javascript: bool
) -> None:
    context = browser.new_context(java_script_enabled=javascript)
    try:
        page = context.new_page()
        page.goto(site.base + f"recipes/{FAILING}/")
        link = page.locator(".grid-lens:not([hidden]) td.cell-pass > a").first
        target = "#" + (link.get_attribute("href") or "").partition("#")[2]
        assert target.startswith("#run-")  # on this page (script may make the link absolute)
        facts = page.locator(f"dl{target}")
        assert not facts.is_visible()
        link.focus()
        page.keyboard.press("Enter")  # a link: click, tap or Enter
        facts.wait_for(state="visible")
        assert "Bundle" in facts.inner_text()
        # a failed cell's own panel links to its run the same way
        page.goto(site.base + f"recipes/{FAILING}/")
        cell = page.locator(".grid-lens:not([hidden]) td.cell-fail").first
        cell.locator("summary").click()
        run = cell.locator("a.run-link")
        href = "#" + (run.get_attribute("href") or "").partition("#")[2]
        assert href.startswith("#run-")
        run.click()
        page.locator(f"dl{href}").wait_for(state="visible")
    finally:
        context.close()
