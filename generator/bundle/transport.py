"""Where, and for how long, the registry client may talk to a host.

Three guards sit under `requests`, in the connections themselves, so every request is covered
(redirect targets and token realms included):

- the address guard: before a socket is opened, the host is resolved once, every address it
  resolves to is checked, and the socket connects to the checked address (so a second DNS
  answer cannot swap in another one). Loopback, link-local, private, multicast, unspecified and
  reserved addresses are refused unless the transfer allows that host (its `--registry-mirror`
  endpoint, or `--allow-private-registry HOST`). A pooled connection is re-checked per request.
- the watchdog: one thread per process shuts down the sockets of a transfer whose total
  deadline (connect + headers + whole body) has passed, so a server that trickles bytes cannot
  hold a blocked read past it.
- `describe`: the tool's own words for a transport failure; raw socket and TLS text only goes to
  the build log, never into published data.
"""

from __future__ import annotations

import heapq
import http.client
import ipaddress
import itertools
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NameResolutionError

__all__ = [
    "PRIVATE_ADDRESS_REASON",
    "AddressRefused",
    "GuardedAdapter",
    "HostAllowance",
    "Transfer",
    "allowance_entry",
    "describe",
    "is_public_address",
    "transfer_scope",
]

PRIVATE_ADDRESS_REASON = (
    "registry host resolves to a private address; allow it with --allow-private-registry HOST"
)
"""The published reason for a refused host (the same words whatever the host or port)."""

UNREACHABLE = "registry unreachable"
TLS_FAILED = "TLS handshake failed"
RESET = "connection reset by the registry"
TIMED_OUT = "registry timed out"


# --------------------------------------------------------------------------- address policy


def is_public_address(address: str) -> bool:
    """True for a globally routable unicast address; False for loopback, link-local, private,
    multicast, unspecified, reserved (and IPv4-mapped forms of those) or anything unparsable."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (
        ip.is_loopback
        or ip.is_link_local
        or ip.is_private
        or ip.is_multicast
        or ip.is_unspecified
        or ip.is_reserved
        or not ip.is_global
    )


def allowance_entry(value: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]` or `[v6]:port` as (lowercase host, port or None)."""
    text = value.strip().lower()
    if "://" in text:
        text = text.split("://", 1)[1]
    text = text.split("/", 1)[0]
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host, port_text = text, ""
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"not a port: {port_text!r}")
        return host, int(port_text)
    if not host:
        raise ValueError("no host")
    return host, None


@dataclass(frozen=True)
class HostAllowance:
    """Hosts a transfer may reach at a non-public address: (host, port), port None for any."""

    entries: frozenset[tuple[str, int | None]] = frozenset()

    def allows(self, host: str, port: int | None) -> bool:
        name = host.strip("[]").lower().rstrip(".")
        return (name, port) in self.entries or (name, None) in self.entries

    def with_entries(self, more: Iterable[tuple[str, int | None]]) -> HostAllowance:
        return HostAllowance(self.entries | frozenset(more))


class AddressRefused(Exception):  # noqa: N818 - a refusal, not a fault
    """A host resolved to a non-public address the transfer does not allow; nothing was sent.

    Deliberately not an `OSError`, so urllib3 and requests pass it through unwrapped.
    """

    def __init__(self, host: str, port: int | None, address: str) -> None:
        super().__init__(f"{host}:{port} resolves to non-public address {address}")
        self.host, self.port, self.address = host, port, address


# --------------------------------------------------------------------------- transfers


@dataclass(eq=False)
class Transfer:
    """One bundle fetch: its monotonic deadline, its allowed hosts and the connections it used."""

    deadline_at: float
    allowance: HostAllowance = field(default_factory=HostAllowance)
    expired: bool = False
    finished: bool = False
    _connections: list[HTTPConnection] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def attach(self, connection: HTTPConnection) -> None:
        with self._lock:
            if not any(c is connection for c in self._connections):
                self._connections.append(connection)
            expired = self.expired
        if expired:
            _shutdown(connection)

    def expire(self) -> None:
        """Mark the transfer as out of time and cut every socket it is using."""
        with self._lock:
            if self.finished:
                return
            self.expired = True
            connections = list(self._connections)
        for connection in connections:
            _shutdown(connection)


