"""The one YAML reader (`load_yaml`) enforces the same published limits as the JSON reader, on
both event parsers: depth 64 (flow and block), entries per sequence/mapping, scalar length,
document size, and alias expansion (billion laughs). A refusal is a `YamlError` naming the
file and the limit, never a `RecursionError`."""

from __future__ import annotations

from typing import Any

import pytest

from generator.errors import YamlError
from generator.limits import PARSE_LIMITS
from generator.tree.yamlio import BACKENDS, load_yaml

DEPTH = 64


def refused(data: bytes, backend: str) -> YamlError:
    with pytest.raises(YamlError) as caught:
        load_yaml(data, file="evidence/x/y.yaml", backend=backend)
    assert caught.value.location is not None
    assert caught.value.location.file == "evidence/x/y.yaml"
    return caught.value


def flow(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth + b"\n"


def flow_maps(depth: int) -> bytes:
    return b"{a: " * depth + b"1" + b"}" * depth + b"\n"


def block(depth: int) -> bytes:
    lines = [" " * (2 * i) + "a:" for i in range(depth - 1)]
    lines.append(" " * (2 * (depth - 1)) + "a: 1")
    return ("\n".join(lines) + "\n").encode()


def block_seq(depth: int) -> bytes:
    return (" ".join(["-"] * depth) + " x\n").encode()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "make",
    [flow, flow_maps, block, block_seq],
    ids=["flow-seq", "flow-map", "block-map", "block-seq"],
)
def test_exactly_64_deep_is_accepted_65_is_refused(backend: str, make: Any) -> None:
    assert load_yaml(make(DEPTH), file="x.yaml", backend=backend) is not None
    error = refused(make(DEPTH + 1), backend)
    assert error.message == "nesting too deep"
    assert "64" in str(error.expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("depth", [1_000, 1_001, 10_000])
def test_very_deep_yaml_is_refused_as_nesting(backend: str, depth: int) -> None:
    for data in (flow(depth), flow_maps(depth), block_seq(depth)):
        assert refused(data, backend).message == "nesting too deep"


def _bomb(width: int = 9, levels: int = 9) -> bytes:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_alias_bomb_is_refused(backend: str) -> None:
    error = refused(_bomb(), backend)
    assert "too many" in error.message or "nodes" in error.message


@pytest.mark.parametrize("backend", BACKENDS)
def test_entries_per_container_at_the_limit_are_accepted_one_more_is_refused(backend: str) -> None:
    items = PARSE_LIMITS.container_items
    ok = b"[" + b",".join([b"0"] * items) + b"]\n"
    assert len(load_yaml(ok, file="x.yaml", backend=backend)) == items
    over = b"[" + b",".join([b"0"] * (items + 1)) + b"]\n"
    error = refused(over, backend)
    assert error.message == "too many entries"
    assert "container_items" in str(error.expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_length_at_the_limit_is_accepted_one_more_is_refused(backend: str) -> None:
    chars = PARSE_LIMITS.string_chars
    assert load_yaml(b"k: " + b"x" * chars + b"\n", file="x.yaml", backend=backend) == {
        "k": "x" * chars
    }
    for data in (
        b"k: " + b"x" * (chars + 1) + b"\n",
        b"- '" + b"x" * (chars + 1) + b"'\n",
        b"x" * (chars + 1) + b": 1\n",
    ):
        error = refused(data, backend)
        assert error.message == "scalar too long"


def test_document_size_at_the_limit_is_accepted_one_more_is_refused() -> None:
    size = PARSE_LIMITS.document_bytes
    assert load_yaml(b"# " + b" " * (size - 4) + b"\n1", file="x.yaml") == 1
    error = refused(b"# " + b" " * (size - 3) + b"\n1", BACKENDS[0])
    assert error.message == "YAML document too large"


@pytest.mark.parametrize("backend", BACKENDS)
def test_anchors_and_aliases_within_the_limits_still_read(backend: str) -> None:
    data = b"base: &b {x: 1}\nfirst: *b\nsecond: *b\n"
    assert load_yaml(data, file="x.yaml", backend=backend) == {
        "base": {"x": 1},
        "first": {"x": 1},
        "second": {"x": 1},
    }
