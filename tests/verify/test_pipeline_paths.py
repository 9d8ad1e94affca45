"""The pipeline's string path helpers agree with `PurePosixPath`, which they replace."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.verify import _fields, _manifest

_PATHS = st.text(st.sampled_from("ab/.- \\"), max_size=12)


@settings(max_examples=2000, deadline=None)
@given(_PATHS)
def test_parts_match_pure_posix_path(path: str) -> None:
    parts = _fields._posix_parts(path)
    if not path.startswith("/"):
        assert parts == [p for p in PurePosixPath(path).parts if p != "."]
    assert (parts or [""])[-1] == PurePosixPath(path).name


def test_local_path_keeps_its_rules() -> None:
    assert _manifest._local_path("ctrf//./deployment.json") == "ctrf/deployment.json"
    for bad in ("", "/abs", "a/../b", "..", ".", "a\\b", "a\x00b", None, 3):
        assert _manifest._local_path(bad) is None
