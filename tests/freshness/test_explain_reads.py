"""The stale explainer reads contributor overlays only through the tree's bounded, no-follow
reader: a link swapped in after the folder was listed is refused (never followed), and an overlay
over the cap is refused before it is canonicalised, each with a message naming the file."""

from __future__ import annotations

from pathlib import Path

from generator.freshness import StaleExplainer
from generator.model import Canonicalizer
from tests.freshness.test_explain import CURRENT, NAME, SIGNED

OTHER = "b200-gke-inference"
MIB = 1_048_576
"""The native provider's overlay cap: an overlay it read must be explainable, one byte more not."""
SECRET = b"componentRefs:\n    - name: outside-the-tree\n      version: v9.9.9\n"


def _overlays(tmp_path: Path) -> Path:
    overlays = tmp_path / "recipes" / "overlays"
    overlays.mkdir(parents=True)
    (overlays / f"{NAME}.yaml").write_bytes(CURRENT)
    (overlays / f"{OTHER}.yaml").write_bytes(CURRENT)
    return overlays


def _padded(size: int) -> bytes:
    """CURRENT with a trailing comment, exactly `size` bytes long."""
    head = CURRENT + b"# "
    return head + b"x" * (size - len(head) - 1) + b"\n"


def test_a_link_swapped_in_after_the_listing_is_refused_not_followed(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    outside = tmp_path / "outside.yaml"
    outside.write_bytes(SIGNED.replace(b"componentRefs:\n", SECRET, 1))
    explainer = StaleExplainer(overlays)
    first = explainer.explain(NAME, None, SIGNED, Canonicalizer.V3, None)  # lists the folder
    assert first.diff
    link = overlays / f"{OTHER}.yaml"
    link.unlink()
    link.symlink_to(outside)

    why = explainer.explain(OTHER, None, SIGNED, Canonicalizer.V3, None)

    assert not any("outside-the-tree" in line for line in why.diff)
    assert why.diff == () and not why.truncated
    assert why.refused is not None
    assert f"overlays/{OTHER}.yaml" in why.refused
    assert "symbolic link" in why.refused
    assert str(tmp_path) not in why.refused  # the tree's path, never the machine's


def test_an_overlay_over_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    (overlays / f"{OTHER}.yaml").write_bytes(_padded(MIB + 1))

    why = StaleExplainer(overlays).explain(OTHER, None, SIGNED, Canonicalizer.V3, None)

    assert why.diff == () and not why.truncated
    assert why.refused is not None
    assert f"overlays/{OTHER}.yaml" in why.refused
    assert f"at most {MIB} bytes" in why.refused
    assert f"{MIB + 1} bytes" in why.refused


def test_an_overlay_at_the_cap_is_still_explained(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    (overlays / f"{OTHER}.yaml").write_bytes(_padded(MIB))

    why = StaleExplainer(overlays).explain(OTHER, None, SIGNED, Canonicalizer.V3, None)

    assert any(line.startswith("+") and "v25.10.0" in line for line in why.diff)
    assert why.refused is None
