"""Where the data documents' spools go (`spool.spool_folder`): a private folder on a memory file
system with room for them, else beside the output; removed when done, and those of killed
builds swept. A spool that cannot be written costs speed only: the build writes its document."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.data import spool
from generator.data.gojson import go_json_bytes
from generator.data.spool import DeferredWrite, spool_folder

DOCS: dict[str, Any] = {
    "pointers.json": {"pointers": [{"a": 1.5, "b": "<x>"}, {"c": [1, 2]}]},
    "index.json": {"groups": [{"name": "g", "tabs": [{"recipe": "r"}]}]},
}


@pytest.fixture
def memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in memory file system: a folder of this test's own."""
    root = tmp_path / "shm"
    root.mkdir()
    monkeypatch.setattr(spool, "MEMORY_ROOTS", (str(root),))
    return root


def _dead_pid() -> int:
    """The pid of a process that has just exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_spools_go_to_a_private_folder_on_a_memory_file_system(
    tmp_path: Path, memory: Path
) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    folder, owned = spool_folder(1000, staging)
    assert (
        owned
        and folder.parent == memory
        and folder.name.startswith(f"evidence-dashboard-spool-{os.getpid()}-")
    )
    assert folder.stat().st_mode & 0o777 == 0o700
    deferred = DeferredWrite(folder, owned=owned)
    for name, doc in DOCS.items():
        deferred.take(staging / name, doc)
    digests: dict[str, str] = {}
    deferred.finish(lambda path, digest: digests.__setitem__(path.name, digest))
    assert deferred.helper_digests() is not None  # the helper wrote them, from memory
    for name, doc in DOCS.items():
        assert (staging / name).read_bytes() == go_json_bytes(doc)
        assert digests[name] == hashlib.sha256(go_json_bytes(doc)).hexdigest()
    assert not folder.exists() and list(memory.iterdir()) == []  # nothing left in memory


@pytest.mark.parametrize("case", ["no-room", "no-such-root", "read-only", "not-posix"])
def test_without_room_the_spools_go_beside_the_output(
    tmp_path: Path, memory: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    if case == "no-room":
        monkeypatch.setattr(spool, "SPOOL_BYTES_PER_POINTER", 1 << 62)
    elif case == "no-such-root":
        monkeypatch.setattr(spool, "MEMORY_ROOTS", (str(tmp_path / "missing"),))
    elif case == "not-posix":
        monkeypatch.delattr(os, "statvfs")  # as on Windows
    else:
        if os.geteuid() == 0:
            monkeypatch.setattr(os, "access", lambda *_a, **_k: False)
        memory.chmod(0o500)
    try:
        assert spool_folder(1000, tmp_path) == (tmp_path, False)
    finally:
        memory.chmod(0o700)
    assert list(memory.iterdir()) == []


def test_folders_of_killed_builds_are_swept_and_no_other(tmp_path: Path, memory: Path) -> None:
    dead = memory / f"evidence-dashboard-spool-{_dead_pid()}-abc"
    (dead / "sub").mkdir(parents=True)
    (dead / "sub" / ".data-spool-0").write_bytes(b"x" * 100)
    alive = memory / f"evidence-dashboard-spool-{os.getpid()}-def"
    alive.mkdir()
    other = memory / "someone-elses-folder-1"
    other.mkdir()
    target = tmp_path / "not-to-be-touched"
    target.mkdir()
    (target / "keep").write_text("keep", encoding="utf-8")
    link = memory / f"evidence-dashboard-spool-{_dead_pid()}-lnk"
    link.symlink_to(target)
    foreign = memory / f"evidence-dashboard-spool-{_dead_pid()}-foreign"
    foreign.mkdir()
    if os.geteuid() == 0:
        os.chown(foreign, 65534, 65534)  # another user's: never ours to remove
    folder, owned = spool_folder(10, tmp_path)
    assert owned
    assert not dead.exists()
    assert foreign.is_dir() is (os.geteuid() == 0)
    assert alive.is_dir() and other.is_dir()
    assert (target / "keep").read_text(encoding="utf-8") == "keep"  # a link is never followed
    DeferredWrite(folder, owned=True).abandon()
    assert not folder.exists()


def test_a_spool_that_cannot_be_written_is_written_by_the_build(
    tmp_path: Path, memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory file system fills up while the first spool is written: that document is
    written by the build, the next one still by the helper; the same bytes either way."""
    write = spool._spool
    calls: list[Path] = []

    def full_once(path: Path, doc: Any, walk: int) -> None:
        calls.append(path)
        if len(calls) == 1:
            path.write_bytes(b"partial")
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, doc, walk)

    monkeypatch.setattr(spool, "_spool", full_once)
    folder, owned = spool_folder(1000, tmp_path)
    deferred = DeferredWrite(folder, owned=owned)
    for name, doc in DOCS.items():
        deferred.take(tmp_path / name, doc)
    assert not calls[0].exists()  # the partial spool is gone at once
    digests: dict[str, str] = {}
    deferred.finish(lambda path, digest: digests.__setitem__(path.name, digest))
    assert deferred.helper_digests() is None  # not every document came from the helper
    assert deferred.wait_written()
    for name, doc in DOCS.items():
        assert (tmp_path / name).read_bytes() == go_json_bytes(doc)
        assert digests[name] == hashlib.sha256(go_json_bytes(doc)).hexdigest()
    assert list(memory.iterdir()) == []
