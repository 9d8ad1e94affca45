"""generator.data.laidout: a pointer entry kept as its layout reads as the entry it was, is
written byte for byte as that entry, reads its head without parsing, and refuses a head or a
text that does not match."""

from __future__ import annotations

import copy
import hashlib
import pickle
from pathlib import Path
from typing import Any

import pytest

from generator.cacheauth import failures, reset_failures
from generator.data.gojson import go_json_bytes, subtree_layout
from generator.data.laidout import (
    HEAD_KEYS,
    PART_KEYS,
    LaidOutEntry,
    LayoutError,
    head_of,
    materialized,
    plain,
)
from generator.data.layoutfile import KEEP_FILES, let_go_files
from generator.site.recipepages import _entry_digests
from tests.data.laidout_files import stored_entries

FULL: dict[str, Any] = {
    "path": "evidence/r/s/sha256-a.yaml",
    "recipe": "r",
    "verify": {"exit": 1, "pending": False, "steps": [{"step": 1, "detail": "<ok> & \u2028"}]},
    "signer": {"label": "acme", "sourceId": "s1", "allowlisted": True},
    "freshness": {"state": "stale", "signed": "a" * 64},
    "evidence": {
        "loggedAt": "2026-01-02T03:04:05Z",
        "attestedAt": "2026-01-02T03:00:00Z",
        "bandwidth": [{"busBw": 391.5, "size": 1 << 40}, {"busBw": 1e-7}],
        "criteria": {"service": "eks", "accelerator": "h100"},
    },
    "duplicateOf": None,
    "bundle": {"digest": "sha256:" + "b" * 64},
}


def _cases() -> list[dict[str, Any]]:
    no_evidence = {k: v for k, v in FULL.items() if k != "evidence"}
    return [
        FULL,
        {**FULL, "evidence": None},
        no_evidence,
        {**FULL, "verify": None, "signer": None},
        {"path": "evidence/flat.yaml"},
        {**FULL, "evidence": {"other": [1, 2, {"deep": "x"}]}},
    ]


def _entry(doc: dict[str, Any]) -> LaidOutEntry:
    return LaidOutEntry.from_head(subtree_layout(doc), head_of(doc))


@pytest.mark.parametrize(
    "doc",
    _cases(),
    ids=["full", "null-evidence", "no-evidence", "null-parts", "bare", "evidence-without-times"],
)
def test_an_entry_reads_back_as_the_entry_it_was(doc: dict[str, Any]) -> None:
    entry = _entry(doc)
    assert entry == doc
    assert dict(entry) == doc and sorted(entry) == sorted(doc) and len(entry) == len(doc)
    assert materialized(entry) == doc
    assert pickle.loads(pickle.dumps(entry)) == doc
    assert entry.head() == head_of(doc)
    assert LaidOutEntry.from_head(entry.layout, entry.head()) == doc


def test_the_head_and_the_parts_read_without_parsing() -> None:
    entry = _entry(FULL)
    for key in HEAD_KEYS:
        assert entry[key] == FULL[key]
    for name, wanted in PART_KEYS.items():
        assert sorted(entry[name]) == sorted(FULL[name])
        assert name in entry and "steps" not in entry
        for key in wanted:
            assert entry[name][key] == FULL[name][key]
            assert entry[name].get(key) == FULL[name][key]
    assert entry.get("nothing") is None
    with pytest.raises(KeyError):
        entry["nothing"]
    assert not entry.is_parsed
    again = pickle.loads(pickle.dumps(entry))
    assert again["verify"]["exit"] == 1 and not again.is_parsed


@pytest.mark.parametrize(
    "read",
    [
        lambda e: e["bundle"],
        lambda e: e["evidence"]["bandwidth"],
        lambda e: e["verify"]["steps"],
        lambda e: e.get("bundle", "absent"),
        lambda e: dict(e),
    ],
    ids=["top-field", "evidence-field", "verify-field", "get", "dict"],
)
def test_any_other_field_parses_the_text_once(read: Any) -> None:
    entry = _entry(FULL)
    first = read(entry)
    assert entry.is_parsed
    assert read(entry) == first
    head_value = entry["signer"]
    assert entry["signer"] is head_value  # the head's objects stay the ones handed out


def test_an_entry_is_read_only() -> None:
    entry = _entry(FULL)
    with pytest.raises(TypeError):
        entry["recipe"] = "other"  # type: ignore[index]
    copied = materialized(entry)
    copied["recipe"] = "other"
    assert entry["recipe"] == "r" and materialized(entry)["recipe"] == "r"


def test_a_document_of_entries_is_written_byte_for_byte_as_of_dicts() -> None:
    docs = [copy.deepcopy(d) for d in _cases()]
    entries = [_entry(d) for d in docs]
    assert go_json_bytes({"pointers": entries}) == go_json_bytes({"pointers": docs})
    assert subtree_layout(entries[0]) is entries[0].layout
    # deeper than a walked level (a whole subtree): the entry's content, laid out again
    nested = {"a": {"b": {"c": entries[0]}}}
    assert go_json_bytes(nested) == go_json_bytes({"a": {"b": {"c": docs[0]}}})
    # the slow ways (a value orjson refuses) take the entry's content too
    slow = {"a": {"b": {"c": [entries[0], 2**70]}}}
    assert go_json_bytes(slow) == go_json_bytes({"a": {"b": {"c": [docs[0], 2**70]}}})


def test_a_page_key_takes_an_entry_as_its_digest_alike_laid_out_or_not() -> None:
    entry = _entry(FULL)
    other = _entry({**FULL, "bundle": {"digest": "sha256:" + "c" * 64}})
    assert _entry_digests([entry]) == _entry_digests([copy.deepcopy(FULL)])
    assert _entry_digests([entry]) != _entry_digests([other])
    assert not entry.is_parsed and not other.is_parsed


