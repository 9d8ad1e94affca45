"""`recipe_digest_for_file`, which backs `evidence-dashboard recipe-digest`."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import CanonicalizationError, InputError
from generator.model import Canonicalizer, PredicateType
from generator.recipe import recipe_digest
from generator.recipefile import recipe_digest_for_file

_RESULT = b"kind: RecipeResult\nmetadata:\n  version: v0.9.0\ncriteria: {service: eks}\n"
_OVERLAY = b"kind: RecipeMetadata\nmetadata:\n  name: h100-eks\nspec:\n  base: eks\n"


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("predicate_type", "mode"),
    [
        (None, Canonicalizer.V3),
        (PredicateType.V3.value, Canonicalizer.V3),
        (PredicateType.V1.value, Canonicalizer.LEGACY),
        (PredicateType.V2.value, Canonicalizer.LEGACY),
        ("https://example.com/other", Canonicalizer.LEGACY),
    ],
)
def test_digest_per_predicate_type(
    tmp_path: Path, predicate_type: str | None, mode: Canonicalizer
) -> None:
    digest, warning = recipe_digest_for_file(_write(tmp_path, _RESULT), predicate_type)
    assert digest == recipe_digest(_RESULT, mode)
    assert warning is None


def test_overlay_gets_a_hydration_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, _OVERLAY)
    digest, warning = recipe_digest_for_file(path, None)
    assert digest == recipe_digest(_OVERLAY, Canonicalizer.V3)
    assert warning is not None
    assert "RecipeMetadata" in warning and f"aicr evidence digest -r {path}" in warning


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        recipe_digest_for_file(tmp_path / "absent.yaml", None)


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, b"a: " + b"x" * 64 + b"\n")
    with pytest.raises(InputError, match="too large"):
        recipe_digest_for_file(path, None, max_bytes=32)


def test_bad_yaml_is_a_canonicalization_error_naming_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, b"a: 1\na: 2\n")
    with pytest.raises(CanonicalizationError) as caught:
        recipe_digest_for_file(path, None)
    assert caught.value.location is not None and caught.value.location.file == str(path)


def test_a_symlinked_recipe_file_is_refused(tmp_path: Path) -> None:
    """The file is read through the tree's safe reader: a link is never followed, even to a
    good recipe, and the error names the file."""
    target = _write(tmp_path, _RESULT)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    with pytest.raises(InputError, match="cannot read") as caught:
        recipe_digest_for_file(link, None)
    assert caught.value.location is not None and caught.value.location.file == str(link)
    assert caught.value.found == "a symbolic link"
