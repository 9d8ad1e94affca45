"""data/ written by a forked child (generator.evaluate.datajob): the same files and records
as written here, and a child that fails, reports nonsense or is stopped costs nothing else."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import generator.evaluate.datajob as datajob
from generator.manifest import Written
from tests.site.conftest import load_documents

if not hasattr(os, "fork"):
    pytest.skip("no fork on this platform", allow_module_level=True)


@pytest.fixture
def documents() -> dict[str, Any]:
    return load_documents()


@pytest.fixture(autouse=True)
def forked_when_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datajob, "MIN_FORKED_POINTERS", 0)


def _files(data: Path) -> dict[str, bytes]:
    return {
        p.relative_to(data).as_posix(): p.read_bytes()
        for p in sorted(data.rglob("*"))
        if p.is_file()
    }


class Keeper:
    """A `keep` that leaves a mark naming the process it ran in and what it was handed."""

    def __init__(self, marks: Path) -> None:
        self.marks = marks

    def __call__(self, data_dir: Path, written: Mapping[str, Written]) -> None:
        (self.marks / f"kept-by-{os.getpid()}").write_text("\n".join(sorted(written)))


def _run(tmp: Path, documents: dict[str, Any], jobs: int) -> tuple[dict[str, Written], Path, Path]:
    work, marks = tmp / f"work-{jobs}", tmp / f"marks-{jobs}"
    work.mkdir()
    marks.mkdir()
    job = datajob.start_data(work, documents, site_url=None, keep=Keeper(marks), jobs=jobs)
    written = job.wait()
    assert job.wait() == written  # waiting again answers the same
    job.close()
    return written, work / "data", marks


def _digests(written: Mapping[str, Written]) -> dict[str, tuple[str, int]]:
    return {name: (w.sha256, w.size) for name, w in written.items()}


def test_a_forked_child_writes_what_this_process_writes(
    documents: dict[str, Any], tmp_path: Path
) -> None:
    here, here_data, here_marks = _run(tmp_path, documents, jobs=1)
    forked, forked_data, forked_marks = _run(tmp_path, documents, jobs=2)
    assert _files(forked_data) == _files(here_data)
    assert _digests(forked) == _digests(here)
    for name, record in forked.items():  # the records are of the files as they are
        assert record.still(os.lstat(forked_data.parent / name))
    (mark,) = forked_marks.iterdir()
    assert mark.name != f"kept-by-{os.getpid()}", "the memo's copy was not made by the child"
    assert mark.read_text() == next(here_marks.iterdir()).read_text()


def test_one_process_writes_here(documents: dict[str, Any], tmp_path: Path) -> None:
    _, _, marks = _run(tmp_path, documents, jobs=1)
    assert [m.name for m in marks.iterdir()] == [f"kept-by-{os.getpid()}"]


def test_a_child_that_fails_leaves_the_work_to_this_process(
    documents: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = os.getpid()
    write = datajob.write_documents

    def fails_in_the_child(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            raise OSError("disk full, in the child only")
        return write(*args, **kwargs)

    expected, expected_data, _ = _run(tmp_path, documents, jobs=1)
    monkeypatch.setattr(datajob, "write_documents", fails_in_the_child)
    written, data, marks = _run(tmp_path, documents, jobs=2)
    assert _files(data) == _files(expected_data)
    assert _digests(written) == _digests(expected)
    assert [m.name for m in marks.iterdir()] == [f"kept-by-{parent}"]


def test_an_error_in_writing_is_raised_by_wait(
    documents: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def always_fails(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(datajob, "write_documents", always_fails)
    (tmp_path / "work").mkdir()
    job = datajob.start_data(tmp_path / "work", documents, site_url=None, keep=None, jobs=2)
    with pytest.raises(OSError, match="disk full"):
        job.wait()


@pytest.mark.parametrize("report", [b"", b"{", b"[[1, 2]]", b'[["data/x", "s", "big", 0, 0]]'])
def test_a_report_that_is_not_one_is_refused(report: bytes) -> None:
    assert datajob._records(report) is None


def test_close_stops_a_child_at_once(documents: dict[str, Any], tmp_path: Path) -> None:
    def slow(data_dir: Path, written: Mapping[str, Written]) -> None:
        time.sleep(60)

    (tmp_path / "work").mkdir()
    job = datajob.start_data(tmp_path / "work", documents, site_url=None, keep=slow, jobs=2)
    assert isinstance(job, datajob._Forked)
    started = time.monotonic()
    job.close()
    assert time.monotonic() - started < 10
    with pytest.raises(ChildProcessError):
        os.waitpid(job.pid, os.WNOHANG)  # reaped: no zombie left
