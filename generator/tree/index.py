"""The pointer index `pkg/evidence/index/pointers.yaml` (our definition; aicr keeps none, Q5).

The index is derived data: a deterministic listing of every usable pointer of the tree, so a
review can see at a glance what the build will fetch, and `check-tree` can report when the
committed index has drifted from the tree. Format:

    schemaVersion: 1.0.0
    pointers:
      - recipe: "<recipe>"
        source: "<32-hex slug>"      # null for a flat pending pointer
        path: "evidence/<recipe>/<source>/sha256-<hex>.yaml"
        digest: "sha256:<hex>"
        class: "community"            # first-party | community | partner | reported | pending

Entries are sorted by recipe, then path (segment by segment, so a recipe's folder comes before
its flat `<recipe>.yaml`); duplicates (a repeated bundle digest) and rejected
pointers are left out; pending pointers are included with `class: pending`. Unlisted signers have
`class: reported`. Every string is double-quoted (JSON string syntax, valid YAML), so no reader
can retype a value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.errors import YamlError
from generator.tree.allowlist import Allowlist
from generator.tree.safeio import FileRefusedError, read_bounded
from generator.tree.scan import Violation, scan_tree
from generator.tree.yamlio import load_yaml

INDEX_RELATIVE = Path("pkg") / "evidence" / "index" / "pointers.yaml"
"""Where the index lives, relative to the repository root (the parent of the recipes root)."""
INDEX_LIMIT = 16 * 1024 * 1024
INDEX_SCHEMA_VERSION = "1.0.0"
FIELDS = ("recipe", "source", "path", "digest", "class")


def default_index_path(recipes_root: Path) -> Path:
    """`<repository root>/pkg/evidence/index/pointers.yaml`, the repository root being the
    parent of the recipes root."""
    return recipes_root.parent / INDEX_RELATIVE


def index_entries(recipes_root: Path, allowlist: Allowlist) -> list[dict[str, str | None]]:
    """The index entries of the tree, sorted by recipe then path."""
    scan = scan_tree(recipes_root, allowlist=allowlist, allow_pending=True)
    entries: list[dict[str, str | None]] = []
    for parsed in scan.usable:
        pointer = parsed.pointer
        if pointer.signer is None:
            klass = "pending"
        else:
            found = allowlist.classify(pointer.signer.identity)
            klass = str(found.signer_class) if found.allowlisted else "reported"
        entries.append(
            {
                "recipe": str(pointer.recipe),
                "source": parsed.location.folder_source,
                "path": parsed.location.path,
                "digest": str(pointer.bundle.digest) if pointer.bundle.digest else None,
                "class": klass,
            }
        )
    entries.sort(key=lambda e: (e["recipe"] or "", (e["path"] or "").split("/")))
    return entries


def _scalar(value: str | None) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def render_entries(entries: list[dict[str, str | None]]) -> str:
    """The index text for already computed entries (see the module docstring)."""
    lines = [
        "# Pointer index of evidence/ (derived data; regenerate, do not edit by hand).",
        f"schemaVersion: {INDEX_SCHEMA_VERSION}",
    ]
    if not entries:
        lines.append("pointers: []")
    else:
        lines.append("pointers:")
        for entry in entries:
            for i, name in enumerate(FIELDS):
                lead = "  - " if i == 0 else "    "
                lines.append(f"{lead}{name}: {_scalar(entry[name])}")
    return "\n".join(lines) + "\n"


def render_index(recipes_root: Path, allowlist: Allowlist) -> str:
    """The canonical index text of the tree under `recipes_root`."""
    return render_entries(index_entries(recipes_root, allowlist))


def _display(index_path: Path, recipes_root: Path) -> str:
    try:
        return index_path.relative_to(recipes_root.parent).as_posix()
    except ValueError:
        return index_path.name


def index_drift(
    recipes_root: Path, index_path: Path, allowlist: Allowlist
) -> tuple[Violation, ...]:
    """How the committed index differs from the tree; empty when it is byte-identical.

    Entry-level drift is reported on the pointer's path; a missing, unreadable, unparseable or
    merely non-canonical index is reported on the index's own path (relative to the repository
    root).
    """
    shown = _display(index_path, recipes_root)
    entries = index_entries(recipes_root, allowlist)
    expected = render_entries(entries)
    regen = "regenerate it with `index --write`"
    if not index_path.exists() and not index_path.is_symlink():
        return (Violation(shown, f"pointer index is missing; {regen}"),)
    try:
        data = read_bounded(index_path, INDEX_LIMIT, display=shown)
    except FileRefusedError as exc:
        return (Violation(shown, f"pointer index cannot be read: {exc.message}"),)
    if data == expected.encode("utf-8"):
        return ()
    try:
        doc = load_yaml(data, file=shown)
    except YamlError as exc:
        return (Violation(shown, f"pointer index is not valid YAML ({exc.message}); {regen}"),)
    listed = _listed(doc)
    if listed is None:
        return (Violation(shown, f"pointer index does not have the expected shape; {regen}"),)
    want = {str(e["path"]): e for e in entries}
    out: list[Violation] = []
    for path in sorted(set(want) | set(listed)):
        if path not in listed:
            out.append(Violation(path, f"pointer is not listed in the pointer index {shown}"))
        elif path not in want:
            out.append(
                Violation(
                    path,
                    f"pointer index {shown} lists a pointer that is not a "
                    "usable pointer of the tree",
                )
            )
        else:
            changed = [n for n in FIELDS if listed[path].get(n) != want[path][n]]
            if changed:
                out.append(
                    Violation(
                        path, f"pointer index {shown} is out of date for {', '.join(changed)}"
                    )
                )
    if not out:
        out.append(Violation(shown, f"pointer index is not in canonical form; {regen}"))
    return tuple(out)


def _listed(doc: Any) -> dict[str, dict[str, Any]] | None:
    """The index's entries keyed by path, or None when the document has another shape."""
    if not isinstance(doc, dict) or not isinstance(doc.get("pointers"), list):
        return None
    listed: dict[str, dict[str, Any]] = {}
    for item in doc["pointers"]:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            return None
        listed[item["path"]] = item
    return listed


def write_index(recipes_root: Path, allowlist: Allowlist, index_path: Path | None = None) -> Path:
    """Regenerate the index file (atomically: write a sibling, then rename). Returns its path.

    The file must lie below the repository root (the parent of the recipes root) and no
    folder on the way, nor the file, may be a symbolic link (`generator.safewrite`): a link
    committed in the checkout must not redirect the write outside it.
    """
    from generator.safewrite import write_below

    target = index_path if index_path is not None else default_index_path(recipes_root)
    text = render_index(recipes_root, allowlist)
    return write_below(recipes_root.parent, target, text.encode("utf-8"))
