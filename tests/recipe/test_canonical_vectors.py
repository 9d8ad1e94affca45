"""The canonical recipe digest against Go yaml.v3 ground truth and the spec's vectors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from generator.model import Canonicalizer, PredicateType
from generator.recipe.canonical import canonicalize, digest_for_predicate_type, recipe_digest

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"


def fixture_dir(name: str) -> Path:
    """A folder under the shared fixtures, or a clean skip when it is not on this machine."""
    path = FIXTURES / name
    if not path.is_dir():
        pytest.skip(f"shared fixture folder {name!r} is not available")
    return path


_EXPECTED = FIXTURES / "canonical-yaml" / "expected.jsonl"


def _vectors() -> list[Any]:
    if not _EXPECTED.is_file():
        return [pytest.param(None, id="canonical-yaml-missing")]
    rows = [
        json.loads(line)
        for line in _EXPECTED.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [pytest.param(row, id=Path(row["input"]).stem) for row in rows]


def _input(row: dict[str, Any] | None) -> bytes:
    base = fixture_dir("canonical-yaml")
    assert row is not None
    return (base / str(row["input"])).read_bytes()


@pytest.mark.fixtures
def test_ground_truth_holds_55_vectors() -> None:
    fixture_dir("canonical-yaml")
    assert len(_vectors()) == 55


@pytest.mark.fixtures
@pytest.mark.parametrize("row", _vectors())
@pytest.mark.parametrize(
    ("mode", "text_key", "digest_key"),
    [
        (Canonicalizer.LEGACY, "legacy", "legacyDigest"),
        (Canonicalizer.V3, "v3", "v3Digest"),
    ],
)
def test_matches_yaml_v3_byte_for_byte(
    row: dict[str, Any] | None, mode: Canonicalizer, text_key: str, digest_key: str
) -> None:
    data = _input(row)
    assert row is not None
    got = canonicalize(data, mode)
    assert got.decode("utf-8") == row[text_key]
    assert recipe_digest(data, mode) == row[digest_key]


@pytest.mark.fixtures
@pytest.mark.parametrize("row", _vectors())
@pytest.mark.parametrize("mode", list(Canonicalizer))
def test_idempotent_on_real_documents(row: dict[str, Any] | None, mode: Canonicalizer) -> None:
    once = canonicalize(_input(row), mode)
    assert canonicalize(once, mode) == once


@pytest.mark.fixtures
def test_summary_bundle_recipe_is_already_canonical() -> None:
    bundle = fixture_dir("aicr-tree") / "testdata" / "summary-bundle"
    data = (bundle / "recipe.yaml").read_bytes()
    statement = json.loads((bundle / "statement.intoto.json").read_text(encoding="utf-8"))
    signed = statement["predicate"]["recipe"]["digest"]
    assert canonicalize(data, Canonicalizer.LEGACY) == data
    assert recipe_digest(data, Canonicalizer.LEGACY) == hashlib.sha256(data).hexdigest() == signed
    assert digest_for_predicate_type(data, statement["predicateType"]) == signed


# The spec's own table (evidence-format 3.5), independent of the shared fixtures.
@pytest.mark.parametrize(
    ("text", "mode", "canonical", "digest"),
    [
        (
            "zoo: 1\napple: 2\n",
            Canonicalizer.LEGACY,
            "apple: 2\nzoo: 1\n",
            "8a7542418d447cec7effa1742625c3aab23b3b589a43554335f743f953ce405b",
        ),
        (
            "zoo: 1\napple: 2\n",
            Canonicalizer.V3,
            "apple: 2\nzoo: 1\n",
            "8a7542418d447cec7effa1742625c3aab23b3b589a43554335f743f953ce405b",
        ),
        (
            "metadata:\n  version: 1.0.0\nfoo: bar\n",
            Canonicalizer.LEGACY,
            "foo: bar\nmetadata:\n    version: 1.0.0\n",
            "6a9c508a0e38d8ddab27c1c6aac46834423194ce125291aa4f6fa170c317c2a9",
        ),
        (
            "metadata:\n  version: 1.0.0\nfoo: bar\n",
            Canonicalizer.V3,
            "foo: bar\n",
            "1dabc4e3cbbd6a0818bd460f3a6c9855bfe95d506c74726bc0f2edb0aecb1f4e",
        ),
        (
            "foo: bar\n",
            Canonicalizer.LEGACY,
            "foo: bar\n",
            "1dabc4e3cbbd6a0818bd460f3a6c9855bfe95d506c74726bc0f2edb0aecb1f4e",
        ),
    ],
)
def test_spec_vectors(text: str, mode: Canonicalizer, canonical: str, digest: str) -> None:
    assert canonicalize(text.encode(), mode).decode() == canonical
    assert recipe_digest(text.encode(), mode) == digest


_VERSIONED = b"metadata:\n  version: v1\nname: x\n"


@pytest.mark.parametrize(
    ("predicate_type", "keeps_version"),
    [
        (PredicateType.V1, True),
        (PredicateType.V2, True),
        (PredicateType.V3, False),
        ("https://aicr.run/recipe-evidence/v3", False),
        ("https://aicr.run/recipe-evidence/v2", True),
        ("https://aicr.nvidia.com/recipe-evidence/v3", True),
        ("https://aicr.run/recipe-evidence/v4", True),
        ("", True),
    ],
)
def test_digest_for_predicate_type_picks_canonicalizer(
    predicate_type: PredicateType | str, keeps_version: bool
) -> None:
    expected = Canonicalizer.LEGACY if keeps_version else Canonicalizer.V3
    assert digest_for_predicate_type(_VERSIONED, predicate_type) == recipe_digest(
        _VERSIONED, expected
    )
    assert recipe_digest(_VERSIONED, Canonicalizer.LEGACY) != recipe_digest(
        _VERSIONED, Canonicalizer.V3
    )
