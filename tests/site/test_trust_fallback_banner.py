"""A trust root that could not be refreshed (a network fault) is announced on every page."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema

from generator.data.writers import build_info_document, schema_text
from generator.site.build import SiteInputs, build_site

REASON = (
    "the TUF refresh of https://tuf-repo-cdn.sigstore.dev could not reach the repository "
    "(DownloadError: <offline>); verified with the root bundled in sigstore instead"
)


def _inputs(documents: dict[str, Any]) -> SiteInputs:
    return SiteInputs(
        index=documents["index"],
        series=documents["series"],
        pointers=documents["pointers"],
        build_info=documents["build_info"],
        preview=False,
        site_url=None,
    )


def test_every_page_carries_the_fallback_banner(tmp_path: Path, documents: dict[str, Any]) -> None:
    docs = copy.deepcopy(documents)
    docs["build_info"]["trustRootFallback"] = {"reason": REASON}
    out = tmp_path / "site"
    build_site(_inputs(docs), out=out, config=None, work_dir=tmp_path / "w")
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 5
    for page in pages:
        if page.name == "404.html":  # Material's 404 has no content block: no banner at all
            continue
        text = page.read_text(encoding="utf-8")
        assert "Trust root not refreshed." in text, page
        assert "DownloadError: &lt;offline&gt;" in text, page  # escaped, never raw


def test_no_fallback_no_banner(tmp_path: Path, documents: dict[str, Any]) -> None:
    out = tmp_path / "site"
    build_site(_inputs(copy.deepcopy(documents)), out=out, config=None, work_dir=tmp_path / "w")
    assert "Trust root not refreshed" not in (out / "index.html").read_text(encoding="utf-8")


def test_build_info_carries_the_reason_only_on_a_fallback() -> None:
    common: dict[str, Any] = {
        "build_time": "2026-01-01T00:00:00Z",
        "commit": None,
        "source_url": None,
        "verifier": "v",
        "trust_name": "production",
        "trust_production": True,
        "trust_refreshed": None,
        "trusted_registries": None,
        "preview": False,
    }
    schema = json.loads(schema_text("build-info.schema.json"))
    plain = build_info_document(**common)
    assert "trustRootFallback" not in plain
    jsonschema.validate(plain, schema)
    fallback = build_info_document(**common, trust_fallback=REASON)
    assert fallback["trustRootFallback"] == {"reason": REASON}
    jsonschema.validate(fallback, schema)
