"""The benchmark's timed build: every phase it reports is measured on the build as it is today.

The child wraps the build's functions where the build looks them up; after a refactoring moved
them, `make bench` failed before printing anything. This runs the child on a small tree."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench.gen import TreeShape, generate_tree
from bench.run import build_argv


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    root = tmp_path_factory.mktemp("child") / "tree"
    shape = TreeShape(recipes=2, signers=2, builds=1, fail_every=3, reject_every=5)
    return root, generate_tree(shape, root, workers=1)


def _run(argv: list[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_cold_and_a_warm_build_report_every_phase(
    small: tuple[Path, object], tmp_path: Path
) -> None:
    _, info = small
    cold, warm = tmp_path / "cold.json", tmp_path / "warm.json"
    out, cache = tmp_path / "site", tmp_path / "cache"
    _run(build_argv(info, out, cache, 1, cold))  # type: ignore[arg-type]
    result = json.loads(cold.read_text(encoding="utf-8"))
    assert result["status"] == 0 and result["evaluation"] == "evaluated"
    for phase in ("verify", "evaluate", "data writers", "site", "mkdocs", "fingerprint"):
        assert result["phases"].get(phase, 0.0) > 0.0, phase
    assert result["misses"] > 0 and result["hits"] == 0
    assert result["phases"]["mkdocs"] < result["phases"]["site"]
    cpu = result["cpu"]  # the build's own CPU, not the child interpreter's start
    assert 0.0 < cpu["user"] and 0.0 <= cpu["sys"]
    assert cpu["user"] < result["total"] * 2 + 1  # at most the build's two processes' worth
    recipes = result["recipes evaluated"]
    assert recipes > 0 and result["pages rendered"] == recipes  # a cold build renders them all
    _run(build_argv(info, out, cache, 1, warm))  # type: ignore[arg-type]
    again = json.loads(warm.read_text(encoding="utf-8"))
    assert again["evaluation"] == "reused" and again["misses"] == 0
    assert "verify" not in again["phases"]
    assert again["recipes evaluated"] == 0 and again["pages rendered"] == 0  # memo and page cache


def test_pages_given_to_early_page_helpers_are_counted_as_rendered(
    small: tuple[Path, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a second process, the page helpers are given the uncached pages before the
    cache is asked for any other: a cold build still counts every page as rendered."""
    import generator.build as build
    import generator.site.build as sitebuild
    import generator.site.pagehelper as pagehelper
    import generator.site.recipepages as recipepages
    from bench.child import _count_work

    _, info = small
    monkeypatch.setattr(pagehelper, "MIN_SHARED_PAGES", 1)
    monkeypatch.setattr(pagehelper, "_CHUNK", 1)
    for module, name in ((build, "evaluate"), (recipepages, "_copy_cached")):
        monkeypatch.setattr(module, name, getattr(module, name))  # restored after the test
    monkeypatch.setattr(sitebuild, "_start_shared", sitebuild._start_shared)
    counts: dict[str, int] = {}
    _count_work(build, counts)
    argv = build_argv(info, tmp_path / "site", tmp_path / "cache", 2, tmp_path / "r.json")  # type: ignore[arg-type]
    from generator.cli import main

    main.main(args=["build", *argv[argv.index("--") + 1 :]], standalone_mode=False)
    pages = len(list((tmp_path / "site" / "recipes").glob("*/index.html")))
    assert counts["recipes evaluated"] > 0
    assert counts["pages rendered"] == pages > 0
