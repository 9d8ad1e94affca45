"""Make the top-level `bench` package importable when pytest is started as `.venv/bin/pytest`
(which, unlike `python -m pytest`, does not put the repository root on sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
