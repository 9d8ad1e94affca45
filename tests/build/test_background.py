"""The build's background file work (the evaluation memo's copy of data/, kept while the site
is built): waited for before the folder moves, its errors raised where it is waited for."""

from __future__ import annotations

import threading

import pytest

from generator.evaluate.output import Background as _Background


def test_the_task_runs_on_another_thread_and_wait_joins_it() -> None:
    started = threading.Event()
    release = threading.Event()
    seen: list[str] = []

    def task() -> None:
        started.set()
        release.wait(5)
        seen.append(threading.current_thread().name)

    job = _Background(task)
    assert started.wait(5)
    assert seen == []  # still running while the caller goes on
    release.set()
    job.wait()
    assert seen and seen[0] != threading.current_thread().name


def test_an_error_is_raised_by_wait_once() -> None:
    def task() -> None:
        raise OSError("disk full")

    job = _Background(task)
    with pytest.raises(OSError, match="disk full"):
        job.wait()
    job.wait()  # raised once only


def test_quiet_wait_and_no_task() -> None:
    def task() -> None:
        raise ValueError("x")

    _Background(task).wait(quietly=True)
    _Background(None).wait()
