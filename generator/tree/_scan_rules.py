"""The checks of one candidate pointer file the tree walk found, first failure wins.

A link, special file or misplaced file is refused before reading; the rest is read bounded and
parsed by the pointer rules, then a flat pending pointer or a committed (nested) pointer is
checked against its place in the tree (spec 1.1, 1.4, 11). Every refusal is a `RejectedPointer`
whose `rule` is in `scan.LAYOUT_RULES` or `pointer.RULES`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from generator.errors import PointerError
from generator.model import (
    Classification,
    ParsedPointer,
    Pointer,
    PointerFile,
    PointerLocation,
    RejectedPointer,
    SignerClass,
    SignerIdentity,
)
from generator.tree.allowlist import Allowlist
from generator.tree.pointer import parse_pointer
from generator.tree.safeio import POINTER_LIMIT, FileRefusedError, read_bounded


def safe_name(name: str) -> str:
    """A file name made printable on one line (control characters and undecodable bytes escaped)."""
    if name.isascii() and name.isprintable():
        return name  # the usual case, unchanged by the escaping below
    text = name.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass(frozen=True)
class _Candidate:
    """A file the walk found, before it is read."""

    path: str
    """Where it is on disk (the walk's own string: no `Path` per file of a large tree)."""
    location: PointerLocation
    kind: str
    """'flat', 'nested', 'symlink', 'other' or 'unexpected'."""


def _reject(
    loc: PointerLocation, rule: str, message: str, hint: str, recipe: str | None = None
) -> RejectedPointer:
    return RejectedPointer(
        location=loc,
        rule=rule,
        message=message,
        hint=hint,
        recipe=recipe if recipe is not None else loc.folder_recipe,
    )


def _read(cand: _Candidate, guess: str | None) -> bytes | RejectedPointer:
    try:
        return read_bounded(cand.path, POINTER_LIMIT, display=cand.location.path)
    except FileRefusedError as exc:
        return _reject(
            cand.location,
            exc.reason,
            f"{exc.message} ({exc.found})",
            exc.hint or "replace the entry with a regular pointer file",
            guess,
        )


@dataclass(frozen=True)
class _Signers:
    """Slug and classification of each claimed signer, worked out once per scan: a tree has
    thousands of pointers but few signers, and each costs a sha256 and the allowlist's rules."""

    allowlist: Allowlist
    _known: dict[SignerIdentity, tuple[str, Classification]] = field(default_factory=dict)

    def slug_and_class(self, signer: SignerIdentity) -> tuple[str, Classification]:
        found = self._known.get(signer)
        if found is None:
            found = self._known[signer] = (str(signer.slug), self.allowlist.classify(signer))
        return found


ParsePointer = Callable[[bytes, str], Pointer]
"""What parses a pointer file's bytes (named by its path) or raises `PointerError`:
`parse_pointer`, or a faster one with the same answers (`scan_tree`'s `parse`)."""
KnownPointer = Callable[[str, str], "Pointer | None"]
"""What answers the pointer of a file (by its path, then its name in the tree) without
reading it, when its bytes were read and gave one before; None: read and parse it."""


def _parse_pointer(data: bytes, file: str) -> Pointer:
    return parse_pointer(data, file=file)


def _examine(
    cand: _Candidate,
    signers: _Signers,
    allow_pending: bool,
    parse: ParsePointer = _parse_pointer,
    known: KnownPointer | None = None,
) -> PointerFile:
    """Read and check one candidate; the first failed rule wins."""
    refused = _refused_kind(cand)
    if refused is not None:
        return refused
    remembered = known(cand.path, cand.location.path) if known is not None else None
    pointer = remembered if remembered is not None else _parse(cand, parse)
    if isinstance(pointer, RejectedPointer):
        return pointer
    if cand.kind == "flat":
        return _check_flat(cand.location, pointer, allow_pending)
    return _check_nested(cand.location, pointer, signers)


def _refused_kind(cand: _Candidate) -> RejectedPointer | None:
    """A link, a special file or a plain file where a folder belongs: refused before reading."""
    loc = cand.location
    if cand.kind == "symlink":
        return _reject(
            loc,
            "symlink",
            "symbolic link in the evidence tree (not followed)",
            "commit the file or folder itself, not a link",
        )
    if cand.kind == "other":
        return _reject(
            loc,
            "not-regular",
            "not a regular file or folder",
            "remove the FIFO, socket or device from the tree",
        )
    if cand.kind == "unexpected":
        if loc.folder_recipe is None:
            return _reject(
                loc,
                "unexpected-file",
                "unexpected file at evidence root",
                "only allowlist.yaml and flat <recipe>.yaml pointers sit at the root",
            )
        return _reject(
            loc,
            "unexpected-file",
            "plain file where a <source>/ folder is expected",
            "move the pointer into <recipe>/<source>/",
        )
    return None


def _parse(cand: _Candidate, parse: ParsePointer) -> Pointer | RejectedPointer:
    """The candidate read (bounded, no links) and parsed by the pointer rules."""
    loc = cand.location
    # display only: the recipe a broken file seems to be for (its folder, or a flat file's name)
    guess = loc.folder_recipe
    if guess is None and cand.kind == "flat":
        guess = os.path.basename(cand.path)[: -len(".yaml")]
    data = _read(cand, guess)
    if isinstance(data, RejectedPointer):
        return data
    try:
        pointer = parse(data, loc.path)
    except PointerError as exc:
        detail = f"{exc.message} (found {exc.found})" if exc.found else exc.message
        return _reject(
            loc,
            exc.rule,
            f"invalid pointer: {detail}",
            exc.hint or "regenerate the pointer with a current aicr",
            guess,
        )
    return pointer


def _check_flat(loc: PointerLocation, pointer: Pointer, allow_pending: bool) -> PointerFile:
    """A flat pending pointer: named after its recipe, unsigned, pushed, and allowed."""
    recipe = str(pointer.recipe)
    name = loc.path.rsplit("/", 1)[-1]
    if name != f"{recipe}.yaml":
        return _reject(
            loc,
            "flat-name",
            f"flat pointer is not named {recipe}.yaml",
            "name a flat pointer after its recipe: value",
            recipe,
        )
    if pointer.signer is not None:
        return _reject(
            loc,
            "signed-flat",
            "signed pointer must be nested under <recipe>/<source>/, not flat",
            f"move it to evidence/{recipe}/<source>/sha256-<hex>.yaml",
            recipe,
        )
    if not pointer.bundle.oci or pointer.bundle.digest is None:
        return _reject(
            loc,
            "flat-unpushed",
            "flat pending pointer has an empty bundle.oci or bundle.digest",
            "push the bundle first, then commit the pointer",
            recipe,
        )
    if not allow_pending:
        return _reject(
            loc,
            "pending-not-allowed",
            "flat pending (unsigned) pointer is not allowed",
            "sign the bundle and commit a nested pointer; pending pointers are "
            "for local use with --allow-pending",
            recipe,
        )
    return ParsedPointer(location=loc, pointer=pointer)


def _check_nested(loc: PointerLocation, pointer: Pointer, signers: _Signers) -> PointerFile:
    """A committed pointer: in its recipe's and its signer's folders, named by digest, signed by
    anyone but first party."""
    recipe = str(pointer.recipe)
    if recipe != loc.folder_recipe:
        return _reject(
            loc,
            "recipe-folder",
            f"pointer recipe {recipe!r} does not match directory "
            f"{safe_name(loc.folder_recipe or '')!r}",
            "move the pointer under evidence/<recipe>/",
            recipe,
        )
    if pointer.signer is None:
        return _reject(
            loc,
            "unsigned-nested",
            "committed pointer must be signed",
            "sign the bundle; unsigned pointers are flat pending pointers",
            recipe,
        )
    slug, classification = signers.slug_and_class(pointer.signer.identity)
    if slug != loc.folder_source:
        return _reject(
            loc,
            "source-folder",
            f"path ownership: the claimed signer hashes to {slug}, not "
            f"{safe_name(loc.folder_source or '')!r} (squat)",
            f"commit the pointer under evidence/{recipe}/{slug}/",
            recipe,
        )
    digest = pointer.bundle.digest
    if digest is None:
        return _reject(
            loc,
            "file-name",
            "committed pointer has no bundle.digest",
            "push the bundle and record its manifest digest",
            recipe,
        )
    expected_name = f"{digest.replace(':', '-')}.yaml"
    if loc.path.rsplit("/", 1)[-1] != expected_name:
        return _reject(
            loc,
            "file-name",
            f"file name does not match bundle.digest (expected {expected_name})",
            f"rename the file to {expected_name}",
            recipe,
        )
    if classification.signer_class is SignerClass.FIRST_PARTY:
        return _reject(
            loc,
            "first-party",
            "first-party signer must ingest directly, not commit per-run pointers",
            "drop the pointer; first-party CI evidence is ingested directly",
            recipe,
        )
    return ParsedPointer(location=loc, pointer=pointer)
