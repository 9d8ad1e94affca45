"""`relative` is `posixpath.relpath` for paths under one root, without asking for the working
directory (a property test over plain and awkward paths alike)."""

from __future__ import annotations

import posixpath

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.site._paths import rel, relative

_PART = st.sampled_from(["a", "b", "recipes", "sources", "x-y", ".", "..", "", "é"])
_PATH = st.builds(
    lambda lead, parts, trail: lead + "/".join(parts) + trail,
    st.sampled_from(["", "/", "./"]),
    st.lists(_PART, max_size=4),
    st.sampled_from(["", "/"]),
)


@settings(max_examples=2000, deadline=None)
@given(_PATH, _PATH)
def test_relative_is_relpath(target: str, base: str) -> None:
    try:
        expected = posixpath.relpath(target, base)
    except ValueError:
        expected = "ValueError"
    try:
        got = relative(target, base)
    except ValueError:
        got = "ValueError"
    assert got == expected


def test_page_links() -> None:
    assert rel("index.md", "recipes/a.md") == "recipes/a/"
    assert rel("recipes/a.md", "index.md") == "../../"
    assert rel("recipes/a.md", "recipes/b.md") == "../b/"
    assert rel("sources/s.md", "recipes/a.md") == "../../recipes/a/"
    assert rel("recipes/a.md", "recipes/a.md") == "./"
