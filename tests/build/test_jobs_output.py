"""A build's output does not depend on `--jobs`: with a second core recipe pages are rendered by
helper processes too (forced on for the small demo tree here), and the site is byte for byte
the one a single process builds."""

from __future__ import annotations

from pathlib import Path

import pytest

import generator.site.pagehelper as pagehelper
from generator.build import BuildOptions, run_build

REPO = Path(__file__).resolve().parents[2]


def _build(tmp: Path, jobs: int) -> Path:
    out = tmp / f"site-{jobs}"
    run_build(
        BuildOptions.flat(
            recipes=REPO / "recipes",
            out=out,
            cache=tmp / f"cache-{jobs}",
            offline=True,
            quiet=True,
            jobs=jobs,
            oci_layouts=(REPO / "recipes" / "bundles",),
            trust_root=REPO / "recipes" / "trust" / "trusted_root.json",
        )
    )
    return out


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def test_the_site_does_not_depend_on_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    alone = _files(_build(tmp_path, jobs=1))
    monkeypatch.setattr(pagehelper, "MIN_SHARED_PAGES", 1)
    monkeypatch.setattr(pagehelper, "_CHUNK", 1)
    helpers: list[object] = []
    helper = pagehelper._Helper
    monkeypatch.setattr(pagehelper, "_Helper", lambda *a: helpers.append(a) or helper(*a))
    shared = _files(_build(tmp_path, jobs=2))
    assert helpers, "no page helper was started"
    assert shared.keys() == alone.keys()
    assert [name for name in alone if shared[name] != alone[name]] == []
