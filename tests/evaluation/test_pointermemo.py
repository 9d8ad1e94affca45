"""generator.evaluate.pointermemo: parsed pointer documents kept between builds give the same
pointers (every rule still checked), and anything wrong with the memo is a miss, never a verdict.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import generator.evaluate.pointermemo as pointermemo
import generator.model as m
from generator.cacheauth import CacheAuth, Purpose, failures, reset_failures
from generator.errors import PointerError
from generator.evaluate.pointermemo import PointerDocs
from generator.tree import parse_pointer
from generator.tree.pointerrecord import pointer_from_record, pointer_record

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
    stored = json.loads((tmp_path / "memo.json").read_bytes().split(b"\n", 1)[1])
    assert len(stored["pointers"]) + len(stored["entries"]) == len(set(kept.values()))


def _entries_rewritten(memo: Path, edit: object, part: str = "entries") -> None:
    """Replace every entry of `part` of a sealed memo with `edit` and seal it again (as the
    key holder would): the tag checks, the content is what the test says. A valid pointer's
    document is kept as `entries` for this (the rules run on it)."""
    body = json.loads(memo.read_bytes().split(b"\n", 1)[1])
    if part == "entries":
        body["entries"] = dict.fromkeys((*body["entries"], *body["pointers"]), edit)
        body["pointers"] = {}
    else:
        body[part] = dict.fromkeys(body[part], edit)
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


def test_a_valid_pointer_is_kept_as_its_record_and_read_back_without_its_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pointer whose rules passed comes back from its record: neither the YAML nor the rules
    run again (both made to fail here), and the pointer is the one the bytes give."""
    pointers = demo_pointers()
    expected = {path: parse_pointer(data, file=path) for path, data in pointers.items()}
    _saved(tmp_path)

    def refuse(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("parsed or checked again")

    monkeypatch.setattr(pointermemo, "load_pointer_doc", refuse)
    monkeypatch.setattr(pointermemo, "validate_pointer", refuse)
    again = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert parse_all(again, pointers) == expected and again.hits == len(pointers)


def _good_record(tmp_path: Path) -> list[object]:
    body = json.loads(_saved(tmp_path).read_bytes().split(b"\n", 1)[1])
    return next(iter(body["pointers"].values()))  # type: ignore[no-any-return]


def _altered(record: list[object], at: int, value: object) -> list[object]:
    changed = list(record)
    changed[at] = value
    return changed


@pytest.mark.parametrize(
    "alter",
    [
        lambda r: r[:-1],
        lambda r: [*r, None],
        lambda r: {"record": r},
        lambda r: _altered(r, 0, 1),
        lambda r: _altered(r, 1, None),
        lambda r: _altered(r, 2, 7),
        lambda r: _altered(r, 3, ["oci"]),
        lambda r: _altered(r, 4, 5),
        lambda r: _altered(r, 5, "https://example.com/not-a-predicate"),
        lambda r: _altered(r, 5, None),
        lambda r: _altered(r, 6, "signer"),
        lambda r: _altered(r, 6, ["issuer", "identity"]),
        lambda r: _altered(r, 6, ["issuer", 3, None]),
        lambda r: _altered(r, 6, ["issuer", "identity", True]),
        lambda r: _altered(r, 6, ["issuer", "identity", "12"]),
        lambda r: _altered(r, 7, None),
    ],
    ids=[
        "short",
        "long",
        "object",
        "schema-int",
        "recipe-null",
        "profile-int",
        "oci-list",
        "digest-int",
        "predicate-unknown",
        "predicate-null",
        "signer-text",
        "signer-short",
        "identity-int",
        "log-index-bool",
        "log-index-text",
        "attested-null",
    ],
)
def test_a_pointer_record_of_another_shape_is_a_miss(tmp_path: Path, alter: object) -> None:
    """Every malformed record, sealed by the key holder, is a miss: the file is parsed and
    checked again, and the pointer is the one its bytes give."""
    record = _good_record(tmp_path)
    _entries_rewritten(tmp_path / "memo.json", alter(record), part="pointers")  # type: ignore[operator]
    pointers = demo_pointers()
    expected = {path: parse_pointer(data, file=path) for path, data in pointers.items()}
    again = PointerDocs.load(tmp_path / "memo.json", AUTH)
    assert parse_all(again, pointers) == expected and again.hits == 0


@pytest.mark.parametrize(
    "pointer",
    [
        m.Pointer(
            "1.0.0",
            m.RecipeName("r-a"),
            "gpuStack=x",
            m.BundleRef(
                "reg.example/e@sha256:" + "a" * 64,
                m.OciDigest("sha256:" + "a" * 64),
                m.PredicateType.V3,
            ),
            m.ClaimedSigner(m.SignerIdentity("https://issuer", "id@example.com"), 12),
            "2026-01-01T00:00:00Z",
        ),
        m.Pointer(
            "1.0",
            m.RecipeName("r-b"),
            None,
            m.BundleRef("reg.example/e:tag", None, m.PredicateType.V1),
            None,
            "2026-01-01T00:00:00Z",
        ),
        m.Pointer(
            "1.0.1",
            m.RecipeName("r-c"),
            None,
            m.BundleRef("reg.example/e", m.OciDigest("sha256:" + "b" * 64), m.PredicateType.V2),
            m.ClaimedSigner(m.SignerIdentity("i", ""), None),
            "2026-01-01T00:00:00.5Z",
        ),
    ],
    ids=["signed-profile", "pending", "no-log-index"],
)
def test_a_pointer_record_reads_back_as_the_pointer(pointer: m.Pointer) -> None:
    record = json.loads(json.dumps(pointer_record(pointer)))
    assert pointer_from_record(record) == pointer


def test_a_file_hashed_by_this_build_is_answered_without_reading_it(tmp_path: Path) -> None:
    """`known_file`: a path this build hashed (the memo key's read of the tree) whose digest
    gave a pointer before is answered from the memo; a path not hashed, or whose digest gave
    nothing before, is left to be read (None)."""
    import hashlib

    pointers = demo_pointers()
    _saved(tmp_path)
    (first_path, first_data), (second_path, _) = list(pointers.items())[:2]
    hashed = {
        "/abs/first.yaml": hashlib.sha256(first_data).hexdigest(),
        "/abs/unknown.yaml": hashlib.sha256(b"never seen").hexdigest(),
    }
    docs = PointerDocs.load(tmp_path / "memo.json", AUTH, hashed)
    assert docs.known_file("/abs/first.yaml", first_path) == parse_pointer(
        first_data, file=first_path
    )
    assert docs.digests == {first_path: hashed["/abs/first.yaml"]} and docs.hits == 1
    assert docs.known_file("/abs/unknown.yaml", second_path) is None
    assert docs.known_file("/abs/not-hashed.yaml", second_path) is None
    assert docs.hits == 1 and second_path not in docs.digests


def test_the_scan_reads_only_the_files_it_cannot_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan handed the build's digests of its files reads none whose pointer is remembered,
    reads the others, and gives the same pointers as a scan that reads every file."""
    import hashlib
    import shutil

    from generator.folderdigest import tree_digest
    from generator.tree import _scan_rules, load_allowlist, scan_tree

    root = tmp_path / "recipes"
    shutil.copytree(DEMO, root / "evidence")
    allowlist = load_allowlist(root / "evidence" / "allowlist.yaml")
    plain = scan_tree(root, allowlist=allowlist)
    first = PointerDocs.load(tmp_path / "memo.json", AUTH)
    scan_tree(root, allowlist=allowlist, parse=first.parse)
    first.save()
    changed = sorted((root / "evidence").glob("*/*/sha256-*.yaml"))[0]
    changed.write_bytes(changed.read_bytes() + b"# edited\n")
    hashed: dict[str, str] = {}
    tree_digest(root, hashed=hashed)
    assert hashed[str(changed)] == hashlib.sha256(changed.read_bytes()).hexdigest()
    reads: list[str] = []
    real_read = _scan_rules._read

    def counting(cand: object, guess: object) -> object:
        reads.append(cand.path)  # type: ignore[attr-defined]
        return real_read(cand, guess)  # type: ignore[arg-type]

    monkeypatch.setattr(_scan_rules, "_read", counting)
    again = PointerDocs.load(tmp_path / "memo.json", AUTH, hashed)
    scan = scan_tree(root, allowlist=allowlist, parse=again.parse, known=again.known_file)
    assert reads == [str(changed)]
    assert scan.files == scan_tree(root, allowlist=allowlist).files
    assert len(scan.files) == len(plain.files)


def test_a_memo_of_another_format_is_a_plain_miss_not_a_failure(tmp_path: Path) -> None:
    """A memo written by an older format (sealed under the same name, another `version`) is
    empty without counting an authentication failure: upgrading must not look like tampering."""
    memo = tmp_path / "memo.json"
    body = json.dumps({"version": "pointer-docs/v1", "code": "old", "entries": {}}).encode()
    # sealed as the first format sealed it
    memo.write_bytes(AUTH.seal(Purpose.POINTER, body, b"pointer-docs/v1"))
    docs = PointerDocs.load(memo, AUTH)
    parse_all(docs, demo_pointers())
    assert docs.hits == 0 and not failures()
