"""The safe YAML loader: YAML 1.2 core semantics, plain data only, bounded against bombs."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.errors import YamlError
from generator.tree import _yaml_builder, _yaml_scalars, yamlio
from generator.tree.yamlio import BACKENDS, load_yaml


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Every test that takes this runs once per available event parser."""
    value: str = request.param
    return value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("1:20", "1:20"),
        ("2026-09-09T13:31:02Z", "2026-09-09T13:31:02Z"),
        ("2026-09-09", "2026-09-09"),
        ("true", True),
        ("False", False),
        ("TRUE", True),
        ("tRue", "tRue"),
        ("null", None),
        ("~", None),
        ("", None),
        ("NULL", None),
        ("12", 12),
        ("-3", -3),
        ("0o17", 15),
        ("0x1F", 31),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        (".inf", math.inf),
        ("-.inf", -math.inf),
        ("1_000", "1_000"),
        ("0b101", "0b101"),
        ("'12'", "12"),
        ('"true"', "true"),
        ("!!str 12", "12"),
        ("!!int 12", 12),
        ("!!float 2", 2.0),
        ("! 12", "12"),
        ("1.0", 1.0),
        ("1.0.0", "1.0.0"),
    ],
)
def test_scalar_resolution_is_yaml_1_2_core(text: str, expected: Any, backend: str) -> None:
    value = load_yaml(f"k: {text}\n".encode(), file="f.yaml", backend=backend)["k"]
    assert value == expected
    assert type(value) is type(expected)


def test_nan_is_a_float(backend: str) -> None:
    assert math.isnan(load_yaml(b"k: .nan", file="f.yaml", backend=backend)["k"])


def test_plain_data_structure(backend: str) -> None:
    doc = load_yaml(b"a:\n  - 1\n  - {b: c}\n'<<': x\n", file="f.yaml", backend=backend)
    assert doc == {"a": [1, {"b": "c"}], "<<": "x"}


def test_empty_stream_is_none_and_comment_only_too(backend: str) -> None:
    assert load_yaml(b"", file="f.yaml", backend=backend) is None
    assert load_yaml(b"# only a comment\n", file="f.yaml", backend=backend) is None


def test_utf8_bom_is_tolerated(backend: str) -> None:
    assert load_yaml("\ufeffa: é".encode(), file="f.yaml", backend=backend) == {"a": "é"}


def test_aliases_resolve_to_the_anchored_value(backend: str) -> None:
    doc = load_yaml(b"a: &x {k: [1, 2]}\nb: *x\n", file="f.yaml", backend=backend)
    assert doc["a"] == doc["b"] == {"k": [1, 2]}


def _err(data: bytes, backend: str) -> YamlError:
    with pytest.raises(YamlError) as info:
        load_yaml(data, file="dir/f.yaml", backend=backend)
    assert info.value.location is not None and info.value.location.file == "dir/f.yaml"
    return info.value


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"a: 1\na: 2\n", "duplicate mapping key"),
        (b"a: {x: 1, x: 1}\n", "duplicate mapping key"),
        (b"1: a\n1: b\n", "duplicate mapping key"),
        (b"\xff\xfe", "invalid UTF-8"),
        (b"a: \xc3\x28", "invalid UTF-8"),
        (b"a: b\x00c", "NUL byte"),
        (b"---\na: 1\n---\nb: 2\n", "more than one YAML document"),
        (b"a: !custom x", "unsupported YAML tag"),
        (b"a: !!binary aGk=", "unsupported YAML tag"),
        (b"a: !!timestamp 2026-01-01", "unsupported YAML tag"),
        (b"a: !!python/object:os.system x", "unsupported YAML tag"),
        (b"a: !!set {x}", "unsupported YAML tag"),
        (b"a: !!int twelve", "does not match its tag"),
        (b"? [a]\n: b\n", "mapping key is not a scalar"),
        (b"a: &x [*x]", "recursive alias"),
        (b"a: *nope", "unknown alias"),
        (b"a: [unclosed", "not valid YAML"),
        (b"a:\tb: c", "not valid YAML"),
    ],
)
def test_rejections_name_the_file(data: bytes, fragment: str, backend: str) -> None:
    assert fragment in _err(data, backend).message


def test_nesting_limit(backend: str) -> None:
    ok = b"[" * yamlio.MAX_DEPTH + b"]" * yamlio.MAX_DEPTH
    assert load_yaml(ok, file="f.yaml", backend=backend) is not None
    deep = b"[" * (yamlio.MAX_DEPTH + 1) + b"]" * (yamlio.MAX_DEPTH + 1)
    assert "nesting too deep" in _err(deep, backend).message


