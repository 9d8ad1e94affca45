"""The maintainer's loop: rebuilds after one small change to a tree whose cache is warm.

A maintainer adding a pointer, a PR preview and `serve`'s live reload all rebuild a tree that
barely changed. After the cold, warm and rewarm builds of a size, the benchmark copies the
tree's `evidence/` and `overlays/` (the bundles and trust root stay where they are), builds the
copy once on the same cache (the base), then measures one build after each change, in order
(and the whole order again, `--loop-rounds` times in all):

- "pointer removed": one pointer file is moved out of the tree;
- "pointer added": the same file is put back;
- "overlay changed": one overlay gains a comment line (its bytes change, not its meaning);
- "allowlist changed": one allowlist entry's label changes;
- "entry added": an allowlist entry for a signer of no recipe is put first, above the others
  (their signers stay classified as they were);
- "entry removed": that entry is taken out again;
- "new commit": the tree's commit moves, as a PR's next push does, its files unchanged (every
  build of the loop is given the copy's commit, `--commit`, as a CI job gives its own).

Each change is a plain edit of files, as a contributor's commit would make; nothing is signed.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CHANGES", "Change", "copy_tree", "first_pointer", "LoopTree"]


@dataclass(frozen=True)
class LoopTree:
    """A writable copy of a benchmark tree's evidence and overlays."""

    root: Path
    stash: Path

    @property
    def evidence(self) -> Path:
        return self.root / "evidence"

    @property
    def overlays(self) -> Path:
        return self.root / "overlays"

    @property
    def commit_file(self) -> Path:
        """Holds the copy's commit (40 hex digits), which every loop build is given."""
        return self.stash.parent / "commit"

    def commit(self) -> str:
        return self.commit_file.read_text(encoding="ascii").strip()


def copy_tree(source: Path, target: Path) -> LoopTree:
    """Copy `source`'s `evidence/` and `overlays/` to `target/recipes` (replacing it)."""
    root = target / "recipes"
    shutil.rmtree(target, ignore_errors=True)
    root.mkdir(parents=True)
    for part in ("evidence", "overlays"):
        if (source / part).is_dir():
            shutil.copytree(source / part, root / part, symlinks=True)
    stash = target / "stash"
    stash.mkdir()
    tree = LoopTree(root, stash)
    tree.commit_file.write_text("0" * 40, encoding="ascii")
    return tree


def first_pointer(tree: LoopTree) -> Path:
    """The first pointer file in path order (`<recipe>/<source>/sha256-*.yaml`)."""
    for path in sorted(tree.evidence.glob("*/*/sha256-*.yaml")):
        return path
    raise FileNotFoundError(f"no pointer file under {tree.evidence}")


def _remove_pointer(tree: LoopTree) -> str:
    pointer = first_pointer(tree)
    relative = pointer.relative_to(tree.evidence)
    kept = tree.stash / relative
    kept.parent.mkdir(parents=True, exist_ok=True)
    pointer.rename(kept)
    return relative.as_posix()


def _add_pointer(tree: LoopTree) -> str:
    for kept in sorted(tree.stash.rglob("sha256-*.yaml")):
        relative = kept.relative_to(tree.stash)
        (tree.evidence / relative).parent.mkdir(parents=True, exist_ok=True)
        kept.rename(tree.evidence / relative)
        return relative.as_posix()
    raise FileNotFoundError("no removed pointer to put back")


def _change_overlay(tree: LoopTree) -> str:
    overlay = sorted(tree.overlays.glob("*.yaml"))[0]
    with overlay.open("a", encoding="utf-8") as handle:
        handle.write("# changed by the benchmark\n")
    return overlay.name


def _allowlist_lines(tree: LoopTree) -> tuple[Path, list[str]]:
    """The copy's allowlist and its lines (each with its newline)."""
    allowlist = tree.evidence / "allowlist.yaml"
    return allowlist, allowlist.read_text(encoding="utf-8").splitlines(keepends=True)


def _first_entry(allowlist: Path, lines: list[str]) -> int:
    """The index of the allowlist's first labelled entry's line."""
    for n, line in enumerate(lines):
        if line.lstrip().startswith("- label: "):
            return n
    raise ValueError(f"no labelled entry in {allowlist}")


def _change_allowlist(tree: LoopTree) -> str:
    allowlist, lines = _allowlist_lines(tree)
    n = _first_entry(allowlist, lines)
    label = lines[n].split("- label: ", 1)[1].rstrip("\n")
    lines[n] = lines[n].replace(f"- label: {label}", f"- label: {label} (renamed)", 1)
    allowlist.write_text("".join(lines), encoding="utf-8")
    return f"label {label!r}"


NEWCOMER = "newcomer"
"""The label of the allowlist entry the loop adds and removes (a signer of no recipe)."""


def _newcomer_lines(indent: str) -> list[str]:
    """The lines of the newcomer's entry, at `indent` (what `_add_entry` puts in and
    `_remove_entry` takes out)."""
    return [
        f"{indent}- label: {NEWCOMER}\n",
        f"{indent}  issuer: https://token.actions.githubusercontent.com\n",
        f"{indent}  source: 0123456789abcdef0123456789abcdef\n",
    ]


def _add_entry(tree: LoopTree) -> str:
    allowlist, lines = _allowlist_lines(tree)
    n = _first_entry(allowlist, lines)
    lines[n:n] = _newcomer_lines(lines[n][: len(lines[n]) - len(lines[n].lstrip())])
    allowlist.write_text("".join(lines), encoding="utf-8")
    return f"entry {NEWCOMER!r} first"


def _remove_entry(tree: LoopTree) -> str:
    allowlist, lines = _allowlist_lines(tree)
    for n, line in enumerate(lines):
        entry = _newcomer_lines(line[: len(line) - len(line.lstrip())])
        if lines[n : n + len(entry)] == entry:
            del lines[n : n + len(entry)]
            allowlist.write_text("".join(lines), encoding="utf-8")
            return f"entry {NEWCOMER!r}"
    raise ValueError(f"no entry {NEWCOMER!r} to take out of {allowlist}")


def _new_commit(tree: LoopTree) -> str:
    moved = f"{int(tree.commit(), 16) + 1:040x}"
    tree.commit_file.write_text(moved, encoding="ascii")
    return f"commit {moved[-8:]}"


@dataclass(frozen=True)
class Change:
    """One edit of the loop: its row name and the function that makes it (returns what)."""

    name: str
    apply: Callable[[LoopTree], str]


CHANGES: tuple[Change, ...] = (
    Change("pointer removed", _remove_pointer),
    Change("pointer added", _add_pointer),
    Change("overlay changed", _change_overlay),
    Change("allowlist changed", _change_allowlist),
    Change("entry added", _add_entry),
    Change("entry removed", _remove_entry),
    Change("new commit", _new_commit),
)
