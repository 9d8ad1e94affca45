"""The big documents written by a helper process (`generator.data.spool`) are byte for byte the
text the build writes itself, whatever the values; and a helper that fails in any way costs only
speed: the build writes the documents, with the same bytes and digests."""

from __future__ import annotations

import hashlib
import sys
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

import pytest

from generator.data import spool
from generator.data.gojson import WALKED_DEPTH, go_json_bytes
from generator.data.spool import DeferredWrite, serve
from tests.data.laidout_files import stored_entries


class Colour(StrEnum):
    RED = "red"


class Level(int, Enum):
    HIGH = 3


NASTY: dict[str, Any] = {
    "pointers": [
        {
            "floats": [300.0, 0.00001, 1e-7, 1.5e-10, 1e21, 1e20, -0.0, 0.1, 2.5e16, 123456.789],
            "special": [float("nan"), float("inf"), float("-inf")],
            "big": 2**70,
            "html": "<script>&amp;</script> \u2028 \u2029 é 😀",
            "tuple": (1, 2, (3,)),
            "enums": [Colour.RED, Level.HIGH],
            "nested": {"b": {"z": [], "a": {}}, "a": [None, True, False]},
        },
        {1: "a key that is not a string"},
        {"deep": [[[[[[1.0]]]]]]},
        [],
        {},
        "a string",
        17,
    ],
    "omitted": {"recipe-a": {"runs": 2}},
}


def _written(
    tmp_path: Path,
    docs: dict[str, Any],
    command: list[str] | None = None,
    *,
    helped: bool,
    walk: int = WALKED_DEPTH,
) -> dict[str, str]:
    """Write `docs` through a `DeferredWrite`, walked `walk` levels deep; `helped`: whether its
    helper must have written them (else the build did)."""
    deferred = DeferredWrite(tmp_path, command)
    for name, doc in docs.items():
        deferred.take(tmp_path / name, doc, walk)
    digests: dict[str, str] = {}
    deferred.finish(lambda path, digest: digests.__setitem__(path.name, digest))
    assert deferred.wait_written()
    assert (deferred.helper_digests() is not None) is helped
    assert not list(tmp_path.glob(".data-spool*"))
    return digests


def test_the_helper_writes_what_the_build_would(tmp_path: Path) -> None:
    docs = {"pointers.json": NASTY, "small.json": {"a": [1, 2.0]}, "flat.json": [1e-9]}
    digests = _written(tmp_path, docs, helped=True)
    for name, doc in docs.items():
        expected = go_json_bytes(doc)
        assert (tmp_path / name).read_bytes() == expected, name
        assert digests[name] == hashlib.sha256(expected).hexdigest()


FAILING = [
    pytest.param([sys.executable, "-c", "import sys; sys.exit(3)"], id="exits-non-zero"),
    pytest.param([sys.executable, "-c", "print('not json')"], id="answers-garbage"),
    pytest.param([sys.executable, "-c", "print('{}')"], id="answers-no-digest"),
    pytest.param([sys.executable, "-c", "print('x' * 64)"], id="answers-no-hex-digest"),
    pytest.param(["/nonexistent/helper"], id="cannot-start"),
]


@pytest.mark.parametrize("command", FAILING)
def test_a_failing_helper_costs_only_speed(tmp_path: Path, command: list[str]) -> None:
    digests = _written(tmp_path, {"pointers.json": NASTY}, command, helped=False)
    expected = go_json_bytes(NASTY)
    assert (tmp_path / "pointers.json").read_bytes() == expected
    assert digests["pointers.json"] == hashlib.sha256(expected).hexdigest()


def test_a_helper_that_writes_half_a_document_and_dies_is_written_over(tmp_path: Path) -> None:
    half = (
        "import sys\n"
        "from pathlib import Path\n"
        f"Path({str(tmp_path / 'pointers.json')!r}).write_text('{{\"half')\n"
        "sys.exit(1)\n"
    )
    _written(tmp_path, {"pointers.json": NASTY}, [sys.executable, "-c", half], helped=False)
    assert (tmp_path / "pointers.json").read_bytes() == go_json_bytes(NASTY)


def test_a_hanging_helper_is_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "_PATIENCE_S", 0.5)
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    _written(tmp_path, {"pointers.json": NASTY}, hang, helped=False)
    assert (tmp_path / "pointers.json").read_bytes() == go_json_bytes(NASTY)


def test_abandon_releases_a_waiter_without_documents(tmp_path: Path) -> None:
    deferred = DeferredWrite(tmp_path, [sys.executable, "-c", "import time; time.sleep(60)"])
    deferred.take(tmp_path / "pointers.json", NASTY)
    deferred.abandon()
    assert deferred.wait_written() is False
    assert deferred.helper_digests() is None  # the killed helper answered nothing


