"""Every page links to "Verify this site", which gives the exact commands for this site."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from generator.data.writers import build_info_document
from generator.publish import TEST_SIGNER_IDENTITY, TEST_SIGNER_ISSUER
from generator.site.pages import SiteModel, render_pages
from generator.site.resources import locate

LINK = re.compile(r'href="([^"]*)/about/#verify-this-site"')


def test_every_page_links_to_the_verify_section(signed_site: Path) -> None:
    pages = sorted(signed_site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        assert LINK.search(page.read_text(encoding="utf-8")), page.relative_to(signed_site)
    about = (signed_site / "about" / "index.html").read_text(encoding="utf-8")
    assert 'id="verify-this-site"' in about


def test_the_verify_section_names_this_sites_signer_and_options(signed_site: Path) -> None:
    about = html.unescape((signed_site / "about" / "index.html").read_text(encoding="utf-8"))
    text = re.sub(r"<[^>]+>", "", about)
    assert f"--certificate-identity '{TEST_SIGNER_IDENTITY}'" in text
    assert f"--certificate-oidc-issuer '{TEST_SIGNER_ISSUER}'" in text
    assert "--trust-root trusted_root.json" in text  # the demo root is not production
    info = json.loads((signed_site / "data" / "build-info.json").read_text(encoding="utf-8"))
    assert info["publisher"] == {"identity": TEST_SIGNER_IDENTITY, "issuer": TEST_SIGNER_ISSUER}


def test_a_hostile_identity_cannot_leave_the_command(tmp_path: Path) -> None:
    identity = "x'\n```\n<script>alert(1)</script> `rm -rf ~`"
    info = build_info_document(
        build_time="2027-01-15T00:00:00Z",
        commit=None,
        source_url=None,
        verifier="v",
        trust_name="production",
        trust_production=True,
        trust_refreshed=None,
        trusted_registries=None,
        preview=False,
        publisher={"identity": identity, "issuer": "https://i"},
    )
    index = {
        "meta": {"buildTime": "2027-01-15T00:00:00Z"},
        "groups": [],
        "sources": {},
        "states": {},
        "phases": [],
    }
    about = render_pages(SiteModel(index, {}, {}, info), locate().pages)["about.md"]
    section = about.split("## Verify this site", 1)[1]
    block = section.split("<pre><code>", 1)[1].split("</code></pre>", 1)[0]
    assert "<" not in block and "\n\n" not in block  # one raw HTML block, all text escaped
    shown = html.unescape(block)
    assert "--certificate-identity 'x'\\'' ``` <script>alert(1)</script> `rm -rf ~`' \\\n" in shown
    assert "<script>" not in section
