"""yaml.v3 emitter rules, V3 stripping and input guards of the canonical recipe emitter."""

from __future__ import annotations

import pytest

from generator.errors import CanonicalizationError
from generator.model import Canonicalizer
from generator.recipe.canonical import canonicalize, document_kind

LEGACY = Canonicalizer.LEGACY
V3 = Canonicalizer.V3


@pytest.mark.parametrize(
    ("source", "canonical"),
    [
        # An empty literal cannot be a block scalar: yaml.v3 falls back to double quotes.
        ("a: |\n\nb: 1\n", 'a: ""\nb: 1\n'),
        # A plain scalar whose value holds a newline becomes a literal block.
        ("a: x\n\n  y\n", "a: |-\n    x\n    y\n"),
        # Tabs are escaped; single quotes cannot hold them.
        ('a: "x\\ty"\n', 'a: "x\\ty"\n'),
        ("a: 'x\ty'\n", 'a: "x\\ty"\n'),
        # Outside the BMP and C0 controls are escaped; printable non-ASCII stays raw.
        ('a: "\\U0001F600 \\x07 \\u00e9"\n', 'a: "\\U0001F600 \\a é"\n'),
        ("a: é\n", "a: é\n"),
        # Only the first document counts (yaml.v3 Unmarshal).
        ("a: 1\n---\nb: 2\n", "a: 1\n"),
        # Comments of every kind are dropped.
        ("# head\na: 1 # line\n# foot\n", "a: 1\n"),
        # Sequence items: nested mappings 2 past the dash, nested sequences on the dash line.
        (
            "- a\n- b: 1\n  c: [x, {y: z}]\n- - 1\n  - 2\n",
            "- a\n- b: 1\n  c: [x, {y: z}]\n- - 1\n  - 2\n",
        ),
        ("a:\n  - b:\n      c: d\n", "a:\n    - b:\n        c: d\n"),
        # Complex keys and explicit tags survive.
        ("? [a, b]\n: c\n", "? [a, b]\n: c\n"),
        (
            "a: !!str 10\nb: !custom x\nc: !!map {z: 1}\n",
            "a: !!str 10\nb: !custom x\nc: !!map {z: 1}\n",
        ),
        # Quoting kept from the source; empty keys sort first.
        ("a: 'it''s'\nb: ''\n'': x\n", "'': x\na: 'it''s'\nb: ''\n"),
        # Folded scalars are re-folded; yaml.v3 adds a blank line after a clipped one.
        ("a: >-\n  folded\n  text\n", "a: >-\n    folded text\n"),
        (
            "a:\n  - |\n    lit\n  - >\n    fold\n",
            "a:\n    - |\n      lit\n    - >\n      fold\n\n",
        ),
        # Anchors and aliases, on keys and flow collections.
        ("&anc a: *anc\n", "&anc a: *anc\n"),
        ("x: &a [1]\ny: *a\n", "x: &a [1]\ny: *a\n"),
        # Leading/trailing spaces keep their quotes; a leading-space literal gets an indent hint.
        ("a: '  lead'\nb: 'trail  '\n", "a: '  lead'\nb: 'trail  '\n"),
        ("- |2\n   indented\n", "- |4\n   indented\n"),
        ("a: 'multi\n\n  line'\n", "a: 'multi\n\n    line'\n"),
        # Root scalars and empty collections.
        ("hello\n", "hello\n"),
        ("'quoted root'\n", "'quoted root'\n"),
        ("[]\n", "[]\n"),
        ("a: {}\nb: []\n", "a: {}\nb: []\n"),
        # YAML 1.1 look-alikes are text and stay as written.
        ("on: yes\noff: no\nt: 1:20\n", "off: no\non: yes\nt: 1:20\n"),
        # Byte order: upper case before lower case, digits before letters.
        ("b: 1\nB: 2\n1: 3\n", "1: 3\nB: 2\nb: 1\n"),
    ],
)
def test_emitter_rules(source: str, canonical: str) -> None:
    assert canonicalize(source.encode(), LEGACY).decode() == canonical


def test_long_keys_become_complex_keys() -> None:
    fits, too_long = "k" * 128, "k" * 129
    assert canonicalize(f"{fits}: v\n".encode(), LEGACY) == f"{fits}: v\n".encode()
    assert canonicalize(f"{too_long}: v\n".encode(), LEGACY) == f"? {too_long}\n: v\n".encode()


