"""A task on a thread of the build, whose error is raised where it is waited for."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Background"]


class Background:
    """Run `task` on a thread (None: nothing to run); `wait` joins it and raises what the task
    raised, once. The build's own threads only ever do file-system work."""

    def __init__(self, task: Callable[[], None] | None) -> None:
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if task is not None:

            def run() -> None:
                try:
                    task()
                except BaseException as exc:  # noqa: BLE001 - handed to `wait`
                    self._error = exc

            self._thread = threading.Thread(target=run, name="evidence-dashboard-keep", daemon=True)
            self._thread.start()

    def wait(self, *, quietly: bool = False) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None and not quietly:
            raise error
