"""Property tests: canonicalization is idempotent and keeps the document's data tree."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from generator.model import Canonicalizer
from generator.recipe.canonical import canonicalize

# Text that PyYAML and yaml.v3 both carry faithfully: printable characters, tabs, newlines,
# a few C0 controls and characters outside the BMP (escaped by yaml.v3).
_ALPHABET = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.sampled_from("\t\n\x07\x1b\xa0éß漢\U0001f600:#-?&*!|>'\"%@`,[]{}"),
    st.characters(min_codepoint=0xA1, max_codepoint=0x2000),
)
_TEXT = st.text(_ALPHABET, max_size=12)
_TREE = st.recursive(
    _TEXT,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(_TEXT, children, max_size=4),
    ),
    max_leaves=20,
)


def _data(node: yaml.Node) -> Any:
    """A node tree as plain data with scalars as text (no YAML 1.1 retyping)."""
    if isinstance(node, yaml.MappingNode):
        return {_data(key): _data(value) for key, value in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [_data(item) for item in node.value]
    return node.value


def _tree_of(text: bytes) -> Any:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    return None if node is None else _data(node)


def _scalars(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key, *_scalars(item)]]
    if isinstance(value, list):
        return [text for item in value for text in _scalars(item)]
    return [value]


@settings(max_examples=300, deadline=None)
@given(
    tree=_TREE,
    style=st.sampled_from([None, "'", '"', "|"]),
    flow=st.sampled_from([None, True, False]),
    width=st.sampled_from([20, 80, 10_000]),
    indent=st.sampled_from([2, 4]),
    unicode=st.booleans(),
    mode=st.sampled_from(list(Canonicalizer)),
)
def test_canonical_form_is_idempotent_and_keeps_the_data(
    tree: Any,
    style: str | None,
    flow: bool | None,
    width: int,
    indent: int,
    unicode: bool,
    mode: Canonicalizer,
) -> None:
    if style == "|":
        # yaml.v3 gives a leading-blank literal an indentation hint that is wrong inside
        # sequence items (a known yaml.v3 bug), so the property only holds without them.
        assume(not any(text[:1] in (" ", "\n") for text in _scalars(tree)))
    source = yaml.safe_dump(
        tree,
        default_style=style,
        default_flow_style=flow,
        width=width,
        indent=indent,
        allow_unicode=unicode,
        sort_keys=False,
    ).encode()
    canonical = canonicalize(source, mode)
    assert canonicalize(canonical, mode) == canonical
    expected = _tree_of(source)
    if mode is Canonicalizer.V3 and isinstance(expected, dict):
        metadata = expected.get("metadata")
        if isinstance(metadata, dict) and "version" in metadata:
            del metadata["version"]
            if not metadata:
                del expected["metadata"]
    assert _tree_of(canonical) == expected
    assert canonical.endswith(b"\n") and not canonical.startswith(b"---")


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(_TEXT, min_size=1, max_size=8, unique=True))
def test_mapping_keys_come_out_in_byte_order(keys: list[str]) -> None:
    source = yaml.safe_dump(dict.fromkeys(keys, "v"), sort_keys=False).encode()
    node = yaml.compose(canonicalize(source, Canonicalizer.LEGACY), Loader=yaml.SafeLoader)
    assert isinstance(node, yaml.MappingNode)
    got = [key.value for key, _ in node.value]
    assert got == sorted(keys, key=lambda key: key.encode("utf-8"))
