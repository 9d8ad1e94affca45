"""XSS and Markdown injection in every contributor-controlled string, checked in Chromium.

A bundle signed by the demo authority carries `<script>`, `"><img onerror>`, Markdown pipes and
links and `javascript:` URLs in its test names, stdout, failure message, component names and
versions, aicr version and validator images; its signer identity and allowlist label carry them
too, and a hand-written pointer names a `javascript:` OCI reference. The whole site is built with
the real CLI and served on loopback: no dialog may fire and no injected element, attribute or
link may exist on the overview, recipe, source and rejected pages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from generator.model import Phase, SignerIdentity
from generator.testing.authority import TestAuthority
from generator.testing.bundles import TestSpec, build_bundle, make_recipe
from tests.hostile.conftest import (
    Sandbox,
    assert_demo_unchanged,
    assert_rejected,
    hostile_spec,
    new_sandbox,
)

PAYLOADS = (
    "<script>alert('s1')</script>",
    "\"><img src=x onerror=alert('s2')>",
    "| x | [click](javascript:alert('s3')) ![i](javascript:alert('s4'))",
    "javascript:alert('s5')",
    "<a href=\"javascript:alert('s6')\">link</a>",
    "{{ 7*7 }} {% raw %} <svg onload=alert('s7')>",
)
EMAIL_XSS = SignerIdentity(
    "https://github.com/login/oauth", "\"><img src=x onerror=alert('id1')>@evil.example"
)
URI_XSS = SignerIdentity(
    "https://token.actions.githubusercontent.com", "javascript://evil.example/%0aalert('id2')"
)
LABEL_XSS = "<script>alert('label')</script>|[l](javascript:alert('label2'))"
INJECTED = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const n = a.name.toLowerCase(), v = (a.value || '').toLowerCase().trim();
      if (n.startsWith('on')) bad.push(`${el.tagName} ${n}=${v}`);
      if (['href', 'src', 'action', 'formaction', 'xlink:href'].includes(n)
          && v.startsWith('javascript:')) bad.push(`${el.tagName} ${n}=${v}`);
    }
    if (el.tagName === 'SCRIPT' && (el.textContent || '').includes('alert(')) bad.push('script');
    if (el.tagName === 'IMG' && el.getAttribute('src') === 'x') bad.push('img src=x');
  }
  return bad;
}"""


def _xss_bundles(authority: TestAuthority) -> list[Any]:
    tests = [
        TestSpec(
            name,
            "failed" if i % 2 else "passed",
            stdout=(name, f"line | {name}"),
            message=f"failed: {name}",
        )
        for i, name in enumerate(PAYLOADS)
    ]
    recipe = make_recipe(
        accelerator="x100",
        nccl_floors={},
        components=((PAYLOADS[0], PAYLOADS[1]), ("ok-component", PAYLOADS[2])),
    )
    out = []
    for hour, signer in enumerate((EMAIL_XSS, URI_XSS)):
        # distinct attestedAt, so the two bundles have distinct digests (no duplicate pointer)
        spec = hostile_spec(
            "x100",
            signer=signer,
            recipe=recipe,
            full=True,
            attested_at=datetime(2026, 11, 1, 12 + hour, tzinfo=UTC),
            aicr_version="v0.14.2<script>alert('ver')</script>",
            aicr_commit="\"><img src=x onerror=alert('commit')>",
            validator_images=(
                "javascript:alert('img')",
                "ghcr.io/x/y:<script>alert('img2')</script>",
            ),
            tests={Phase.CONFORMANCE: tests, Phase.DEPLOYMENT: tests[:2]},
        )
        out.append(build_bundle(spec, authority))
    return out


class Site:
    def __init__(self, box: Sandbox, result: Any, paths: list[str], base: str) -> None:
        self.box = box
        self.result = result
        self.paths = paths
        self.base = base


