"""Bounded output, with the real CLI over signed bundles: allowlisted signers with more tests
than a grid shows, more unlisted throw-away identities than a recipe shows, and more runs under
distinct aicr versions than the history and the lenses keep. The site stays within its limits,
says what it left out and counts it in the data files, and no state changes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generator.corroborate.grid import signer_source_id
from generator.limits import LIMITS
from generator.testing.authority import TestAuthority
from tests.hostile._worstcase import RECIPE, WorstCase, add_worst_case, throwaway
from tests.hostile.conftest import DEMO, Sandbox, assert_demo_unchanged, new_sandbox

pytestmark = pytest.mark.slow

CASE = WorstCase(
    tests=LIMITS.rows_per_grid + 600,
    allowlisted=2,
    unlisted=LIMITS.unlisted_signers + 2,
    unlisted_tests=30,
    versions=LIMITS.versions_per_recipe + 2,
    failing_every=1000,
)


@dataclass(frozen=True)
class Built:
    box: Sandbox
    result: Any
    paths: list[str]

    def tab(self) -> dict[str, Any]:
        for group in self.box.data("index.json")["groups"]:
            for dashboard in group["dashboards"]:
                for tab in dashboard["tabs"]:
                    if tab["recipe"] == RECIPE:
                        return dict(tab)
        raise AssertionError(f"{RECIPE} is not in index.json")

    def page(self) -> str:
        return (self.box.out / "recipes" / RECIPE / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, authority: TestAuthority) -> Built:
    box = new_sandbox(tmp_path_factory.mktemp("bounded-output"))
    paths = add_worst_case(box, authority, CASE)
    return Built(box, box.run(timeout=600), paths)


def test_build_succeeds_and_demo_recipes_keep_their_state(
    built: Built, demo_states: dict[str, Any]
) -> None:
    assert built.result.returncode == 0, built.result.stdout + built.result.stderr
    assert "warnings" not in json.loads(built.result.stdout)
    assert_demo_unchanged(built.box, demo_states)


def test_recipe_counts_what_it_leaves_out(built: Built) -> None:
    tab = built.tab()
    assert tab["omitted"] == {
        "unlistedSigners": 2,
        "unlistedRuns": 2,
        "versions": 2,
        "historyRuns": 2 * 2,
        "historyRows": tab["omitted"]["historyRows"],
    }
    assert tab["omitted"]["historyRows"] > 0
    assert len(tab["versions"]) == LIMITS.versions_per_recipe
    grids = [tab["combined"], *tab["versions"]]
    assert len(tab["combined"]["tests"]) == LIMITS.rows_per_grid
    assert sum(len(g["tests"]) for g in grids) <= LIMITS.rows_per_recipe
    for grid in grids:
        left = grid.get("omitted", {"tests": 0, "byState": {}})
        assert left["tests"] == sum(left["byState"].values())


def test_hidden_rows_never_hide_failures_nor_change_states(built: Built) -> None:
    combined = built.tab()["combined"]
    assert built.tab()["rollup"] == "CONTESTED"
    contested = {t["name"] for t in combined["tests"] if t["consensus"] == "CONTESTED"}
    expected = {
        f"check-{i:05d}" for i in range(CASE.failing_every - 1, CASE.tests, CASE.failing_every)
    }
    assert contested == expected
    assert "CONTESTED" not in combined["omitted"]["byState"]


def test_page_stays_within_its_limits_and_says_what_it_left_out(built: Built) -> None:
    page = built.page()
    assert len(page.encode()) < LIMITS.page_bytes
    rows = len(re.findall(r'<tr class="grid-row" ', page))
    assert rows <= LIMITS.rows_per_page
    assert 'class="rows-omitted"' in page
    combined = built.tab()["combined"]
    total = len(combined["tests"]) + combined["omitted"]["tests"]
    assert f'<label for="checks">Checks <span class="tab-count">{total}</span>' in page
    assert "2 more unlisted signers (2 runs) are not shown" in page
    # grid columns: the two throw-away identities past the limit (the highest source ids)
    # have none; the others have theirs
    head = page.split('<table class="evidence-grid">', 1)[1].split("</thead>", 1)[0]
    ranked = sorted((str(signer_source_id(throwaway(u))), u) for u in range(CASE.unlisted))
    for _src, u in ranked[-2:]:
        assert str(throwaway(u).slug) not in head
    for _src, u in ranked[:-2]:
        assert str(throwaway(u).slug) in head
    # their evidence cards say they are not in the grids
    assert page.count('<span class="tag-omitted" data-omitted="unlisted-signer-limit"') == 2


def test_pointers_json_marks_and_counts_what_is_left_out(built: Built) -> None:
    doc = built.box.data("pointers.json")
    assert doc["omitted"][RECIPE] == built.tab()["omitted"]
    ours = [p for p in doc["pointers"] if p["path"] in set(built.paths)]
    assert len(ours) == len(built.paths)
    assert sum(1 for p in ours if p.get("omitted") == "unlisted-signer-limit") == 2
    full = [p for p in ours if p["evidence"] and len(p["evidence"]["tests"]) > 100]
    assert full, "the allowlisted pointers list their tests"
    for p in full:
        assert len(p["evidence"]["tests"]) == LIMITS.tests_per_pointer
        assert p["evidence"]["truncated"] == {"tests": CASE.tests - LIMITS.tests_per_pointer}


def test_series_keeps_the_newest_runs_per_signer(built: Built) -> None:
    series = built.box.data(f"series/{RECIPE}.json")
    assert all(len(cols) <= LIMITS.runs_per_signer for cols in series["builds"].values())
    assert len(series["rows"]) <= LIMITS.rows_per_series
    assert series["omitted"]["builds"] == 4


def test_site_budget_warning_reaches_summary_and_build_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real build of the demo tree with a budget it exceeds: the build succeeds and warns."""
    from generator import outputsize
    from generator.build import BuildOptions, run_build
    from generator.limits import OutputLimits

    monkeypatch.setattr(outputsize, "LIMITS", OutputLimits(site_bytes=1 << 20, page_bytes=1000))
    options = BuildOptions.flat(
        recipes=DEMO,
        out=tmp_path / "site",
        trust_root=DEMO / "trust" / "trusted_root.json",
        oci_layouts=(DEMO / "bundles",),
        offline=True,
        cache=tmp_path / "cache",
        quiet=True,
    )
    summary = run_build(options)
    assert summary.warnings and "budget" in summary.warnings[0]
    assert any(w.startswith("page ") for w in summary.warnings)
    assert summary.as_dict()["warnings"] == list(summary.warnings)
    info = json.loads((tmp_path / "site" / "data" / "build-info.json").read_text())
    assert info["output"]["warnings"] == list(summary.warnings)
    assert info["output"]["bytes"] > 1 << 20
    # a rebuild answered by the evaluation memo (into the same folder: it writes nothing)
    # warns as well, with the figures the site states (never re-measured with that record in)
    again = run_build(options)
    assert again.from_memo and not again.wrote and again.warnings == summary.warnings
    elsewhere = run_build(options.replace(out=tmp_path / "other"))
    assert elsewhere.from_memo and elsewhere.wrote and elsewhere.warnings == summary.warnings


