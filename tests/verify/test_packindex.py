"""The verdict cache's kept index: the packs it covers are not read again, and nothing it
holds (tampered, stale, pointing elsewhere) can make a lookup answer what the packs do not."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

import generator.verify.cache as cache_module
from generator.cacheauth import CacheAuth, Purpose, failures, reset_failures
from generator.verify.cache import VerdictCache
from generator.verify.packindex import INDEX_NAME, INDEX_VERSION, KEEP_AFTER
from tests.verify.test_serialize_cache import verdicts

AUTH = CacheAuth(b"pack-index-test" * 4)
WHEN = "2026-01-01T00:00:00Z"


def _keys(n: int, start: int = 0) -> list[str]:
    return [f"{i:064x}" for i in range(start, start + n)]


def _fill(root: Path, verdict: Any, packs: int, start: int = 0) -> list[str]:
    """`packs` packs of two verdicts each (keys numbered from `start`)."""
    keys = _keys(2 * packs, start)
    for i in range(packs):
        cache = VerdictCache(root, AUTH)
        with cache.batched():
            for key in keys[2 * i : 2 * i + 2]:
                cache.put(key, verdict, WHEN, claims_key="c" * 64)
    return keys


@pytest.fixture()
def verdict(case: Any, authority_trust: Any) -> Any:
    return verdicts(case, authority_trust)["verified"]


@pytest.fixture()
def headers_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pack headers read from here on."""
    read: list[str] = []
    real = cache_module._read_header

    def counting(path: str) -> Any:
        read.append(path)
        return real(path)

    monkeypatch.setattr(cache_module, "_read_header", counting)
    return read


def _answers(root: Path, keys: list[str]) -> list[Any]:
    cache = VerdictCache(root, AUTH)
    return [cache.get(key) for key in keys]


def test_the_kept_index_spares_reading_the_headers_it_covers(
    tmp_path: Path, verdict: Any, headers_read: list[str]
) -> None:
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    expected = _answers(tmp_path, keys)  # reads every header, keeps the index
    assert len(headers_read) == KEEP_AFTER and (tmp_path / INDEX_NAME).is_file()
    headers_read.clear()
    assert _answers(tmp_path, keys) == expected
    assert all(a == (verdict, WHEN) for a in expected)
    assert headers_read == []


def test_packs_written_since_are_read_and_a_later_pack_wins(
    tmp_path: Path, case: Any, authority_trust: Any, headers_read: list[str]
) -> None:
    made = verdicts(case, authority_trust)
    keys = _fill(tmp_path, made["verified"], KEEP_AFTER)
    _answers(tmp_path, keys)
    cache = VerdictCache(tmp_path, AUTH)
    cache.put(keys[0], made["rejected"], "2027-01-01T00:00:00Z", claims_key="c" * 64)
    headers_read.clear()
    answers = _answers(tmp_path, keys)
    assert answers[0] == (made["rejected"], "2027-01-01T00:00:00Z")
    assert answers[1:] == [(made["verified"], WHEN)] * (len(keys) - 1)
    assert len(headers_read) == 1  # the new pack only


def test_below_the_threshold_the_index_is_not_kept_again(
    tmp_path: Path, verdict: Any, headers_read: list[str]
) -> None:
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    _answers(tmp_path, keys)
    kept = (tmp_path / INDEX_NAME).read_bytes()
    keys += _fill(tmp_path, verdict, 1, start=1000)
    assert _answers(tmp_path, keys)[-1] == (verdict, WHEN)
    assert (tmp_path / INDEX_NAME).read_bytes() == kept


@pytest.mark.parametrize(
    "tamper",
    [
        lambda data: data.replace(b",0]", b",1]", 1),  # a changed entry
        lambda data: data.replace(b'"entries"', b'"entrieZ"'),
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: b"",
    ],
)
def test_a_tampered_index_is_a_counted_failure_and_every_header_is_read(
    tmp_path: Path, verdict: Any, headers_read: list[str], tamper: Any
) -> None:
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    expected = _answers(tmp_path, keys)
    index = tmp_path / INDEX_NAME
    tampered = tamper(index.read_bytes())
    assert tampered != index.read_bytes()
    index.write_bytes(tampered)
    headers_read.clear()
    reset_failures()
    assert _answers(tmp_path, keys) == expected
    assert len(headers_read) == KEEP_AFTER
    assert failures() == {f"verdict {INDEX_NAME}"} or index.stat().st_size == 0
    headers_read.clear()
    assert _answers(tmp_path, keys) == expected and headers_read == []  # kept again


def test_an_index_kept_under_another_secret_is_not_used(
    tmp_path: Path, verdict: Any, headers_read: list[str]
) -> None:
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    VerdictCache(tmp_path, CacheAuth(b"another" * 8)).get(keys[0])  # keeps its own index
    headers_read.clear()
    reset_failures()
    assert _answers(tmp_path, keys) == [(verdict, WHEN)] * len(keys)
    assert len(headers_read) == KEEP_AFTER
    assert f"verdict {INDEX_NAME}" in failures()


def _sealed(root: Path, doc: Any) -> None:
    AUTH.write_sealed(
        root / INDEX_NAME, Purpose.VERDICT_INDEX, orjson.dumps(doc), INDEX_NAME.encode()
    )


