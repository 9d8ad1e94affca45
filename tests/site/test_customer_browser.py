"""The customer's view in Debian Chromium: page weight, CSP, contrast, phones, no JavaScript.

One site is built from the sample data and served on loopback for the whole module; each test
opens its own browser context (fresh cache, its own viewport or JavaScript setting).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generator.site.build import SiteInputs, build_site
from tests.site.conftest import serve

pytestmark = pytest.mark.browser
KUBE = "h100-eks-ubuntu-training-kubeflow"  # has bandwidth charts
STALE = "gb200-eks-ubuntu-training"  # contested, with a stale counted attestation


@dataclass(frozen=True)
class Served:
    out: Path
    base: str
    browser: Any

    def context(self, **options: Any) -> Any:
        return self.browser.new_context(**{"viewport": {"width": 1300, "height": 1000}, **options})


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Any], browser: Any
) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("customer")
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
                site_url=base,
            ),
            out=out,
            config=None,
            work_dir=tmp / "work",
            data_dir=None,
        )
        yield Served(out, base, browser)
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


def _page_types(documents: dict[str, Any]) -> list[str]:
    slug = next(i["slug"] for i in documents["index"]["sources"].values() if i["allowlisted"])
    return [
        "",
        f"recipes/{KUBE}/",
        f"recipes/{KUBE}/#evidence",
        f"sources/{slug}/",
        "about/",
        "rejected/",
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_meets_wcag_aa_contrast(
    served: Served, documents: dict[str, Any], scheme: str
) -> None:
    context = served.context(color_scheme=scheme)
    rec = Recorder(context)
    failures: dict[str, list[Any]] = {}
    for path in _page_types(documents):
        page = rec.go(served.base + path)
        expected = "slate" if scheme == "dark" else "default"
        assert page.evaluate("document.body.dataset.mdColorScheme") == expected
        found = page.evaluate(CONTRAST_JS)
        assert found["checked"] > 30, path  # the audit saw the page's text
        if found["failures"]:
            failures[path or "overview"] = found["failures"][:10]
    context.close()
    assert failures == {}
