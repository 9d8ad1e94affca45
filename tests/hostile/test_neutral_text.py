"""Bidi and control characters in contributor strings reach no page raw.

A bundle signed by the demo authority carries bidi overrides and isolates, directional marks,
NUL, ESC, DEL and C1 controls in its test names, stdout, failure messages, component names and
versions (bidi only: recipes are YAML), aicr version and commit, validator images and hardware facts; its allowlist label
carries them too, and a hand-written pointer claims a signer identity holding them. The site is
built with the real CLI and served on loopback. Every page must show each character as a
visible escape (`\\u202e`), never raw (Chromium: `document.body.innerHTML`, and the rendered
text); the search index likewise; `data/pointers.json` keeps the exact strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from generator.model import Phase, SignerIdentity
from generator.testing.authority import TestAuthority
from generator.testing.bundles import TestSpec, build_bundle, default_fingerprint, make_recipe
from tests.hostile.conftest import Sandbox, hostile_spec, new_sandbox

RLO = "\u202e"
#: Each character that must never reach a page raw, and its visible escape.
CONTROLS = (
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
    "\x00",
    "\x01",
    "\x07",
    "\x08",
    "\x0b",
    "\x0c",
    "\x0d",
    "\x1b",
    "\x1f",
    "\x7f",
    "\x80",
    "\x85",
    "\x9f",
)
RAW = re.compile("[" + "".join(CONTROLS) + "]")
BIDI = "gpu\u202eLIAF\u202c ok \u2066iso\u2069 \u200emark\u200f \u061carab"
CTRL = "nul\x00 bell\x07 esc\x1b[31m del\x7f c1\x85\x9f cr\x0d"
SIGNER = SignerIdentity("https://github.com/login/oauth", "neutral-signer@example.net")
LABEL = "acme \u202eDEMRIFNOC\u202c lab \u2067x\u2069"
CLAIMED = "claimed\u202e@evil.example\x1b"


def _bundle(authority: TestAuthority) -> Any:
    tests = [
        TestSpec(
            f"check-{i}{s}",
            "failed" if i % 2 else "passed",
            stdout=(f"out {s}",),
            message=f"failed: {s}",
        )
        for i, s in enumerate((BIDI, CTRL))
    ]
    recipe = make_recipe(
        accelerator="x200",
        nccl_floors={},
        components=((f"comp{BIDI}", "v1"), ("plain", f"v2{BIDI}")),
    )
    fingerprint = default_fingerprint(recipe)
    fingerprint["region"] = {"value": f"us{BIDI}{CTRL}", "source": f"src{RLO}"}
    spec = hostile_spec(
        "x200",
        signer=SIGNER,
        recipe=recipe,
        full=True,
        attested_at=datetime(2026, 11, 1, 12, tzinfo=UTC),
        aicr_version=f"v0.14.2{RLO}x",
        aicr_commit=f"\x1b{RLO}abcdef0123",
        validator_images=(f"ghcr.io/x/y:{RLO}t\x00",),
        fingerprint=fingerprint,
        tests={Phase.CONFORMANCE: tests, Phase.DEPLOYMENT: tests[:1]},
    )
    return build_bundle(spec, authority)


def _yaml_dq(text: str) -> str:
    """`text` as a YAML double-quoted scalar (every non-ASCII or control as an escape)."""
    return json.dumps(text, ensure_ascii=True)


class Site:
    def __init__(self, box: Sandbox, result: Any, paths: list[str], base: str) -> None:
        self.box = box
        self.result = result
        self.paths = paths
        self.base = base


@pytest.fixture(scope="module")
def neutral_site(
    tmp_path_factory: pytest.TempPathFactory, authority: TestAuthority
) -> Iterator[Site]:
    from tests.site.conftest import serve

    box = new_sandbox(tmp_path_factory.mktemp("neutral"))
    paths = [box.add_bundle(_bundle(authority))]
    allowlist = box.evidence / "allowlist.yaml"
    text = allowlist.read_text(encoding="utf-8").replace(
        "community:\n",
        f"community:\n  - label: {_yaml_dq(LABEL)}\n    issuer: {SIGNER.issuer}\n"
        f"    source: {SIGNER.slug}\n",
        1,
    )
    allowlist.write_text(text, encoding="utf-8")
    # a hand-written pointer that claims an identity full of controls (rejected, still shown)
    claimed = (
        "schemaVersion: 1.0.0\nrecipe: x200-eks-ubuntu-training\nattestations:\n"
        "  - attestedAt: 2026-11-01T13:00:00Z\n    bundle:\n"
        "      oci: ghcr.io/acme/aicr-evidence:none\n"
        f"      digest: sha256:{'ce' * 32}\n"
        "      predicateType: https://aicr.run/recipe-evidence/v1\n"
        f"    signer:\n      identity: {_yaml_dq(CLAIMED)}\n"
        f"      issuer: {SIGNER.issuer}\n      rekorLogIndex: 1\n"
    )
    folder = SignerIdentity(SIGNER.issuer, CLAIMED).slug
    paths.append(f"evidence/x200-eks-ubuntu-training/{folder}/sha256-{'ce' * 32}.yaml")
    box.add_pointer(paths[-1], claimed)
    result = box.run(timeout=300)
    server, base = serve(box.out)
    try:
        yield Site(box, result, paths, base)
    finally:
        server.shutdown()


def _pages(site: Site) -> list[str]:
    out = site.box.out
    pages = ["", "rejected/", "sources/", "recipes/x200-eks-ubuntu-training/"]
    pages += [f"sources/{p.parent.name}/" for p in sorted((out / "sources").glob("*/index.html"))]
    assert (out / "recipes" / "x200-eks-ubuntu-training" / "index.html").is_file()
    return pages


def test_build_succeeds_and_data_keeps_the_exact_strings(neutral_site: Site) -> None:
    result = neutral_site.result
    assert result.returncode == 0, result.stdout + result.stderr
    pointers = neutral_site.box.pointers()
    signed, claimed = (pointers[p] for p in neutral_site.paths)
    assert signed["verify"]["exit"] in (0, 1), signed["verify"]
    assert signed["signer"]["label"] == LABEL  # the data keeps the raw text, JSON-escaped
    assert signed["evidence"]["aicrVersion"] == f"v0.14.2{RLO}x"
    names = {t["name"] for t in signed["evidence"]["tests"]}
    assert f"check-0{BIDI}" in names and f"check-1{CTRL}" in names
    assert claimed["signer"]["claimed"]["identity"] == CLAIMED


def test_static_pages_carry_no_raw_control(neutral_site: Site) -> None:
    out = neutral_site.box.out
    shown = 0
    for page in _pages(neutral_site):
        text = (out / page / "index.html").read_text(encoding="utf-8")
        found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
        assert found == [], (page, found)
        shown += text.count("\\u202e")
    assert shown >= 5  # the escapes are there, visibly


def test_search_index_carries_no_raw_control(neutral_site: Site) -> None:
    raw = (neutral_site.box.out / "search" / "search_index.json").read_text(encoding="utf-8")
    index = json.loads(raw)
    for doc in index["docs"]:
        for key in ("title", "text"):
            value = str(doc.get(key, ""))
            assert RAW.search(value) is None, (doc.get("location"), key, value[:200])
    assert any("\\u202e" in str(d.get("text", "")) for d in index["docs"])


@pytest.mark.browser
def test_chromium_shows_visible_escapes_and_no_raw_control(
    neutral_site: Site, browser: Any
) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        recipe_text = rejected_text = ""
        for path in _pages(neutral_site):
            page.goto(neutral_site.base + path)
            page.wait_for_load_state("load")
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
            inner = page.evaluate("() => document.body.innerHTML")
            found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(inner)})
            assert found == [], (path, found)
            assert "\x00" not in inner and RLO not in inner, path
            if path.startswith("recipes/x200"):
                recipe_text = page.inner_text("body")
            if path == "rejected/":
                rejected_text = page.inner_text("body")
        assert "gpu\\u202eLIAF\\u202c ok \\u2066iso\\u2069" in recipe_text
        assert "nul\\u0000 bell\\u0007 esc\\u001b[31m del\\u007f c1\\u0085\\u009f" in recipe_text
        assert "acme \\u202eDEMRIFNOC\\u202c lab" in recipe_text  # the allowlist label
        assert "v0.14.2\\u202ex" in recipe_text
        assert "claimed\\u202e@evil.example\\u001b" in rejected_text  # a claimed identity
    finally:
        context.close()