def test_what_the_encoder_refuses_the_spool_refuses_alike(tmp_path: Path) -> None:
    doc = {"pointers": [{"lone": "\udc80"}]}
    with pytest.raises(UnicodeEncodeError):
        go_json_bytes(doc)
    deferred = DeferredWrite(tmp_path)
    with pytest.raises(UnicodeEncodeError):
        deferred.take(tmp_path / "pointers.json", doc)
    deferred.abandon()


@pytest.mark.parametrize(
    "spooled",
    [
        b"X" + (0).to_bytes(8, "big"),  # unknown kind
        b"T" + (100).to_bytes(8, "big") + b"short",  # cut record
        b"T" + (1).to_bytes(4, "big"),  # cut header
        b"S" + (2).to_bytes(8, "big") + (0).to_bytes(2, "big"),  # no steps, no span
        b"S" + (3).to_bytes(8, "big") + (0).to_bytes(2, "big") + bytes((9,)),  # unknown steps
    ],
    ids=["unknown-kind", "cut-record", "cut-header", "no-steps", "unknown-steps"],
)
def test_the_helper_refuses_a_malformed_spool(tmp_path: Path, spooled: bytes) -> None:
    (tmp_path / "spool").write_bytes(spooled)
    with pytest.raises(ValueError, match="spool"):
        serve(tmp_path / "spool", tmp_path / "out.json")


def test_a_laid_out_entry_record_naming_no_file_is_refused(tmp_path: Path) -> None:
    """An `S` record whose span names no file (the first span of the spool) is refused as
    every other malformed record is (ValueError), never read from a descriptor not opened."""
    spooled = b"S" + (3).to_bytes(8, "big") + (0).to_bytes(2, "big") + bytes((0,))
    (tmp_path / "spool").write_bytes(spooled)
    with pytest.raises(ValueError, match="not a regular file"):
        serve(tmp_path / "spool", tmp_path / "out.json")


ENTRIES: list[dict[str, Any]] = [
    {"path": "evidence/a.yaml", "recipe": "a", "n": [1.5e-10, 2**60], "html": "<&> \u2028"},
    {"path": "evidence/b.yaml", "evidence": {"loggedAt": "t", "x": {}}, "verify": None},
    {"path": "evidence/d.yaml", "bandwidth": [{"floor": 750.0, "measured": 918.5}]},
    {"path": "evidence/e.yaml", "plain": ["node-1", 2, "e-5"]},
]


@pytest.mark.parametrize(
    ("steps", "finished", "nested"),
    [(False, False, False), (True, False, False), (True, True, False), (True, True, True)],
    ids=["steps-unknown", "steps-stored", "text-stored", "text-stored-at-another-indent"],
)
def test_the_helper_reads_laid_out_entries_itself_and_writes_what_the_build_would(
    tmp_path: Path, steps: bool, finished: bool, nested: bool
) -> None:
    """Each entry's text read by the helper: finished from its layout, or copied where its
    finished text is stored, but only at the indent it was finished at (an entry deeper in a
    document is finished from its layout at its own indent)."""
    entries, _ = stored_entries(tmp_path, ENTRIES, steps=steps, finished=finished)
    assert all((e.steps is not None) is steps for e in entries)
    assert all((e.finished is not None) is finished for e in entries)

    def shaped(items: list[Any]) -> dict[str, Any]:
        listed = [*items, {"path": "evidence/c.yaml", "fresh": True}]
        return {"pointers": {"nested": listed} if nested else listed, "n": 1}

    doc, expected = shaped(entries), go_json_bytes(shaped(ENTRIES))
    out = tmp_path / "out"
    out.mkdir()
    walk = WALKED_DEPTH + 1 if nested else WALKED_DEPTH
    digests = _written(out, {"pointers.json": doc}, helped=True, walk=walk)
    assert (out / "pointers.json").read_bytes() == expected
    assert digests["pointers.json"] == hashlib.sha256(expected).hexdigest()
    assert all(e.unread is not None for e in entries)  # the build never read their text
    assert go_json_bytes(doc) == expected  # and written in the build, the same bytes


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(path.read_bytes().replace(b'"a"', b'"z"')),
        lambda path: (path.rename(path.with_name("real")), path.symlink_to("real")),
    ],
    ids=["changed-same-size", "a-link"],
)
@pytest.mark.parametrize("finished", [False, True], ids=["layouts", "finished-texts"])
def test_a_damaged_file_of_entries_fails_the_helper_and_then_the_build(
    tmp_path: Path, damage: Any, finished: bool
) -> None:
    """The helper checks each entry's text against its sha256 and gives up on a mismatch; the
    build, writing the document itself, finds the damage too: `LayoutError`, never a text that
    is not the entry's."""
    from generator.data.laidout import LayoutError

    entries, file = stored_entries(tmp_path, ENTRIES, finished=finished)
    damage(file.path)
    out = tmp_path / "out"
    out.mkdir()
    deferred = DeferredWrite(out)
    deferred.take(out / "pointers.json", {"pointers": entries})
    assert deferred.helper_digests() is None
    with pytest.raises(LayoutError):
        deferred.finish()
    deferred.abandon()
