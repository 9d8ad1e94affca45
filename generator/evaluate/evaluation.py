"""The evaluation of a tree: read, verify, assess, corroborate; write nothing but caches.

`evaluate` is pure of output: it returns the records, the corroboration board and the data
documents the site is built from. The build writes them (generator.evaluate.output); the PR
report evaluates the base and the head tree this way and compares the two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sigstore

from generator import __version__
from generator.bundlerefs import BundleRefEntry
from generator.cacheauth import CacheAuth
from generator.corroborate import BoardEntry, build_board, count_each_bundle_once
from generator.data import PointerRecord, build_info_document, data_documents, pointer_document
from generator.evaluate.assess import Assessed, Assessor, remembered, settled
from generator.evaluate.clock import build_time_for
from generator.evaluate.engine import CacheLookup, Engines, cache_root
from generator.evaluate.perrecipe import Made, RecipePlan
from generator.evaluate.pointermemo import PointerDocs
from generator.evaluate.pool import bulk_allocation, choose_verifier
from generator.evaluate.products import PointerProduct, ReusedPointer
from generator.evaluate.refs import verify_refs
from generator.evaluate.tabstore import TabStore
from generator.evaluate.treeread import pointer_docs, read_tree
from generator.evaluate.verification import Progress, split_cached
from generator.freshness import ContentMemo
from generator.isolation import assess_isolated
from generator.model import (
    FailureCause,
    FailureClass,
    ParsedPointer,
    Rejected,
    RejectedPointer,
    Step,
    StepStatus,
    Verdict,
)
from generator.options import EvaluationOptions
from generator.tree import (
    Allowlist,
    TreeScan,
    display_label,
    organisation_of,
)
from generator.verify.cache import verdict_policy
from generator.verify.trust import Trust
from generator.verifyhint import verify_with

__all__ = ["Evaluation", "Verification", "evaluate", "schema_rejection", "verify_pointers"]


@dataclass(frozen=True)
class Evaluation:
    """Everything one evaluation of a tree produced, before anything is written.

    `records` has one entry per pointer file evaluated (sorted by path), `reused` one per
    pointer file of a recipe reused from its product (an incremental evaluation; every pointer
    file is in one or the other); `board` is the corroboration board; `documents` are the data
    documents the site is built from.
    """

    records: tuple[PointerRecord, ...]
    board: Any
    documents: Mapping[str, Any]
    build_time: str
    trust: Trust
    allowlist: Allowlist
    recipes_evaluated: int = 0
    """Recipes (groups of pointer files, `generator.evaluate.perrecipe`) evaluated this time."""
    recipes_reused: int = 0
    """Recipes whose stored product was reused (an incremental evaluation)."""
    reused: tuple[ReusedPointer, ...] = ()
    """The pointer files of the reused recipes (sorted by path), with their verdicts' outcome."""

    def count(self, exit_code: int) -> int:
        """Pointer files whose verdict has this exit code (3: none)."""
        made = sum(1 for r in self.records if _record_exit(r) == exit_code)
        return made + sum(1 for r in self.reused if int(r.outcome.exit) == exit_code)


@dataclass(frozen=True)
class Verification:
    """Every usable pointer's verdict (by path, in path order, `--bundle-refs` last)."""

    verdicts: dict[str, Verdict]
    verified_at: dict[str, str]
    """The recording time of verdicts reused because no fresh one could be had."""
    assessed: dict[str, Assessed]
    """What verification workers already assessed (by path)."""
    ref_files: list[ParsedPointer] = field(default_factory=list)
    """The pointers derived from `--bundle-refs` entries."""


def _record_exit(record: PointerRecord) -> int:
    verdict = record.verdict
    return 3 if verdict is None else int(verdict.exit)