@pytest.fixture(scope="module")
def xss_site(tmp_path_factory: pytest.TempPathFactory, authority: TestAuthority) -> Iterator[Site]:
    from tests.site.conftest import serve

    box = new_sandbox(tmp_path_factory.mktemp("xss"))
    paths = [box.add_bundle(b) for b in _xss_bundles(authority)]
    allowlist = box.evidence / "allowlist.yaml"
    text = allowlist.read_text(encoding="utf-8").replace(
        "community:\n",
        "community:\n"
        f"  - label: '{LABEL_XSS.replace(chr(39), chr(39) * 2)}'\n"
        f"    issuer: {EMAIL_XSS.issuer}\n"
        f"    source: {EMAIL_XSS.slug}\n",
        1,
    )
    allowlist.write_text(text, encoding="utf-8")
    # a hand-written pointer whose OCI reference is a javascript: URL
    bad = (
        "schemaVersion: 1.0.0\nrecipe: x100-eks-ubuntu-training\nattestations:\n"
        "  - attestedAt: 2026-11-01T12:00:00Z\n    bundle:\n"
        "      oci: \"javascript:alert('oci')//ghcr.io/x:y\"\n"
        f"      digest: sha256:{'cd' * 32}\n"
        "      predicateType: https://aicr.run/recipe-evidence/v1\n"
        f"    signer:\n      identity: '{EMAIL_XSS.identity.replace(chr(39), chr(39) * 2)}'\n"
        f"      issuer: {EMAIL_XSS.issuer}\n      rekorLogIndex: 1\n"
    )
    paths.append(f"evidence/x100-eks-ubuntu-training/{EMAIL_XSS.slug}/sha256-{'cd' * 32}.yaml")
    box.add_pointer(paths[-1], bad)
    result = box.run(timeout=300)
    server, base = serve(box.out)
    try:
        yield Site(box, result, paths, base)
    finally:
        server.shutdown()


def test_xss_build_succeeds_and_reports_every_item(
    xss_site: Site, demo_states: dict[str, Any]
) -> None:
    assert xss_site.result.returncode == 0, xss_site.result.stdout + xss_site.result.stderr
    assert_demo_unchanged(xss_site.box, demo_states)
    pointers = xss_site.box.pointers()
    signed, other, bad_oci = (pointers[p] for p in xss_site.paths)
    for record in (signed, other):
        assert record["verify"]["exit"] in (0, 1), record["verify"]
    assert signed["signer"]["label"] == LABEL_XSS  # data keeps the raw text; pages escape it
    assert_rejected(bad_oci, words=("javascript",))
    assert xss_site.box.stray_files() == []


def _pages(site: Site) -> list[str]:
    out = site.box.out
    pages = ["", "rejected/", "sources/", "recipes/x100-eks-ubuntu-training/"]
    pages += [f"sources/{p.parent.name}/" for p in sorted((out / "sources").glob("*/index.html"))]
    assert (out / "recipes" / "x100-eks-ubuntu-training" / "index.html").is_file()
    return pages


def test_static_html_carries_no_raw_payload(xss_site: Site) -> None:
    for page in _pages(xss_site):
        text = (xss_site.box.out / page / "index.html").read_text(encoding="utf-8")
        for needle in (
            "<script>alert",
            "<img src=x",
            "<svg onload",
            'href="javascript:',
            '<a href="javascript',
        ):
            assert needle not in text, (page, needle)


@pytest.mark.browser
def test_no_script_runs_in_chromium(xss_site: Site, browser: Any) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        dialogs: list[str] = []

        def on_dialog(dialog: Any) -> None:
            dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        visited = []
        for path in _pages(xss_site):
            page.goto(xss_site.base + path)
            page.wait_for_load_state("load")
            # open every <details> so lazily shown content is in the DOM and rendered
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
            page.wait_for_timeout(50)
            injected = page.evaluate(INJECTED)
            assert injected == [], (path, injected)
            visited.append(path)
            body = page.inner_text("body")
            if path.startswith("recipes/x100"):
                assert "<script>alert('s1')</script>" in body  # shown as text, not run
                assert "{{ 7*7 }}" in body  # no template evaluation of contributor text
        assert dialogs == [], dialogs
        assert len(visited) >= 5
    finally:
        context.close()


def test_data_files_are_plain_json(xss_site: Site) -> None:
    for name in ("index.json", "pointers.json"):
        json.loads((xss_site.box.out / "data" / name).read_text(encoding="utf-8"))
