"""The Changes page and a recipe's Recent changes in Chromium: the history reads and links."""

from __future__ import annotations

from typing import Any

import pytest

from tests.changes.conftest import RECIPE, Sites
from tests.site.conftest import serve

pytestmark = pytest.mark.browser


def test_the_changes_page_links_the_recipe_and_its_recent_changes(
    sites: Sites, browser: Any
) -> None:
    server, base = serve(sites.later)
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "changes/")
        page.wait_for_load_state("networkidle")
        items = page.locator("ol.ed-changes li")
        assert items.count() > 0
        first = items.first.inner_text()
        assert RECIPE in first and "single signer → confirmed" in page.inner_text("ol.ed-changes")
        feed = page.locator("a[type='application/atom+xml']").first
        response = page.request.get(feed.evaluate("a => a.href"))
        assert response.ok and b"<feed" in response.body()
        items.first.get_by_role("link", name=RECIPE).click()
        page.wait_for_load_state("networkidle")
        assert page.url == f"{base}recipes/{RECIPE}/"
        section = page.locator("#recent-changes")
        assert section.is_visible()
        assert "single signer → confirmed" in section.inner_text()
        own = section.locator("a[type='application/atom+xml']").evaluate("a => a.href")
        assert own == f"{base}recipes/{RECIPE}/feed.xml" and page.request.get(own).ok
        assert errors == []
    finally:
        context.close()
        server.shutdown()
