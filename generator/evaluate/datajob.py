"""Writing data/ beside the site: the data files (and the memo's copy of them) are written by a
forked child while this process renders the site's pages.

Serialising the documents is CPU-bound (hundreds of MB at 10,000 attestations), and so is
rendering the Markdown pages, which need only the same documents in memory. `start_data` forks
when there is a second core (`--jobs` > 1), the documents are large and the platform can fork:
the child writes the files with `write_documents`, hands the folder to `keep` (the evaluation
memo's copy), reports each file's `Written` record down a pipe and exits. The fork is cheap and
costs little memory: the child reads the documents without changing them (orjson walks them in
Rust) and the build's garbage collector is paused (`bulk_allocation`), so their pages stay
shared. Otherwise, or should the child fail in any way, the same work is done in this process
(`keep` on a thread, as before), so a failure is reported exactly as without a child.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from generator.data import write_documents
from generator.evaluate.background import Background
from generator.manifest import Written

__all__ = ["MIN_FORKED_POINTERS", "DataJob", "done", "start_data"]

MIN_FORKED_POINTERS = 2000
"""Below this many pointers, writing data/ takes less than a fork saves."""

Keep = Callable[[Path, Mapping[str, Written]], None]


class DataJob(Protocol):
    """data/ being written into a staging folder."""

    def wait(self) -> dict[str, Written]:
        """Wait until data/ (and the memo's copy) is written; its files' records, by
        `data/<name>`. Raises what writing raised. Waiting again returns the same."""
        ...

    def close(self) -> None:
        """Stop at once (a build that failed): nothing writes into the folder afterwards."""
        ...


def _write(work: Path, documents: Mapping[str, Any], site_url: str | None) -> dict[str, Written]:
    data_dir = work / "data"
    written: dict[str, Written] = {}

    def hashed(path: Path, sha256: str) -> None:
        written["data/" + path.relative_to(data_dir).as_posix()] = Written.of(path, sha256)

    write_documents(work, documents, site_url=site_url, hashed=hashed)
    return written


@dataclass
class _Here:
    """Written in this process; `keep` runs on a thread while the site is built."""

    written: dict[str, Written]
    keeper: Background

    def wait(self) -> dict[str, Written]:
        self.keeper.wait()
        return self.written

    def close(self) -> None:
        self.keeper.wait(quietly=True)


def done() -> DataJob:
    """A job with nothing to write (data/ came from elsewhere)."""
    return _Here({}, Background(None))


def _here(
    work: Path, documents: Mapping[str, Any], site_url: str | None, keep: Keep | None
) -> _Here:
    written = _write(work, documents, site_url)
    keeper = Background(None if keep is None else lambda: keep(work / "data", written))
    return _Here(written, keeper)


@dataclass
class _Forked:
    """Written by a forked child; on any failure of the child, written here on `wait`."""

    pid: int
    report: int
    redo: Callable[[], _Here]
    result: DataJob | None = None

    def wait(self) -> dict[str, Written]:
        if self.result is None:
            with os.fdopen(self.report, "rb") as fh:
                text = fh.read()
            _, status = os.waitpid(self.pid, 0)
            written = _records(text) if os.waitstatus_to_exitcode(status) == 0 else None
            self.result = _Here(written, Background(None)) if written is not None else self.redo()
        return self.result.wait()

    def close(self) -> None:
        if self.result is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            os.close(self.report)
            self.result = done()
        self.result.close()


def _records(text: bytes) -> dict[str, Written] | None:
    """The child's report: `[[name, sha256, size, mtime_ns, inode], ...]`; None when it is
    not one (a child cut short)."""
    try:
        rows = json.loads(text)
        return {str(n): Written(str(s), int(z), int(m), int(i)) for n, s, z, m, i in rows}
    except (ValueError, TypeError):
        return None


def _child(
    write: int, work: Path, documents: Mapping[str, Any], site_url: str | None, keep: Keep | None
) -> None:
    """The forked child: write, keep, report, and leave without running the parent's exit
    code (its cleanups, its buffered output)."""
    code = 1
    try:
        written = _write(work, documents, site_url)
        if keep is not None:
            keep(work / "data", written)
        rows = [[n, w.sha256, w.size, w.mtime_ns, w.inode] for n, w in written.items()]
        with os.fdopen(write, "wb") as fh:
            fh.write(json.dumps(rows).encode())
        code = 0
    except BaseException:  # noqa: BLE001 - the parent writes data/ again and reports it
        code = 1
    finally:
        os._exit(code)


def start_data(
    work: Path,
    documents: Mapping[str, Any],
    *,
    site_url: str | None,
    keep: Keep | None,
    jobs: int,
) -> DataJob:
    """Start writing `<work>/data/` from `documents` (`keep`, if any, is then handed the
    folder and the records of its files); `wait` on the job before reading data/."""

    def here() -> _Here:
        return _here(work, documents, site_url, keep)

    big = len(documents["pointers"].get("pointers", ())) >= MIN_FORKED_POINTERS
    if jobs < 2 or not big or not hasattr(os, "fork"):
        return here()
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return here()
    if pid == 0:  # the child
        os.close(read)
        _child(write, work, documents, site_url, keep)
    os.close(write)
    return _Forked(pid, read, here)
