"""The biggest HTML blocks of the site, built in Python: evidence cards, consensus grids and
the hardware comparison tables.

A recipe page holds one card per pointer (with its verification steps), one grid per aicr
version lens (one cell per test and signer) and tables of every signer's hardware, so at 1,000
recipes these blocks are millions of small values. Rendering them through Jinja macros costs a template call per value; plain
string building with the same escaping (generator.site.escape) is many times faster. The
templates call `pointer_card`, `grid_block` and `hardware_block` and stay in charge of the page
around them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from generator.site.bounded import omitted_line, page_grids
from generator.site.escape import link
from generator.site.escape import text as html
from generator.site.pages import (
    COMMIT_URL,
    Row,
    SiteModel,
    Tab,
    age,
    components_matrix,
    counts_text,
    criteria_matrix,
    freshness_text,
    grid_rows,
    hardware_matrix,
    newest_build,
    recipe_page,
    rel,
    result_badge,
    result_counts,
    validator_images,
    verdict_of,
)

_VERDICT_WORDS = {
    "verified": ("✓", "verified"),
    "failures": ("✓", "verified, with failed checks"),
    "rejected": ("✗", "rejected"),
    "pending": ("…", "pending signature"),
    "no-verdict": ("?", "no verdict"),
}
_FRESH_TITLE = {
    "fresh": "the signed recipe digest equals the current recipe digest",
    "stale": "the signed recipe digest differs from the current recipe: the result may not "
    "apply to the recipe as it is now",
    "unknown": "the current digest of this recipe could not be computed, so freshness is "
    "unknown (never shown as fresh)",
}
_FRESH_ICON = {"fresh": "✓ ", "stale": "⚠ ", "unknown": "? "}
BUNDLE_REFS = "bundle-refs/"
"""The synthetic path prefix of runs brought in by `--bundle-refs` (no pointer file)."""


def verdict_badge(p: Mapping[str, Any]) -> str:
    """A pointer's verdict as an icon and words."""
    v = verdict_of(p)
    icon, words = _VERDICT_WORDS[v]
    return (
        f'<span class="verdict verdict-{v}" data-verdict="{v}"><span aria-hidden="true">'
        f"{icon}</span> {words}</span>"
    )


def freshness_badge(fresh: Mapping[str, Any] | None) -> str:
    """A pointer's freshness as an icon and words, with what it means as a tooltip."""
    f = fresh or {}
    st = str(f.get("state", "unknown"))
    return (
        f'<span class="fresh fresh-{html(st)}" data-fresh="{html(st)}" '
        f'title="{html(_FRESH_TITLE.get(st, ""))}">{_FRESH_ICON.get(st, "")}'
        f"{html(freshness_text(f))}</span>"
    )


def clock_warning(skew: int, logged_at: Any) -> str:
    """The card row for a claimed attestedAt far from the verified transparency-log time."""
    days = abs(skew) / 86400
    direction = "after" if skew > 0 else "before"
    logged = f' (<time datetime="{html(logged_at)}">{html(logged_at)}</time>)' if logged_at else ""
    return (
        f'<div class="fact-clock warning" data-attested-skew="{skew}"><dt>Clock</dt><dd>'
        f"&#9888; the claimed attestedAt is {days:.1f} days {direction} the verified "
        f"transparency-log time{logged}: the run is placed in time by the log, not by the "
        "date it claims</dd></div>\n"
    )


def _diff_class(line: str) -> str:
    if line.startswith("+") and not line.startswith("+++"):
        return "diff-add"
    if line.startswith("-") and not line.startswith("---"):
        return "diff-del"
    return "diff-hunk" if line.startswith("@@") else "diff-ctx"


