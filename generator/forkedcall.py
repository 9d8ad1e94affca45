"""One call worked out by a forked child while this process goes on (`ForkedCall`).

A build starts some slow, self-contained work early on the other core: the OCI layouts'
index (`generator.bundle.prefetch`), the evidence tree's digest (`generator.treeprefetch`).
The child is forked (it inherits what it needs, nothing is imported or sent to it), runs the
call and sends back its value, pickled over a pipe only the two hold. `result` waits for that
value; anything but a value (the call raised, the child died or was killed, an answer longer
than the caller allows) is None, and the caller then does the work itself.
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ForkedCall", "can_fork", "fork_is_safe", "start_forked"]


def can_fork() -> bool:
    """Whether this platform forks (POSIX `fork`, as multiprocessing offers it)."""
    return "fork" in multiprocessing.get_all_start_methods()


def fork_is_safe() -> bool:
    """Whether a child forked now starts sound: `fork` is the plain POSIX call (Linux) and no
    other thread runs (a child would inherit the locks another thread holds, held forever)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


class ForkedCall:
    """`call(*args)` in a forked child; `result` (once) waits for its value, `close` stops a
    child whose value is not wanted. Only where `can_fork`."""

    def __init__(self, call: Callable[..., Any], args: tuple[Any, ...]) -> None:
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        self._process: Any = context.Process(target=_answer, args=(call, args, send), daemon=True)
        self._process.start()
        send.close()
        self._conn: Any = receive

    @property
    def pid(self) -> int:
        return int(self._process.pid)

    def is_alive(self) -> bool:
        return bool(self._process.is_alive())

    def result(self, max_bytes: int | None = None) -> Any:
        """The child's value, or None when it gave none (or one of more than `max_bytes`
        pickled); the child is then reaped."""
        try:
            data = self._conn.recv_bytes(max_bytes)
            value = pickle.loads(data)
        except (EOFError, OSError, pickle.UnpicklingError):
            value = None
        self._process.join()
        ok = self._process.exitcode == 0
        self.close()
        return value if ok else None

    def close(self) -> None:
        """Stop the child (when still running), reap it and let its pipe go."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._conn.close()


def start_forked(call: Callable[..., Any], args: tuple[Any, ...]) -> ForkedCall | None:
    """`ForkedCall(call, args)`, or None where no child starts sound now (`fork_is_safe`) or
    at all (out of processes or memory): the caller then does the work itself."""
    if not fork_is_safe():
        return None
    try:
        return ForkedCall(call, args)
    except OSError:
        return None


def _answer(call: Callable[..., Any], args: tuple[Any, ...], send: Any) -> None:
    """The child: the call's value sent back; a call that raises sends nothing."""
    try:
        send.send(call(*args))
    except Exception:  # noqa: BLE001 - no value: the parent does the work itself
        pass
    finally:
        send.close()
