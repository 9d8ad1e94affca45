"""Walk an aicr evidence tree: pointer discovery for the build and the pointer contract gate.

The recipes root is the folder holding `evidence/`; every path reported is relative to it with
forward slashes (`evidence/<recipe>/<source>/sha256-<hex>.yaml`). Only directory listings name
files: nothing read from a file is ever turned into a filesystem path. Symlinks are reported and
never followed, at every level; files are read through `read_bounded`.

Layout rules (spec 1.1, 1.4 and section 11):

- `evidence/allowlist.yaml` is skipped; any other root entry that is not a directory is either a
  flat pointer `<recipe>.yaml` (unsigned, pushed, named after its `recipe:`; *pending*) or a
  violation;
- inside `<recipe>/` every entry must be a `<source>/` directory;
- inside `<recipe>/<source>/` every `*.yaml` is a pointer and is checked, first failure wins:
  valid pointer, recipe equals the folder, signed, signer slug equals the folder (no squatting),
  file name is `sha256-<hex of bundle.digest>.yaml`, and (gate only) signer allowlisted, not
  first-party. Other files and subfolders there are ignored, as in aicr.

Rule ids of `RejectedPointer.rule`, besides the pointer rules of `pointer.RULES`, are listed in
`LAYOUT_RULES`. The checks of one file live in `_scan_rules`; this module walks and gates.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from generator.errors import InputError, Location
from generator.model import (
    ParsedPointer,
    PointerFile,
    PointerLocation,
    RejectedPointer,
)
from generator.tree._scan_rules import (
    KnownPointer,
    ParsePointer,
    _Candidate,
    _examine,
    _parse_pointer,
    _Signers,
    safe_name,
)
from generator.tree.allowlist import Allowlist, load_allowlist

__all__ = [
    "ALLOWLIST_NAME",
    "EVIDENCE_DIR",
    "LAYOUT_RULES",
    "KnownPointer",
    "ParsePointer",
    "TreeScan",
    "Violation",
    "check_tree",
    "safe_name",
    "scan_tree",
]

EVIDENCE_DIR = "evidence"
ALLOWLIST_NAME = "allowlist.yaml"

LAYOUT_RULES: dict[str, str] = {
    "symlink": "no symbolic links anywhere in the tree (never followed)",
    "not-regular": "pointers are regular files (no FIFOs, sockets, devices)",
    "oversize": "pointer files are at most 1 MiB",
    "unreadable": "the file can be opened and read",
    "unexpected-file": "only allowlist.yaml and flat <recipe>.yaml at the root; only folders "
    "inside <recipe>/",
    "flat-name": "a flat pointer is named <recipe>.yaml after its recipe: value",
    "signed-flat": "a signed pointer is nested under <recipe>/<source>/",
    "flat-unpushed": "a flat pending pointer has non-empty bundle.oci and bundle.digest",
    "pending-not-allowed": "flat pending pointers are refused unless allow_pending is set",
    "recipe-folder": "a nested pointer's recipe: equals its <recipe>/ folder",
    "unsigned-nested": "a committed (nested) pointer carries a signer",
    "source-folder": "the claimed signer's slug equals the <source>/ folder (no squatting)",
    "file-name": "the file name is sha256-<hex of bundle.digest>.yaml",
    "first-party": "first-party CI ingests directly and commits no per-run pointers",
    "not-allowlisted": "(gate only) the claimed signer is in the allowlist",
    "duplicate-digest": "(gate only) a bundle digest appears in one pointer only",
}


@dataclass(frozen=True)
class Violation:
    """One pointer-contract violation: `path` relative to the recipes root, one-line message."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class TreeScan:
    """Every pointer file found, in path order, and which usable ones repeat an earlier digest.

    `duplicate_of[path] = first_path` for each ParsedPointer whose bundle digest was already
    kept; signed nested pointers are kept before flat pending copies, then by path. A build
    still verifies and judges every duplicate on its own (it only counts each bundle once).
    """

    files: tuple[PointerFile, ...]
    duplicate_of: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def usable(self) -> tuple[ParsedPointer, ...]:
        """Parsed pointers that are not duplicates (one per bundle digest, e.g. for the index)."""
        return tuple(
            f
            for f in self.files
            if isinstance(f, ParsedPointer) and f.location.path not in self.duplicate_of
        )

    @property
    def rejected(self) -> tuple[RejectedPointer, ...]:
        return tuple(f for f in self.files if isinstance(f, RejectedPointer))