def pointer_card(
    m: SiteModel, page: str, p: Mapping[str, Any], show_recipe: bool = False
) -> Markup:
    """One pointer file as a card: verdict, signer, why, links, stale reasons, steps."""
    v = verdict_of(p)
    ev = p.get("evidence")
    sig = p.get("signer") or {}
    sid = sig.get("sourceId")
    vf = p.get("verify") or {}
    fc = vf.get("failureCause")
    fr = p.get("freshness") or {}
    why = fr.get("explanation")
    bi = m.build_info
    o: list[str] = []
    w = o.append
    w(
        f'<div class="pointer-card verdict-{v}" data-verdict="{v}" data-path="{html(p.get("path"))}">\n'
    )
    href = m.source_link(page, sid)
    who = html(m.label(sid, p))
    w(f'<p class="pointer-head">{verdict_badge(p)} · ')
    w(f'<a href="{html(href)}">{who}</a>' if href else who)
    w(f" · {html(sig.get('class') or 'unlisted')}")
    if not sig.get("allowlisted"):
        w(' · <span class="tag-not-counted">not counted</span>')
    if p.get("omitted"):
        w(
            ' · <span class="tag-omitted" data-omitted="{0}" title="this run is left out of the '
            "recipe's grids and history: {0} (see data/pointers.json)\">not in the grids</span>".format(
                html(p["omitted"])
            )
        )
    if ev:
        when = ev.get("attestedAt")
        w(
            f' · attested <time datetime="{html(when)}">{html(when)}</time> '
            f'<span class="age">({html(age(when, m.build_time))})</span>'
        )
        if v in ("verified", "failures"):
            w(f" · {freshness_badge(fr)}")
    w('</p>\n<dl class="pointer-facts">\n')
    if show_recipe:
        recipe = p.get("recipe")
        if m.has_recipe(recipe):
            w(
                f'<div><dt>Recipe</dt><dd><a href="{html(rel(page, recipe_page(str(recipe))))}'
                f'#evidence">{html(recipe)}</a></dd></div>\n'
            )
        else:
            w(
                f"<div><dt>Recipe</dt><dd>{html(recipe or 'unknown')} "
                f'<span class="muted">(not in the catalog)</span></dd></div>\n'
            )
    if fc:
        w(
            f'<div class="fact-why"><dt>Why</dt><dd><strong>{html(fc.get("class"))}</strong>: '
            f"{html(fc.get('detail'))}"
        )
        if fc.get("httpStatus"):
            w(f" (HTTP {html(fc['httpStatus'])})")
        if vf.get("rule"):
            w(f" · rule <code>{html(vf['rule'])}</code>")
        w("</dd></div>\n")
        if fc.get("hint"):
            w(f'<div class="fact-next"><dt>Next step</dt><dd>{html(fc["hint"])}</dd></div>\n')
    elif v == "pending":
        w(
            '<div class="fact-why"><dt>Why</dt><dd>the bundle is not signed yet, so it counts for '
            "nothing until a signed pointer replaces it</dd></div>\n"
        )
    elif v == "no-verdict":
        w(
            '<div class="fact-why"><dt>Why</dt><dd>the build could not reach a verdict for this '
            "pointer</dd></div>\n"
        )
    if vf.get("verifiedAt"):
        at = vf["verifiedAt"]
        w(
            f'<div class="fact-cached"><dt>Verified</dt><dd>verified at <time datetime="{html(at)}">'
            f"{html(at)}</time>: the registry could not be reached during this build, so the "
            "cached verdict of that earlier verification was reused for the same bundle digest"
        )
        root = (vf.get("reusedFrom") or {}).get("trustRoot")
        if root:
            w(
                f', judged under the same trust root <code title="{html(root)}">'
                f"{html(str(root)[:16])}</code>"
            )
        w("</dd></div>\n")
    skew = p.get("attestedAtSkew")
    if isinstance(skew, int) and not isinstance(skew, bool):
        w(clock_warning(skew, (ev or {}).get("loggedAt")))
    if ev:
        w(f"<div><dt>aicr</dt><dd>{html(ev.get('aicrVersion'))}")
        commit = ev.get("aicrCommit")
        if commit:
            w(f" · commit {link(str(commit)[:12], COMMIT_URL + str(commit))}")
        w("</dd></div>\n")
    w("<div><dt>Links</dt><dd>")
    if ev and ev.get("logUrl"):
        w(f"{link('transparency log entry', ev['logUrl'])} · ")
    oci = (p.get("bundle") or {}).get("oci")
    if oci:
        repo = str(oci).split("@")[0]
        if repo.startswith("ghcr.io/"):
            w(f"{link('OCI artifact', 'https://' + repo)} · ")
        else:
            w(f"OCI artifact <code>{html(oci)}</code> · ")
    first_party = str(p.get("path") or "").startswith(BUNDLE_REFS)
    if first_party:
        w("no pointer file (listed in the build's <code>--bundle-refs</code> file)")
    elif bi.get("sourceUrl") and bi.get("commit"):
        w(
            str(
                link(
                    "pointer file", f"{bi['sourceUrl']}/blob/{bi['commit']}/recipes/{p.get('path')}"
                )
            )
        )
    else:
        w(f"pointer file <code>{html(p.get('path'))}</code>")
    w("</dd></div>\n")
    if vf.get("anonymous") is False:
        w(
            '<div class="fact-credentials"><dt>Access</dt><dd>the registry served this bundle only '
            "with credentials: readers without access to it cannot fetch and check it "
            "themselves</dd></div>\n"
        )
    if p.get("duplicateOf"):
        judged = (
            "counted once"
            if v in ("verified", "failures")
            else "judged on its own, and this pointer did not pass"
        )
        w(
            f"<div><dt>Duplicate</dt><dd>same bundle as <code>{html(p['duplicateOf'])}</code>; "
            f"{judged}</dd></div>\n"
        )
    w("</dl>\n")
    if fr.get("state") == "stale":
        _stale_block(w, fr, why, ev, bi)
    w(
        '<details class="identity" data-search-exclude><summary>Signer identity</summary>\n<p>verified: '
    )
    verified, claimed = sig.get("verified"), sig.get("claimed")
    w(
        f"<code>{html(verified['identity'])}</code> from <code>{html(verified['issuer'])}</code>"
        if verified
        else "none"
    )
    w("<br>claimed in the pointer: ")
    w(
        f"<code>{html(claimed['identity'])}</code> from <code>{html(claimed['issuer'])}</code>"
        if claimed
        else "none"
    )
    w(f"<br>pointer file: <code>{html(p.get('path'))}</code></p>\n</details>\n")
    steps = vf.get("steps")
    if steps:
        w(
            f'<details class="steps"><summary>Verification steps ({len(steps)})</summary>\n'
            '<ol class="verify-steps">'
        )
        for s in steps:
            w(
                f'<li class="step-{html(s.get("status"))}"><code>{html(s.get("name"))}</code> '
                f"<strong>{html(s.get('status'))}</strong>"
            )
            if s.get("detail"):
                w(f": {html(s['detail'])}")
            sub = s.get("subRows")
            if sub:
                w("<ul>")
                for r in sub:
                    w(f"<li>{html(r.get('key'))}: <code>{html(r.get('value'))}</code>")
                    if r.get("beyondAicr"):
                        w(' <span class="muted">(beyond aicr)</span>')
                    w("</li>")
                w("</ul>")
            w("</li>")
        w("</ol>\n</details>\n")
    if oci:
        own = (
            ""
            if first_party
            else f"<pre><code>evidence-dashboard verify recipes/{html(p.get('path'))}</code></pre>"
        )
        w(
            '<details class="check-yourself"><summary>Check it yourself</summary>\n'
            f"<pre><code>aicr evidence verify {html(oci)}</code></pre>{own}\n</details>\n"
        )
    w("</div>\n")
    return Markup("".join(o))


