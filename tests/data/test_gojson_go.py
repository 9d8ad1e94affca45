"""`go_json` writes the bytes Go's `encoding/json` `MarshalIndent` writes, checked against Go.

Go itself is the ground truth (`tests/data/gotruth.py`, `tests/data/gojson/main.go`): a
Hypothesis property test, fixed cases and the demo site's real data files. Without `go` on
PATH, the fixed cases are still compared with the golden bytes Go wrote for them
(`tests/data/gojson/golden/`, regenerated with `UPDATE_GOLDEN=1` where Go is installed).

Go 1.22 changed one thing that matters here: it writes U+0008 and U+000C as `\\b` and `\\f`
(as Python and aicr's toolchain do) where older Go wrote `\\u0008` and `\\u000c`; an older Go
is therefore not asked about those two characters.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.data.gojson import go_json_bytes
from generator.data.gonumbers import go_float
from tests.data.gotruth import GoMarshal

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "gojson" / "golden"
REPO = HERE.parents[1]
RECIPES = REPO / "recipes"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

#: Each fixed case's name (its golden file) and document.
CASES: dict[str, Any] = {
    "issue-numbers": {
        "integralFloat": 300.0,
        "int": 300,
        "small": 0.00001,
        "tiny": 1e-7,
        "huge": 1e20,
        "list": [300.0, 0.00001, 1e-7, 1e20],
    },
    "float-forms": [
        0.0,
        -0.0,
        0.1,
        0.3,
        1 / 3,
        -2.5,
        270.0,
        376.4,
        123456789.125,
        0.0001,
        0.000123,
        1e-5,
        1.5e-6,
        1e-6,
        9.999999999999997e-7,
        1e-7,
        1.5e-7,
        -1e-7,
        1e-10,
        1.5e-10,
        1e-100,
        5e-324,
        2.2250738585072014e-308,
        1e15,
        1e16,
        1.5e16,
        2.0**53,
        2.0**63,
        1e20,
        9.999999999999999e20,
        1e21,
        -1e21,
        1.5e21,
        1e100,
        1.7976931348623157e308,
    ],
    "integers": [0, -1, 7, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1, 2**70, -(2**70)],
    "html-and-unicode": {
        "<script>": "</script> & <b>",
        "amp&": "a && b > c < d",
        "line": "\u2028|\u2029",
        "é": "raw é, ü, 中文, 🙂",
        "z": '\x00\x01\x1f\x7f\t\n\r"\\/',
        "Z": "",
        "a": "plain",
        "\u2028key": ["<", ">", "&", "\u2029"],
    },
    "nesting": {
        "empty": {},
        "none": [],
        "flags": [True, False, None],
        "table": [{"b": 2.0, "a": "x"}, {"b": 2.5, "a": "y"}],
        "deep": {"d": {"c": {"b": {"a": [[[-0.0]], [{}], []]}}}},
    },
    "bandwidth": {
        "check": "nccl-all-reduce-bw-net",
        "measured": 376.4,
        "floor": 300.0,
        "passLine": 270.0,
        "disagrees": False,
        "note": None,
    },
    "top-integral-float": 300.0,
    "top-tiny-float": 1e-7,
    "top-string": '<a href="x">&</a>',
    "top-empty-list": [],
    "top-empty-object": {},
}


def _line(doc: Any) -> bytes:
    """A document as one line of input for the Go program (every int and float as Python
    writes it, so Go sees which is which)."""
    return json.dumps(doc, ensure_ascii=True, allow_nan=False).encode("ascii")


# --------------------------------------------------------------------------- without Go


def test_the_issue_numbers_are_written_as_go_writes_them() -> None:
    assert go_json_bytes([300.0, 0.00001, 1e-7, 1e20, 300, -0.0, 1e21, 1e-07]) == (
        b"[\n  300,\n  0.00001,\n  1e-7,\n  100000000000000000000,\n  300,\n  -0,\n"
        b"  1e+21,\n  1e-7\n]\n"
    )
    assert go_json_bytes({"floor": 300.0, "x": 1.5e-10}) == (
        b'{\n  "floor": 300,\n  "x": 1.5e-10\n}\n'
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (300.0, "300"),
        (0.00001, "0.00001"),
        (1e-7, "1e-7"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1e-6, "0.000001"),
        (9.999999999999997e-7, "9.999999999999997e-7"),
        (1.5e-10, "1.5e-10"),
        (-0.0, "-0"),
        (0.0, "0"),
        (5e-324, "5e-324"),
        (0.1, "0.1"),
        (1e16, "10000000000000000"),
        (1.5e300, "1.5e+300"),
        (-2.5e-8, "-2.5e-8"),
        (123.456, "123.456"),
        (0.000123, "0.000123"),
    ],
)
def test_go_float(value: float, text: str) -> None:
    assert go_float(value) == text


def test_b_and_f_are_written_as_go_1_22_writes_them() -> None:
    """Go 1.22 on writes `\\b` and `\\f` (aicr builds with a newer Go), older Go `\\u0008`."""
    assert go_json_bytes("\b\f\x01") == b'"\\b\\f\\u0001"\n'


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_cases_match_the_bytes_go_wrote(name: str) -> None:
    path = GOLDEN / f"{name}.json"
    assert path.is_file(), f"missing golden {path.name}; run with UPDATE_GOLDEN=1 where Go is"
    assert go_json_bytes(CASES[name]) == path.read_bytes()


# --------------------------------------------------------------------------- against Go


@pytest.mark.go
def test_the_golden_files_are_what_go_writes(go: GoMarshal) -> None:
    names = sorted(CASES)
    answers = go.batch(_line(CASES[n]) for n in names)
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, answer in zip(names, answers, strict=True):
            (GOLDEN / f"{name}.json").write_bytes(answer)
    written = {p.stem for p in GOLDEN.glob("*.json")}
    assert written == set(names), "golden files without a case (or the reverse)"
    for name, answer in zip(names, answers, strict=True):
        assert (GOLDEN / f"{name}.json").read_bytes() == answer, name


def _strings(doc: Any) -> Iterator[str]:
    """Every key and string of `doc`."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for key, value in doc.items():
            yield key
            yield from _strings(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from _strings(item)


FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),  # subnormals, -0.0, huge, tiny
    st.integers(-(2**60), 2**60).map(float),  # integral floats
    st.sampled_from(
        [
            1e-6,
            9.999999999999997e-7,
            1e-7,
            1e-5,
            1e-4,
            1e15,
            1e16,
            1e20,
            9.999999999999999e20,
            1e21,
            5e-324,
            -0.0,
            300.0,
        ]
    ),
    st.integers(-324, 308).map(lambda e: float(f"1e{e}")),  # every power of ten
    st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10, allow_nan=False), st.integers(-30, 30)),
)
TEXT = st.one_of(
    st.text(),
    st.sampled_from(
        [
            "<",
            ">",
            "&",
            "\u2028",
            "\u2029",
            "\x7f",
            "\x00",
            "\x1f",
            '"',
            "\\",
            "</script>",
            "a&b",
            "é",
            "🙂",
            "1e-07",
            "300.0",
            "\u00e9\u0301",
        ]
    ),
    st.lists(st.sampled_from(["<", "&", "\u2028", "é", "x", "\t", "300.0", "\n"]), max_size=6).map(
        "".join
    ),
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70), FLOATS, TEXT
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(TEXT, inner, max_size=6)),
    max_leaves=30,
)


