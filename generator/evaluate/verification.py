"""Verification behind one interface: `Verifier.verify_all(misses)`.

The verdict cache answers what it can (`split_cached`); the rest, the misses, go to a
`Verifier`: `InProcess` here, or `Pool` (generator.evaluate.pool), which spreads them over
worker processes. Both run the same per-pointer function, `verify_miss`, and yield one
`Outcome` per miss; how fast they get there is their own business, never the evaluation's.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from generator.evaluate.assess import Assessed
from generator.evaluate.clock import build_time_for, verdict_logged
from generator.evaluate.engine import CacheLookup, Engine
from generator.isolation import internal_verdict, isolated
from generator.model import NoVerdict, ParsedPointer, Verdict
from generator.verify.times import judge_time

__all__ = [
    "InProcess",
    "load_verifier",
    "Miss",
    "Outcome",
    "Progress",
    "Verifier",
    "split_cached",
    "verify_miss",
]


class Miss(NamedTuple):
    """A pointer the verdict cache did not answer, with its cache key."""

    item: ParsedPointer
    key: str


class Outcome(NamedTuple):
    """One verified miss: its verdict (judged on time), the time a reused verdict was
    recorded (None: verified now), and what a worker made of it (None: assessed later)."""

    path: str
    verdict: Verdict
    verified_at: str | None
    assessed: Assessed | None = None


class Verifier(Protocol):
    """Verifies cache misses; yields one `Outcome` per miss, in any order."""

    def verify_all(self, misses: Sequence[Miss]) -> Iterator[Outcome]: ...


class Progress:
    """A tqdm bar when stderr is a terminal and not --quiet; silent otherwise."""

    def __init__(self, total: int, desc: str, quiet: bool) -> None:
        self._bar: Any = None
        if not quiet and total:
            from tqdm import tqdm  # only when a bar is shown: tqdm costs an import otherwise

            self._bar = tqdm(total=total, desc=desc, unit="ptr", leave=False, file=sys.stderr)

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def split_cached(
    todo: Sequence[ParsedPointer],
    answers: CacheLookup,
    policy: str,
    epoch: int | None,
) -> tuple[dict[str, Verdict], list[Miss]]:
    """The verdicts the cache answers (judged on time, by path) and the misses. Cache hits
    carry their Evidence: no bundle is touched. A failing lookup is that pointer's
    `internal` verdict."""
    cache, trust = answers.verdicts, answers.trust
    verdicts: dict[str, Verdict] = {}
    misses: list[Miss] = []
    for item in todo:

        def lookup(item: ParsedPointer = item) -> Verdict | None:
            key = cache.key(item.pointer, item.location, trust, policy)
            cached = cache.get(key)
            if cached is None:
                misses.append(Miss(item, key))
                return None
            return judge_time(cached[0], epoch)

        found = isolated(lookup, lambda exc: internal_verdict(exc, "the verdict cache lookup"))
        if found is not None:
            verdicts[item.location.path] = found
    return verdicts, misses


def verify_miss(item: ParsedPointer, key: str, engine: Engine, epoch: int | None) -> Outcome:
    """Verify one pointer the cache did not answer (under its cache `key`), record the raw
    verdict, fall back when none: only to a verdict recorded under the same full key (same
    trust root, verifier and policy), with the time it was recorded; return it
    judged on time. Inside the isolation boundary: an exception is this pointer's `internal`
    verdict (never cached)."""
    from generator.verify.pipeline import verify_pointer  # sigstore: see `load_verifier`

    path = item.location.path
    trust, cache = engine.trust, engine.verdicts

    def work() -> Outcome:
        verdict = verify_pointer(item.pointer, item.location, engine.source, trust)
        if isinstance(verdict, NoVerdict):
            earlier = cache.remembered(key)
            if earlier is not None and earlier.trust_root == trust.digest:
                return Outcome(path, judge_time(earlier.verdict, epoch), earlier.recorded_at)
            return Outcome(path, verdict, None)
        recorded = build_time_for(epoch, [verdict_logged(verdict)])
        cache.put(
            key,
            verdict,
            recorded,
            trust_root=trust.digest,
            claims_key=cache.claims_key(item.pointer, item.location),
        )
        return Outcome(path, judge_time(verdict, epoch), None)

    return isolated(work, lambda exc: Outcome(path, internal_verdict(exc), None))


def load_verifier() -> None:
    """Import the verification pipeline (and sigstore with it, a third of a second): only a
    build that verifies pays for it, and a pool loads it before it forks its workers."""
    import generator.verify.pipeline  # noqa: F401 - imported for its side effect


@dataclass(frozen=True)
class InProcess:
    """Verifies misses one after the other in this process (`--jobs 1`, or a handful)."""

    engine: Engine
    epoch: int | None

    def verify_all(self, misses: Sequence[Miss]) -> Iterator[Outcome]:
        with self.engine.verdicts.batched():
            for item, key in misses:
                yield verify_miss(item, key, self.engine, self.epoch)