def _stale_block(w: Any, fr: Mapping[str, Any], why: Any, ev: Any, bi: Mapping[str, Any]) -> None:
    w(
        f'<details class="stale-why"><summary>Why stale: {freshness_badge(fr)}</summary>\n'
        "<p>The recipe this run signed differs from the recipe as it is now, so the result may "
        "not apply to the current recipe."
    )
    if fr.get("provider"):
        w(f" Current digest from <code>{html(fr['provider'])}</code>.")
    w("</p>\n")
    if why and why.get("commits") is not None:
        commits = why["commits"]
        w(
            f"<p><strong>{len(commits)} commit{'s' if len(commits) != 1 else ''}</strong> touched "
            "the recipe's overlay since the attested aicr commit"
        )
        if ev and ev.get("aicrCommit"):
            w(f" <code>{html(str(ev['aicrCommit'])[:12])}</code>")
        w(":</p>\n")
        if commits:
            w('<ul class="stale-commits">')
            source = bi.get("sourceUrl")
            for line in commits:
                sha = str(line).split(" ")[0]
                shown = (
                    link(sha, str(source).rstrip("/") + "/commit/" + sha)
                    if source
                    else f"<code>{html(sha)}</code>"
                )
                w(f"<li>{shown} {html(str(line)[len(sha) :])}</li>")
            w("</ul>\n")
    elif why:
        w(
            '<p class="muted">The attested aicr commit is not in this repository\'s history, so '
            "the commits since then cannot be listed.</p>\n"
        )
    if why and why.get("diff"):
        diff = why["diff"]
        w(
            f'<details class="stale-diff"><summary>Signed canonical recipe against the current '
            f"overlay ({len(diff)} diff lines{', truncated' if why.get('truncated') else ''})"
            '</summary>\n<pre class="diff"><code>'
        )
        for line in diff:
            w(f'<span class="{_diff_class(str(line))}">{html(line)}</span>\n')
        w("</code></pre>\n</details>\n")
    elif why:
        w(
            '<p class="muted">No diff: the current overlay could not be read or canonicalised with '
            "this attestation's canonicalizer.</p>\n"
        )
    w("</details>\n")