def schema_rejection(pointer: RejectedPointer) -> Rejected:
    """A tree rejection as a verdict: exit 2, class `schema`, with the rule that failed."""
    step = Step(
        1,
        "materialize-bundle",
        StepStatus.FAILED,
        f"pointer rejected before verification: {pointer.message}",
    )
    return Rejected(
        steps=(step,), cause=FailureCause(FailureClass.SCHEMA, pointer.message, pointer.hint)
    )


def evaluate(
    options: EvaluationOptions,
    engines: Engines | None = None,
    *,
    incremental: bool = False,
    hashed: Mapping[str, str] | None = None,
) -> Evaluation:
    """Read, verify and corroborate the tree at `options.tree.recipes`; write nothing but caches.

    Raises `InputError` (exit 2) when the tree or allowlist cannot be used at all. Runs
    under `bulk_allocation` (a build already does; the PR report calls this directly).
    `engines` builds the engine (a build's has the OCI layouts indexed meanwhile).
    `incremental` reuses the stored product of every recipe whose inputs did not change
    (`generator.evaluate.perrecipe`; never with `--bundle-refs`); the result is the same.
    `hashed`: the sha256 of files of the tree this build already read, by path (the memo
    key's `tree_digest`); a pointer file among them known to the pointer memo is not read again.
    """
    with bulk_allocation():
        return _evaluate(
            options,
            engines or Engines(options.engine, prefetch=False),
            incremental=incremental,
            hashed=hashed or {},
        )


def _tab_store(options: EvaluationOptions, plan: RecipePlan, auth: CacheAuth) -> TabStore | None:
    """Where an incremental evaluation keeps the board's tabs (`generator.evaluate.tabstore`);
    None when it stores no products (`--reevaluate`, `--bundle-refs`, the PR report)."""
    if plan.store is None:
        return None
    return TabStore(cache_root(options.engine) / "tabs", auth, plan.product_keys())


def _recipe_plan(
    options: EvaluationOptions,
    scan: TreeScan,
    allowlist: Allowlist,
    lookup: CacheLookup,
    docs: PointerDocs,
    hashed: Mapping[str, str],
) -> RecipePlan:
    """An incremental evaluation's plan: the recipes reused from their stored products
    (`hashed`: the files of the tree this build already hashed, see `evaluate`)."""
    return RecipePlan.make(
        options,
        scan.files,
        allowlist,
        trust_digest=lookup.trust.digest,
        policy=_policy(options),
        store_root=cache_root(options.engine) / "recipes",
        auth=lookup.verdicts.auth,
        digests=docs.digests,
        hashed=hashed,
    )


def _verify_refs(
    options: EvaluationOptions,
    refs: Sequence[BundleRefEntry],
    scan: TreeScan,
    engines: Engines,
    done: Verification,
    duplicate_of: dict[str, str],
) -> None:
    """`--bundle-refs`: each entry's bundle verified against the pointers it names (into
    `done`; a ref repeating a bundle is noted in `duplicate_of`)."""
    todo = [f for f in scan.files if isinstance(f, ParsedPointer)]
    done.verdicts.update(
        verify_refs(
            refs,
            todo,
            engines.verifying(),
            done.ref_files,
            duplicate_of,
            options.clock.source_date_epoch,
        )
    )


