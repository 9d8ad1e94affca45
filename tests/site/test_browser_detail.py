"""A recipe page in Debian Chromium: why a check failed is one click from its cell, and the
cell's detail panel opens from the keyboard (a `<details>`, no tooltip, no JavaScript needed)."""

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


def test_the_cell_panel_opens_from_the_keyboard(site: Site) -> None:
    page = site.go(f"recipes/{FAILING}/")
    cell = page.locator(".grid-lens:not([hidden]) td.cell-pass").first
    summary = cell.locator("summary")
    assert summary.evaluate("e => e.tabIndex") == 0  # in the tab order
    facts = cell.locator("dl.cell-facts")
    assert not facts.is_visible()
    summary.focus()
    page.keyboard.press("Enter")
    facts.wait_for(state="visible")
    text = facts.inner_text()
    for label in ("Run", "Signer", "aicr", "Kubernetes", "Pointer", "Bundle"):
        assert label in text
    page.keyboard.press("Enter")
    facts.wait_for(state="hidden")
    site.shot("cell-panel-keyboard")
