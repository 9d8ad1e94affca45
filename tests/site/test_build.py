"""build_site end to end: strict MkDocs build, banners, offline assets, atomic failure."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from generator.errors import BuildError
from generator.site.build import SiteInputs, build_site

DATA = Path(__file__).resolve().parent / "fixtures" / "data"


def inputs(documents: dict[str, Any], **over: Any) -> SiteInputs:
    return SiteInputs(
        index=documents["index"],
        series=documents["series"],
        pointers=documents["pointers"],
        build_info=documents["build_info"],
        preview=over.pop("preview", False),
        site_url=over.pop("site_url", None),
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Any]) -> Path:
    root = tmp_path_factory.mktemp("build")
    out = root / "site"
    build_site(
        inputs(documents, site_url="http://127.0.0.1:1/"),
        out=out,
        config=None,
        work_dir=root / "work",
        data_dir=DATA,
    )
    return out


def test_pages_and_assets(built: Path) -> None:
    assert (built / "index.html").is_file()
    assert (built / "recipes" / "h100-eks-ubuntu-training-kubeflow" / "index.html").is_file()
    assert (built / "data" / "index.json").is_file()
    js = built / "assets" / "js"
    assert (js / "plotly-basic.min.js").stat().st_size > 1_000_000
    assert (js / "charts.js").is_file() and (js / "app.js").is_file()
    assert len(list(built.rglob("plotly*.js"))) == 1
    assert not (built / "main.html").exists()


def test_no_external_assets(built: Path) -> None:
    pattern = re.compile(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="(https?:)?//', re.I)
    for page in built.rglob("*.html"):
        text = re.sub(r'<link rel="canonical"[^>]*>', "", page.read_text(encoding="utf-8"))
        assert not pattern.search(text), page


def test_no_preview_marks_by_default(built: Path) -> None:
    text = (built / "index.html").read_text(encoding="utf-8")
    assert "noindex" not in text and "Preview, not the published record" not in text
    assert "4f9c2e1d0b7a" in text and "sigstore 4.5.1" in text


def test_preview_and_private_root(tmp_path: Path, documents: dict[str, Any]) -> None:
    docs = copy.deepcopy(documents)
    docs["build_info"]["trust"] = {"name": "demo-ca", "production": False, "refreshed": None}
    out = tmp_path / "site"
    build_site(inputs(docs, preview=True), out=out, config=None, work_dir=tmp_path / "w")
    for page in [
        out / "index.html",
        out / "rejected" / "index.html",
        out / "recipes" / "h100-aks-ubuntu-training" / "index.html",
    ]:
        text = page.read_text(encoding="utf-8")
        assert '<meta name="robots" content="noindex">' in text
        assert "Preview, not the published record" in text
        assert "Non-production trust root: demo-ca" in text
    assert "noindex" in (out / "_headers").read_text()


def test_broken_link_fails_and_keeps_previous_output(
    tmp_path: Path, documents: dict[str, Any]
) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("previous")
    cfg = tmp_path / "mkdocs.yml"
    default = Path(__file__).resolve().parents[2] / "generator" / "resources" / "mkdocs.yml"
    cfg.write_text(
        default.read_text().replace(
            "  - Overview: index.md", "  - Overview: index.md\n  - Gone: missing.md"
        )
    )
    with pytest.raises(BuildError) as err:
        build_site(inputs(documents), out=out, config=cfg, work_dir=tmp_path / "w")
    assert "missing.md" in err.value.diagnostics()
    assert (out / "index.html").read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []
