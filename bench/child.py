"""What the benchmark runs in a child process: one timed build, or the sigstore floor.

`python -m bench.child build RESULT.json -- <build options>` runs one `run_build` with timers
around its phases (verification, evaluation, data writers, page rendering, MkDocs) and counts
verdict-cache hits and misses; `python -m bench.child floor RESULT.json LAYOUT TRUST_ROOT
--jobs N` times sigstore-python's `Verifier.verify_dsse` alone over every bundle of an OCI
layout, in one process or in N. Each writes its figures as JSON for `bench.run` to print.
Timers are Python's own `time.perf_counter`; nothing here changes what the build does.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"


def _timed(owner: Any, name: str, label: str, into: dict[str, float]) -> None:
    """Wrap `owner.name` so each call adds its wall time to `into[label]`."""
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            into[label] = into.get(label, 0.0) + time.perf_counter() - start

    setattr(owner, name, wrapper)


def run_build_timed(argv: Sequence[str]) -> dict[str, Any]:
    """One build with phase timers; `argv` are `evidence-dashboard build` options.

    Each phase is timed where the build looks its function up (the module that imported it),
    so a name moved by a refactoring fails loudly here (`_timed` needs the attribute) instead
    of timing nothing."""
    # What the command line starts before it imports the build (`generator.treeprefetch`),
    # started here before this child imports the build to time it: the same overlap.
    from generator.treeprefetch import prefetched_tree

    with prefetched_tree(Path(_option(argv, "--recipes", "recipes"))):
        return _run_build_timed(argv)


def _option(argv: Sequence[str], name: str, default: str) -> str:
    """The value of option `name` in `argv` (`default` when absent)."""
    for i, arg in enumerate(argv[:-1]):
        if arg == name:
            return argv[i + 1]
    return default


def _run_build_timed(argv: Sequence[str]) -> dict[str, Any]:
    import generator.build as build
    import generator.buildmemo as buildmemo
    import generator.evaluate.evaluation as evaluation
    import generator.evaluate.memoize as memoize
    import generator.evaluate.output as output
    import generator.site.build as site
    from generator.verify.cache import VerdictCache

    phases: dict[str, float] = {}
    counts = {"hits": 0, "misses": 0}
    get = VerdictCache.get

    def counting_get(self: VerdictCache, key: str) -> Any:
        found = get(self, key)
        counts["hits" if found is not None else "misses"] += 1
        return found

    VerdictCache.get = counting_get  # type: ignore[method-assign]
    _timed(evaluation, "verify_pointers", "verify", phases)
    _timed(build, "evaluate", "evaluate", phases)
    _timed(output, "write_documents", "data writers", phases)
    _timed(output, "build_site", "site", phases)
    _timed(site, "run_mkdocs", "mkdocs", phases)
    _timed(memoize, "fingerprint", "fingerprint", phases)
    _timed(buildmemo.EvaluationMemo, "load", "memo", phases)
    summary = build.summarize
    reused = {"evaluation": "evaluated"}

    def noting_summary(*args: Any, **kwargs: Any) -> Any:
        done = summary(*args, **kwargs)
        reused["evaluation"] = "reused" if done.from_memo else "evaluated"
        return done

    build.summarize = noting_summary  # type: ignore[assignment]
    _count_work(build, counts)

    from generator.cli import main

    start, cpu = time.perf_counter(), _cpu()
    try:
        main.main(args=["build", *argv], standalone_mode=False)
        status = 0
    except SystemExit as exc:
        status = int(exc.code or 0)
    total = time.perf_counter() - start
    user, system = (after - before for after, before in zip(_cpu(), cpu, strict=True))
    return {
        "total": total,
        "phases": phases,
        "status": status,
        "cpu": {"user": user, "sys": system},
        **counts,
        **reused,
    }


def _cpu() -> tuple[float, float]:
    """User and system CPU seconds of this process and its waited-for children (workers,
    page helpers): system time is where a busy disk shows, user time is the build's Python."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + children.ru_utime, own.ru_stime + children.ru_stime