def test_very_deep_nesting_fails_without_recursion_error(backend: str) -> None:
    deep = b"[" * 50_000 + b"]" * 50_000
    assert _err(deep, backend).message in ("nesting too deep", "not valid YAML")


def _billion_laughs(levels: int = 9, width: int = 9) -> bytes:
    lines = [b'l0: &l0 "lol"']
    for i in range(1, levels + 1):
        refs = b", ".join([f"*l{i - 1}".encode()] * width)
        lines.append(f"l{i}: &l{i} [".encode() + refs + b"]")
    return b"\n".join(lines) + b"\n"


def test_billion_laughs_fails_fast(backend: str) -> None:
    # CPU time of this process, not wall-clock time: a loaded machine does not change it much
    start = time.process_time()
    error = _err(_billion_laughs(), backend)
    cpu = time.process_time() - start
    assert "too many nodes" in error.message
    assert cpu < 1.0, f"bomb took {cpu:.2f}s of CPU"


def test_alias_count_is_bounded(monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    monkeypatch.setattr(_yaml_builder, "MAX_ALIASES", 5)
    doc = b"a: &a 1\nb: [" + b", ".join([b"*a"] * 6) + b"]\n"
    assert "too many aliases" in _err(doc, backend).message
    assert (
        load_yaml(b"a: &a 1\nb: [" + b", ".join([b"*a"] * 5) + b"]\n", file="f", backend=backend)[
            "b"
        ]
        == [1] * 5
    )


def test_small_alias_use_is_fine(backend: str) -> None:
    assert (
        load_yaml(_billion_laughs(levels=2, width=3), file="f.yaml", backend=backend)["l2"][0]
        == ["lol"] * 3
    )


def test_error_carries_position(backend: str) -> None:
    error = _err(b"a: 1\nb: 2\na: 3\n", backend)
    assert error.location is not None and error.location.key == "line 3, column 1"


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError):
        load_yaml(b"a: 1", file="f.yaml", backend="nope")


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=200)
    | st.text(alphabet="ab:-[]{}&*!'\"#\n ,?|>~01.", max_size=80).map(lambda t: t.encode())
)
def test_arbitrary_input_only_ever_raises_yaml_error(data: bytes) -> None:
    for name in BACKENDS:
        try:
            load_yaml(data, file="f.yaml", backend=name)
        except YamlError:
            pass


def _resolve_in_order(text: str) -> Any:
    """The core-schema rules one pattern at a time, the way the module states them."""
    rules = [
        (_yaml_scalars._NULL, lambda t: None),
        (_yaml_scalars._TRUE, lambda t: True),
        (_yaml_scalars._FALSE, lambda t: False),
        (_yaml_scalars._INT10, lambda t: int(t, 10)),
        (_yaml_scalars._INT8, lambda t: int(t[2:], 8)),
        (_yaml_scalars._INT16, lambda t: int(t[2:], 16)),
        (_yaml_scalars._FLOAT, float),
        (_yaml_scalars._INF, lambda t: -math.inf if t.startswith("-") else math.inf),
        (_yaml_scalars._NAN, lambda t: math.nan),
    ]
    for pattern, value in rules:
        if pattern.fullmatch(text):
            return value(text)
    return text


@settings(max_examples=3000, deadline=None)
@given(
    st.text(alphabet="0123456789+-.eExXoOabcfFnNtTlLrRuUsSiIaA~_ :", max_size=8)
    | st.text(max_size=6)
)
def test_resolve_plain_equals_the_rules_in_order(text: str) -> None:
    got, want = yamlio.resolve_plain(text), _resolve_in_order(text)
    if isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert type(got) is type(want) and got == want


def test_events_are_recorded_as_pyyaml_yields_them() -> None:
    import yaml

    data = b"b: [1, &x {c: d}]\na: *x\n'q': \"r\"\n"
    value, events = yamlio.load_yaml_with_events(data, file="f.yaml")
    assert value == load_yaml(data, file="f.yaml")
    if "libyaml" not in BACKENDS:
        assert events is None
        return
    assert events is not None
    expected = list(yaml.parse(data, Loader=yaml.CSafeLoader))
    assert [repr(e) for e in events] == [repr(e) for e in expected]


def test_no_events_are_shared_for_a_bom() -> None:
    value, events = yamlio.load_yaml_with_events("\ufeffa: 1".encode(), file="f.yaml")
    assert value == {"a": 1} and events is None


def test_duplicate_keys_across_types_are_refused(backend: str) -> None:
    for doc in (b"1: a\n1.0: b\n", b"1: a\ntrue: b\n", b"a: 1\n'a': 2\n", b".nan: 1\n.nan: 2\n"):
        assert "duplicate mapping key" in _err(doc, backend).message
    assert load_yaml(b"1: a\n'1': b\n", file="f", backend=backend) == {1: "a", "1": "b"}
