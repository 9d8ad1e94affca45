"""An evaluation's reading of the tree: the allowlist, every pointer file scanned (through the
pointer memo, `generator.evaluate.pointermemo`) and the `--bundle-refs` entries."""

from __future__ import annotations

from collections.abc import Mapping

from generator.bundlerefs import BundleRefEntry, load_bundle_refs
from generator.cacheauth import CacheAuth
from generator.errors import InputError, Location
from generator.evaluate.engine import cache_root
from generator.evaluate.pointermemo import MEMO_NAME, PointerDocs
from generator.options import EvaluationOptions
from generator.tree import Allowlist, TreeScan, load_allowlist, scan_tree

__all__ = ["pointer_docs", "read_tree"]


def read_tree(
    options: EvaluationOptions, docs: PointerDocs | None = None
) -> tuple[Allowlist, TreeScan, tuple[BundleRefEntry, ...]]:
    """The allowlist, the scanned pointer files (parsed through `docs`, when given) and the
    `--bundle-refs` entries."""
    evidence_root = options.tree.recipes / "evidence"
    if not evidence_root.is_dir():
        raise InputError(
            "the recipes folder has no evidence/ folder",
            location=Location(str(options.tree.recipes)),
            expected="<recipes>/evidence/ with allowlist.yaml and pointer files",
            found="no such folder",
            hint="pass --recipes pointing at an aicr checkout's recipes/ folder",
        )
    allowlist = load_allowlist(evidence_root / "allowlist.yaml")
    scan = scan_tree(
        options.tree.recipes,
        allowlist=allowlist,
        allow_pending=options.policy.allow_pending,
        parse=None if docs is None else docs.parse,
        known=None if docs is None else docs.known_file,
    )
    refs = () if options.tree.bundle_refs is None else load_bundle_refs(options.tree.bundle_refs)
    return allowlist, scan, refs


def pointer_docs(options: EvaluationOptions, hashed: Mapping[str, str]) -> PointerDocs:
    """The pointer documents of the last build: its pointer files are not parsed again (nor
    read again, when `hashed` has their digest)."""
    return PointerDocs.load(
        cache_root(options.engine) / MEMO_NAME, CacheAuth.from_environment(), hashed
    )