def _evaluate(
    options: EvaluationOptions, engines: Engines, *, incremental: bool, hashed: Mapping[str, str]
) -> Evaluation:
    """`evaluate` itself: the stages of one evaluation, in order."""
    docs = pointer_docs(options, hashed) if incremental else None
    allowlist, scan, refs = read_tree(options, docs)
    memo = ContentMemo(cache_root(options.engine) / "freshness" / "memo.json")
    assessor = Assessor.for_build(options, allowlist, memo)
    duplicate_of = dict(scan.duplicate_of)
    lookup = engines.lookup()  # the bundle source (the layouts' index) only when needed
    assessor.trust_root = lookup.trust.digest  # named by the records of reused verdicts
    if docs is not None and not refs:
        plan = _recipe_plan(options, scan, allowlist, lookup, docs, hashed)
    else:
        plan = RecipePlan.everything(scan.files, allowlist)
    todo = plan.todo(scan.files)
    done = verify_pointers(options, todo, engines, assessor)
    if refs:
        _verify_refs(options, refs, scan, engines, done, duplicate_of)
    kept: dict[str, Made] = {}
    records, reused, entries, documents = _records(
        (*scan.files, *done.ref_files),
        done,
        duplicate_of,
        assessor,
        lookup.trust.digest,
        reused=plan,
        kept=kept,
    )
    engines.check_layouts()  # even when no bundle was needed (indexed by now, or before)
    memo.save()
    if docs is not None:
        docs.save()
    plan.keep(kept, documents)
    del kept
    tabs = _tab_store(options, plan, lookup.verdicts.auth)
    board = build_board(entries, organisation_of=remembered(organisation_of), lookup=tabs)
    build_time = build_time_for(options.clock.source_date_epoch, [e.run.logged_at for e in entries])
    made = data_documents(
        board=board,
        records=records,
        build_time=build_time,
        build_info=_build_info(options, build_time, lookup.trust),
        pointer_documents=documents,
    )
    if tabs is not None:
        tabs.store(board, made)
    return Evaluation(
        records=tuple(records),
        board=board,
        documents=made,
        build_time=build_time,
        trust=lookup.trust,
        allowlist=allowlist,
        recipes_evaluated=plan.recipes_evaluated,
        recipes_reused=plan.recipes_reused,
        reused=tuple(reused),
    )


def verify_pointers(
    options: EvaluationOptions,
    files: Sequence[Any],
    engines: Engines,
    assessor: Assessor | None = None,
) -> Verification:
    """Verify every usable pointer (cached, in parallel), each on its own: a pointer repeating
    another's bundle is verified against its own folder and claims too. Every verdict has
    been judged on time (generator.verify.times); any exception of one pointer is that
    pointer's `internal` verdict. Results are in path order, whatever the workers' timing."""
    policy = _policy(options)
    todo = [f for f in files if isinstance(f, ParsedPointer)]
    epoch = options.clock.source_date_epoch
    verdicts, misses = split_cached(todo, engines.lookup(), policy, epoch)
    verified_at: dict[str, str] = {}
    assessed: dict[str, Assessed] = {}
    progress = Progress(len(misses), "verifying", options.engine.quiet)
    try:
        # the bundle source (it waits for the layouts' index) only when a bundle is needed
        outcomes = (
            choose_verifier(options, engines.verifying(), assessor, len(misses)).verify_all(misses)
            if misses
            else iter(())
        )
        for outcome in outcomes:
            verdicts[outcome.path] = outcome.verdict
            if outcome.verified_at:
                verified_at[outcome.path] = outcome.verified_at
            if outcome.assessed is not None:
                assessed[outcome.path] = outcome.assessed
            progress.advance()
    finally:
        progress.close()
    order = {item.location.path: n for n, item in enumerate(todo)}
    ordered = dict(sorted(verdicts.items(), key=lambda kv: order[kv[0]]))
    return Verification(ordered, verified_at, assessed)


def _policy(options: EvaluationOptions) -> str:
    return verdict_policy(
        options.engine.trusted_registries, options.engine.allow_private_registries
    )