def _shutdown(connection: HTTPConnection) -> None:
    sock = connection.sock
    if sock is None:
        return
    try:
        # The plain socket's shutdown, also for TLS sockets: it wakes a blocked read in another
        # thread without touching the TLS object that read is using.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class _Watchdog:
    """One daemon thread per process that expires transfers whose deadline has passed."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._seq = itertools.count()
        self._reset()
        # A forked worker must not inherit a lock the parent's watchdog thread may hold.
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Transfer]] = []
        self._pid = -1

    def watch(self, transfer: Transfer) -> None:
        with self._cond:
            if self._pid != os.getpid():  # first use in this process: start its thread
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="registry-watchdog", daemon=True).start()
            earliest = self._heap[0][0] if self._heap else None
            heapq.heappush(self._heap, (transfer.deadline_at, next(self._seq), transfer))
            if earliest is None or transfer.deadline_at < earliest:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            due: list[Transfer] = []
            with self._cond:
                while self._heap and self._heap[0][2].finished:
                    heapq.heappop(self._heap)
                now = self._clock()
                while self._heap and self._heap[0][0] <= now:
                    due.append(heapq.heappop(self._heap)[2])
                if not due:
                    wait = self._heap[0][0] - now if self._heap else None
                    self._cond.wait(wait)
                    continue
            for transfer in due:
                transfer.expire()


_WATCHDOG = _Watchdog()
_local = threading.local()


def _current() -> Transfer | None:
    current: Transfer | None = getattr(_local, "transfer", None)
    return current


@contextmanager
def transfer_scope(transfer: Transfer) -> Iterator[Transfer]:
    """Run this thread's requests as `transfer`: guarded addresses, watched deadline."""
    previous = _current()
    _local.transfer = transfer
    _WATCHDOG.watch(transfer)
    try:
        yield transfer
    finally:
        with transfer._lock:
            transfer.finished = True
        _local.transfer = previous


# --------------------------------------------------------------------------- connections


class _Guarded:
    """Mixin for urllib3 connections: the address guard and the watchdog hook."""

    host: str
    port: int
    _dns_host: str
    sock: socket.socket | None
    _non_public: bool = False

    def _new_conn(self) -> socket.socket:
        transfer = _current()
        if transfer is not None:
            transfer.attach(self)  # type: ignore[arg-type]
            self._non_public = False
            if not transfer.allowance.allows(self.host, self.port):
                self._dns_host = _checked_address(self)
            else:
                self._non_public = True
        sock: socket.socket = super()._new_conn()  # type: ignore[misc]
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        transfer = _current()
        if transfer is not None:
            transfer.attach(self)  # type: ignore[arg-type]
            if (
                self._non_public
                and self.sock is not None
                and not transfer.allowance.allows(self.host, self.port)
            ):
                # Opened for a transfer that allowed this host: reconnect under the guard.
                self.close()  # type: ignore[attr-defined]
        super().request(*args, **kwargs)  # type: ignore[misc]


def _checked_address(connection: _Guarded) -> str:
    """Resolve the host once, refuse it if any address is non-public, else the first address."""
    host = connection._dns_host
    try:
        infos = socket.getaddrinfo(host, connection.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise NameResolutionError(connection.host, connection, exc) from exc  # type: ignore[arg-type]
    addresses = [str(info[4][0]) for info in infos]
    for address in addresses:
        if not is_public_address(address):
            raise AddressRefused(connection.host, connection.port, address)
    if not addresses:
        raise NameResolutionError(
            connection.host,
            connection,  # type: ignore[arg-type]
            socket.gaierror("no address"),
        )
    return addresses[0]


class GuardedHTTPConnection(_Guarded, HTTPConnection):
    """A plain-HTTP connection under the address guard and the watchdog."""


class GuardedHTTPSConnection(_Guarded, HTTPSConnection):
    """A TLS connection under the address guard and the watchdog (SNI and certificate checks
    still use the host name; only the socket goes to the checked address)."""


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    """A `requests` adapter whose pools open guarded connections."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _GuardedHTTPPool,
            "https": _GuardedHTTPSPool,
        }


# --------------------------------------------------------------------------- wording


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo.extend(a for a in getattr(item, "args", ()) if isinstance(a, BaseException))
        linked = (
            item.__cause__,
            item.__context__,
            getattr(item, "reason", None),
            getattr(item, "original_error", None),
        )
        todo.extend(x for x in linked if isinstance(x, BaseException))


def describe(exc: BaseException) -> str:
    """The tool's wording for a transport failure (never the library's own text)."""
    chain = list(_chain(exc))
    if any(isinstance(e, requests.Timeout | TimeoutError | socket.timeout) for e in chain) or any(
        type(e).__name__ in ("ReadTimeoutError", "ConnectTimeoutError") for e in chain
    ):
        return TIMED_OUT
    if any(isinstance(e, requests.exceptions.SSLError | ssl.SSLError) for e in chain):
        return TLS_FAILED
    if any(
        isinstance(
            e,
            ConnectionResetError
            | BrokenPipeError
            | ConnectionAbortedError
            | http.client.RemoteDisconnected
            | http.client.IncompleteRead,
        )
        for e in chain
    ) or any(type(e).__name__ in ("ProtocolError", "ChunkedEncodingError") for e in chain):
        return RESET
    return UNREACHABLE
