"""Light pages: the vendored basic Plotly bundle, loaded by no page's <head>, and a CSP that
allows no inline script but the theme's own, hashed."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from generator.site.build import build_site
from generator.site.csp import allow_added_scripts, inline_script_hashes, policy
from generator.site.resources import locate
from tests.site.conftest import DATA
from tests.site.test_build import inputs

VENDOR = locate().assets / "js" / "vendor"
CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Any]) -> Path:
    root = tmp_path_factory.mktemp("light")
    out = root / "site"
    build_site(
        inputs(documents, site_url="http://127.0.0.1:1/"),
        out=out,
        config=None,
        work_dir=root / "work",
        data_dir=DATA,
    )
    return out


def test_vendored_plotly_is_the_documented_file() -> None:
    body = (VENDOR / "plotly-basic.min.js").read_bytes()
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    assert hashlib.sha256(body).hexdigest() in readme
    assert f"{len(body):,}" in readme
    assert body.startswith(b"/**\n* plotly.js (basic - minified) v4.1.1")
    assert (VENDOR / "plotly-LICENSE.txt").is_file()


def test_no_page_loads_plotly_in_its_head(built: Path) -> None:
    for page in built.rglob("*.html"):
        assert "plotly" not in page.read_text(encoding="utf-8").lower().split("<body", 1)[0], page
    assert (built / "assets" / "js" / "plotly-basic.min.js").is_file()
    assert not (built / "assets" / "js" / "plotly.min.js").exists()


def _unescape(text: str) -> str:
    return text.replace("&#39;", "'").replace("&quot;", '"').replace("&amp;", "&")


def test_every_page_has_a_csp_that_hashes_exactly_its_inline_scripts(built: Path) -> None:
    pages = list(built.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        text = page.read_text(encoding="utf-8")
        metas = CSP_META.findall(text)
        assert len(metas) == 1, page
        head = text.split("<head>", 1)[1]
        assert head.index("Content-Security-Policy") < head.index("<script"), page
        directives = dict(d.strip().split(" ", 1) for d in _unescape(metas[0]).split(";"))
        script_src = directives["script-src"].split()
        assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
        assert script_src[0] == "'self'"
        inline = inline_script_hashes(text)
        assert inline, page  # Material's inline scripts are there ...
        assert set(inline) <= set(script_src[1:]), page  # ... and each one is allowed
        assert directives["object-src"] == "'none'"


def test_policy_hashes_only_runnable_inline_scripts() -> None:
    html = (
        '<script>a()</script><script src="x.js"></script>'
        '<script id="c" type="application/json">{"x": 1}</script><script>a()</script>'
    )
    found = inline_script_hashes(html)
    # base64 of sha256(b"a()"), as `printf 'a()' | openssl dgst -sha256 -binary | base64`
    assert found == ["'sha256-qVpDBgj7bpq5hMAcGp3AOc79J3Y1Z4HvySTwKrWDoy4='"]
    assert "script-src 'self' " + found[0] + ";" in policy(html)
    assert "'sha256-" not in policy("<p>no scripts</p>").split("script-src", 1)[1].split(";")[0]


def test_search_finds_states_and_caveats(built: Path) -> None:
    import json

    index = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    docs = {d["location"]: d["text"] for d in index["docs"]}
    stale = docs["recipes/gb200-eks-ubuntu-training/"]
    assert "Recipe state: Contested, with caveats: stale: 1 of 2 counted attestations" in stale
    clean = docs["recipes/h100-eks-ubuntu-training-kubeflow/"]
    assert "Recipe state: Confirmed, no caveats" in clean
    assert "Counted signers: Acme Cloud Lab, NVIDIA CI" in clean


def test_a_trusted_added_script_is_hashed_into_the_policy_and_nothing_else() -> None:
    meta = (
        '<meta http-equiv="Content-Security-Policy" content="default-src &#39;self&#39;; '
        'script-src &#39;self&#39; &#39;sha256-old&#39;; object-src &#39;none&#39;">'
    )
    before = f"<html><head>{meta}</head><body><script>a()</script></body></html>".encode()
    after = before.replace(b"</body>", b"<script>reload(1, 2)</script></body>")
    out = allow_added_scripts(before, after).decode()
    (added,) = [
        h for h in inline_script_hashes(out) if h not in inline_script_hashes(before.decode())
    ]
    policy_text = CSP_META.findall(out)[0]
    assert added.replace("'", "&#39;") in policy_text
    # the script that was already on the page is not let in by the server's addition
    assert inline_script_hashes("<script>a()</script>")[0].replace("'", "&#39;") not in policy_text
    assert allow_added_scripts(before, before) == before
