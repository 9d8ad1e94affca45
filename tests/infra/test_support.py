"""`_support.fixtures_dir()`: the repo root's sibling `shared/fixtures`, found from the file itself."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

from tests import _support

TESTS = Path(__file__).resolve().parents[1]


def _support_copy_in(root: Path) -> ModuleType:
    """Load a copy of tests/_support.py placed at <root>/repo/tests/_support.py."""
    target = root / "repo" / "tests" / "_support.py"
    target.parent.mkdir(parents=True)
    shutil.copy(TESTS / "_support.py", target)
    spec = importlib.util.spec_from_file_location("_support_copy", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_finds_the_sibling_shared_fixtures(tmp_path: Path) -> None:
    (tmp_path / "shared" / "fixtures").mkdir(parents=True)
    module = _support_copy_in(tmp_path)
    assert module.fixtures_dir() == tmp_path / "shared" / "fixtures"


def test_absent_folder_gives_none(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()  # shared/ without fixtures/
    assert _support_copy_in(tmp_path).fixtures_dir() is None


def test_the_real_module_points_beside_this_repo() -> None:
    assert _support.SHARED_FIXTURES == TESTS.parent.parent / "shared" / "fixtures"
