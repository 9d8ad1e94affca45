"""generator.evaluate.pointermemo: parsed pointer documents kept between builds give the same
pointers (every rule still checked), and anything wrong with the memo is a miss, never a verdict.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import generator.evaluate.pointermemo as pointermemo
from generator.cacheauth import CacheAuth, Purpose, failures, reset_failures
from generator.errors import PointerError
from generator.evaluate.pointermemo import PointerDocs
from generator.tree import parse_pointer

DEMO = Path(__file__).resolve().parents[2] / "recipes" / "evidence"
AUTH = CacheAuth(b"k" * 40)


def demo_pointers() -> dict[str, bytes]:
    files = sorted(DEMO.glob("*/*/sha256-*.yaml"))
    assert len(files) >= 5, "the demo tree lost its pointers"
    return {p.relative_to(DEMO.parent).as_posix(): p.read_bytes() for p in files}


def parse_all(docs: PointerDocs, pointers: dict[str, bytes]) -> dict[str, object]:
    return {path: docs.parse(data, path) for path, data in pointers.items()}


@pytest.fixture(autouse=True)
def _fresh_failures() -> None:
    reset_failures()


def test_remembered_documents_give_the_pointers_the_bytes_give(tmp_path: Path) -> None:
    pointers = demo_pointers()
    expected = {path: parse_pointer(data, file=path) for path, data in pointers.items()}
    first = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert parse_all(first, pointers) == expected and first.hits == 0
    first.save()
    second = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert parse_all(second, pointers) == expected
    assert second.hits == len(pointers) and not failures()


def test_changed_bytes_are_parsed_again(tmp_path: Path) -> None:
    path, data = next(iter(demo_pointers().items()))
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH)
    docs.parse(data, path)
    docs.save()
    edited = data.replace(b"recipe: ", b"recipe: other-", 1)
    again = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert again.parse(edited, path) == parse_pointer(edited, file=path)
    assert again.hits == 0


def test_every_rule_still_runs_on_a_remembered_document(tmp_path: Path) -> None:
    """The same bytes under another name: taken from the memo, and the rules that read the
    name still decide (here: the error names the file it was asked for)."""
    bad = b"schemaVersion: 9.9.9\nrecipe: x\nattestations: []\n"
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH)
    with pytest.raises(PointerError) as first:
        docs.parse(bad, "evidence/a/s/sha256-a.yaml")
    docs.save()
    again = PointerDocs.load(tmp_path / "memo.json", AUTH)
    with pytest.raises(PointerError) as second:
        again.parse(bad, "evidence/b/s/sha256-b.yaml")
    assert first.value.rule == second.value.rule == "schema-version"
    assert again.hits == 1 and "evidence/b/s/sha256-b.yaml" in str(second.value.location)


def test_a_file_whose_yaml_fails_is_not_remembered(tmp_path: Path) -> None:
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH)
    with pytest.raises(PointerError) as caught:
        docs.parse(b"a: [1, 2\n", "evidence/r/s/sha256-x.yaml")
    assert caught.value.rule == "yaml"
    docs.save()
    assert not (tmp_path / "memo.json").exists()


def test_the_memo_keeps_only_the_files_this_build_read(tmp_path: Path) -> None:
    pointers = demo_pointers()
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH)
    parse_all(docs, pointers)
    docs.save()
    kept = dict(list(pointers.items())[:2])
    fewer = PointerDocs.load(tmp_path / "memo.json", AUTH)
    parse_all(fewer, kept)
    fewer.save()
    stored = (tmp_path / "memo.json").read_bytes().split(b"\n", 1)[1]
    assert len(json.loads(stored)["entries"]) == len(set(kept.values()))


def _entries_rewritten(memo: Path, edit: dict[str, object] | None) -> None:
    """Replace every entry of a sealed memo with `edit` and seal it again (as the key holder
    would): the tag checks, the content is what the test says."""
    body = json.loads(memo.read_bytes().split(b"\n", 1)[1])
    body["entries"] = dict.fromkeys(body["entries"], edit)
    data = json.dumps(body).encode()
    memo.write_bytes(AUTH.seal(Purpose.POINTER, data, pointermemo._SEAL_NAME))


@pytest.mark.parametrize(
    "entry",
    [["a", "list"], {"$bytes": "not base64!"}, {"$float": "not a float"}, "text", None],
    ids=["list", "bad-bytes", "bad-float", "string", "null"],
)
def test_an_entry_that_is_not_a_mapping_is_a_miss(tmp_path: Path, entry: object) -> None:
    pointers = demo_pointers()
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH)
    expected = parse_all(docs, pointers)
    docs.save()
    _entries_rewritten(tmp_path / "memo.json", entry)
    again = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert parse_all(again, pointers) == expected and again.hits == 0


def _saved(tmp_path: Path) -> Path:
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH)
    parse_all(docs, demo_pointers())
    docs.save()
    return tmp_path / "memo.json"


def test_a_memo_under_another_key_is_empty_and_counted(tmp_path: Path) -> None:
    memo = _saved(tmp_path)
    other = PointerDocs.load(memo, CacheAuth(b"o" * 40))
    parse_all(other, demo_pointers())
    assert other.hits == 0 and len(failures()) == 1


def test_a_memo_of_other_code_is_empty_and_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = _saved(tmp_path)
    monkeypatch.setattr(pointermemo, "code_digest", lambda: "other code")
    again = PointerDocs.load(memo, AUTH)
    parse_all(again, demo_pointers())
    assert again.hits == 0 and not failures()


def test_a_linked_or_oversized_memo_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = _saved(tmp_path)
    link = tmp_path / "link.json"
    os.symlink(memo, link)
    through_link = PointerDocs.load(link, AUTH)
    parse_all(through_link, demo_pointers())
    assert through_link.hits == 0
    monkeypatch.setattr(pointermemo, "MAX_MEMO_BYTES", memo.stat().st_size - 1)
    oversized = PointerDocs.load(memo, AUTH)
    parse_all(oversized, demo_pointers())
    assert oversized.hits == 0 and not failures()


def test_digests_are_of_the_bytes_parsed(tmp_path: Path) -> None:
    import hashlib

    pointers = demo_pointers()
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH)
    parse_all(docs, pointers)
    assert docs.digests == {p: hashlib.sha256(d).hexdigest() for p, d in pointers.items()}


def _outcome(parse: object) -> object:
    try:
        return parse()  # type: ignore[operator]
    except PointerError as exc:
        return ("error", exc.message)


@pytest.mark.parametrize(
    "extra",
    [
        b"",
        b"$comment: tagged key\n",
        b"1: a key that is not a string\n",
        b'note: "$ in a string"\n',
    ],
    ids=["plain", "dollar-key", "int-key", "dollar-in-string"],
)
def test_a_memo_with_or_without_tagged_values_reads_back_as_parsed(
    tmp_path: Path, extra: bytes
) -> None:
    """Documents are taken as parsed only when the memo holds no tagged value (no `"$`):
    a `$` key or a key that is not a string is tagged and decoded, whichever others share it."""
    path, data = next(iter(demo_pointers().items()))
    odd = data + extra
    pointers = {path: odd, path.replace("sha256-", "sha256-0"): data}
    expected = {p: _outcome(lambda d=d, p=p: parse_pointer(d, file=p)) for p, d in pointers.items()}
    first = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert {
        p: _outcome(lambda d=d, p=p: first.parse(d, p)) for p, d in pointers.items()
    } == expected
    first.save()
    second = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert {
        p: _outcome(lambda d=d, p=p: second.parse(d, p)) for p, d in pointers.items()
    } == expected
    assert second.hits == len(pointers) and not failures()