def _head_cell(m: SiteModel, page: str, src: str) -> str:
    counted = m.counted(src)
    href = m.source_link(page, src)
    label = html(m.label(src))
    text = f'<a href="{html(href)}">{label}</a>' if href else str(label)
    if not counted:
        text += (
            '<br><span class="tag-not-counted" title="not on the allowlist: shown, never '
            'counted">not counted</span>'
        )
    return f'<th scope="col" class="signer-col{"" if counted else " not-counted"}">{text}</th>\n'


def _row_html(m: SiteModel, r: Row, not_counted: Sequence[bool]) -> str:
    o = [
        f'<tr class="grid-row" data-name="{html(r.name)}" data-state="{html(r.state)}" '
        f'data-rank="{r.rank}">\n<th scope="row" class="test-name">{html(r.name)}</th>\n'
        f'<td class="consensus" title="{html(r.detail)}">{m.state_badge(r.state)} '
        f'<span class="counts">{html(counts_text(r))}</span>'
    ]
    if r.reported:
        o.append(
            f' <span class="reported-tag" title="{r.reported} unlisted signer'
            f'{"s" if r.reported != 1 else ""} reported this check; not counted">'
            f"+{r.reported}</span>"
        )
    o.extend(f' <span class="row-flag">⚠ {html(f)}</span>' for f in r.flags)
    o.append("</td>\n")
    for cell, nc in zip(r.cells, not_counted, strict=True):
        title = (
            f' title="{html(cell.aicr + " · k8s " + cell.k8s + " · " + cell.when)}"'
            if cell.ref
            else ""
        )
        o.append(
            f'<td class="cell cell-{html(cell.result)}{" not-counted" if nc else ""}" '
            f'data-k8s="{html(cell.k8s)}"{title}>{result_badge(cell.result, cell.reason)}'
            "</td>\n"
        )
    o.append("</tr>\n")
    return "".join(o)


def grid_block(
    m: SiteModel,
    page: str,
    grids: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    latest: Sequence[Mapping[str, Any]],
) -> Markup:
    """Every consensus grid of a recipe (one per aicr version lens, the first shown)."""
    o: list[str] = []
    heads = "".join(_head_cell(m, page, src) for src in columns)
    not_counted = [not m.counted(src) for src in columns]
    span = 2 + len(columns)
    ranks = {str(k): int(v.get("rank", 99)) for k, v in m.states.items()}
    labels = {str(k): str(v.get("label", k)) for k, v in m.states.items()}
    for n, (g, hidden) in enumerate(page_grids(grids, ranks)):
        lens = g.get("aicrVer") or "combined"
        rows = grid_rows(m, g, columns, latest)
        o.append(f'<div class="grid-lens" data-lens="{html(lens)}"{" hidden" if n else ""}>\n')
        if g.get("aicrVer"):
            o.append(
                f'<p class="lens-note">Strict view: only runs made with aicr '
                f"{html(g['aicrVer'])}; overall {m.state_badge(str(g.get('rollup')))}.</p>\n"
            )
        else:
            o.append('<p class="lens-note">All versions: each signer\'s latest run.</p>\n')
        o.append(
            '<div class="table-scroll">\n<table class="evidence-grid">\n<thead><tr>'
            '<th scope="col">Test</th><th scope="col">Consensus</th>\n'
        )
        o.append(heads)
        o.append("</tr></thead>\n")
        rollups = g.get("phaseRollup") or {}
        for ph in m.phases:
            prow = [r for r in rows if r.phase == ph]
            o.append(
                f'<tbody class="grid-phase" data-phase="{html(ph)}">\n'
                f'<tr class="phase-head"><th scope="rowgroup" colspan="{span}">{html(ph)} · '
                f"{m.state_badge(str(rollups.get(ph, 'UNTESTED')))} · {len(prow)} test"
                f"{'s' if len(prow) != 1 else ''}</th></tr>\n"
            )
            if not prow and hidden:
                o.append(
                    f'<tr class="grid-row grid-empty" data-state="UNTESTED" data-rank="2" '
                    f'data-name=""><td colspan="{span}">(no rows shown here: see the note '
                    "below the grid)</td></tr>\n"
                )
            elif not prow:
                o.append(
                    f'<tr class="grid-row grid-empty" data-state="UNTESTED" data-rank="2" '
                    f'data-name=""><td colspan="{span}">{m.state_badge("UNTESTED")} '
                    "(no tests run)</td></tr>\n"
                )
            o.extend(_row_html(m, r, not_counted) for r in prow)
            o.append("</tbody>\n")
        o.append("</table>\n</div>\n")
        o.append(omitted_line(hidden, labels))
        o.append("</div>\n")
    return Markup("".join(o))


