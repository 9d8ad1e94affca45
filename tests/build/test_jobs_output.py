"""A build's output does not depend on `--jobs`: with a second core recipe pages are rendered by
helper processes too, and data/pointers.json is written by one (both forced on for the small
demo tree here), and the site is byte for byte the one a single process builds, its manifest
included; so is the next build, answered by the evaluation memo the helped build kept."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import generator.site.pagehelper as pagehelper
import generator.site.recipepages as recipepages
from generator.build import run_build
from generator.data import spool
from tests._support import demo_build

REPO = Path(__file__).resolve().parents[2]


def _build(tmp: Path, jobs: int, name: str = "site", **extra: Any) -> Path:
    out = tmp / f"{name}-{jobs}"
    run_build(demo_build(REPO / "recipes", out, tmp / f"cache-{jobs}", jobs=jobs, **extra))
    return out


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def _data_helper_answers(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The data documents' helper forced on; what it answered, each time it is asked (None:
    it did not write them all)."""
    monkeypatch.setattr(spool, "MIN_SPOOLED_POINTERS", 1)
    answers: list[object] = []
    digests = spool.DeferredWrite.helper_digests
    monkeypatch.setattr(
        spool.DeferredWrite,
        "helper_digests",
        lambda self: answers.append(found := digests(self)) or found,
    )
    return answers


def test_the_site_does_not_depend_on_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    alone = _files(_build(tmp_path, jobs=1))
    monkeypatch.setattr(pagehelper, "MIN_SHARED_PAGES", 1)
    monkeypatch.setattr(pagehelper, "_CHUNK", 1)
    helpers: list[object] = []
    helper = pagehelper._Helper
    monkeypatch.setattr(pagehelper, "_Helper", lambda *a: helpers.append(a) or helper(*a))
    here: list[str] = []
    render = recipepages._render_page
    monkeypatch.setattr(
        recipepages, "_render_page", lambda job, tab, key: here.append(tab) or render(job, tab, key)
    )
    written = _data_helper_answers(monkeypatch)
    shared = _files(_build(tmp_path, jobs=2))
    assert helpers, "no page helper was started"
    pages = len(list((tmp_path / "site-2" / "recipes").glob("*/index.html")))
    assert len(here) < pages, "the page helper placed no page (it was given up)"
    assert written and all(written), "pointers.json was not written by its helper"
    assert shared.keys() == alone.keys()
    assert [name for name in alone if shared[name] != alone[name]] == []
    assert list((tmp_path / "cache-2" / "evaluation").glob("*/data/pointers.json")), "no memo"
    again = _files(_build(tmp_path, jobs=2, name="again"))  # from the memo the helped build kept
    assert [name for name in alone if again.get(name) != alone[name]] == []


def test_data_only_output_does_not_depend_on_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    alone = _files(_build(tmp_path, jobs=1, data_only=True))
    answered = _data_helper_answers(monkeypatch)
    helped = _files(_build(tmp_path, jobs=2, data_only=True))
    assert answered and all(answered), "the data documents were not written by helpers"
    assert helped == alone


def _page_helpers_running() -> list[int]:
    """This process's children running the page helper."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"generator.site.pagehelper" in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_site_build_failing_after_its_page_helpers_started_stops_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helpers start before the Markdown pages are rendered: when that fails, the build
    fails as it would have, its previous output untouched, and no helper is left running."""
    import generator.site.build as sitebuild
    from generator.errors import EvidenceDashError

    monkeypatch.setattr(pagehelper, "MIN_SHARED_PAGES", 1)
    monkeypatch.setattr(pagehelper, "_CHUNK", 1)
    started: list[object] = []
    helper = pagehelper._Helper
    monkeypatch.setattr(pagehelper, "_Helper", lambda *a: started.append(a) or helper(*a))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("the Markdown pages could not be rendered")

    monkeypatch.setattr(sitebuild, "_markdown_pages", broken)
    with pytest.raises((OSError, EvidenceDashError)):
        _build(tmp_path, jobs=2)
    assert started, "no page helper was started before the Markdown pages"
    assert _page_helpers_running() == []
    assert not (tmp_path / "site-2" / "index.html").exists()
