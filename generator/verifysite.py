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
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from generator.manifest import (
    MANIFEST_PATH,
    SIGNATURE_PATH,
    FileEntry,
    Manifest,
    file_entries,
    parse_manifest,
)
from generator.model import SignerIdentity

__all__ = [
    "MANIFEST_PREDICATE",
    "Problem",
    "ProblemKind",
    "SignedBy",
    "SiteVerdict",
    "compare_files",
    "sign_manifest_dsse",
    "verify_manifest_signature",
]

MANIFEST_PREDICATE = "https://evidence-dashboard.dev/site-manifest/v1"
"""The predicate type of the in-toto statement a DSSE manifest signature carries."""


class ProblemKind(StrEnum):
    CHANGED = "changed"
    MISSING = "missing"
    UNLISTED = "unlisted"
    SIGNATURE = "signature"
    REBUILD = "differs-on-rebuild"
    MANIFEST = "manifest"


@dataclass(frozen=True)
class Problem:
    """One reason the site is not verified, naming the file."""

    kind: ProblemKind
    path: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": str(self.kind), "path": self.path, "detail": self.detail}

    def describe(self) -> str:
        return f"{self.kind}: {self.path}: {self.detail}"


@dataclass(frozen=True)
class SignedBy:
    """Who signed the manifest and when the transparency log saw it."""

    identity: str
    issuer: str
    logged_at: str | None

    def as_dict(self) -> dict[str, str | None]:
        return {"identity": self.identity, "issuer": self.issuer, "loggedAt": self.logged_at}


@dataclass(frozen=True)
class SiteVerdict:
    """The outcome of `verify-site`."""

    site: str
    files: int
    problems: tuple[Problem, ...] = ()
    signed_by: SignedBy | None = None
    rebuilt: bool = False
    commit: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def exit(self) -> int:
        return 1 if self.problems else 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "site": self.site,
            "files": self.files,
            "commit": self.commit,
            "signedBy": None if self.signed_by is None else self.signed_by.as_dict(),
            "rebuilt": self.rebuilt,
            "problems": [p.as_dict() for p in self.problems],
            "notes": list(self.notes),
            "exit": self.exit,
        }

    def describe(self) -> str:
        lines = [
            f"site {self.site}: {self.files} files listed in {MANIFEST_PATH}"
            + (f", evidence tree commit {self.commit}" if self.commit else "")
        ]
        if self.signed_by is not None:
            lines.append(
                f"manifest signed by {self.signed_by.identity} "
                f"(issuer {self.signed_by.issuer}), logged "
                f"{self.signed_by.logged_at or 'at an unknown time'}"
            )
        if self.rebuilt:
            lines.append(
                "rebuilt from the evidence tree: "
                + (
                    "identical"
                    if not any(p.kind is ProblemKind.REBUILD for p in self.problems)
                    else "differs"
                )
            )
        lines.extend(self.notes)
        lines.extend(p.describe() for p in self.problems)
        lines.append("NOT VERIFIED" if self.problems else "verified")
        return "\n".join(lines)


def compare_files(
    listed: Sequence[FileEntry],
    found: Sequence[FileEntry],
    *,
    kind: ProblemKind = ProblemKind.CHANGED,
) -> list[Problem]:
    """Every difference between the manifest's files and the files found, by path."""
    want = {e.path: e for e in listed}
    have = {e.path: e for e in found}
    problems: list[Problem] = []
    for path in sorted(want.keys() | have.keys()):
        a, b = want.get(path), have.get(path)
        if b is None:
            problems.append(
                Problem(
                    ProblemKind.MISSING if kind is ProblemKind.CHANGED else kind,
                    path,
                    "listed in the manifest but absent",
                )
            )
        elif a is None:
            problems.append(
                Problem(
                    ProblemKind.UNLISTED if kind is ProblemKind.CHANGED else kind,
                    path,
                    "present but not listed in the manifest",
                )
            )
        elif (a.sha256, a.size) != (b.sha256, b.size):
            problems.append(
                Problem(
                    kind,
                    path,
                    f"sha256 {b.sha256} ({b.size} bytes), manifest "
                    f"says {a.sha256} ({a.size} bytes)",
                )
            )
    return problems


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