@pytest.mark.parametrize(
    "damage",
    [
        lambda h: h.update(keys="path"),
        lambda h: h.update(keys=[*h["keys"], 1]),
        lambda h: h.update(keys=[*h["keys"], ["x"]]),
        lambda h: h.update(known=[]),
        lambda h: h.update(parts=None),
        lambda h: h["known"].update(unlisted=1),
        lambda h: h["parts"].update(unlisted={"keys": [], "known": {}}),
        lambda h: h["parts"].update(bundle={"keys": [], "known": {}}),
        lambda h: h["parts"].update(evidence=[]),
        lambda h: h["parts"]["evidence"].update(keys=None),
        lambda h: h["parts"]["evidence"]["known"].update(unlisted="x"),
        lambda h: h["known"].update(evidence=None),
        lambda h: h.update(keys=[k for k in h["keys"] if k != "verify"]),
    ],
    ids=[
        "keys-not-list",
        "key-not-string",
        "key-unhashable",
        "known-not-object",
        "parts-not-object",
        "known-not-a-key",
        "part-not-a-part",
        "part-not-listed",
        "part-not-object",
        "part-keys-not-list",
        "part-known-not-a-key",
        "part-known-whole",
        "part-not-a-key",
    ],
)
def test_a_head_of_another_shape_is_refused(damage: Any) -> None:
    head = copy.deepcopy(head_of(FULL))
    layout = subtree_layout(FULL)
    assert LaidOutEntry.from_head(layout, copy.deepcopy(head)) == FULL
    damage(head)
    with pytest.raises(ValueError):
        LaidOutEntry.from_head(layout, head)


@pytest.mark.parametrize(
    "layout",
    [b"{not json}", b'{"path": "x"}', b"[1, 2]"],
    ids=["not-json", "other-keys", "not-an-object"],
)
def test_a_text_that_does_not_match_its_head_raises_instead_of_answering(layout: bytes) -> None:
    entry = LaidOutEntry.from_head(layout, head_of(FULL))
    assert entry["recipe"] == "r"  # the head answers
    with pytest.raises(LayoutError):
        entry["bundle"]
    with pytest.raises(LayoutError):
        entry["evidence"]["bandwidth"]


def test_a_stored_entry_reads_its_text_only_when_asked(tmp_path: Path) -> None:
    docs = _cases()
    entries, file = stored_entries(tmp_path, docs)
    for entry, doc in zip(entries, docs, strict=True):
        assert entry["path"] == doc["path"]
        assert entry.sha256 == hashlib.sha256(subtree_layout(doc)).digest()
    keys = _entry_digests(entries)
    assert all(e.unread is not None for e in entries) and file._data is None  # nothing read
    assert entries[0] == docs[0] and file._data is not None  # read: its file is held
    assert entries[0].unread is not None  # its text is not: the data helper reads it there
    assert [materialized(e) for e in entries] == docs
    assert keys == _entry_digests(entries) == _entry_digests(docs)  # read or not, one key
    let_go_files()
    assert file._data is None and entries[1]["bundle"] == docs[1]["bundle"]  # read again


def test_only_the_last_files_read_stay_held_and_a_file_read_again_is_checked_again(
    tmp_path: Path,
) -> None:
    """A build that makes every page reads every recipe's file: only the last `KEEP_FILES`
    read stay in memory. A file let go and changed since is refused when read again, as it
    would have been the first time."""
    let_go_files()
    reset_failures()
    doc = _cases()[0]
    stored = []
    for n in range(KEEP_FILES + 3):
        folder = tmp_path / str(n)
        folder.mkdir()
        stored.append(stored_entries(folder, [doc]))
    for entries, _file in stored:
        assert entries[0]["bundle"] == doc["bundle"]
    held = [file for _entries, file in stored if file._data is not None]
    assert held == [file for _entries, file in stored[-KEEP_FILES:]]
    first_entries, first_file = stored[0]
    data = bytearray(first_file.path.read_bytes())
    data[data.index(b"sha256:")] ^= 1  # same size, other text
    first_file.path.write_bytes(bytes(data))
    fresh = LaidOutEntry.from_head(first_entries[0].span, head_of(doc))  # not parsed yet
    with pytest.raises(LayoutError):
        fresh["bundle"]
    assert not first_file.path.exists() and failures()
    let_go_files()
    assert all(file._data is None for _entries, file in stored)


def test_a_stored_entry_whose_text_changed_raises_and_removes_its_file(tmp_path: Path) -> None:
    reset_failures()
    entries, file = stored_entries(tmp_path, _cases())
    text = file.path.read_bytes()
    file.path.write_bytes(text.replace(b'"r"', b'"s"', 1))  # the same size
    assert entries[0]["recipe"] == "r"  # the head still answers
    with pytest.raises(LayoutError):
        entries[0]["bundle"]
    assert not file.path.exists()
    with pytest.raises(LayoutError):
        entries[1]["bundle"]
    assert failures() == {"recipe layouts entries.layouts"}
    reset_failures()


def test_plain_gives_a_dict_of_plain_values_where_dict_keeps_the_parts() -> None:
    entry = _entry(FULL)
    assert type(dict(entry)["evidence"]) is not dict  # a part, read lazily
    made = plain(entry)
    assert made == FULL and type(made) is dict
    assert all(type(made[name]) is dict for name in PART_KEYS)
    assert plain(FULL) == FULL and plain(FULL) is not FULL