def hardware_block(m: SiteModel, latest: Sequence[Mapping[str, Any]]) -> Markup:
    """Each signer's latest run side by side: run facts, hardware, criteria, components and
    validator images (one column per signer)."""
    heads = [
        html(m.label((p.get("signer") or {}).get("sourceId"), p))
        + ("" if (p.get("signer") or {}).get("allowlisted") else " <em>(not counted)</em>")
        for p in latest
    ]
    th = "".join(f"<th>{h}</th>" for h in heads)
    o: list[str] = []
    w = o.append
    evs = [p["evidence"] for p in latest]
    w(f"<table>\n<thead><tr><th>Run</th>{th}</tr></thead>\n<tbody>\n<tr><td>attested</td>")
    for ev in evs:
        when = ev.get("attestedAt")
        w(f"<td>{html(when)} ({html(age(when, m.build_time))})</td>")
    w("</tr>\n<tr><td>aicr</td>")
    o.extend(f"<td>{html(ev.get('aicrVersion'))}</td>" for ev in evs)
    w("</tr>\n<tr><td>bundle</td>")
    o.extend(
        "<td><strong>minimal</strong> (no test output, no numbers)</td>"
        if ev.get("redacted")
        else "<td>full</td>"
        for ev in evs
    )
    w("</tr>\n<tr><td>run id</td>")
    o.extend(f"<td><code>{html(ev.get('runId') or 'unknown')}</code></td>" for ev in evs)
    w(
        f"</tr>\n</tbody>\n</table>\n<table>\n<thead><tr><th>Hardware</th>{th}<th>Read from</th>"
        "</tr></thead>\n<tbody>\n"
    )
    for row in hardware_matrix(latest):
        w(f"<tr><td>{html(row.label)}{' ≠' if row.differs else ''}</td>")
        o.extend(
            "<td><em>not reported</em></td>" if c.value is None else f"<td>{html(c.value)}</td>"
            for c in row.cells
        )
        detail = f' <code class="muted">{html(row.detail)}</code>' if row.detail else ""
        w(f"<td>{html(row.sources)}{detail}</td></tr>\n")
    w("</tbody>\n</table>\n<table>\n<thead><tr><th>Criterion</th><th>Recipe requires</th>")
    o.extend(f"<th>{h} provides</th>" for h in heads)
    w("</tr></thead>\n<tbody>\n")
    for row in criteria_matrix(latest):
        w(f"<tr><td>{html(row.label)}</td><td>{html(row.detail)}</td>")
        for c in row.cells:
            if c.warn:
                w(f'<td><span class="mismatch">⚠ {html(c.value or "–")} (mismatched)</span></td>')
            else:
                w("<td>–</td>" if c.value is None else f"<td>{html(c.value)}</td>")
        w("</tr>\n")
    w(f"</tbody>\n</table>\n<table>\n<thead><tr><th>Component</th>{th}</tr></thead>\n<tbody>\n")
    comps = components_matrix(latest)
    for row in comps:
        w(f"<tr><td>{html(row.label)}{' ≠' if row.differs else ''}</td>")
        o.extend(
            "<td>–</td>" if c.value is None else f"<td>{html(c.value)}</td>" for c in row.cells
        )
        w("</tr>\n")
    if not comps:
        w("<tr><td><em>none reported</em></td>" + "<td></td>" * len(heads) + "</tr>\n")
    w(
        "</tbody>\n</table>\n<table>\n<thead><tr><th>Validator image</th><th>Pinned by digest</th>"
        "<th>Used by</th></tr></thead>\n<tbody>\n"
    )
    images = validator_images(latest)
    for img, n in images:
        pinned = (
            '<span class="mismatch">⚠ mutable tag, not pinned</span>'
            if img.get("mutable")
            else f"✓ {html(img.get('digest'))}"
        )
        w(
            f"<tr><td>{html(img.get('image'))}</td><td>{pinned}</td><td>{n} of {len(latest)}</td>"
            "</tr>\n"
        )
    if not images:
        w("<tr><td><em>none reported</em></td><td></td><td></td></tr>\n")
    w("</tbody>\n</table>\n")
    return Markup("".join(o))


