"""The recipe page as a customer checks it: verify by digest, why a check failed, each test's
history and stable anchors (issue 14 items 3-6)."""

from __future__ import annotations

import copy
import html
import re
from typing import Any

from generator.site.pages import SiteModel, pointer_card
from tests.site.test_golden import rendered

FAILING = "gb200-eks-ubuntu-training"


def _model(documents: dict[str, Any]) -> SiteModel:
    return SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )


def _verified(documents: dict[str, Any]) -> dict[str, Any]:
    return next(
        p
        for p in documents["pointers"]["pointers"]
        if p["verify"]["exit"] == 0 and p["bundle"].get("oci") and p.get("evidence")
    )


def _commands(card: str) -> list[str]:
    """Each command block's text, as a reader copies it (its words are spans)."""
    blocks = re.findall(r"<pre[^>]*><code>(.*?)</code></pre>", card)
    return [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in blocks]


def test_a_tag_reference_is_shown_and_checked_by_its_verified_digest(
    documents: dict[str, Any],
) -> None:
    base = _verified(documents)
    digest_ref = base["evidence"]["evidenceRef"]
    assert "@sha256:" in digest_ref
    tagged = copy.deepcopy(base)
    tagged["bundle"]["oci"] = digest_ref.split("@")[0] + ":v1.2.3"
    card = str(pointer_card(_model(documents), f"recipes/{base['recipe']}.md", tagged))
    commands = _commands(card)
    assert f"aicr evidence verify {digest_ref}" in commands
    assert not any(":v1.2.3" in c for c in commands)
    assert f"https://{digest_ref}" in card  # the artifact is linked by digest
    assert f'<code class="digest-ref">{digest_ref}</code>' in card


def test_cosign_command_names_the_verified_identity_and_issuer(documents: dict[str, Any]) -> None:
    base = _verified(documents)
    card = str(pointer_card(_model(documents), f"recipes/{base['recipe']}.md", base))
    cosign = next(c for c in _commands(card) if c.startswith("cosign verify-attestation"))
    # the bundle is a referrer (not a `.att` tag): cosign 2.x finds it only with this flag
    assert cosign.startswith("cosign verify-attestation --new-bundle-format ")
    identity = base["signer"]["verified"]["identity"]
    issuer = base["signer"]["verified"]["issuer"]
    assert f"--certificate-identity {identity}" in cosign
    assert f"--certificate-oidc-issuer {issuer}" in cosign
    assert cosign.endswith(base["evidence"]["evidenceRef"])


def test_the_verify_command_carries_the_builds_trust_options(documents: dict[str, Any]) -> None:
    docs = copy.deepcopy(documents)
    docs["build_info"]["trust"] = {"name": "trusted_root.json", "production": False}
    docs["build_info"]["verifyWith"] = {
        "trust": "production",
        "trustRoot": {"path": "recipes/trust/trusted_root.json", "outside": False},
        "ociLayouts": [{"path": "recipes/bundles", "outside": False}],
        "offline": True,
    }
    base = _verified(docs)
    card = str(pointer_card(_model(docs), f"recipes/{base['recipe']}.md", base))
    own = next(c for c in _commands(card) if c.startswith("evidence-dashboard verify"))
    assert own == (
        f"evidence-dashboard verify recipes/{base['path']} --trust-root "
        "recipes/trust/trusted_root.json --oci-layout recipes/bundles --offline"
    )
    assert "not Sigstore's production root" in card
    assert "<code>recipes/trust/trusted_root.json</code> in the evidence tree" in card


def test_the_log_index_is_always_shown_and_linked_through_a_search_template(
    documents: dict[str, Any],
) -> None:
    docs = copy.deepcopy(documents)
    base = _verified(docs)
    base["evidence"]["logUrl"] = None  # a non-production root: the verifier links nothing
    index = base["evidence"]["rekorLogIndex"]
    plain = str(pointer_card(_model(docs), "recipes/x.md", base))
    assert f"<code>#{index}</code>" in plain
    docs["build_info"]["logSearchUrl"] = "https://log.example/search?index={logIndex}"
    linked = str(pointer_card(_model(docs), "recipes/x.md", base))
    assert f'href="https://log.example/search?index={index}"' in linked


def test_a_failed_check_says_why_one_click_from_its_cell(documents: dict[str, Any]) -> None:
    docs = copy.deepcopy(documents)
    failed = [
        (p, t)
        for p in docs["pointers"]["pointers"]
        if p["recipe"] == FAILING and p.get("evidence")
        for t in p["evidence"]["tests"]
        if t["result"] == "fail"
    ]
    assert failed
    for _p, t in failed:
        t["failure"] = {
            "message": "bandwidth 251 GB/s < 270 <script>",
            "excerpt": ["line one", "line <two>"],
        }
    page = rendered(docs)[f"recipes/{FAILING}.html"]
    panels = _run_panels(page)
    cells = re.findall(r'<td class="cell cell-fail[^>]*>(.*?)</td>', page, re.S)
    assert cells
    for cell in cells:
        assert cell.startswith('<details class="cell-details"><summary>')
        assert "bandwidth 251 GB/s &lt; 270 &lt;script&gt;" in cell
        assert "line one\nline &lt;two&gt;" in cell
        # the run's own details (signer, bundle digest) are one link away, in its column
        run = re.search(r'<a class="run-link" href="#(run-[^"]+)">', cell)
        assert run is not None
        assert "<dt>Run</dt>" in panels[run[1]]
        assert "<dt>Bundle</dt><dd><code>sha256:" in panels[run[1]]


