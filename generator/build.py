"""The build: wire the seams into one run (tree -> bundles -> verify -> corroborate -> data -> site).

This module is a shell around the pure core: it reads options, owns the clock (injected from
`SOURCE_DATE_EPOCH`, else the newest verified transparency-log time, never a claimed
attestedAt), drives the progress bars and decides what a failure means. A bad pointer never
takes the build down: each pointer is fetched, verified and assessed inside an isolation
boundary (generator.isolation) and whatever goes wrong becomes its record in
`data/pointers.json` and on the site. Only an unusable tree or allowlist stops the build (exit 2).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from generator import __version__
from generator.errors import BuildError, EvidenceDashError, InputError, Location, UsageError
from generator.isolation import assess_isolated, internal_verdict, isolated
from generator.model import (
    FailureCause,
    FailureClass,
    NoVerdict,
    ParsedPointer,
    Pending,
    PointerFile,
    Rejected,
    RejectedPointer,
    Step,
    StepStatus,
    Verdict,
    Verified,
)
from generator.verifyhint import verify_with

if TYPE_CHECKING:
    from generator.bundle.layout import IndexPrefetch


@dataclass(frozen=True)
class BuildOptions:
    """Everything a build depends on, parsed and checked. Paths are as given."""

    recipes: Path
    out: Path
    config: Path | None = None
    trust_mode: str = "production"
    trust_root: Path | None = None
    oci_layouts: tuple[Path, ...] = ()
    registry_mirrors: Mapping[str, str] = field(default_factory=dict)
    trusted_registries: tuple[str, ...] | None = None
    registry_auth: Path | None = None
    allow_private_registries: tuple[str, ...] = ()
    """`--allow-private-registry HOST`: registry hosts that may resolve to non-public addresses."""
    fetch_timeout: float = 120.0
    """`--fetch-timeout SECONDS`: the total deadline of one bundle fetch from a registry."""
    offline: bool = False
    cache: Path | None = None
    jobs: int = 1
    quiet: bool = False
    preview: bool = False
    source_url: str | None = None
    commit: str | None = None
    aicr: Path | None = None
    digests: Path | None = None
    allow_pending: bool = True
    max_unverified: float | None = None
    data_only: bool = False
    source_date_epoch: int | None = None
    site_url: str | None = None
    bundle_refs: Path | None = None
    """`--bundle-refs FILE`: digest-pinned bundles no pointer names (issue 3)."""
    reevaluate: bool = False
    """`--reevaluate`: do not answer from the evaluation memo (generator.buildmemo)."""
    lock_timeout: float = 600.0
    """`--lock-timeout`: seconds to wait for another build into the same --out (generator.outdir)."""
    sign_with_test_authority: Path | None = None
    publisher_identity: str | None = None
    """`--publisher-identity`: who signs data/manifest.json (the "Verify this site" commands)."""
    publisher_issuer: str = "https://token.actions.githubusercontent.com"
    log_search_url: str | None = None
    """`--log-search-url TEMPLATE`: a transparency-log search page for `{logIndex}` (pages link
    each entry there; the production log's search is the default under the production root)."""
    """`--sign-with-test-authority SCENARIO`: sign data/manifest.json with that demo scenario's
    test authority (local and offline checks of `verify-site`; generator.publish)."""

    @classmethod
    def from_cli(cls, values: Mapping[str, Any]) -> BuildOptions:
        """Build options from click's keyword arguments plus the environment (clock, SITE_URL)."""
        mirrors: dict[str, str] = {}
        for item in values.get("registry_mirrors") or ():
            host, sep, url = str(item).partition("=")
            if not sep or not host or not url.startswith(("http://", "https://")):
                raise UsageError(
                    "--registry-mirror needs HOST=URL",
                    expected="HOST=http(s)://...",
                    found=str(item),
                    hint="for example --registry-mirror ghcr.io=http://127.0.0.1:5000",
                )
            mirrors[host] = url.rstrip("/")
        epoch_text = os.environ.get("SOURCE_DATE_EPOCH")
        epoch: int | None = None
        if epoch_text:
            try:
                epoch = int(epoch_text)
            except ValueError as exc:
                raise UsageError(
                    "SOURCE_DATE_EPOCH is not an integer",
                    expected="seconds since 1970",
                    found=epoch_text,
                    hint="unset it or set it to `date +%s`",
                ) from exc
        trusted = tuple(values.get("trusted_registries") or ()) or None
        jobs = values.get("jobs") or (os.cpu_count() or 1)
        return cls(
            recipes=Path(values["recipes"]),
            out=Path(values.get("out") or "site"),
            config=values.get("config"),
            trust_mode=str(values.get("trust_mode") or "production"),
            trust_root=values.get("trust_root"),
            oci_layouts=tuple(values.get("oci_layouts") or ()),
            registry_mirrors=mirrors,
            trusted_registries=trusted,
            registry_auth=values.get("registry_auth"),
            allow_private_registries=tuple(values.get("allow_private_registries") or ()),
            fetch_timeout=float(values.get("fetch_timeout") or 120.0),
            offline=bool(values.get("offline")),
            cache=values.get("cache"),
            jobs=int(jobs),
            quiet=bool(values.get("quiet")) or not sys.stderr.isatty(),
            preview=bool(values.get("preview")),
            source_url=values.get("source_url"),
            commit=values.get("commit"),
            aicr=values.get("aicr"),
            digests=values.get("digests"),
            log_search_url=values.get("log_search_url"),
            # A build always shows flat unsigned pointers as pending (never counted); the flag
            # only changes what `check-tree` and `report` treat as a violation.
            allow_pending=True,
            max_unverified=values.get("max_unverified"),
            data_only=bool(values.get("data_only")),
            source_date_epoch=epoch,
            site_url=os.environ.get("SITE_URL") or None,
            bundle_refs=values.get("bundle_refs"),
            reevaluate=bool(values.get("reevaluate")),
            sign_with_test_authority=values.get("sign_with_test_authority"),
            publisher_identity=values.get("publisher_identity") or None,
            publisher_issuer=str(
                values.get("publisher_issuer") or "https://token.actions.githubusercontent.com"
            ),
            lock_timeout=600.0
            if values.get("lock_timeout") is None
            else float(values["lock_timeout"]),
        )


@dataclass(frozen=True)
class BuildSummary:
    """What a build did, for the terminal and `--format json`."""

    out: str
    pointers: int
    verified: int
    rejected: int
    pending: int
    no_verdict: int
    recipes: int
    build_time: str
    from_memo: bool = False
    """The evaluation was the cached one of an identical earlier build (generator.buildmemo)."""
    warnings: tuple[str, ...] = ()
    """Output size warnings (generator.outputsize)."""
    auth_failures: int = 0
    """Cache entries that failed authentication (generator.cacheauth), read as misses."""

    def as_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "out": self.out,
            "pointers": self.pointers,
            "verified": self.verified,
            "rejected": self.rejected,
            "pending": self.pending,
            "noVerdict": self.no_verdict,
            "recipes": self.recipes,
            "buildTime": self.build_time,
            "exit": 0,
            "evaluation": "reused" if self.from_memo else "evaluated",
            "cache": {"authenticationFailures": self.auth_failures},
        }
        if self.warnings:
            doc["warnings"] = list(self.warnings)
        return doc

    def describe(self) -> str:
        reused = "; nothing changed, the cached evaluation was reused" if self.from_memo else ""
        if self.auth_failures:
            reused += f"; {self.auth_failures} cache entries failed authentication"
        return (
            f"built {self.out}: {self.recipes} recipes, {self.pointers} pointers "
            f"({self.verified} verified, {self.rejected} rejected, {self.pending} pending, "
            f"{self.no_verdict} without a verdict), build time {self.build_time}{reused}"
            + "".join(f"\nwarning: {w}" for w in self.warnings)
        )