def test_normal_build_has_no_size_warning(tmp_path: Path) -> None:
    from generator.build import BuildOptions, run_build

    options = BuildOptions.flat(
        recipes=DEMO,
        out=tmp_path / "site",
        trust_root=DEMO / "trust" / "trusted_root.json",
        oci_layouts=(DEMO / "bundles",),
        offline=True,
        cache=tmp_path / "cache",
        quiet=True,
    )
    summary = run_build(options)
    assert summary.warnings == () and "warnings" not in summary.as_dict()
    info = json.loads((tmp_path / "site" / "data" / "build-info.json").read_text())
    assert "output" not in info


def test_worst_case_data_files_match_their_schemas(built: Built) -> None:
    import jsonschema

    from generator.data import schema_text

    def check(name: str, doc: Any) -> None:
        schema = json.loads(schema_text(name))
        jsonschema.Draft202012Validator(schema).validate(doc)

    check("index.schema.json", built.box.data("index.json"))
    check("pointers.schema.json", built.box.data("pointers.json"))
    check("series.schema.json", built.box.data(f"series/{RECIPE}.json"))


def test_build_info_with_a_size_warning_matches_its_schema(tmp_path: Path) -> None:
    import jsonschema

    from generator import outputsize
    from generator.data import build_info_document, schema_text
    from generator.data.gojson import go_json
    from generator.limits import OutputLimits

    site = tmp_path / "site"
    (site / "data").mkdir(parents=True)
    (site / "index.html").write_bytes(b"x" * 2000)
    info = site / "data" / "build-info.json"
    info.write_text(
        go_json(
            build_info_document(
                build_time="",
                commit=None,
                source_url=None,
                verifier="v",
                trust_name="t",
                trust_production=False,
                trust_refreshed=None,
                trusted_registries=None,
                preview=False,
            )
        )
    )
    size = outputsize.measure(site, OutputLimits(site_bytes=1000, page_bytes=100))
    assert size.largest_page == ("index.html", 2000)
    outputsize.record(info, size)
    doc = json.loads(info.read_text())
    jsonschema.Draft202012Validator(json.loads(schema_text("build-info.schema.json"))).validate(doc)
    assert len(doc["output"]["warnings"]) == 2