def _packs(root: Path) -> list[str]:
    return sorted(os.listdir(root / "packs"))


def test_an_authentic_index_pointing_elsewhere_only_makes_misses(
    tmp_path: Path, verdict: Any
) -> None:
    """The index says where to look, never what the answer is: every key sent to another
    key's entry, past a pack's end, or to no entry number at all is a miss."""
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    names = _packs(tmp_path)
    wrong: dict[str, Any] = {
        key: [(i // 2 + 1) % len(names), (i + 1) % 2] for i, key in enumerate(keys)
    }
    wrong[keys[0]] = [0, 99]
    wrong[keys[1]] = [0, -1]
    wrong[keys[2]] = [1, "0"]
    wrong[keys[3]] = [-1, 0]
    _sealed(tmp_path, {"v": INDEX_VERSION, "packs": names, "entries": wrong})
    assert _answers(tmp_path, keys) == [None] * len(keys)


@pytest.mark.parametrize(
    "entries",
    [
        {"0" * 64: [999, 0]},
        {"0" * 64: ["0", 0]},
        {"0" * 64: [0]},
        {"0" * 64: 5},
        [["0" * 64, 0, 0]],
        "not a map",
    ],
)
def test_an_authentic_index_of_another_shape_is_not_used(
    tmp_path: Path, verdict: Any, headers_read: list[str], entries: Any
) -> None:
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    _sealed(tmp_path, {"v": INDEX_VERSION, "packs": _packs(tmp_path), "entries": entries})
    headers_read.clear()
    assert _answers(tmp_path, keys) == [(verdict, WHEN)] * len(keys)
    assert len(headers_read) == KEEP_AFTER


def test_an_index_of_another_version_is_not_used(
    tmp_path: Path, verdict: Any, headers_read: list[str]
) -> None:
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    _answers(tmp_path, keys)
    doc = orjson.loads(
        AUTH.unseal(
            Purpose.VERDICT_INDEX, (tmp_path / INDEX_NAME).read_bytes(), INDEX_NAME.encode()
        )
        or b""
    )
    _sealed(tmp_path, {**doc, "v": "verdict-pack-index/v0"})
    headers_read.clear()
    assert _answers(tmp_path, keys) == [(verdict, WHEN)] * len(keys)
    assert len(headers_read) == KEEP_AFTER


@pytest.mark.parametrize("change", ["removed", "sorts-first", "renamed"])
def test_an_index_whose_packs_are_not_the_first_listed_is_not_used(
    tmp_path: Path, case: Any, authority_trust: Any, headers_read: list[str], change: str
) -> None:
    made = verdicts(case, authority_trust)
    keys = _fill(tmp_path, made["verified"], KEEP_AFTER)
    _answers(tmp_path, keys)
    packs = tmp_path / "packs"
    first = _packs(tmp_path)[0]
    if change == "removed":
        (packs / first).unlink()
    elif change == "renamed":
        (packs / first).rename(packs / f"x{first}")  # now sorts last
    else:  # a pack written with an earlier clock sorts among the covered ones
        cache = VerdictCache(tmp_path, AUTH)
        cache.put(keys[-1], made["rejected"], "2027-01-01T00:00:00Z", claims_key="c" * 64)
        (newest,) = set(_packs(tmp_path)) - {first} - set(_packs(tmp_path)[:KEEP_AFTER])
        (packs / newest).rename(packs / f"0{newest}")
    headers_read.clear()
    answers = _answers(tmp_path, keys)
    assert len(headers_read) == len(_packs(tmp_path))  # every header, as without an index
    if change == "removed":
        assert answers[:2] == [None, None] and answers[2:] == [(made["verified"], WHEN)] * 14
    elif change == "renamed":
        assert answers == [(made["verified"], WHEN)] * len(keys)
    else:  # the pack that sorts first no longer wins
        assert answers[-1] == (made["verified"], WHEN)


@pytest.mark.parametrize("planted", ["link", "folder", "fifo"])
def test_an_index_that_is_not_a_regular_file_is_not_read(
    tmp_path: Path, verdict: Any, headers_read: list[str], planted: str
) -> None:
    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    _answers(tmp_path, keys)
    index = tmp_path / INDEX_NAME
    real = tmp_path / "elsewhere.json"
    index.rename(real)
    if planted == "link":
        index.symlink_to(real)
    elif planted == "folder":
        index.mkdir()
    else:
        os.mkfifo(index)
    headers_read.clear()
    assert _answers(tmp_path, keys) == [(verdict, WHEN)] * len(keys)
    assert len(headers_read) == KEEP_AFTER


def test_an_oversize_index_is_not_read(
    tmp_path: Path, verdict: Any, headers_read: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import generator.verify.packindex as packindex

    keys = _fill(tmp_path, verdict, KEEP_AFTER)
    _answers(tmp_path, keys)
    monkeypatch.setattr(packindex, "MAX_INDEX_BYTES", 100)
    headers_read.clear()
    assert _answers(tmp_path, keys) == [(verdict, WHEN)] * len(keys)
    assert len(headers_read) == KEEP_AFTER
