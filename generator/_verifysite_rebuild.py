"""`verify-site --rebuild`: build the evidence tree again with the manifest's options and
compare the result with the manifest, file by file."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from generator._verifysite_verdict import Problem, ProblemKind, compare_files
from generator.manifest import MANIFEST_PATH, Manifest, file_entries


def rebuild_problems(
    manifest: Manifest, base: Any, work: Path, previous: Any = None
) -> tuple[list[Problem], list[str]]:
    """Build the evidence tree again into `work` with the manifest's options (and `base`'s
    inputs: recipes, trust root, layouts, cache) and compare it with the manifest, file by file.
    `previous` is the previous site the build compared with, as the site recorded it
    (`generator.changes.replay_previous`). Returns the differences and notes."""

    problems: list[Problem] = []
    notes: list[str] = []
    opts = manifest.options
    if opts.trust_root_digest is not None:
        given = (
            None
            if base.engine.trust_root is None
            else hashlib.sha256(Path(base.engine.trust_root).read_bytes()).hexdigest()
        )
        if given != opts.trust_root_digest:
            problems.append(
                Problem(
                    ProblemKind.REBUILD,
                    MANIFEST_PATH,
                    f"the site was built with the trust root of sha256 {opts.trust_root_digest}; "
                    f"--trust-root gives {given or 'none'}: pass the same trusted_root.json",
                )
            )
            return problems, notes
    from generator import __version__

    if manifest.generator_version != __version__:
        notes.append(
            f"note: the site was built by evidence-dashboard "
            f"{manifest.generator_version}, this is {__version__}"
        )
    out = work / "site"
    options = base.replace(
        out=out,
        commit=manifest.commit,
        source_date_epoch=opts.source_date_epoch,
        trusted_registries=opts.trusted_registries,
        preview=opts.preview,
        source_url=opts.source_url,
        site_url=opts.site_url,
        data_only=opts.data_only,
        trust_mode=opts.trust_mode,
        quiet=True,
        publisher_identity=None if opts.publisher is None else opts.publisher[0],
        publisher_issuer=base.stamp.publisher_issuer
        if opts.publisher is None
        else opts.publisher[1],
        previous=None,
        previous_site=previous,
    )
    _build_at(options, opts.source_date_epoch)
    problems.extend(compare_files(manifest.files, file_entries(out), kind=ProblemKind.REBUILD))
    return problems, notes


def _build_at(options: Any, epoch: int | None) -> None:
    """Run the build with SOURCE_DATE_EPOCH as the manifest recorded it (MkDocs reads the
    environment for the sitemap's dates), restoring the environment afterwards."""
    import os

    from generator.build import run_build

    saved = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
    else:
        os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        run_build(options)
    finally:
        if saved is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = saved