def _run_panels(page: str) -> dict[str, str]:
    """Each run panel of a page (`<dl id="run-...">`) by its id, as its column heading: the
    signer's label, then a `<details>` per run. Every panel is in a heading; no id repeats."""
    every = re.findall(r'<dl class="cell-facts" id="(run-[^"]+)">', page)
    assert len(every) == len(set(every))
    found: dict[str, str] = {}
    for head in re.findall(r'<th scope="col" class="signer-col[^"]*">(.*?)</th>', page, re.S):
        assert not head.startswith("<details")  # the signer is named first
        for i in re.findall(
            r'<details class="col-details"><summary>[^<]*</summary>'
            r'<dl class="cell-facts" id="(run-[^"]+)">',
            head,
        ):
            found[i] = head
    assert set(found) == set(every)
    return found


def test_cell_details_are_a_panel_not_a_tooltip(documents: dict[str, Any]) -> None:
    page = rendered(documents)[f"recipes/{FAILING}.html"]
    panels = _run_panels(page)
    cells = re.findall(r'(<td class="cell cell-(?:pass|fail)[^>]*>)(.*?)</td>', page)
    assert cells
    for opening, body in cells:
        assert "title=" not in opening
        # one click from the cell to its run's panel (a link to the panel in its column)
        run = re.search(r'href="#(run-[^"]+)"', body)
        assert run is not None, body
        panel = panels[run[1]]
        for label in ("Run", "aicr", "Kubernetes", "Pointer", "Bundle"):
            assert f"<dt>{label}</dt>" in panel
        # the run's facts are not repeated in the cell
        assert "<dt>" not in body
    # each run's facts appear once per grid (lens), in its column heading, not once per cell
    for lens in page.split('<div class="grid-lens"')[1:]:
        ids = re.findall(r'<dl class="cell-facts" id="(run-[^"]+)">', lens)
        assert ids and len(ids) == len(set(ids))
        assert set(re.findall(r'href="#(run-[^"]+)"', lens)) <= set(ids)


def test_every_card_row_and_test_has_a_unique_stable_anchor(documents: dict[str, Any]) -> None:
    first = rendered(documents)
    again = rendered(copy.deepcopy(documents))
    for name, page in first.items():
        if not name.startswith("recipes/"):
            continue
        ids = re.findall(r' id="([^"]+)"', page)
        assert len(ids) == len(set(ids)), name
        assert re.findall(r' id="([^"]+)"', again[name]) == ids
        cards = page.count('class="pointer-card')
        rows = page.count('<tr class="grid-row')  # a test's row, or a phase's without tests
        assert len([i for i in ids if i.startswith("ev-")]) == cards, name
        assert len([i for i in ids if i.startswith("check-")]) == rows, name
    rejected = first["rejected.md"]
    assert rejected.count('class="pointer-card') == rejected.count(' id="ev-')


def test_test_history_lists_runs_newest_first_with_flake_only_from_three(
    documents: dict[str, Any],
) -> None:
    from generator.site.history import flake_rate, test_history

    model = _model(documents)
    recipe = "h100-eks-ubuntu-training-kubeflow"
    columns = list(documents["series"][recipe]["builds"])
    view = test_history(model, recipe, columns)
    assert view.tests and view.signers
    for signer in view.signers:
        assert list(signer.runs) == sorted(signer.runs, reverse=True)
    for test in view.tests:
        assert len(test.results) == sum(len(s.runs) for s in view.signers)
        for n, _signer in enumerate(view.signers):
            runs = test.runs(n, view)
            times = [w for w, _r in runs]
            assert times == sorted(times, reverse=True)
            assert (test.flakes[n] is None) == (len(runs) < 3)
    assert flake_rate(["pass"]) is None
    assert flake_rate(["pass", "fail"]) is None
    assert flake_rate(["pass", "fail", "pass"]) == 100
    assert flake_rate(["pass", "pass", "pass", "fail"]) == 33
    page = rendered(documents)[f"recipes/{recipe}.html"]
    assert 'id="test-history"' in page
    assert '<th scope="col" class="flake">flake rate</th>' in page
    assert '<td class="flake">0%</td>' in page
    # each run's time is in the history's heading once, never once per test
    start = page.index('id="test-history"')
    history = page[start : page.index("</table>", start)]
    for signer in view.signers:
        for when in signer.runs:
            assert history.count(html.escape(when)) == 1


def test_a_rejected_bundle_s_signer_is_never_called_verified(documents: dict[str, Any]) -> None:
    """Its signature may have checked before a later step failed: the card says so, and that
    the signer is not counted, but never "verified" (issue 14, item 8)."""
    base = _verified(documents)
    rejected = copy.deepcopy(base)
    rejected["verify"]["exit"] = 2
    card = str(pointer_card(_model(documents), f"recipes/{base['recipe']}.md", rejected))
    identity = base["signer"]["verified"]["identity"]
    assert identity in card
    assert "<p>verified:" not in card
    assert "the bundle was rejected, so this signer is not counted" in card
    kept = str(pointer_card(_model(documents), f"recipes/{base['recipe']}.md", base))
    assert "<p>verified:" in kept
