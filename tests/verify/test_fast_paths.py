"""The cheap paths of verdict serialization and the cache: same bytes as the plain way."""

from __future__ import annotations

import base64
import json
import math
import os
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from generator.model import FailureCause, FailureClass, NoVerdict, Verified
from generator.verify import cache as cache_module
from generator.verify.cache import VerdictCache
from generator.verify.pipeline import verify_pointer
from generator.verify.serialize import decode_data, encode_data, verdict_to_json
from tests.verify.conftest import SIGNED_AT, SIGNER, EvidenceCase, FakeSource


def reference_encode(value: Any) -> Any:
    """`encode_data` as it was before the fast path: every node rebuilt."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        return value
    if isinstance(value, list | tuple):
        return [reference_encode(v) for v in value]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value) and not any(k.startswith("$") for k in value):
            return {k: reference_encode(v) for k, v in value.items()}
        return {"$map": [[reference_encode(k), reference_encode(v)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"cannot serialize {type(value).__name__} in a verdict")


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Text(str):
    """A str subclass (not taken as is by the fast check, encoded the same)."""


def deep(levels: int, leaf: Any) -> Any:
    value = leaf
    for n in range(levels):
        value = {"k": [value, n]}
    return value


ODD_VALUES = [
    {"a": [1, 2.5, None, True, "x"], "b": {"c": "d"}},
    {"$schema": "http://x", "components": [{"name": "a", "n": 1}]},
    {"top": {"$ref": "#/x"}, "other": [1, 2]},
    {1: "int key", 2.5: "float key", None: "null key", False: "bool key"},
    {"nan": math.nan, "inf": [math.inf, -math.inf], "ok": 1.5, "neg0": -0.0},
    {"raw": b"\x00\xffraw", "list": [b"x"]},
    {"tuple": (1, "two", (3,))},
    {(1, 2): "tuple key"},
    OrderedDict([("z", 1), ("a", {"$x": 2})]),
    {"sub": Text("a str subclass"), Text("k"): 1},
    deep(40, math.nan),
    deep(40, {"$deep": b"x"}),
    deep(3, [math.inf, {"$k": {1: 2}}]),
    {"shared": (shared := {"s": [1, 2]}), "again": shared},
    [],
    {},
    "plain",
    7,
    math.nan,
    None,
]


@pytest.mark.parametrize("value", ODD_VALUES, ids=[str(n) for n in range(len(ODD_VALUES))])
def test_encode_equals_the_node_by_node_encoding(value: Any) -> None:
    fast, slow = encode_data(value), reference_encode(value)
    assert dumps(fast) == dumps(slow)
    assert json.dumps(fast) == json.dumps(slow)  # key order kept as well
    again = decode_data(json.loads(dumps(fast)))
    expected = decode_data(json.loads(dumps(slow)))
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(again)
    else:
        assert repr(again) == repr(expected)


def test_untouched_subtrees_are_not_copied() -> None:
    components = [{"name": "a"}, {"name": "b"}]
    bom = {"$schema": "cdx", "components": components}
    encoded = encode_data(bom)
    assert encoded["$map"][1][1] is components
    plain = {"a": [1, {"b": 2}]}
    assert encode_data(plain) is plain


def test_a_tagged_value_below_a_plain_looking_top_is_still_tagged() -> None:
    value = {"a": {"b": {"c": {"d": [1, math.inf]}}}}
    encoded = encode_data(value)
    assert encoded["a"]["b"]["c"]["d"][1] == {"$float": "inf"}
    assert decode_data(json.loads(dumps(encoded))) == value


def test_unknown_types_are_refused_at_any_depth() -> None:
    for value in ({"x": object()}, deep(10, object()), [{"$k": {"v": {1, 2}}}]):
        with pytest.raises(TypeError):
            encode_data(value)


def test_a_cyclic_value_is_not_taken_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.verify import _tagged

    monkeypatch.setattr(_tagged, "_MAX_PROBE_NODES", 1000)
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    assert not _tagged._untagged(cyclic)
    big = list(range(2000))
    assert encode_data(big) == big  # over the budget: encoded node by node, same result


def test_verdict_json_of_real_verdicts_is_unchanged(
    case: EvidenceCase, authority_trust: Any
) -> None:
    authority, trust = authority_trust
    bundle = authority.sign_dsse(case.statement_bytes(), signer=SIGNER, signed_at=SIGNED_AT)
    pointer, location = case.pointer(signer=SIGNER)
    verdict = verify_pointer(pointer, location, FakeSource(case.materialized(bundle)), trust)
    assert isinstance(verdict, Verified)
    doc = verdict_to_json(verdict)
    evidence = doc["evidence"]
    for field in ("predicate", "recipe", "snapshot", "bom"):
        value = getattr(verdict.evidence, field)
        assert dumps(evidence[field]) == dumps(reference_encode(value)), field


def test_packs_are_private_and_leave_no_temporary_files(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c")
    verdict = NoVerdict(steps=(), cause=FailureCause(FailureClass.TRANSIENT, "d", "h"))
    cache.put("a" * 64, verdict, "2026-01-01T00:00:00Z", claims_key="b" * 64)
    (pack,) = (tmp_path / "c" / "packs").iterdir()
    assert os.stat(pack).st_mode & 0o777 == 0o600
    assert not list((tmp_path / "c").rglob(".tmp-*"))


def test_leftover_temporary_names_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "_TEMP_SERIAL", iter([0, 0, 1, 2, 3]))
    folder = tmp_path / "packs"
    folder.mkdir(parents=True)
    (folder / f".tmp-{os.getpid()}-0.json").write_bytes(b"stale")
    VerdictCache._write(folder / "x.json", b"{}")
    assert (folder / "x.json").read_bytes() == b"{}"
    assert (folder / f".tmp-{os.getpid()}-0.json").read_bytes() == b"stale"


def _unsigned(case: EvidenceCase) -> Any:
    pointer, location = case.pointer()
    return verify_pointer(pointer, location, FakeSource(case.materialized()), None)  # type: ignore[arg-type]


def test_a_recipe_is_canonicalized_once_and_every_claim_still_compared(
    case: EvidenceCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same recipe bytes are canonicalized once per process (generator.verify.recipememo),
    but every bundle's claimed digest is still compared: a wrong claim is refused however often
    the recipe was seen."""
    from generator.verify import _recipe_match

    calls: list[bytes] = []
    real = getattr(_recipe_match, "digest_for_predicate_type")  # noqa: B009 - not re-exported

    def counted(data: bytes, *args: Any, **kwargs: Any) -> Any:
        calls.append(data)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(_recipe_match, "digest_for_predicate_type", counted)
    first = _unsigned(case)
    assert len(calls) == 1
    again = _unsigned(case)
    assert again == first and len(calls) == 1
    case.predicate["recipe"]["digest"] = "b" * 64
    case.files["statement.intoto.json"] = case.statement_bytes()
    wrong = _unsigned(case)
    assert len(calls) == 1
    assert any("recipe digest mismatch" in s.detail for s in wrong.steps)
    assert not isinstance(wrong, Verified)


def test_a_recipe_that_cannot_be_canonicalized_is_refused(
    case: EvidenceCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.errors import EvidenceDashError, Location
    from generator.verify import _recipe_match

    def refuse(*_: Any, **__: Any) -> Any:
        raise EvidenceDashError(
            "nope", location=Location("recipe.yaml"), expected="x", found="y", hint="z"
        )

    monkeypatch.setattr(_recipe_match, "digest_for_predicate_type", refuse)
    verdict = _unsigned(case)
    assert any("cannot be canonicalized" in s.detail for s in verdict.steps)