def rfc3339(moment: datetime) -> str:
    """UTC RFC 3339 with whole seconds and `Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_time_for(epoch: int | None, logged: Iterable[str]) -> str:
    """The build time: SOURCE_DATE_EPOCH when set, else the newest of the verified
    transparency-log times `logged`; never the clock, never a claimed attestedAt."""
    if epoch is not None:
        return rfc3339(datetime.fromtimestamp(epoch, UTC))
    newest = max((a for a in logged if a), default="")
    return newest or "1970-01-01T00:00:00Z"


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


class _Progress:
    """A tqdm bar when stderr is a terminal and not --quiet; silent otherwise."""

    def __init__(self, total: int, desc: str, quiet: bool) -> None:
        self._bar: Any = None
        if not quiet and total:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="ptr", leave=False, file=sys.stderr)

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _engine(options: BuildOptions, indexes: IndexPrefetch | None = None) -> tuple[Any, Any, Any]:
    """Trust, bundle source and verdict cache for these options (`indexes`: an
    `IndexPrefetch` of the layouts, when one was started)."""
    from generator.bundle.cache import BundleCache, default_cache_dir
    from generator.bundle.chain import ChainSource
    from generator.bundle.layout import OciLayoutSource
    from generator.bundle.registry import RegistryClient
    from generator.bundle.types import Limits
    from generator.cacheauth import CacheAuth
    from generator.verify.cache import VerdictCache
    from generator.verify.trust import load_trust

    trust = load_trust(
        mode=options.trust_mode, root_file=options.trust_root, offline=options.offline
    )
    limits = Limits()
    cache_root = options.cache or default_cache_dir()
    auth = CacheAuth.from_environment()
    bundle_cache = BundleCache(cache_root / "bundles", limits, auth)
    layouts = [
        OciLayoutSource(path, limits, None if indexes is None else indexes.get(path))
        for path in options.oci_layouts
    ]
    registry = (
        None
        if options.offline
        else RegistryClient(
            mirrors=dict(options.registry_mirrors),
            trusted_prefixes=options.trusted_registries,
            auth_file=options.registry_auth,
            limits=limits,
            deadline=options.fetch_timeout,
            allow_private=options.allow_private_registries,
        )
    )
    source = ChainSource(
        layouts,
        bundle_cache,
        registry,
        options.offline,
        trusted_prefixes=options.trusted_registries,
        limits=limits,
    )
    return trust, source, VerdictCache(cache_root / "verify", auth)


def _verify_all(
    options: BuildOptions,
    files: Sequence[PointerFile],
    duplicate_of: Mapping[str, str],
    allowlist_digest: str,
    refs: Sequence[Any] = (),
    ref_files: list[ParsedPointer] | None = None,
    ref_duplicates: dict[str, str] | None = None,
    assessor: Assessor | None = None,
    indexes: IndexPrefetch | None = None,
) -> tuple[dict[str, Verdict], dict[str, str], Any, dict[str, Made]]:
    """Verify every usable pointer (cached, in parallel), each on its own: a pointer repeating
    another's bundle is verified against its own folder and claims too (its bundle bytes come
    from the bundle cache). Returns verdicts by path, the verification times of reused
    verdicts, the trust root, and what workers `Made`. Every verdict has been judged on time
    (generator.verify.times); any exception of one pointer is that pointer's `internal` verdict.

    Cache hits are answered here without touching a bundle: the cached verdict carries the
    Evidence. Misses are verified in-process for `--jobs 1` (or a handful of misses), else in
    `--jobs` worker processes (sigstore verification is CPU-bound Python: threads would share
    one GIL). Forked workers inherit this process's trust, bundle source and verdict cache,
    verify chunks of pointers, store each new verdict in the cache and send it back pickled.
    Given an `assessor`, each worker also assesses its verdicts (freshness, pointers.json entry,
    board entry: the rest of the per-pointer work, spread over the workers with the rest).
    Results are keyed by path and returned in path order, whatever the workers' timing.

    `refs` (`--bundle-refs` entries) are verified after the pointers, in-process, with the same
    trust and bundle source; their derived pointers are appended to `ref_files` and their
    verdicts keyed by their synthetic paths. A ref naming a bundle a pointer (or an earlier ref)
    already names is recorded in `ref_duplicates` and verified on its own all the same.
    """
    from generator.verify.cache import verdict_policy
    from generator.verify.times import judge_time

    trust, source, verdicts_cache = _engine(options, indexes)
    policy = verdict_policy(options.trusted_registries, options.allow_private_registries)
    if assessor is not None:
        assessor.trust_root = trust.digest  # named by the records of reused verdicts
    todo = [f for f in files if isinstance(f, ParsedPointer)]
    verdicts: dict[str, Verdict] = {}
    verified_at: dict[str, str] = {}
    made: dict[str, Made] = {}
    misses: list[tuple[ParsedPointer, str]] = []
    epoch = options.source_date_epoch
    for item in todo:

        def lookup(item: ParsedPointer = item) -> Verdict | None:
            key = verdicts_cache.key(item.pointer, item.location, trust, allowlist_digest, policy)
            cached = verdicts_cache.get(key)
            if cached is None:
                misses.append((item, key))
                return None
            return judge_time(cached[0], epoch)

        found = isolated(lookup, lambda exc: internal_verdict(exc, "the verdict cache lookup"))
        if found is not None:
            verdicts[item.location.path] = found
    progress = _Progress(len(misses), "verifying", options.quiet)
    try:
        jobs = max(1, min(options.jobs, len(misses) // _MIN_PER_WORKER))
        if jobs == 1:
            with verdicts_cache.batched():
                for item, key in misses:
                    path, verdict, when = _verify_miss(
                        item, key, trust, source, verdicts_cache, options.source_date_epoch
                    )
                    verdicts[path] = verdict
                    if when:
                        verified_at[path] = when
                    progress.advance()
        else:
            engine = (trust, source, verdicts_cache)
            for path, verdict, when, done in _verify_in_processes(
                options, misses, jobs, progress, engine, assessor
            ):
                verdicts[path] = verdict
                if when:
                    verified_at[path] = when
                if done is not None:
                    made[path] = done
    finally:
        progress.close()
    order = {item.location.path: n for n, item in enumerate(todo)}
    ordered = dict(sorted(verdicts.items(), key=lambda kv: order[kv[0]]))
    if refs:
        ordered.update(_verify_refs(refs, todo, source, trust, ref_files, ref_duplicates, epoch))
    return ordered, verified_at, trust, made


def _verify_refs(
    refs: Sequence[Any],
    todo: Sequence[ParsedPointer],
    source: Any,
    trust: Any,
    ref_files: list[ParsedPointer] | None,
    ref_duplicates: dict[str, str] | None,
    epoch: int | None = None,
) -> dict[str, Verdict]:
    """Verify `--bundle-refs` entries (first-party runs without a pointer file), each on its
    own and inside the isolation boundary; one naming a bundle already named is noted in
    `ref_duplicates` (the bundle counts once)."""
    from generator.bundlerefs import derived_pointer, verify_bundle_ref
    from generator.verify.times import judge_time

    known = {
        str(item.pointer.bundle.digest): item.location.path
        for item in todo
        if item.pointer.bundle.digest
    }
    verdicts: dict[str, Verdict] = {}
    for entry in refs:
        first = known.get(str(entry.digest))
        if first is not None and ref_duplicates is not None:
            ref_duplicates[entry.path] = first
        known.setdefault(str(entry.digest), entry.path)

        def one(entry: Any = entry) -> tuple[ParsedPointer, Verdict]:
            parsed, verdict = verify_bundle_ref(entry, source, trust)
            return parsed, judge_time(verdict, epoch)

        def failed(exc: BaseException, entry: Any = entry) -> tuple[ParsedPointer, Verdict]:
            return (
                ParsedPointer(entry.location, derived_pointer(entry, {}, None)),
                internal_verdict(exc),
            )

        parsed, verdict = isolated(one, failed)
        verdicts[entry.path] = verdict
        if ref_files is not None:
            ref_files.append(parsed)
    return verdicts


_MIN_PER_WORKER = 8
"""Below this many cache misses per worker, starting processes costs more than it saves."""
_CHUNK = 32
"""Pointers per task sent to a worker: large enough to amortise pickling, small enough to
keep both workers busy until the end."""
_WORKER_STATE: dict[str, Any] = {}


def _verify_miss(
    item: ParsedPointer, key: str, trust: Any, source: Any, verdicts_cache: Any, epoch: int | None
) -> tuple[str, Verdict, str | None]:
    """Verify one pointer the cache did not answer (under its cache `key`), record the raw
    verdict, fall back when none: only to a verdict recorded under the same full key (same
    trust root, allowlist, verifier and policy), with the time it was recorded; return it
    judged on time. Inside the isolation boundary: an exception is this pointer's `internal`
    verdict (never cached)."""
    from generator.verify.pipeline import verify_pointer
    from generator.verify.times import judge_time

    def work() -> tuple[str, Verdict, str | None]:
        verdict = verify_pointer(item.pointer, item.location, source, trust)
        if isinstance(verdict, NoVerdict):
            earlier = verdicts_cache.remembered(key)
            if earlier is not None and earlier.trust_root == trust.digest:
                return (item.location.path, judge_time(earlier.verdict, epoch), earlier.recorded_at)
            return item.location.path, verdict, None
        recorded = build_time_for(epoch, [verdict_logged(verdict)])
        verdicts_cache.put(
            key,
            verdict,
            recorded,
            trust_root=trust.digest,
            claims_key=verdicts_cache.claims_key(item.pointer, item.location),
        )
        return item.location.path, judge_time(verdict, epoch), None

    return isolated(work, lambda exc: (item.location.path, internal_verdict(exc), None))


def _worker_init(options: BuildOptions) -> None:
    """Runs once in each worker process: its own trust, bundle source and verdict cache."""
    trust, source, verdicts_cache = _engine(options)
    _WORKER_STATE.update(
        trust=trust, source=source, cache=verdicts_cache, epoch=options.source_date_epoch
    )


def _worker_chunk(
    items: Sequence[tuple[ParsedPointer, str]],
) -> tuple[list[tuple[str, Verdict, str | None, Made | None]], dict[str, Any], frozenset[str]]:
    """Verify (and, given an assessor, assess) a chunk in a worker; verdicts travel back
    pickled (frozen dataclasses of plain data: far cheaper than the cache's JSON form both
    ways), their strings shared, with the freshness memo answers the chunk used and the cache
    entries that failed authentication."""
    from generator.cacheauth import failures
    from generator.data import pointer_document

    s = _WORKER_STATE
    assessor: Assessor | None = s.get("assessor")
    out = []
    with s["cache"].batched():  # the chunk's verdicts in one pack: one file, not one each
        for item, key in items:
            path, verdict, when = _verify_miss(
                item, key, s["trust"], s["source"], s["cache"], s["epoch"]
            )
            done = None
            if assessor is not None:
                record, entry = assess_isolated(assessor, item, verdict, verified_at=when)
                if record.verdict is not verdict:  # the assessment failed: an internal record
                    verdict, when = record.verdict, None
                done = Made(
                    record.classification,
                    record.label,
                    record.freshness,
                    pointer_document(record),
                    entry,
                )
            try:
                verdict = _shared_strings(verdict)
            except RecursionError:
                pass  # a deeply nested document travels back as it is
            out.append((path, verdict, when, done))
    answers = assessor.memo.drain() if assessor is not None and assessor.memo else {}
    return out, answers, failures()


def _shared_strings(verdict: Verdict) -> Verdict:
    """The verdict with the keys and short strings of its parsed documents interned.

    Every bundle's predicate, recipe, snapshot and BOM repeat the same keys and most of the
    same values; parsed separately, each holds its own copies (about 40% of a verdict's
    memory, hundreds of MB at 10,000 bundles). Interned in the worker, one pickled chunk
    carries each string once and the parent keeps one copy per chunk.
    """
    evidence = getattr(verdict, "evidence", None)
    if evidence is None:
        return verdict
    from dataclasses import replace

    compact = replace(
        evidence,
        predicate=_interned(evidence.predicate),
        recipe=_interned(evidence.recipe),
        snapshot=_interned(evidence.snapshot),
        bom=_interned(evidence.bom),
    )
    return replace(verdict, evidence=compact)


def _interned(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return sys.intern(value) if len(value) <= 80 else value
    if kind is dict:
        return {sys.intern(k) if type(k) is str else k: _interned(v) for k, v in value.items()}
    if kind is list:
        return [_interned(v) for v in value]
    if kind is tuple:
        return tuple(_interned(v) for v in value)
    return value


def _verify_in_processes(
    options: BuildOptions,
    misses: Sequence[tuple[ParsedPointer, str]],
    jobs: int,
    progress: _Progress,
    engine: tuple[Any, Any, Any] | None = None,
    assessor: Assessor | None = None,
) -> Iterable[tuple[str, Verdict, str | None, Made | None]]:
    """Verify `misses` (pointers with their cache keys) in `jobs` worker processes.

    With fork, the workers inherit the parent's `engine` (trust root, indexed bundle source,
    verdict cache) and `assessor` instead of loading and indexing their own; elsewhere each
    builds an engine and leaves assessing to this process. The memo answers the workers'
    assessments used are adopted into the assessor's memo, so the build saves them.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from generator.cacheauth import adopt_failures

    fork = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if fork else None)
    size = max(1, min(_CHUNK, len(misses) // (jobs * 4) or 1))
    chunks = [misses[i : i + size] for i in range(0, len(misses), size)]
    if fork and engine is not None:
        trust, source, cache = engine
        _WORKER_STATE.update(
            trust=trust,
            source=source,
            cache=cache,
            epoch=options.source_date_epoch,
            assessor=assessor,
        )
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    else:
        pool = ProcessPoolExecutor(
            max_workers=jobs, mp_context=context, initializer=_worker_init, initargs=(options,)
        )
    try:
        with pool:
            futures = {pool.submit(_worker_chunk, chunk): chunk for chunk in chunks}
            for future in as_completed(futures):
                try:
                    results, memo_answers, failed = future.result()
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as exc:  # noqa: BLE001 - a lost chunk: its pointers' fault
                    # Each pointer is isolated inside the chunk; this is the chunk itself
                    # failing (a worker died, a result could not travel back).
                    results, memo_answers = (
                        [
                            (
                                item.location.path,
                                internal_verdict(exc, "a verification worker"),
                                None,
                                None,
                            )
                            for item, _key in futures[future]
                        ],
                        {},
                    )
                    failed = frozenset()
                adopt_failures(failed)
                if assessor is not None and assessor.memo is not None:
                    assessor.memo.adopt(memo_answers)
                for path, verdict, when, done in results:
                    yield path, verdict, when, done
                    progress.advance()
    finally:
        _WORKER_STATE.clear()


def verdict_logged(verdict: Verdict) -> str:
    """The verified transparency-log time of a verdict's evidence, or ""."""
    if isinstance(verdict, Verified):
        return verdict.evidence.logged_at or ""
    return ""


@dataclass(frozen=True)
class Evaluation:
    """Everything one evaluation of a tree produced, before anything is written.

    `records` has one entry per pointer file (sorted by path); `board` is the corroboration
    board; `documents` are the data documents the site is built from. The PR report evaluates
    the base and the head tree this way and compares the two.
    """

    records: tuple[Any, ...]
    board: Any
    documents: Mapping[str, Any]
    build_time: str
    trust: Any
    allowlist: Any

    def count(self, exit_code: int) -> int:
        return sum(1 for r in self.records if _record_exit(r) == exit_code)


def evaluate(options: BuildOptions, indexes: IndexPrefetch | None = None) -> Evaluation:
    """Read, verify and corroborate the tree at `options.recipes`; write nothing but caches.

    Raises `InputError` (exit 2) when the tree or allowlist cannot be used at all. Runs
    under `bulk_allocation` (a build already does; the PR report calls this directly).
    `indexes` is an `IndexPrefetch` of the OCI layouts, when the caller started one.
    """
    with bulk_allocation():
        return _evaluate(options, indexes)


def _evaluate(options: BuildOptions, indexes: IndexPrefetch | None = None) -> Evaluation:
    """`evaluate` itself."""
    from generator.corroborate import build_board, count_each_bundle_once
    from generator.data import PointerRecord, build_info_document, data_documents
    from generator.tree import load_allowlist, organisation_of, scan_tree

    evidence_root = options.recipes / "evidence"
    if not evidence_root.is_dir():
        raise InputError(
            "the recipes folder has no evidence/ folder",
            location=Location(str(options.recipes)),
            expected="<recipes>/evidence/ with allowlist.yaml and pointer files",
            found="no such folder",
            hint="pass --recipes pointing at an aicr checkout's recipes/ folder",
        )
    allowlist = load_allowlist(evidence_root / "allowlist.yaml")
    scan = scan_tree(options.recipes, allowlist=allowlist, allow_pending=options.allow_pending)
    refs: tuple[Any, ...] = ()
    if options.bundle_refs is not None:
        from generator.bundlerefs import load_bundle_refs

        refs = load_bundle_refs(options.bundle_refs)
    ref_files: list[ParsedPointer] = []
    duplicate_of: dict[str, str] = dict(scan.duplicate_of)
    from generator.freshness import ContentMemo, StaleExplainer

    memo = ContentMemo(_cache_root(options) / "freshness" / "memo.json")
    assessor = Assessor(
        allowlist,
        _freshness_providers(options, memo),
        StaleExplainer.for_recipes(options.recipes, memo),
        memo,
    )
    verdicts, verified_at, trust, made = _verify_all(
        options,
        scan.files,
        scan.duplicate_of,
        allowlist.digest,
        refs,
        ref_files,
        duplicate_of,
        assessor,
        indexes,
    )

    from generator.verify.times import flagged_skew

    records: list[PointerRecord] = []
    candidates: list[tuple[bool, int, Any]] = []
    made_documents: dict[str, dict[str, Any]] = {}
    for item in (*scan.files, *ref_files):
        path = item.location.path
        if isinstance(item, RejectedPointer):
            records.append(PointerRecord(pointer=item, verdict=schema_rejection(item)))
            continue
        duplicate = duplicate_of.get(path)
        verdict = verdicts.get(path)  # its own verdict, duplicate or not
        done = made.get(path) if duplicate is None else None
        if done is None:
            record, entry = assess_isolated(
                assessor, item, verdict, verified_at=verified_at.get(path), duplicate_of=duplicate
            )
        else:
            record = PointerRecord(
                pointer=item,
                verdict=verdict,
                classification=done.classification,
                label=done.label,
                freshness=done.freshness,
                verified_at=verified_at.get(path),
                attested_at_skew=flagged_skew(verdict),
                reused_trust_root=trust.digest if verified_at.get(path) else None,
            )
            entry = done.entry
            made_documents[path] = done.document
        records.append(record)
        if entry is not None:
            candidates.append((duplicate is not None, len(candidates), entry))
    entries = count_each_bundle_once(candidates)

    memo.save()
    board = build_board(entries, organisation_of=_remembered(organisation_of))
    build_time = build_time_for(options.source_date_epoch, [e.run.logged_at for e in entries])
    documents = data_documents(
        board=board,
        records=records,
        build_time=build_time,
        build_info=build_info_document(
            build_time=build_time,
            commit=options.commit,
            source_url=options.source_url,
            verifier=f"evidence-dashboard {__version__}, sigstore {_sigstore_version()}",
            trust_name=trust.name,
            trust_production=trust.production,
            trust_refreshed="TUF" if trust.refreshed else None,
            trust_fallback=trust.fallback,
            trusted_registries=options.trusted_registries,
            preview=options.preview,
            publisher=None
            if options.publisher_identity is None
            else {"identity": options.publisher_identity, "issuer": options.publisher_issuer},
            verify_with=verify_with(
                recipes=options.recipes,
                trust_mode=options.trust_mode,
                trust_root=options.trust_root,
                offline=options.offline,
            ),
            log_search_url=options.log_search_url,
        ),
        pointer_documents=made_documents,
    )
    return Evaluation(
        records=tuple(records),
        board=board,
        documents=documents,
        build_time=build_time,
        trust=trust,
        allowlist=allowlist,
    )


class Made(NamedTuple):
    """What a verification worker made of one verdict besides the verdict (see `Assessor`)."""

    classification: Any
    label: str | None
    freshness: Any
    document: dict[str, Any]
    """The pointer's data/pointers.json entry (`generator.data.pointer_document`)."""
    entry: Any
    """Its board entry, or None when the board does not count it."""


class Assessor:
    """Turns one pointer's verdict into its record and board entry: the signer's
    classification and display label, and the freshness of the signed recipe (with why it is
    stale). Runs where the verdict is: in a verification worker for a cache miss, so this
    per-pointer work is spread over the workers, else in the build process.
    """

    def __init__(
        self, allowlist: Any, providers: Sequence[Any], explainer: Any, memo: Any = None
    ) -> None:
        self.allowlist = allowlist
        self.providers = providers
        self.explainer = explainer
        self.memo = memo
        """The freshness `ContentMemo` the providers and explainer share, if any."""
        self._labelled: dict[Any, tuple[Any, str]] = {}  # per signer: a build has few
        self.trust_root: str | None = None
        """The digest of the build's trust root (a reused verdict was judged under it)."""

    def assess(
        self,
        item: ParsedPointer,
        verdict: Verdict | None,
        *,
        verified_at: str | None = None,
        duplicate_of: str | None = None,
    ) -> tuple[Any, Any]:
        """(PointerRecord, BoardEntry or None) for `item` and its `verdict`."""
        from generator.corroborate import board_entry
        from generator.data import PointerRecord
        from generator.tree import display_label
        from generator.verify.times import flagged_skew

        classification = None
        label = None
        signer = verdict.signer if isinstance(verdict, Verified | Rejected) else None
        if signer is not None:
            known = self._labelled.get(signer)
            if known is None:
                known = self._labelled[signer] = _labelled(self.allowlist, signer, display_label)
            classification, label = known
        record = PointerRecord(
            pointer=item,
            verdict=verdict,
            classification=classification,
            label=label,
            duplicate_of=duplicate_of,
            verified_at=verified_at,
            freshness=_freshness(verdict, item, self.providers, self.explainer),
            attested_at_skew=flagged_skew(verdict),
            reused_trust_root=self.trust_root if verified_at else None,
        )
        entry = None
        # A duplicate gets its entry too: the caller counts each bundle once
        # (generator.corroborate.count_each_bundle_once).
        if isinstance(verdict, Verified) and classification is not None:
            try:
                entry = board_entry(
                    verdict, classification, item.pointer, origin=item.location.path
                )
            except InputError:
                entry = None
        return record, entry


def _labelled(allowlist: Any, signer: Any, display_label: Any) -> tuple[Any, str]:
    """A verified signer's classification and display label (asked once per signer)."""
    classification = allowlist.classify(signer)
    return classification, display_label(signer, classification)


def _remembered(organisation_of: Any) -> Any:
    """`organisation_of` answering each (signer, classification) once: the board asks per run
    and row, and a build has few signers."""
    known: dict[Any, str] = {}

    def lookup(signer: Any, classification: Any) -> str:
        try:
            key = (signer, classification)
            if key not in known:
                known[key] = organisation_of(signer, classification)
            return known[key]
        except TypeError:  # an unhashable classification: ask every time
            return str(organisation_of(signer, classification))

    return lookup


@contextmanager
def bulk_allocation() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a build allocates millions of objects.

    A build's objects (documents, verdicts, pages) form trees, which reference counting frees
    on its own; the collector would only re-scan them over and over (about a quarter of a
    10,000-attestation build). When the outermost pause ends, what is still alive is frozen
    out of later passes (`gc.freeze`) and collection resumes. Nested pauses do nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


def run_build(options: BuildOptions) -> BuildSummary:
    """Run a whole build. Raises `InputError` (exit 2) or `BuildError` (exit 3) on failure.

    The output folder is checked and locked first (generator.outdir); the build publishes into
    its resolved target (a symlinked --out stays a link)."""
    from generator.outdir import build_guards, claim_output
    from generator.site.siteconfig import load_site_config

    if options.config is not None and not options.data_only:
        load_site_config(options.config)  # refuse a configuration that runs code before any work
    with claim_output(options.out, build_guards(options), timeout=options.lock_timeout) as target:
        with bulk_allocation():
            summary = _run_build(dataclasses.replace(options, out=target))
    return dataclasses.replace(summary, out=str(options.out))


def _run_build(options: BuildOptions) -> BuildSummary:
    from generator.bundle.layout import IndexPrefetch
    from generator.bundle.types import Limits

    # The layouts are indexed on the other core while the tree is hashed and read.
    indexes = IndexPrefetch(options.oci_layouts, Limits())
    try:
        return _run_build_with(options, indexes)
    finally:
        indexes.close()


def _run_build_with(options: BuildOptions, indexes: IndexPrefetch) -> BuildSummary:
    from generator.buildmemo import Counts, EvaluationMemo, fingerprint
    from generator.cacheauth import reset_failures

    reset_failures()  # counted afresh for this build's build-info.json and summary
    key = None if options.reevaluate else fingerprint(options, _aicr_program(options))
    memos = EvaluationMemo(_cache_root(options))
    memo = memos.load(key) if key is not None else None
    if memo is not None:
        indexes.close()  # not needed: nothing is verified
        _check_unverified(options, memo.counts.no_verdict, memo.counts.pointers)
        _write_output(
            options, memo.documents, data_from=memo.data_dir, page_digests=memo.page_digests
        )
        return _summary(
            options,
            memo.counts,
            len(memo.documents["series"]),
            from_memo=True,
            warnings=_size_warnings(options),
        )
    evaluation = evaluate(options, indexes)
    records = evaluation.records
    counts = Counts(
        pointers=len(records),
        verified=sum(1 for r in records if isinstance(r.verdict, Verified)),
        rejected=evaluation.count(2),
        pending=sum(1 for r in records if isinstance(r.verdict, Pending)),
        no_verdict=evaluation.count(3),
        build_time=evaluation.build_time,
    )
    _check_unverified(options, counts.no_verdict, counts.pointers)
    # Only a definite evaluation is kept: a verdict the registry could not give this time
    # (none, or an older one reused) may change when it can.
    definite = all(not isinstance(r.verdict, NoVerdict) and r.verified_at is None for r in records)
    documents = evaluation.documents
    # The verdicts and the board are hundreds of MB at 10,000 attestations; the output needs
    # only the documents, so let the rest go (reference counting frees them) before the data
    # and the site are written.
    del evaluation, records
    memo_key = key if definite else None

    def keep(data_dir: Path) -> None:
        if memo_key is not None:
            memos.store(memo_key, documents, counts, data_dir)

    digests = _write_output(options, documents, keep_data=keep)
    if memo_key is not None and digests is not None:
        memos.add_page_digests(memo_key, digests)
    return _summary(
        options, counts, len(documents["series"]), from_memo=False, warnings=_size_warnings(options)
    )


def _size_warnings(options: BuildOptions) -> tuple[str, ...]:
    """Measure the written site against its budget; warnings also go into build-info.json."""
    from generator.outputsize import measure, record

    out = options.out.absolute()
    size = measure(out)
    info = out / "data" / "build-info.json"
    if size.warnings and info.is_file():
        record(info, size)
        from generator.manifest import refresh_entries

        refresh_entries(out, ["data/build-info.json"])
    return size.warnings


def _aicr_program(options: BuildOptions) -> Path | None:
    """The aicr binary freshness would use (`--aicr`, else `aicr` on PATH)."""
    if options.aicr is not None:
        return options.aicr
    found = shutil.which("aicr")
    return Path(found) if found else None


def _check_unverified(options: BuildOptions, no_verdict: int, pointers: int) -> None:
    if options.max_unverified is not None and pointers:
        share = 100.0 * no_verdict / pointers
        if share > options.max_unverified:
            raise BuildError(
                "too many pointers ended without a verdict",
                expected=f"at most {options.max_unverified}%",
                found=f"{share:.1f}% ({no_verdict} of {pointers})",
                hint="check the registry or supply bundles with --oci-layout; "
                "the previous site was kept",
            )


def _summary(
    options: BuildOptions,
    counts: Any,
    recipes: int,
    *,
    from_memo: bool,
    warnings: tuple[str, ...] = (),
) -> BuildSummary:
    from generator.cacheauth import failures

    return BuildSummary(
        out=str(options.out),
        pointers=counts.pointers,
        verified=counts.verified,
        rejected=counts.rejected,
        pending=counts.pending,
        no_verdict=counts.no_verdict,
        recipes=recipes,
        build_time=counts.build_time,
        from_memo=from_memo,
        warnings=warnings,
        auth_failures=len(failures()),
    )


def _record_exit(record: Any) -> int:
    verdict = record.verdict
    return 3 if verdict is None else int(verdict.exit)


def _freshness_providers(options: BuildOptions, memo: Any = None) -> list[Any]:
    from generator.freshness import providers_for

    aicr = options.aicr
    if aicr is None:
        found = shutil.which("aicr")
        aicr = Path(found) if found else None
    return providers_for(options.recipes, digests=options.digests, aicr=aicr, memo=memo)


def _cache_root(options: BuildOptions) -> Path:
    """`--cache`, else the user's cache folder (as `_engine` uses)."""
    from generator.bundle.cache import default_cache_dir

    return options.cache or default_cache_dir()


def _freshness(
    verdict: Verdict | None, item: ParsedPointer, providers: Sequence[Any], explainer: Any = None
) -> Any:
    """Signed digest against the current one; stale evidence also gets its diff and commits."""
    from generator.data import FreshnessExplanation, FreshnessInfo
    from generator.freshness import compare
    from generator.model import Freshness

    if not isinstance(verdict, Verified):
        return FreshnessInfo()
    evidence = verdict.evidence
    result = compare(
        evidence.recipe_digest,
        evidence.predicate_type,
        item.pointer.recipe,
        item.pointer.profile,
        providers,
    )
    explanation = None
    if result.state is Freshness.STALE and explainer is not None:
        why = explainer.explain(
            item.pointer.recipe,
            item.pointer.profile,
            evidence.recipe_yaml,
            evidence.predicate_type.canonicalizer,
            evidence.aicr_commit,
        )
        explanation = FreshnessExplanation(
            diff=why.diff, commits=why.commits, truncated=why.truncated
        )
    return FreshnessInfo(
        state=result.state,
        signed=result.signed,
        current=result.current,
        provider=result.provider,
        explanation=explanation,
    )


def _sigstore_version() -> str:
    import sigstore

    return str(sigstore.__version__)


STAGING_PREFIX = ".evidence-build-"


def sweep_dead_staging(parent: Path) -> list[Path]:
    """Remove staging folders left by builds that were killed (their process no longer runs).

    A staging folder is named `.evidence-build-<pid>-<random>`; one whose pid is alive belongs to
    a concurrent build and is left alone. Returns what was removed.
    """
    removed: list[Path] = []
    for folder in sorted(parent.glob(f"{STAGING_PREFIX}*")):
        pid_text = folder.name[len(STAGING_PREFIX) :].split("-", 1)[0]
        if not folder.is_dir() or folder.is_symlink() or not pid_text.isdigit():
            continue
        if _process_alive(int(pid_text)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_output(
    options: BuildOptions,
    documents: Mapping[str, Any],
    *,
    data_from: Path | None = None,
    keep_data: Callable[[Path], None] | None = None,
    page_digests: Any = None,
) -> dict[str, Any] | None:
    """Write data/ and the site into a staging folder, then swap it in atomically.

    data/ is written from `documents`, or copied from `data_from` (the evaluation memo's
    copy of the same files); `keep_data` is handed the written data folder (to memoize it)
    on a thread of its own, while the site is built (copying is file-system work, which lets
    go of the interpreter), and is waited for before the folder moves into the site.
    `page_digests` are the site's document digests stored with the memo; the digests the
    site used are returned (for the memo), None without a site.
    """
    from generator.data import SCHEMA_FILES, write_documents
    from generator.data.schemaid import stamp_schema_ids
    from generator.data.writers import report_cache_failures
    from generator.publish import finish_site
    from generator.site.swap import publish_atomically

    out = options.out.absolute()  # the staging folder and MkDocs' docs_dir must not be relative
    out.parent.mkdir(parents=True, exist_ok=True)
    sweep_dead_staging(out.parent)
    work = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out.parent))
    keeper = _Background(None)
    try:
        data_dir = work / "data"
        if data_from is not None:
            shutil.copytree(data_from, data_dir)
            stamp_schema_ids(data_dir, SCHEMA_FILES, options.site_url)  # memo: any site's $id
        else:
            write_documents(work, documents, site_url=options.site_url)
            if keep_data is not None:
                keeper = _Background(lambda: keep_data(data_dir))
        if options.data_only:
            staging = work / "site"
            staging.mkdir()
            keeper.wait()
            report_cache_failures(data_dir)
            shutil.copytree(data_dir, staging / "data")
            finish_site(options, documents, staging)
            publish_atomically(staging, out)
            return None
        from generator.site.build import SiteInputs, build_site

        inputs = SiteInputs(
            index=documents["index"],
            series=documents["series"],
            pointers=documents["pointers"],
            build_info=documents["build_info"],
            preview=options.preview,
            site_url=options.site_url,
        )
        config = (
            options.config
        )  # None: the packaged one, never ./mkdocs.yml (generator.site.siteconfig)
        from generator.bundle.cache import default_cache_dir
        from generator.site.recipepages import InputDigests

        pages = (options.cache or default_cache_dir()) / "pages"

        def data_ready() -> None:
            keeper.wait()  # the memo has its copy: the build's cache report goes in now
            report_cache_failures(data_dir)

        used = build_site(
            inputs,
            out=out,
            config=config,
            work_dir=work,
            data_dir=data_dir,
            move_data=True,
            page_cache=pages,
            digests=InputDigests.from_dict(page_digests) if page_digests else None,
            data_ready=data_ready,
            before_publish=lambda staging: finish_site(options, documents, staging),
        )
        keeper.wait()
        return None if used is None else used.as_dict()
    except EvidenceDashError:
        raise
    except Exception as exc:
        raise BuildError(
            f"the site build failed: {type(exc).__name__}: {exc}",
            hint="the previous output was left in place; rerun with the same inputs to reproduce",
        ) from exc
    finally:
        keeper.wait(quietly=True)  # never delete a folder a thread still reads
        shutil.rmtree(work, ignore_errors=True)


class _Background:
    """Run `task` on a thread (None: nothing to run); `wait` joins it and raises what the task
    raised, once. The build's own threads only ever do file-system work."""

    def __init__(self, task: Callable[[], None] | None) -> None:
        import threading

        self._error: BaseException | None = None
        self._thread: Any = None
        if task is not None:

            def run() -> None:
                try:
                    task()
                except BaseException as exc:  # noqa: BLE001 - handed to `wait`
                    self._error = exc

            self._thread = threading.Thread(target=run, name="evidence-dashboard-keep", daemon=True)
            self._thread.start()

    def wait(self, *, quietly: bool = False) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None and not quietly:
            raise error


def verify_one(options: BuildOptions, pointer_path: Path) -> tuple[dict[str, Any], str]:
    """Verify one pointer file: aicr's VerifyResult JSON and a one-line text verdict."""
    from generator.model import PointerLocation
    from generator.tree import read_bounded
    from generator.tree.pointer import parse_pointer
    from generator.verify.pipeline import verify_pointer
    from generator.verify.serialize import aicr_result_json

    data = read_bounded(pointer_path, 1 << 20, display=str(pointer_path))
    pointer = parse_pointer(data, file=str(pointer_path))
    parts = pointer_path.resolve().parts
    folder_source = (
        parts[-2]
        if len(parts) >= 3 and not pointer_path.name.startswith(pointer.recipe + ".")
        else None
    )
    folder_recipe = parts[-3] if folder_source else None
    location = PointerLocation(
        path=pointer_path.name, folder_recipe=folder_recipe, folder_source=folder_source
    )
    from generator.verify.times import judge_time

    trust, source, _cache = _engine(options)
    verdict = judge_time(
        verify_pointer(pointer, location, source, trust), options.source_date_epoch
    )
    result = aicr_result_json(verdict, pointer, location)
    words = {0: "valid", 1: "valid, with recorded phase failures", 2: "invalid", 3: "no verdict"}
    text = f"{pointer_path}: {words[int(verdict.exit)]}"
    if isinstance(verdict, Pending):
        text += " (pending signature)"
    if isinstance(verdict, Rejected | NoVerdict):
        text += f" - {verdict.cause.failure_class}: {verdict.cause.detail}"
        if verdict.cause.hint:
            text += f"\n  next step: {verdict.cause.hint}"
    return result, text
