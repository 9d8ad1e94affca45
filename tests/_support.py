"""Plain helpers that any test module imports: `from tests._support import fixtures_dir`.

Suite-wide helpers that are not fixtures live here rather than in tests/conftest.py, so that a test
module never has to import a conftest to reach them. Fixtures stay in conftest files.
"""

from __future__ import annotations

from pathlib import Path

#: The repo root's sibling `shared/fixtures` (real aicr trees, real Sigstore bundles).
SHARED_FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"


def fixtures_dir() -> Path | None:
    """The shared fixtures folder beside the repo root, or None when it is absent.

    Tests that read it are marked `fixtures` and skip when this is None (under `CI=true` that
    skip fails the run).
    """
    return SHARED_FIXTURES if SHARED_FIXTURES.is_dir() else None
