"""The speed machinery of verification: worker processes, shared strings, GC pauses.

sigstore verification is CPU-bound Python (threads would share one GIL), so cache misses are
verified in `--jobs` worker processes. Forked workers inherit this process's engine (trust
root, indexed bundle source, verdict cache) and assessor instead of loading and indexing
their own; each verifies chunks of misses with the same `verify_miss` as `InProcess`, assesses
what it verified (the per-pointer assessment is then spread over the workers too), stores
each new verdict in the cache and sends the outcome back pickled with its strings shared.
Everything a worker holds lives in this module (`_STATE`), set before the fork and cleared
after the pool.
"""

from __future__ import annotations

import gc
import multiprocessing
import sys
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import generator.evaluate.engine as engines
from generator.cacheauth import adopt_failures, failures
from generator.data import pointer_document
from generator.data.gojson import orjson_layout
from generator.data.gonumbers import number_steps
from generator.data.laidout import LaidOutEntry, head_of
from generator.evaluate.assess import Assessed, Assessor, settled
from generator.evaluate.engine import Engine
from generator.evaluate.verification import (
    InProcess,
    Miss,
    Outcome,
    Verifier,
    load_verifier,
    verify_miss,
)
from generator.isolation import assess_isolated, internal_verdict
from generator.model import Verdict
from generator.options import EvaluationOptions

__all__ = ["Pool", "bulk_allocation", "choose_verifier"]

_MIN_PER_WORKER = 8
"""Below this many cache misses per worker, starting processes costs more than it saves."""
_CHUNK = 32
"""Pointers per task sent to a worker: large enough to amortise pickling, small enough to
keep both workers busy until the end."""


@dataclass(frozen=True)
class _Worker:
    """What a worker process verifies and assesses with."""

    engine: Engine
    epoch: int | None
    assessor: Assessor | None = None


_STATE: list[_Worker] = []
"""The worker's state (one item in a worker, or in the parent just before it forks)."""


def choose_verifier(
    options: EvaluationOptions, engine: Engine, assessor: Assessor | None, misses: int
) -> Verifier:
    """`InProcess` for `--jobs 1` or a handful of misses, else a `Pool` of workers (`engine`
    with its trust root parsed, `Engines.verifying`: once, before any worker forks)."""
    load_verifier()  # here, before any worker forks: each would import sigstore again
    jobs = max(1, min(options.engine.jobs, misses // _MIN_PER_WORKER))
    if jobs == 1:
        return InProcess(engine, options.clock.source_date_epoch)
    return Pool(options, engine, assessor, jobs)


@dataclass(frozen=True)
class Pool:
    """Verifies misses in `jobs` worker processes; the memo answers the workers' assessments
    used are adopted into the assessor's memo (the build saves them), and the cache entries
    that failed authentication in a worker are counted here too."""

    options: EvaluationOptions
    engine: Engine
    assessor: Assessor | None
    jobs: int

    def verify_all(self, misses: Sequence[Miss]) -> Iterator[Outcome]:
        fork = "fork" in multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if fork else None)
        size = max(1, min(_CHUNK, len(misses) // (self.jobs * 4) or 1))
        chunks = [misses[i : i + size] for i in range(0, len(misses), size)]
        if fork:
            _STATE[:] = [_Worker(self.engine, self.options.clock.source_date_epoch, self.assessor)]
            pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=context)
        else:
            pool = ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=context,
                initializer=_worker_init,
                initargs=(self.options,),
            )
        try:
            with pool:
                futures = {pool.submit(_worker_chunk, chunk): chunk for chunk in chunks}
                for future in as_completed(futures):
                    results, memo_answers, failed = _collect(future, futures[future])
                    adopt_failures(failed)
                    if self.assessor is not None and self.assessor.memo is not None:
                        self.assessor.memo.adopt(memo_answers)
                    yield from results
        finally:
            _STATE.clear()


_Chunk = tuple[list[Outcome], dict[str, Any], frozenset[str]]


def _collect(future: Future[_Chunk], chunk: Sequence[Miss]) -> _Chunk:
    """A chunk's results; a chunk that could not come back (a worker died, a result could
    not travel back) makes each of its pointers `internal`."""
    try:
        return future.result()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a lost chunk: its pointers' fault
        lost = internal_verdict(exc, "a verification worker")
        return [Outcome(item.location.path, lost, None) for item, _key in chunk], {}, frozenset()


def _worker_init(options: EvaluationOptions) -> None:
    """Runs once in each worker process that did not fork from the build: its own engine
    (assessing is left to the build process)."""
    _STATE[:] = [_Worker(engines.build_engine(options.engine), options.clock.source_date_epoch)]


def _worker_chunk(items: Sequence[Miss]) -> _Chunk:
    """Verify (and, given an assessor, assess) a chunk in a worker; verdicts travel back
    pickled (frozen dataclasses of plain data: far cheaper than the cache's JSON form both
    ways), settled once assessed (`settled`: the build keeps no more) and their strings
    shared, with the freshness memo answers the chunk used and the cache entries that failed
    authentication."""
    state = _STATE[0]
    assessor = state.assessor
    out = []
    with (
        state.engine.verdicts.batched()
    ):  # the chunk's verdicts in one pack: one file, not one each
        for item, key in items:
            path, verdict, when, _ = verify_miss(item, key, state.engine, state.epoch)
            done = None
            if assessor is not None:
                record, entry = assess_isolated(assessor, item, verdict, verified_at=when)
                if record.verdict is not verdict:  # the assessment failed: an internal record
                    verdict, when = record.verdict, None
                done = Assessed(
                    record.classification,
                    record.label,
                    record.freshness,
                    _laid_out_entry(pointer_document(record)),
                    entry,
                )
                verdict = settled(verdict)  # assessed: its documents need not travel back
            try:
                verdict = _shared_strings(verdict)
            except RecursionError:
                pass  # a deeply nested document travels back as it is
            out.append(Outcome(path, verdict, when, done))
    answers = assessor.memo.drain() if assessor is not None and assessor.memo else {}
    return out, answers, failures()


def _laid_out_entry(document: dict[str, Any]) -> Mapping[str, Any]:
    """`document` as a `LaidOutEntry` of its `orjson_layout` text, the text pointers.json and
    the recipe products are written from: a few objects to send back, not hundreds, kept so
    by the build (its peak memory at 10,000 attestations was 9% lower), with its number steps
    searched here, where the workers share the work, not in the build when it stores the
    recipe's product. `document` itself when orjson does not write it exactly (the build then
    lays it out the slow ways)."""
    try:
        layout = orjson_layout(document)
    except TypeError:
        return document
    return LaidOutEntry.from_head(layout, head_of(document), number_steps(layout))


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
