"""The emitter's shortcuts agree with yaml.v3's character-by-character rules they replace.

`_analyze` takes a substring shortcut for printable ASCII and a regex shortcut for plain-safe
text; `canonicalize` accepts an already parsed event stream. Each must give what the slow path
gives, for any input.
"""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.errors import EvidenceDashError
from generator.model import Canonicalizer
from generator.recipe import canonical
from generator.recipe.canonical import canonicalize
from generator.tree.yamlio import load_yaml_with_events
from tests.recipe.test_canonical_vectors import _EXPECTED, _input, _vectors

_ASCII = st.text(
    st.sampled_from([chr(c) for c in range(0x20, 0x7F)] + ["-", ":", "#", " ", ".", "?"]),
    min_size=1,
    max_size=14,
)


@settings(max_examples=2000, deadline=None)
@given(_ASCII)
def test_ascii_shortcut_equals_the_loop(value: str) -> None:
    assert canonical._analyze_ascii(value) == canonical._analyze_chars(value)


@pytest.mark.parametrize(
    "value",
    [
        "a",
        "-",
        "--",
        "---",
        "--- x",
        "...",
        "..x",
        "-x",
        "- x",
        "?",
        "?x",
        "? x",
        ":",
        ":x",
        ": x",
        "a:",
        "a:b",
        "a: b",
        "a #b",
        "a#b",
        "#a",
        " a",
        "a ",
        "a  b",
        "a,b",
        "[a",
        "a]",
        "{",
        "a{b",
        "'a",
        'a"b',
        "a'b",
        "%a",
        "@a",
        "`a",
        "!a",
        "&a",
        "*a",
        "|a",
        ">a",
        "a-",
        "https://example.com/x",
        "v1.2.3",
        "gpu-operator",
        "/abs/path",
        "_x",
        "a b",
        "x.",
    ],
)
def test_ascii_shortcut_on_indicator_edge_cases(value: str) -> None:
    assert canonical._analyze(value) == canonical._analyze_chars(value)
    if canonical._SAFE_PLAIN.fullmatch(value):
        assert canonical._analyze_chars(value) == canonical._ONE_LINE_PLAIN


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=10))
def test_analyze_equals_the_loop_for_any_text(value: str) -> None:
    assert canonical._analyze(value) == canonical._analyze_chars(value)


def _both(data: bytes, mode: Canonicalizer) -> tuple[object, object]:
    def run(events: list[yaml.Event] | None) -> object:
        try:
            return canonicalize(data, mode, events=events)
        except EvidenceDashError as exc:
            return ("error", exc.message)

    try:
        _, events = load_yaml_with_events(data, file="recipe.yaml")
    except EvidenceDashError:
        events = None
    return run(None), run(events)


@pytest.mark.fixtures
@pytest.mark.parametrize("row", _vectors())
def test_shared_events_give_the_same_bytes(row: dict[str, object] | None) -> None:
    if not _EXPECTED.is_file():
        pytest.skip("canonical-yaml vectors are not available")
    data = _input(row)  # type: ignore[arg-type]
    for mode in Canonicalizer:
        alone, shared = _both(data, mode)
        assert alone == shared


_DOC = st.recursive(
    st.text(st.sampled_from("ab :-#'\"\n\t{}[]&*!1.~é"), max_size=8),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text("abc", max_size=3), children, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_DOC, st.sampled_from(["block", "flow", "raw"]))
def test_shared_events_agree_on_random_documents(doc: object, style: str) -> None:
    if style == "raw":
        data = json.dumps(doc).replace(", ", ",\n ").encode()
    else:
        data = yaml.safe_dump(doc, default_flow_style=style == "flow", allow_unicode=True).encode()
    for mode in Canonicalizer:
        alone, shared = _both(data, mode)
        assert alone == shared