def _records(
    files: Sequence[Any],
    done: Verification,
    duplicate_of: Mapping[str, str],
    assessor: Assessor,
    trust_root: str,
    *,
    reused: RecipePlan | None = None,
    kept: dict[str, Made] | None = None,
) -> tuple[
    list[PointerRecord], list[ReusedPointer], list[BoardEntry], dict[str, Mapping[str, Any]]
]:
    """One record per pointer file evaluated (assessed here unless a worker did), one
    `ReusedPointer` per pointer file of a recipe whose stored product is reused (`reused`), the
    board entries (each bundle counted once) and the pointers.json entries (made by the workers
    or here, or the products'). What was made of each pointer evaluated this time goes into
    `kept` (to store its recipe's product).

    Each verdict is taken out of `done` and kept settled (`settled`): once its entries are
    made nothing reads its documents, and letting them go pointer by pointer keeps a
    10,000-attestation build's peak memory near one copy of the verdicts."""
    records: list[PointerRecord] = []
    from_products: list[ReusedPointer] = []
    candidates: list[tuple[bool, int, BoardEntry]] = []
    documents: dict[str, Mapping[str, Any]] = {}
    for item in files:
        path = item.location.path
        if isinstance(item, RejectedPointer):
            records.append(PointerRecord(pointer=item, verdict=schema_rejection(item)))
            continue
        duplicate = duplicate_of.get(path)
        product = None if reused is None else reused.reused.get(path)
        if reused is not None and product is not None:
            documents[path] = _reused_document(product, duplicate, reused)
            from_products.append(ReusedPointer(path, product.outcome))
            entry = product.entry
        else:
            record, entry = _evaluated(item, done, duplicate, assessor, trust_root, documents)
            records.append(record)
            if kept is not None:
                kept[path] = (record, documents[path], entry)
        if entry is not None:
            candidates.append((duplicate is not None, len(candidates), entry))
    return records, from_products, count_each_bundle_once(candidates), documents


def _evaluated(
    item: ParsedPointer,
    done: Verification,
    duplicate: str | None,
    assessor: Assessor,
    trust_root: str,
    documents: dict[str, Mapping[str, Any]],
) -> tuple[PointerRecord, BoardEntry | None]:
    """The record (its verdict settled) and board entry of a pointer evaluated this time; its
    pointers.json entry goes into `documents`."""
    path = item.location.path
    # its own verdict, duplicate or not; taken out, so only its settled form stays alive
    verdict = done.verdicts.pop(path, None)
    when = done.verified_at.get(path)
    made = done.assessed.get(path)
    if made is None:
        record, entry = assess_isolated(
            assessor, item, verdict, verified_at=when, duplicate_of=duplicate
        )
        documents[path] = pointer_document(record)
    else:
        record, entry = made.record(item, verdict, when, trust_root, duplicate), made.entry
        documents[path] = made.document_for(duplicate)
    return dataclasses.replace(record, verdict=settled(record.verdict)), entry


def _reused_document(
    product: PointerProduct, duplicate: str | None, plan: RecipePlan
) -> Mapping[str, Any]:
    """The pointers.json entry of a pointer whose recipe's product was reused: the product's,
    as the duplicate it is now, its signer named by the current allowlist."""
    signer = product.outcome.signer
    label = None if signer is None else display_label(signer, plan.classify(signer))
    return product.document_as(duplicate, label)


def _build_info(options: EvaluationOptions, build_time: str, trust: Trust) -> dict[str, Any]:
    """data/build-info.json: when, from what, verified by what and under which trust root."""
    return build_info_document(
        build_time=build_time,
        commit=options.tree.commit,
        source_url=options.tree.source_url,
        verifier=f"evidence-dashboard {__version__}, sigstore {sigstore.__version__}",
        trust_name=trust.name,
        trust_production=trust.production,
        trust_refreshed="TUF" if trust.refreshed else None,
        trust_fallback=trust.fallback,
        trusted_registries=options.engine.trusted_registries,
        preview=options.stamp.preview,
        publisher=None
        if options.stamp.publisher_identity is None
        else {
            "identity": options.stamp.publisher_identity,
            "issuer": options.stamp.publisher_issuer,
        },
        verify_with=verify_with(
            recipes=options.tree.recipes,
            trust_mode=str(options.engine.trust_mode),
            trust_root=options.engine.trust_root,
            offline=options.engine.offline,
        ),
        log_search_url=options.stamp.log_search_url,
    )