def sign_manifest_dsse(
    site: Path, authority: Any, signer: SignerIdentity, signed_at: datetime
) -> Path:
    """Sign the site's manifest with a test authority (DSSE, in-toto statement over its sha256)
    and write the bundle next to it; for local builds and offline tests."""
    data = (site / MANIFEST_PATH).read_bytes()
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [
            {"name": MANIFEST_PATH, "digest": {"sha256": hashlib.sha256(data).hexdigest()}}
        ],
        "predicateType": MANIFEST_PREDICATE,
        "predicate": {},
    }
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    bundle = authority.sign_dsse(payload, signer=signer, signed_at=signed_at)
    target = site / SIGNATURE_PATH
    target.write_bytes(bundle)
    return target


def verify_manifest_signature(
    manifest: bytes, bundle_json: bytes, trust: Any, expected: SignerIdentity
) -> SignedBy:
    """Verify the manifest's Sigstore bundle; raises `SignatureFailure` with the reason."""
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import Bundle

    from generator.verify.policy import ExactIdentity
    from generator.verify.signature import (
        SignatureFailure,
        _TimedVerifier,
        verifier_for,
        verify_signature,
    )

    try:
        raw = json.loads(bundle_json)
    except ValueError as exc:
        raise SignatureFailure(f"the signature bundle is not JSON: {exc}") from exc
    if isinstance(raw, dict) and "dsseEnvelope" in raw:
        ok = verify_signature(bundle_json, trust, expected=expected)
        statement = ok.statement
        digest = hashlib.sha256(manifest).hexdigest()
        subjects = statement.get("subject") or []
        if statement.get("predicateType") != MANIFEST_PREDICATE or not any(
            isinstance(s, dict) and (s.get("digest") or {}).get("sha256") == digest
            for s in subjects
        ):
            raise SignatureFailure(
                "the signed statement does not name this manifest",
                hint=f"expected predicateType {MANIFEST_PREDICATE} and a subject with sha256 "
                f"{digest}; the manifest was changed after it was signed",
            )
        return SignedBy(ok.signer.identity, ok.signer.issuer, ok.logged_at)
    try:
        bundle = Bundle.from_json(bundle_json)
    except Exception as exc:  # noqa: BLE001 - sigstore and pydantic errors alike
        raise SignatureFailure(f"the signature bundle is malformed: {exc}") from exc
    verifier = verifier_for(trust)
    if isinstance(verifier, _TimedVerifier):
        verifier.forget_times()
    try:
        verifier.verify_artifact(manifest, bundle, ExactIdentity(expected))
    except SigstoreError as exc:
        raise SignatureFailure(f"sigstore verification failed: {exc}") from exc
    when = verifier.verified_time() if isinstance(verifier, _TimedVerifier) else None
    return SignedBy(
        expected.identity,
        expected.issuer,
        None if when is None else when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def check_files(site: Path, manifest: Manifest) -> list[Problem]:
    """Compare the site's files with the manifest's list."""
    return compare_files(manifest.files, file_entries(site))


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


def check_signature(
    manifest: bytes,
    bundle: bytes | None,
    *,
    identity: str,
    issuer: str,
    engine: dict[str, Any],
) -> tuple[SignedBy | None, list[Problem]]:
    """Verify the manifest's Sigstore bundle (None: there is none) against the trust options
    in `engine` and the expected signer; who signed it, or the problem."""
    from generator.verify.signature import SignatureFailure
    from generator.verify.trust import load_trust

    if bundle is None:
        return None, [
            Problem(
                ProblemKind.SIGNATURE,
                SIGNATURE_PATH,
                "the manifest is not signed (no Sigstore bundle next to it)",
            )
        ]
    trust = load_trust(
        mode=str(engine.get("trust_mode") or "production"),
        root_file=engine.get("trust_root"),
        offline=bool(engine.get("offline")),
    )
    try:
        signed_by = verify_manifest_signature(
            manifest, bundle, trust, SignerIdentity(issuer=issuer, identity=identity)
        )
    except SignatureFailure as failure:
        detail = failure.detail + (f" ({failure.hint})" if failure.hint else "")
        return None, [Problem(ProblemKind.SIGNATURE, SIGNATURE_PATH, detail)]
    return signed_by, []


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