@pytest.mark.go
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_every_document_is_written_as_go_writes_it(go: GoMarshal, doc: Any) -> None:
    if not go.short_b_f_escapes and any("\b" in s or "\f" in s for s in _strings(doc)):
        return  # an older Go writes these two characters another way (see the docstring)
    assert go_json_bytes(doc) == go.one(_line(doc))


@pytest.mark.go
@pytest.mark.skipif(not (RECIPES / "bundles").is_dir(), reason="the demo tree is not present")
def test_the_demo_sites_data_files_are_what_go_writes(
    go: GoMarshal, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from generator.build import BuildOptions, run_build

    tmp = tmp_path_factory.mktemp("demo")
    run_build(
        BuildOptions.flat(
            recipes=RECIPES,
            out=tmp / "site",
            oci_layouts=(RECIPES / "bundles",),
            trust_root=RECIPES / "trust" / "trusted_root.json",
            offline=True,
            cache=tmp / "cache",
            data_only=True,
            quiet=True,
            jobs=1,
        )
    )
    data = tmp / "site" / "data"
    files = sorted([*data.glob("*.json"), *(data / "series").glob("*.json")])
    assert len(files) > 10 and (data / "index.json") in files
    ours = [f.read_bytes() for f in files]
    assert b'"floor": 300,' in (data / "pointers.json").read_bytes()  # once Python's 300.0
    answers = go.batch(ours)
    for path, text, answer in zip(files, ours, answers, strict=True):
        assert text == answer, path.relative_to(data).as_posix()
