"""`fill_marked`: a history list goes between its marker and the next end marker, or nowhere."""

from __future__ import annotations

import pytest

from generator.changes import END_MARKER, RECIPE_MARKER, fill_marked

M, E = RECIPE_MARKER, END_MARKER


@pytest.mark.parametrize(
    ("page", "filled"),
    [
        pytest.param(f"a{M}empty{E}b", f"a{M}LIST{E}b", id="both-markers"),
        pytest.param(f"a{M}{E}b", f"a{M}LIST{E}b", id="nothing-between"),
        pytest.param(f"{E}a{M}x{E}b{E}", f"{E}a{M}LIST{E}b{E}", id="the-end-after-the-start"),
        pytest.param(f"a{M}x{M}y{E}", f"a{M}LIST{E}", id="the-first-start"),
        pytest.param("a page without markers", "a page without markers", id="no-marker"),
        pytest.param(f"a{M}no end", f"a{M}no end", id="no-end"),
        pytest.param(f"a{E}x{M}", f"a{E}x{M}", id="end-before-start-only"),
        pytest.param(f"é{M}→{E}ü", f"é{M}LIST{E}ü", id="utf-8-around"),
    ],
)
def test_fill_marked(page: str, filled: str) -> None:
    assert fill_marked(page.encode(), M, b"LIST") == filled.encode()
