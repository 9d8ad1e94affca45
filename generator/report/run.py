"""The `report` shell: materialise BASE and HEAD, evaluate both with the build's engine, compare.

Both revisions are read from git objects into temporary folders (never a checkout of PR code),
each is verified and corroborated by `generator.build.evaluate` with its own allowlist, and the
pure `compute_report` compares them. Bundle layouts, trust root, cache and digest map are the
options as given (paths resolved against the current folder, not the materialised trees).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from generator.build import Evaluation, evaluate
from generator.data import FreshnessInfo, PointerRecord
from generator.errors import InputError
from generator.model import ParsedPointer, Pending
from generator.options import EvaluationOptions
from generator.report._compute import compute_report
from generator.report.affected import Overlay, overlay_from_doc
from generator.report.core import EMPTY_SIDE, Report, Side
from generator.report.gitio import GitTree

OVERLAY_LIMIT = 1 << 20


def load_overlays(recipes: Path) -> dict[str, Overlay]:
    """Every parseable `overlays/*.yaml` of a tree (unparseable ones are skipped: the walk only
    needs their names, bases and references, and the build reports broken files elsewhere)."""
    from generator.tree import load_yaml, read_bounded

    found: dict[str, Overlay] = {}
    folder = recipes / "overlays"
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.yaml")):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            doc = load_yaml(read_bounded(path, OVERLAY_LIMIT, display=path.name), file=path.name)
        except InputError:
            doc = None
        found[path.stem] = overlay_from_doc(path.stem, doc)
    return found


def _absolute(options: EvaluationOptions) -> EvaluationOptions:
    def fix(path: Path | None) -> Path | None:
        return path.resolve() if path is not None else None

    return options.replace(
        trust_root=fix(options.engine.trust_root),
        cache=fix(options.engine.cache),
        digests=fix(options.freshness.digests),
        aicr=fix(options.freshness.aicr),
        registry_auth=fix(options.engine.registry_auth),
        oci_layouts=tuple(p.resolve() for p in options.engine.oci_layouts),
    )


def _pending_freshness(
    evaluation: Evaluation, options: EvaluationOptions
) -> tuple[PointerRecord, ...]:
    """Fill in freshness for pending pointers too (the PR bot compares their digest as well)."""
    from generator.freshness import compare, providers_for

    aicr = options.freshness.aicr
    if aicr is None:
        found = shutil.which("aicr")
        aicr = Path(found) if found else None
    providers = providers_for(options.tree.recipes, digests=options.freshness.digests, aicr=aicr)
    out: list[PointerRecord] = []
    for record in evaluation.records:
        verdict, item = record.verdict, record.pointer
        if isinstance(verdict, Pending) and isinstance(item, ParsedPointer):
            evidence = verdict.evidence
            result = compare(
                evidence.recipe_digest,
                evidence.predicate_type,
                item.pointer.recipe,
                item.pointer.profile,
                providers,
            )
            record = dataclasses.replace(
                record,
                freshness=FreshnessInfo(
                    state=result.state,
                    signed=result.signed,
                    current=result.current,
                    provider=result.provider,
                ),
            )
        out.append(record)
    return tuple(out)


def _side(options: EvaluationOptions, recipes: Path) -> tuple[Side, Evaluation | None]:
    if not (recipes / "evidence").is_dir():
        return dataclasses.replace(EMPTY_SIDE, overlays=load_overlays(recipes)), None
    scoped = options.replace(recipes=recipes)
    evaluation = evaluate(scoped)
    side = Side(
        overlays=load_overlays(recipes),
        records=_pending_freshness(evaluation, scoped),
        allowlist=evaluation.allowlist,
        board=evaluation.board,
    )
    return side, evaluation


def run_report(
    options: EvaluationOptions, base: str, head: str, *, git: GitTree | None = None
) -> Report:
    """Compare the merge base of BASE and HEAD with HEAD (three-dot, as aicr's bot does).

    Raises `InputError`/`UsageError` (exit 2) for a missing checkout, revision or tree.
    """
    options = _absolute(options)
    tree = git or GitTree.locate(options.tree.recipes)
    base_sha, head_sha = tree.resolve(base), tree.resolve(head)
    merge_base = tree.merge_base(base_sha, head_sha)
    changed = tree.changed(merge_base, head_sha)
    work = Path(tempfile.mkdtemp(prefix="evidence-report-"))
    try:
        base_dir, head_dir = work / "base", work / "head"
        if not tree.materialise(head_sha, head_dir):
            raise InputError(
                "the head revision has no recipes folder",
                expected=f"{tree.prefix or './'} at {head_sha[:12]}",
                found="no such tree",
                hint="pass --recipes for this checkout",
            )
        if not tree.materialise(merge_base, base_dir):
            base_dir.mkdir(parents=True, exist_ok=True)
        base_side, _ = _side(options, base_dir)
        head_side, head_eval = _side(options, head_dir)
        if head_eval is None:
            raise InputError(
                "the head revision has no evidence/ folder",
                expected="<recipes>/evidence/ with allowlist.yaml",
                found="no such folder",
                hint="pass --recipes for this checkout",
            )
        return compute_report(
            base_rev=base_sha,
            head_rev=head_sha,
            merge_base=merge_base,
            changed=changed,
            base=base_side,
            head=head_side,
            generated_at=head_eval.build_time,
            trust=str(getattr(head_eval.trust, "name", "")),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def describe_side(side: Side) -> Mapping[str, int]:
    """Counts for logs: overlays and pointer records of one side."""
    return {"overlays": len(side.overlays), "pointers": len(side.records)}
