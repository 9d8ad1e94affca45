"""What verification workers send back: equal verdicts, with their parsed strings shared."""

from __future__ import annotations

import pickle
from typing import Any

from generator.build import _interned, _shared_strings


def test_interning_keeps_every_value_and_type() -> None:
    value: Any = {"a": ["x" * 10, ("y", 1, 2.5, None, True)], "b": {"c": "z" * 200},
                  3: b"raw"}
    copy = pickle.loads(pickle.dumps(value))
    out = _interned(copy)
    assert out == value
    assert type(out["a"][1]) is tuple and type(out[3]) is bytes


def test_equal_strings_become_one_object() -> None:
    first = _interned(pickle.loads(pickle.dumps({"key": "value", "long": "v" * 100})))
    second = _interned(pickle.loads(pickle.dumps({"key": "value", "long": "v" * 100})))
    (k1,), (k2,) = [k for k in first if k == "key"], [k for k in second if k == "key"]
    assert k1 is k2 and first["key"] is second["key"]
    assert first["long"] == second["long"]  # long strings are left as they are


def test_a_verdict_without_evidence_is_returned_as_is() -> None:
    class NoEvidence:
        evidence = None

    verdict: Any = NoEvidence()
    assert _shared_strings(verdict) is verdict
