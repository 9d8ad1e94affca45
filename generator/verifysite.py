"""`evidence-dashboard verify-site`: check a published site against its signed manifest.

Three checks, each one a reason to distrust a copy of the site:

- files: every file is listed in `data/manifest.json` with its sha256 and size, and no file the
  manifest does not list is present (only the manifest and its Sigstore bundle are unlisted);
- signature: `data/manifest.json.sigstore.json` verifies against the trust root and names
  exactly the expected identity and OIDC issuer (a DSSE in-toto statement whose subject is the
  manifest's sha256, or a message signature over the manifest's bytes, `sigstore sign`'s form);
- rebuild (optional): the evidence tree at the manifest's commit, built again with the
  manifest's options into a temporary folder, gives the same files, byte for byte.

Exit codes: 0 verified, 1 mismatch (the files are named), 2 usage, 3 no verdict.

This module is the command's face; the verdict types live in `_verifysite_verdict`, the signature
check in `_verifysite_signature` and the rebuild in `_verifysite_rebuild`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator._verifysite_rebuild import rebuild_problems
from generator._verifysite_signature import check_signature, verify_manifest_signature
from generator._verifysite_verdict import (
    Problem,
    ProblemKind,
    SignedBy,
    SiteVerdict,
    compare_files,
)
from generator.manifest import (
    MANIFEST_PATH,
    MANIFEST_PREDICATE,
    SIGNATURE_PATH,
    Manifest,
    file_entries,
    parse_manifest,
    sign_manifest_dsse,
)

__all__ = [
    "MANIFEST_PREDICATE",
    "Problem",
    "ProblemKind",
    "SignedBy",
    "SiteVerdict",
    "check_files",
    "check_signature",
    "compare_files",
    "read_manifest",
    "rebuild_problems",
    "run_verify_site",
    "sign_manifest_dsse",
    "verify_manifest_signature",
]

"""The predicate type of the in-toto statement a DSSE manifest signature carries."""


def read_manifest(site: Path) -> tuple[bytes, Manifest]:
    """The manifest's bytes and parsed form (raises `InputError` when unreadable)."""
    from generator.errors import InputError, Location

    path = site / MANIFEST_PATH
    if not path.is_file() or path.is_symlink():
        raise InputError(
            "the site has no manifest",
            location=Location(str(path)),
            expected=f"{MANIFEST_PATH}, written by evidence-dashboard build",
            found="nothing" if not path.exists() else "not a regular file",
            hint="is SITE the root of a site built by evidence-dashboard?",
        )
    data = path.read_bytes()
    return data, parse_manifest(data, file=str(path))


def check_files(site: Path, manifest: Manifest) -> list[Problem]:
    """Compare the site's files with the manifest's list."""
    return compare_files(manifest.files, file_entries(site))


def run_verify_site(
    site: Path, *, identity: str, issuer: str, engine: dict[str, Any], rebuild: bool = False
) -> SiteVerdict:
    """The whole `verify-site` check of a site folder. `engine` holds the build's trust and
    input options (click's keyword arguments); they give the trust root and, with `rebuild`,
    the evidence tree and bundle sources."""
    import tempfile

    from generator.build import BuildOptions
    from generator.errors import InputError, UsageError

    if not site.is_dir():
        raise UsageError(
            "the site folder does not exist",
            expected="a built site folder",
            found=str(site),
            hint="pass the folder evidence-dashboard build wrote",
        )
    try:
        manifest_bytes, manifest = read_manifest(site)
    except InputError as error:
        return SiteVerdict(
            site=str(site),
            files=0,
            problems=(
                Problem(ProblemKind.MANIFEST, MANIFEST_PATH, error.diagnostics().splitlines()[0]),
            ),
        )
    problems = check_files(site, manifest)
    signature = site / SIGNATURE_PATH
    bundle = None if not signature.is_file() or signature.is_symlink() else signature.read_bytes()
    signed_by, trouble = check_signature(
        manifest_bytes, bundle, identity=identity, issuer=issuer, engine=engine
    )
    problems.extend(trouble)
    notes: list[str] = []
    if rebuild:
        base = BuildOptions.from_cli({**engine, "out": Path("site")})
        with tempfile.TemporaryDirectory(prefix="evidence-dashboard-rebuild-") as work:
            from generator.changes import replay_previous

            found, notes = rebuild_problems(manifest, base, Path(work), replay_previous(site))
        problems.extend(found)
    return SiteVerdict(
        site=str(site),
        files=len(manifest.files),
        problems=tuple(problems),
        signed_by=signed_by,
        rebuilt=rebuild,
        commit=manifest.commit,
        notes=tuple(notes),
    )
