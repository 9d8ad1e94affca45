"""How a reader repeats a build's verification of one pointer: the trust and bundle options
the build used, as `evidence-dashboard verify` takes them from a checkout of the evidence tree.

The evidence tree is checked out as `recipes/` (the pages print `evidence-dashboard verify
recipes/<pointer>`), so a file inside the tree is written `recipes/<its path in the tree>`;
a file outside it by its name alone (`outside`), which the page explains. No path of the build
machine is ever written.

The OCI layouts named are those the tree itself carries (a top-level folder of the tree with an
`oci-layout` file), not the build's `--oci-layout` options: a reader's checkout has exactly
those, and a build answered from its cache alone writes the same pages as one that read them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["TREE_PREFIX", "tree_layouts", "verify_with"]

TREE_PREFIX = "recipes"
"""Where the printed commands expect the evidence tree (a checkout of it)."""


def _in_tree(path: Path, tree: Path) -> dict[str, Any]:
    try:
        inside = Path(path).absolute().relative_to(Path(tree).absolute())
    except ValueError:
        return {"path": Path(path).name, "outside": True}
    return {"path": f"{TREE_PREFIX}/{inside.as_posix()}".rstrip("/."), "outside": False}


def tree_layouts(recipes: Path) -> list[Path]:
    """The OCI image layouts the evidence tree carries: its top-level folders that hold an
    `oci-layout` file, by name."""
    try:
        children = sorted(Path(recipes).iterdir())
    except OSError:
        return []
    return [c for c in children if c.is_dir() and (c / "oci-layout").is_file()]


def verify_with(
    *, recipes: Path, trust_mode: str, trust_root: Path | None, offline: bool
) -> dict[str, Any]:
    """`build-info.json`'s `verifyWith`: the trust mode or root, the tree's OCI layouts and
    `--offline`, each path as the tree's checkout names it."""
    return {
        "trust": trust_mode,
        "trustRoot": None if trust_root is None else _in_tree(trust_root, recipes),
        "ociLayouts": [_in_tree(p, recipes) for p in tree_layouts(recipes)],
        "offline": offline,
    }
