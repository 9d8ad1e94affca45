"""`recipe-digest` of a file: read through the tree's bounded, symlink-safe reader, then
digested by the pure recipe package (which reads no file itself)."""

from __future__ import annotations

from pathlib import Path

from generator.errors import InputError, Location
from generator.model import Sha256Hex
from generator.recipe import DEFAULT_MAX_BYTES, recipe_digest_of
from generator.tree.safeio import FileRefusedError, read_bounded

__all__ = ["recipe_digest_for_file"]


def recipe_digest_for_file(
    path: Path, predicate_type: str | None, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[Sha256Hex, str | None]:
    """The canonical digest of a YAML file, plus a warning when it is an unhydrated overlay
    (see `generator.recipe.recipe_digest_of`). A link, a special file, an unreadable file or
    one over `max_bytes` is refused with an `InputError` naming the file."""
    try:
        data = read_bounded(path, max_bytes, display=str(path))
    except FileRefusedError as refused:
        raise _refusal(refused, path, max_bytes) from refused
    return recipe_digest_of(data, predicate_type, source=str(path))


def _refusal(refused: FileRefusedError, path: Path, max_bytes: int) -> InputError:
    """The safe reader's refusal, said of a recipe file."""
    if refused.reason == "oversize":
        return InputError(
            "the recipe file is too large",
            location=Location(str(path)),
            expected=f"at most {max_bytes} bytes",
            found=refused.found or f"more than {max_bytes} bytes",
            hint="recipes are small; check that this is the right file",
        )
    return InputError(
        f"cannot read the recipe file: {refused.message}",
        location=Location(str(path)),
        expected="a readable regular YAML file (links are never followed)",
        found=refused.found,
        hint=refused.hint or "check the path and its permissions",
    )
