"""`--bundle-refs`: first-party runs without a pointer file, verified after the pointers."""

from __future__ import annotations

from collections.abc import Sequence

from generator.bundlerefs import BundleRefEntry, derived_pointer, verify_bundle_ref
from generator.evaluate.engine import Engine
from generator.isolation import internal_verdict, isolated
from generator.model import ParsedPointer, Verdict
from generator.verify.times import judge_time

__all__ = ["verify_refs"]


def verify_refs(
    refs: Sequence[BundleRefEntry],
    todo: Sequence[ParsedPointer],
    engine: Engine,
    ref_files: list[ParsedPointer],
    ref_duplicates: dict[str, str],
    epoch: int | None = None,
) -> dict[str, Verdict]:
    """Verify `--bundle-refs` entries, each on its own and inside the isolation boundary,
    with the build's trust and bundle source; their derived pointers are appended to
    `ref_files` and their verdicts keyed by their synthetic paths. One naming a bundle a
    pointer (or an earlier ref) already names is noted in `ref_duplicates` (the bundle counts
    once) and verified on its own all the same."""
    known = {
        str(item.pointer.bundle.digest): item.location.path
        for item in todo
        if item.pointer.bundle.digest
    }
    verdicts: dict[str, Verdict] = {}
    for entry in refs:
        first = known.get(str(entry.digest))
        if first is not None:
            ref_duplicates[entry.path] = first
        known.setdefault(str(entry.digest), entry.path)

        def one(entry: BundleRefEntry = entry) -> tuple[ParsedPointer, Verdict]:
            parsed, verdict = verify_bundle_ref(entry, engine.source, engine.trust)
            return parsed, judge_time(verdict, epoch)

        def failed(
            exc: BaseException, entry: BundleRefEntry = entry
        ) -> tuple[ParsedPointer, Verdict]:
            return (
                ParsedPointer(entry.location, derived_pointer(entry, {}, None)),
                internal_verdict(exc),
            )

        parsed, verdict = isolated(one, failed)
        verdicts[entry.path] = verdict
        ref_files.append(parsed)
    return verdicts
