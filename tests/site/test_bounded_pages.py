"""What a recipe page shows within its limits: grid rows over all lenses, evidence cards and
bandwidth history, each with what it leaves out said in words."""

from __future__ import annotations

from typing import Any

from generator.limits import LIMITS
from generator.site.bounded import cards_shown, omitted_rows, page_grids, recipe_omissions
from generator.site.charts import Reading
from generator.site.environment import environment
from generator.site.model import newest_per_signer
from generator.site.resources import locate

RANKS = {"CONTESTED": 0, "FAILING": 1, "UNTESTED": 2, "PARTIAL": 3, "SINGLE": 4, "CONFIRMED": 5}


def _test(name: str, state: str = "CONFIRMED", counted: bool = True) -> dict:
    return {
        "phase": "conformance",
        "name": name,
        "consensus": state,
        "counts": {"pass": 2 if counted else 0, "fail": 0, "notRun": 0},
    }


def test_page_budget_spans_every_lens_and_counts_what_it_hides() -> None:
    combined = {
        "aicrVer": "",
        "tests": [_test(f"c{i:05d}") for i in range(1500)],
        "omitted": {"tests": 7, "byState": {"CONFIRMED": 7}},
    }
    version = {
        "aicrVer": "v1",
        "tests": [_test(f"c{i:05d}") for i in range(999)] + [_test("zz-bad", "FAILING")],
    }
    (g1, h1), (g2, h2) = page_grids([combined, version], RANKS, budget=2000)
    assert len(g1["tests"]) == 1500 and h1 == {"CONFIRMED": 7}
    assert len(g2["tests"]) == 500 and h2 == {"CONFIRMED": 500}
    assert "zz-bad" in {t["name"] for t in g2["tests"]}  # the failing row is never the one hidden
    assert (
        sum(len(g["tests"]) for g, _ in page_grids([combined, version], RANKS))
        <= LIMITS.rows_per_page
    )


def _macro(template: str, name: str, *args: Any) -> str:
    """A macro of a page template rendered on its own."""
    return str(getattr(environment(locate().pages).get_template(template).module, name)(*args))


def omitted_line(hidden: dict[str, int], labels: dict[str, str]) -> str:
    rows = omitted_rows(hidden, labels)
    return "" if rows is None else _macro("_grid.j2", "omitted_line", rows)


def test_omitted_line_says_how_many_and_which_states() -> None:
    line = omitted_line(
        {"CONFIRMED": 500, "FAILING": 2}, {"FAILING": "Failing", "CONFIRMED": "Confirmed"}
    )
    assert 'data-omitted="502"' in line and "2 failing, 500 confirmed" in line
    assert omitted_line({}, {}) == ""


def test_cards_keep_allowlisted_pointers_first() -> None:
    pointers = [{"path": f"u{i}", "signer": {"allowlisted": False}} for i in range(300)]
    pointers.append({"path": "mine", "signer": {"allowlisted": True}})
    shown, hidden = cards_shown(pointers, limit=LIMITS.cards_per_page)
    assert len(shown) == LIMITS.cards_per_page and hidden == 301 - LIMITS.cards_per_page
    assert shown[-1]["path"] == "mine"
    assert [p["path"] for p in shown[:3]] == ["u0", "u1", "u2"]


def test_recipe_omissions_in_words() -> None:
    text = _macro(
        "_notes.j2",
        "omissions",
        recipe_omissions(
            {
                "omitted": {
                    "unlistedSigners": 5,
                    "unlistedRuns": 9,
                    "versions": 2,
                    "historyRuns": 3,
                    "historyRows": 0,
                }
            }
        ),
    )
    assert "5 more unlisted signers (9 runs)" in text
    assert "2 older aicr versions" in text and "3 older runs" in text
    assert _macro("_notes.j2", "omissions", recipe_omissions({})) == ""


def test_bandwidth_history_keeps_each_signers_newest_readings() -> None:
    def reading(signer: str, day: int) -> Reading:
        return Reading(
            signer=signer,
            counted=True,
            when=f"2026-09-{day:02d}",
            measured=1.0,
            floor=1.0,
            pass_line=0.9,
            result="pass",
        )

    every = [reading("a", d) for d in range(1, 26)] + [reading("b", 1)]
    kept = newest_per_signer(every, LIMITS.runs_per_signer)
    assert [r.when for r in kept if r.signer == "a"] == [
        f"2026-09-{d:02d}" for d in range(26 - LIMITS.runs_per_signer, 26)
    ]
    assert [r.signer for r in kept].count("b") == 1
