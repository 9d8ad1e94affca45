"""The build: one run, told in order (tree -> bundles -> verify -> corroborate -> data -> site).

This module is the narrative; the stages live in `generator.evaluate` (options, engine,
verification and its worker pool, assessment, output). It owns the clock (injected from
`SOURCE_DATE_EPOCH`, else the newest verified transparency-log time, never a claimed
attestedAt) and decides what a failure means. A bad pointer never takes the build down: each
pointer is fetched, verified and assessed inside an isolation boundary (generator.isolation)
and whatever goes wrong becomes its record in `data/pointers.json` and on the site. Only an
unusable tree or allowlist stops the build (exit 2).
"""

from __future__ import annotations

import dataclasses

from generator.buildmemo import Counts
from generator.bundle.prefetch import IndexPrefetch
from generator.cacheauth import reset_failures
from generator.data.laidout import LayoutError
from generator.data.layoutfile import let_go_files
from generator.errors import BuildError
from generator.evaluate.clock import build_time_for, rfc3339, verdict_logged
from generator.evaluate.engine import Engines, start_prefetch
from generator.evaluate.evaluation import Evaluation, evaluate, schema_rejection
from generator.evaluate.memoize import MemoSlot, counts_of
from generator.evaluate.output import (
    STAGING_PREFIX,
    finish_retiring,
    size_warnings,
    start_linking_ahead,
    sweep_dead_staging,
    write_output,
)
from generator.evaluate.pool import bulk_allocation
from generator.evaluate.productwrites import finish_writing
from generator.evaluate.single import verify_one
from generator.evaluate.summary import BuildSummary, check_unverified, summarize
from generator.evaluate.tabstore import finish_storing
from generator.options import BuildOptions
from generator.outdir import build_guards, claim_output
from generator.site.prestage import Prestage
from generator.site.siteconfig import load_site_config

__all__ = [
    "STAGING_PREFIX",
    "BuildOptions",
    "BuildSummary",
    "Evaluation",
    "build_time_for",
    "evaluate",
    "rfc3339",
    "run_build",
    "schema_rejection",
    "sweep_dead_staging",
    "verdict_logged",
    "verify_one",
]


def run_build(options: BuildOptions) -> BuildSummary:
    """Run a whole build. Raises `InputError` (exit 2) or `BuildError` (exit 3) on failure.

    The output folder is checked and locked first (generator.outdir); the build publishes into
    its resolved target (a symlinked --out stays a link)."""
    output = options.output
    if output.config is not None and not output.data_only:
        load_site_config(output.config)  # refuse a configuration that runs code before any work
    with claim_output(output.out, build_guards(options), timeout=output.lock_timeout) as target:
        try:
            with bulk_allocation():  # GC paused: a build's objects are trees, freed by refcounting
                summary = _build(options.replace(out=target))
        finally:
            finish_retiring()  # the replaced output, deleted while the build finished
            finish_storing()  # the kept tabs, written while the site was built
            finish_writing()  # the recipe products, written by a helper meanwhile
            let_go_files()  # the recipe products' files of entries its pages read
    return dataclasses.replace(summary, out=str(output.out))


def _build(options: BuildOptions) -> BuildSummary:
    """The stages of a build into a claimed output folder."""
    reset_failures()  # cache authentication failures, counted afresh for this build
    # The OCI layouts are indexed in a forked child from the start (one whose index the cache
    # kept is not): the fingerprint below mostly waits for the tree's digest, worked out by
    # another child (`generator.treeprefetch`), and a cold build's verification waits for the
    # index.
    indexes = start_prefetch(options.engine)
    try:
        # 1. The memo: an identical earlier evaluation whose site is still in --out, unchanged
        # to the byte, is done already; nothing is read, verified or written.
        memo = MemoSlot.for_build(options)
        published = memo.published(options)
        if published is not None:
            check_unverified(options, published.counts)
            return _finish(
                options, published.counts, published.recipes, from_memo=True, wrote=False
            )
        try:
            return _evaluate_and_publish(options, memo, indexes)
        except (LayoutError, BuildError) as error:
            if not _laid_out_damage(error):
                raise
    finally:
        indexes.close()
    # A stored pointer entry's text was not what its product names: its file is gone (counted
    # as a cache failure), so its recipe is evaluated again; nothing was published.
    try:
        return _evaluate_and_publish(options, memo)
    except LayoutError as error:
        raise BuildError(
            f"the cache changed while the site was built: {error}",
            hint="the previous output was left in place; build again",
        ) from error


def _laid_out_damage(error: Exception) -> bool:
    """Whether `error` is, or was caused by, a damaged file of laid-out entries."""
    return isinstance(error, LayoutError) or isinstance(error.__cause__, LayoutError)


def _evaluate_and_publish(
    options: BuildOptions, memo: MemoSlot, indexes: IndexPrefetch | None = None
) -> BuildSummary:
    """Stages 2 to 6 of `_build`: evaluate (or reuse an identical evaluation) and publish.
    `indexes`: the layouts' prefetch `_build` started (else one is started here)."""
    prestaged: Prestage | None = None
    try:
        # 2. The engine: the OCI layouts are indexed on the other core while the tree is read.
        with Engines(options.engine, indexes=indexes) as engines:
            # 3. An identical earlier evaluation is reused; nothing is verified.
            reused = memo.load()
            if reused is not None:
                engines.close()
                check_unverified(options, reused.counts)
                write_output(
                    options,
                    reused.documents,
                    data_from=reused.data_dir,
                    page_digests=reused.page_digests,
                )
                recipes = len(reused.documents["series"])
                return _finish(options, reused.counts, recipes, from_memo=True, memo=memo)
            # 4. The evaluation: read the tree, verify, assess, corroborate, make the
            # documents. Per recipe: a recipe whose inputs did not change is reused
            # (`--reevaluate`: none). Meanwhile a child links the replaced recipe pages ahead.
            prestaged = start_linking_ahead(options)
            evaluation = evaluate(
                options.evaluation,
                engines,
                incremental=not options.output.reevaluate,
                hashed=memo.hashed,
            )
        counts = counts_of(evaluation)
        # 5. The policy: too many pointers without a verdict keeps the previous site.
        check_unverified(options, counts)
        keep = memo.keeper(evaluation, counts, options.output.out.absolute() / "data")
        documents = evaluation.documents
        # The verdicts and the board are hundreds of MB at 10,000 attestations; the output
        # needs only the documents, so let the rest go before the data and the site are written.
        del evaluation
        # 6. The output: data/ and the site, staged and swapped in; the memo keeps its copy.
        used = write_output(options, documents, keep_data=keep, prestaged=prestaged)
        memo.add_page_digests(used)
        return _finish(options, counts, len(documents["series"]), from_memo=False, memo=memo)
    finally:
        if prestaged is not None:
            prestaged.close()


def _finish(
    options: BuildOptions,
    counts: Counts,
    recipes: int,
    *,
    from_memo: bool,
    memo: MemoSlot | None = None,
    wrote: bool = True,
) -> BuildSummary:
    """7. The summary, with the size warnings the published site records (measured before its
    manifest was written); the memo records the folder as published."""
    warnings = size_warnings(options)
    if memo is not None:
        memo.stamp(options)
    return summarize(options, counts, recipes, from_memo=from_memo, warnings=warnings, wrote=wrote)
