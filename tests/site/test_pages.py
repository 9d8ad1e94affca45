"""Page model rules: readable signer labels, the recipe freshness summary, compact consensus."""

from __future__ import annotations

import copy
import html
import re
from typing import Any

import pytest

from generator.site.footer import registry_note
from generator.site.grids import Row, counts_text
from generator.site.pages import SiteModel
from tests.site.test_golden import rendered


def _model(documents: dict[str, Any]) -> SiteModel:
    return SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )


def test_hex_labelled_unlisted_signers_get_numbered_names(documents: dict[str, Any]) -> None:
    docs = copy.deepcopy(documents)
    unlisted = sorted(s for s, i in docs["index"]["sources"].items() if not i["allowlisted"])
    for src in unlisted:
        docs["index"]["sources"][src]["label"] = docs["index"]["sources"][src]["slug"]
        docs["index"]["sources"][src]["signerId"] = "someone@example.org"
    model = _model(docs)
    for n, src in enumerate(unlisted, start=1):
        assert model.label(src) == f"unlisted signer {n} ({src[:8]}…)"
    page = rendered(docs)[f"sources/{docs['index']['sources'][unlisted[0]]['slug']}.md"]
    title = page.split("# ", 1)[1].splitlines()[0]
    assert "someone" not in title and "unlisted signer 1" in title
    assert "someone@example.org" in page.split("<details", 1)[1]  # behind the disclosure


def test_allowlisted_labels_are_kept(documents: dict[str, Any]) -> None:
    model = _model(documents)
    for src, info in documents["index"]["sources"].items():
        if info["allowlisted"]:
            assert model.label(src) == info["label"]


@pytest.mark.parametrize(
    ("recipe", "state"),
    [
        ("gb200-eks-ubuntu-training", "stale"),
        ("b200-gke-ubuntu-inference", "unknown"),
        ("h100-eks-ubuntu-training-kubeflow", "fresh"),
        ("l40s-lke-ubuntu-inference", "none"),
    ],
)
def test_recipe_freshness_summary(documents: dict[str, Any], recipe: str, state: str) -> None:
    fs = _model(documents).freshness(recipe)
    assert fs.state == state
    if state == "stale":
        assert fs.text.startswith("stale (") and " vs current " in fs.text
    overview = rendered(documents)["index.md"]
    row = overview.split(f'data-recipe="{recipe}"', 1)[1].split("</tr>", 1)[0]
    assert f'data-fresh="{state}"' in row
    assert ("current" in row) == (state == "stale")


@pytest.mark.parametrize(
    ("counts", "reported", "expect"),
    [
        ({"pass": 3, "fail": 0, "notRun": 0}, 1, "3 pass · 0 fail"),
        ({"pass": 1, "fail": 2, "notRun": 1}, 0, "1 pass · 2 fail · 1 not run"),
    ],
)
def test_counts_line_is_one_short_line(counts: dict[str, int], reported: int, expect: str) -> None:
    row = Row("deployment", "x", "CONFIRMED", 5, counts, reported, ("same recipe digest",), ())
    assert counts_text(row) == expect
    assert ("not counted" in row.detail) == bool(reported)
    assert "same recipe digest" in row.detail


@pytest.mark.parametrize(
    ("trusted", "expect"),
    [
        (None, "every registry allowed"),
        ([], "every registry allowed"),
        (["ghcr.io/acme"], "registries limited to ghcr.io/acme"),
    ],
)
def test_registry_note(trusted: list[str] | None, expect: str) -> None:
    assert registry_note(trusted).startswith(expect)


def test_cached_verdict_and_registry_policy_are_shown(documents: dict[str, Any]) -> None:
    pages = rendered(documents)
    cached = [p for p in documents["pointers"]["pointers"] if p["verify"]["verifiedAt"]]
    assert cached
    page = pages[f"recipes/{cached[0]['recipe']}.html"]
    assert f'verified at <time datetime="{cached[0]["verify"]["verifiedAt"]}"' in page
    assert "every registry allowed" in pages["about.md"]


def test_the_card_names_the_trust_root_of_a_reused_verdict(documents: dict[str, Any]) -> None:
    docs = copy.deepcopy(documents)
    cached = [p for p in docs["pointers"]["pointers"] if p["verify"]["verifiedAt"]]
    assert cached
    root = "ab" * 32
    cached[0]["verify"]["reusedFrom"] = {
        "verifiedAt": cached[0]["verify"]["verifiedAt"],
        "trustRoot": root,
    }
    page = rendered(docs)[f"recipes/{cached[0]['recipe']}.html"]
    assert f'judged under the same trust root <code title="{root}">{root[:16]}</code>' in page


def test_attestation_age_against_build_time(documents: dict[str, Any]) -> None:
    page = rendered(documents)["recipes/b200-gke-ubuntu-inference.html"]
    assert "days before this build" in page


def test_first_party_runs_and_credentialed_bundles_are_explained(documents: dict[str, Any]) -> None:
    from generator.site.pages import pointer_card

    model = _model(documents)
    base = next(
        p
        for p in documents["pointers"]["pointers"]
        if p["verify"]["exit"] == 0 and p["bundle"].get("oci")
    )
    page = f"recipes/{base['recipe']}.md"
    plain = _text(str(pointer_card(model, page, base)))
    assert "evidence-dashboard verify recipes/" in plain
    assert "only with credentials" not in plain
    first_party = {
        **base,
        "path": "bundle-refs/0-sha256-" + "a" * 64,
        "verify": {**base["verify"], "anonymous": False},
    }
    card = _text(str(pointer_card(model, page, first_party)))
    assert "--bundle-refs" in card and "no pointer file" in card
    assert "evidence-dashboard verify recipes/" not in card  # there is no file to verify
    assert "aicr evidence verify" in card
    assert "only with credentials" in card


def _text(markup: str) -> str:
    """A card's text as a reader sees it (a printed command's words are spans)."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_a_duplicate_is_counted_once_only_when_it_passed(documents: dict[str, Any]) -> None:
    """A pointer repeating another's bundle says "counted once" only when it passed itself."""
    from generator.site.pages import pointer_card

    model = _model(documents)
    base = next(p for p in documents["pointers"]["pointers"] if p["verify"]["exit"] == 0)
    page = f"recipes/{base['recipe']}.md"
    passed = {**base, "duplicateOf": "evidence/x/y/sha256-" + "b" * 64 + ".yaml"}
    assert "counted once" in str(pointer_card(model, page, passed))
    rejected = next(p for p in documents["pointers"]["pointers"] if p["verify"]["exit"] == 2)
    failed = {**rejected, "duplicateOf": passed["duplicateOf"]}
    card = str(pointer_card(model, page, failed))
    assert "counted once" not in card
    assert "judged on its own, and this pointer did not pass" in card
