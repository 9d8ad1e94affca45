"""Builds of a private copy of the embedded demo tree, offline, with a cache of their own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.build import BuildOptions

REPO = Path(__file__).resolve().parents[2]
EPOCH = 1_790_000_000


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A private copy of the embedded demo tree (signed bundles, trust root, overlays)."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def options(tree: Path, out: Path, cache: Path, **extra: object) -> BuildOptions:
    """Offline build options over `tree` (its layout and trust root) with `extra` changed."""
    values: dict[str, object] = {
        "recipes": tree,
        "out": out,
        "cache": cache,
        "offline": True,
        "quiet": True,
        "oci_layouts": (tree / "bundles",),
        "trust_root": tree / "trust" / "trusted_root.json",
        "source_date_epoch": EPOCH,
        **extra,
    }
    return BuildOptions.flat(**values)  # type: ignore[arg-type]