def source_recipes_table(m: SiteModel, page: str, src: str, covered: Sequence[Tab]) -> Markup:
    """A source page's table of the recipes it covers: state, builds, flake rate, newest."""
    o = [
        '<table>\n<thead><tr><th scope="col">Recipe</th><th scope="col">Recipe state</th>'
        '<th scope="col">Builds</th><th scope="col">Flake rate</th><th scope="col">Last passing '
        'build</th><th scope="col">Newest build</th></tr></thead>\n<tbody>\n'
    ]
    for t in covered:
        s = m.series[t.recipe]
        builds = s["builds"][src]
        health = (s.get("health") or {}).get(src, {})
        newest = newest_build(builds) or {}
        last = health.get("lastPassBuild")
        o.append(
            f'<tr><td><a href="{html(rel(page, recipe_page(t.recipe)))}">{html(t.recipe)}'
            f"</a></td><td>{m.state_badge(str(t.doc.get('rollup')))}</td>"
            f"<td>{html(health.get('builds', len(builds)))}</td>"
            f"<td>{html(health.get('flakePct', 0))}%</td>"
            f"<td>{f'<code>{html(last)}</code>' if last else 'none'}</td>"
            f"<td>{html(newest.get('attestedAt', newest.get('when')))} "
            f"({html(age(newest.get('attestedAt'), m.build_time))})</td></tr>\n"
        )
    o.append("</tbody>\n</table>")
    return Markup("".join(o))


def source_builds_block(m: SiteModel, page: str, src: str, covered: Sequence[Tab]) -> Markup:
    """A source page's builds, per covered recipe: pass, fail and not-run counts per build."""
    o = ['<div class="source-builds">\n']
    for t in covered:
        s = m.series[t.recipe]
        health = (s.get("health") or {}).get(src, {})
        count = health.get("builds", 0)
        last = health.get("lastPassBuild")
        o.append(
            f'<h3 class="source-recipe"><a href="{html(rel(page, recipe_page(t.recipe)))}">'
            f"{html(t.recipe)}</a></h3>\n<p>{html(count)} build{'s' if count != 1 else ''} "
            f"· flake rate <strong>{html(health.get('flakePct', 0))}%</strong> · last "
            f"passing build: {f'<code>{html(last)}</code>' if last else 'none'}</p>\n"
            '<table>\n<thead><tr><th scope="col">Build</th><th scope="col">Attested</th>'
            '<th scope="col">aicr</th><th scope="col">Kubernetes</th><th scope="col">Pass'
            '</th><th scope="col">Fail</th><th scope="col">Not run</th><th scope="col">'
            "</th></tr></thead>\n<tbody>\n"
        )
        for b in s["builds"][src]:
            n = result_counts(b.get("resultsByRow") or {})
            o.append(
                f"<tr><td>{html(b.get('id'))}</td>"
                f"<td>{html(b.get('attestedAt', b.get('when')))}</td>"
                f"<td>{html(b.get('aicrVer'))}</td><td>{html(b.get('k8sVer'))}</td>"
                f"<td>{n['pass']}</td><td>{n['fail']}</td><td>{n['notRun']}</td>"
                f"<td>{'newest' if b.get('newest') else ''}</td></tr>\n"
            )
        o.append("</tbody>\n</table>\n")
    o.append("</div>")
    return Markup("".join(o))