def _count_work(build: Any, counts: dict[str, int]) -> None:
    """Count what a build redid: the recipes it evaluated (none when the evaluation memo
    answered; else those whose stored product could not be reused, `Evaluation.recipes_evaluated`)
    and the recipe pages it rendered (not taken from the page cache: those given to the page
    helpers started early, and those no cached page answered)."""
    import generator.site.build as sitebuild
    import generator.site.recipepages as recipepages

    counts["recipes evaluated"] = 0
    counts["pages rendered"] = 0
    evaluate = build.evaluate

    def counting_evaluate(*args: Any, **kwargs: Any) -> Any:
        done = evaluate(*args, **kwargs)
        counts["recipes evaluated"] += done.recipes_evaluated
        return done

    copy_cached = recipepages._copy_cached
    start_shared = sitebuild._start_shared

    def counting_copy(*args: Any, **kwargs: Any) -> Any:
        copied = copy_cached(*args, **kwargs)
        counts["pages rendered"] += not copied  # rendered here or by a helper process
        return copied

    def counting_shared(*args: Any, **kwargs: Any) -> Any:
        shared = start_shared(*args, **kwargs)  # pages no cached page answers: all rendered
        counts["pages rendered"] += 0 if shared is None else len(shared.todo)
        return shared

    build.evaluate = functools.wraps(evaluate)(counting_evaluate)
    recipepages._copy_cached = counting_copy
    sitebuild._start_shared = counting_shared


# --------------------------------------------------------------------------- the floor


def layout_bundles(layout: Path) -> list[bytes]:
    """Every Sigstore bundle stored in an OCI layout (the referrer manifests' layers)."""
    index = json.loads((layout / "index.json").read_text(encoding="utf-8"))
    blobs = layout / "blobs" / "sha256"
    out: list[bytes] = []
    for entry in index.get("manifests", []):
        if entry.get("artifactType") != BUNDLE_MEDIA_TYPE:
            continue
        manifest = json.loads((blobs / entry["digest"].split(":", 1)[1]).read_bytes())
        out.extend(
            (blobs / layer["digest"].split(":", 1)[1]).read_bytes()
            for layer in manifest.get("layers", [])
        )
    return out


_FLOOR: dict[str, Any] = {}


def _floor_init(trust_root: str) -> None:
    from sigstore.models import TrustedRoot
    from sigstore.verify import Verifier

    _FLOOR["verifier"] = Verifier(trusted_root=TrustedRoot.from_file(trust_root))


def _floor_chunk(bundles: Sequence[bytes]) -> int:
    from sigstore.errors import Error
    from sigstore.models import Bundle
    from sigstore.verify.policy import UnsafeNoOp

    verifier = _FLOOR["verifier"]
    ok = 0
    for data in bundles:
        try:
            verifier.verify_dsse(Bundle.from_json(data), UnsafeNoOp())
            ok += 1
        except Error:
            pass
    return ok


def run_floor(layout: Path, trust_root: Path, jobs: int) -> dict[str, Any]:
    """verify_dsse over every bundle: one process (jobs 1) or a fork pool of `jobs`."""
    import logging

    logging.getLogger("sigstore").setLevel(logging.ERROR)  # UnsafeNoOp warns per bundle
    bundles = layout_bundles(layout)
    start = time.perf_counter()
    if jobs <= 1:
        _floor_init(str(trust_root))
        ok = _floor_chunk(bundles)
    else:
        size = max(1, min(64, len(bundles) // (jobs * 4) or 1))
        chunks = [bundles[i : i + size] for i in range(0, len(bundles), size)]
        context = multiprocessing.get_context("fork")
        with context.Pool(jobs, initializer=_floor_init, initargs=(str(trust_root),)) as pool:
            ok = sum(pool.map(_floor_chunk, chunks, chunksize=1))
    return {
        "total": time.perf_counter() - start,
        "bundles": len(bundles),
        "verified": ok,
        "jobs": jobs,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.child")
    sub = parser.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build")
    b.add_argument("result", type=Path)
    b.add_argument("options", nargs=argparse.REMAINDER)
    f = sub.add_parser("floor")
    f.add_argument("result", type=Path)
    f.add_argument("layout", type=Path)
    f.add_argument("trust_root", type=Path)
    f.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.what == "build":
        options = [o for o in args.options if o != "--"]
        result = run_build_timed(options)
    else:
        result = run_floor(args.layout, args.trust_root, args.jobs)
    args.result.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if result.get("status", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