@pytest.mark.parametrize(
    ("source", "legacy", "v3"),
    [
        ("metadata:\n  version: 1\nz: 1\n", "metadata:\n    version: 1\nz: 1\n", "z: 1\n"),
        ("metadata: {version: 1}\nz: 1\n", "metadata: {version: 1}\nz: 1\n", "z: 1\n"),
        (
            "metadata:\n  name: n\n  version: 1\n",
            "metadata:\n    name: n\n    version: 1\n",
            "metadata:\n    name: n\n",
        ),
        # An already-empty metadata is kept; so is one without a version.
        ("metadata: {}\n", "metadata: {}\n", "metadata: {}\n"),
        ("metadata:\n  name: n\n", "metadata:\n    name: n\n", "metadata:\n    name: n\n"),
        # Only the top-level mapping value counts.
        ("metadata: v1\n", "metadata: v1\n", "metadata: v1\n"),
        (
            "spec:\n  metadata:\n    version: 1\n",
            "spec:\n    metadata:\n        version: 1\n",
            "spec:\n    metadata:\n        version: 1\n",
        ),
        (
            "- metadata:\n    version: 1\n",
            "- metadata:\n    version: 1\n",
            "- metadata:\n    version: 1\n",
        ),
        ("version: 1\n", "version: 1\n", "version: 1\n"),
    ],
)
def test_v3_strips_only_top_level_metadata_version(source: str, legacy: str, v3: str) -> None:
    assert canonicalize(source.encode(), LEGACY).decode() == legacy
    assert canonicalize(source.encode(), V3).decode() == v3


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty"),
        (b"# only a comment\n", "no YAML document"),
        (b"   \n\n", "no YAML document"),
        (b"a: 1\na: 2\n", "duplicate mapping key 'a'"),
        (b"a: 1\n'a': 2\n", "duplicate mapping key 'a'"),
        (b"x:\n  - {k: 1, k: 2}\n", "duplicate mapping key 'k'"),
        (b"a: *nowhere\n", "unknown anchor"),
        (b"a: [1, 2\n", "not valid YAML"),
        (b"a: b: c\n", "not valid YAML"),
        (b"\xff\xfe\xfa", "not valid YAML"),
    ],
)
def test_bad_input_raises_canonicalization_error(data: bytes, fragment: str) -> None:
    with pytest.raises(CanonicalizationError) as caught:
        canonicalize(data, LEGACY, source="recipes/x.yaml")
    assert fragment in caught.value.message
    assert caught.value.location is not None and caught.value.location.file == "recipes/x.yaml"


def test_duplicate_key_error_names_the_key_path() -> None:
    with pytest.raises(CanonicalizationError) as caught:
        canonicalize(b"spec:\n  refs:\n    - name: a\n      name: b\n", LEGACY)
    assert caught.value.location is not None
    assert caught.value.location.key == "spec.refs[0].name"


def test_size_limit() -> None:
    data = b"a: " + b"x" * 100 + b"\n"
    assert canonicalize(data, LEGACY, max_bytes=len(data)) == data
    with pytest.raises(CanonicalizationError, match="too large"):
        canonicalize(data, LEGACY, max_bytes=len(data) - 1)


def test_default_size_limit_is_one_mebibyte() -> None:
    line = b"k: " + b"v" * 1000 + b"\n"
    with pytest.raises(CanonicalizationError, match="too large"):
        canonicalize(b"- " + line * 1100, LEGACY)


@pytest.mark.parametrize("depth", [1, 10, 50])
def test_depth_limit(depth: int) -> None:
    nested = b"[" * depth + b"]" * depth
    assert canonicalize(nested, LEGACY, max_depth=depth) == nested + b"\n"
    with pytest.raises(CanonicalizationError, match="too deeply"):
        canonicalize(nested, LEGACY, max_depth=depth - 1 if depth > 1 else 0)


def test_pathological_nesting_fails_cleanly() -> None:
    with pytest.raises(CanonicalizationError):
        canonicalize(b"[" * 100_000 + b"]" * 100_000, LEGACY)


def test_aliases_are_not_expanded() -> None:
    bomb = b"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nd: [*c, *c, *c]\n"
    assert canonicalize(bomb, LEGACY) == bomb


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"kind: RecipeMetadata\nspec: {}\n", "RecipeMetadata"),
        (b"apiVersion: v1\nkind: 'RecipeResult'\n", "RecipeResult"),
        (b"spec:\n  kind: Inner\n", None),
        (b"- kind: Item\n", None),
        (b"kind: [a]\n", None),
    ],
)
def test_document_kind(data: bytes, kind: str | None) -> None:
    assert document_kind(data) == kind