def _entries(directory: Path | str, display: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        raise InputError(
            "cannot list a folder of the evidence tree",
            location=Location(display),
            expected="a readable directory",
            found=exc.strerror or str(exc),
            hint="check the folder's permissions",
        ) from exc


def _kind(entry: os.DirEntry[str]) -> str:
    """'symlink', 'dir', 'file' or 'other' without following links."""
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


def _walk(recipes_root: Path) -> list[_Candidate]:
    """Every candidate pointer entry of the tree, in path order."""
    evidence = recipes_root / EVIDENCE_DIR
    try:
        info = os.lstat(evidence)
    except OSError as exc:
        raise InputError(
            "no evidence folder under the recipes root",
            location=Location(EVIDENCE_DIR),
            expected="a directory evidence/",
            found=exc.strerror or str(exc),
            hint="pass the folder that holds evidence/ (e.g. recipes/)",
        ) from exc
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(
            "the evidence root is not a directory",
            location=Location(EVIDENCE_DIR),
            expected="a real directory (not a symlink)",
            found="a symbolic link" if stat.S_ISLNK(info.st_mode) else "a file",
            hint="point the tool at a checkout whose evidence/ is a folder",
        )
    out: list[_Candidate] = []
    for top in _entries(evidence, EVIDENCE_DIR):
        rel = f"{EVIDENCE_DIR}/{safe_name(top.name)}"
        kind = _kind(top)
        if top.name == ALLOWLIST_NAME:
            continue
        root_loc = PointerLocation(path=rel, folder_recipe=None, folder_source=None)
        if kind == "file":
            flat = top.name.endswith(".yaml")
            out.append(_Candidate(top.path, root_loc, "flat" if flat else "unexpected"))
            continue
        if kind != "dir":
            out.append(_Candidate(top.path, root_loc, kind))
            continue
        for sub in _entries(top.path, rel):
            sub_rel = f"{rel}/{safe_name(sub.name)}"
            sub_kind = _kind(sub)
            sub_loc = PointerLocation(path=sub_rel, folder_recipe=top.name, folder_source=None)
            if sub_kind == "file":
                out.append(_Candidate(sub.path, sub_loc, "unexpected"))
                continue
            if sub_kind != "dir":
                out.append(_Candidate(sub.path, sub_loc, sub_kind))
                continue
            for leaf in _entries(sub.path, sub_rel):
                if not leaf.name.endswith(".yaml") or _kind(leaf) == "dir":
                    continue  # aicr ignores non-.yaml files and subfolders inside <source>/
                leaf_loc = PointerLocation(
                    path=f"{sub_rel}/{safe_name(leaf.name)}",
                    folder_recipe=top.name,
                    folder_source=sub.name,
                )
                out.append(_Candidate(leaf.path, leaf_loc, "nested"))
    return out


def _duplicates(files: list[PointerFile]) -> dict[str, str]:
    """Later pointers repeating a kept bundle digest -> the kept pointer's path."""
    parsed = [f for f in files if isinstance(f, ParsedPointer) and f.pointer.bundle.digest]
    parsed.sort(key=lambda f: (f.location.flat, f.location.path.split("/")))
    first: dict[str, str] = {}
    dup: dict[str, str] = {}
    for f in parsed:
        digest = str(f.pointer.bundle.digest)
        if digest in first:
            dup[f.location.path] = first[digest]
        else:
            first[digest] = f.location.path
    return dup


def scan_tree(
    recipes_root: Path,
    *,
    allowlist: Allowlist,
    allow_pending: bool = True,
    parse: ParsePointer | None = None,
    known: KnownPointer | None = None,
) -> TreeScan:
    """Find and check every pointer under `<recipes_root>/evidence/` (sorted by path).

    Unlisted signers are *not* rejected here (the build verifies them and reports them);
    first-party pointers are. Raises `InputError` only when the evidence root cannot be read.
    `parse` parses each file's bytes (default `parse_pointer`; a build's remembers them);
    `known` answers a file's pointer without reading it, when it can (a build's: the files its
    memo key read).
    """
    signers = _Signers(allowlist)
    parse = parse or _parse_pointer
    files = [_examine(c, signers, allow_pending, parse, known) for c in _walk(recipes_root)]
    return TreeScan(files=tuple(files), duplicate_of=MappingProxyType(_duplicates(files)))


def _display(path: Path, root: Path) -> str:
    """`path` relative to `root` with forward slashes when inside it, else its name."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def check_tree(
    recipes_root: Path, *, allow_pending: bool = False, allowlist_path: Path | None = None
) -> tuple[Violation, ...]:
    """aicr's pointer contract gate (newest behaviour) plus this project's checks (spec 11).

    One violation per failing file, first failure wins, in path order. The allowlist defaults to
    `<recipes_root>/evidence/allowlist.yaml`. Operational errors (unreadable root or allowlist,
    invalid allowlist) raise `InputError` / `AllowlistError`.
    """
    evidence = recipes_root / EVIDENCE_DIR
    if not evidence.is_dir() or evidence.is_symlink():
        _walk(recipes_root)  # raises the precise InputError
    path = allowlist_path if allowlist_path is not None else evidence / ALLOWLIST_NAME
    allowlist = load_allowlist(path, display=_display(path, recipes_root))
    scan = scan_tree(recipes_root, allowlist=allowlist, allow_pending=allow_pending)
    out: list[Violation] = []
    for f in scan.files:
        where = f.location.path
        if isinstance(f, RejectedPointer):
            out.append(Violation(where, f.message))
            continue
        signer = f.pointer.signer
        if signer is not None and not allowlist.classify(signer.identity).allowlisted:
            out.append(
                Violation(where, f"signer (source {signer.identity.slug}) is not in the allowlist")
            )
            continue
        first = scan.duplicate_of.get(where)
        if first is not None:
            what = "flat pointer repeats" if f.location.flat else "pointer repeats"
            out.append(Violation(where, f"{what} the bundle digest of {first}"))
    return tuple(out)
