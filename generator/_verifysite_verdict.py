"""What `verify-site` finds: the problems it names, who signed the manifest, the verdict, and
the file-by-file comparison every check ends in (part of `generator.verifysite`'s face)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from generator.manifest import MANIFEST_PATH, FileEntry


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
