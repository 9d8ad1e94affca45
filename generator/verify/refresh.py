"""What a failed TUF trust-root refresh means: a network fault may fall back, anything else stops.

TUF's point is that a client never goes back to older or unsigned trust data: expired metadata
(a freeze), a lower version (a rollback), missing or bad signatures and wrong hashes are attacks
or a broken repository, and using the root bundled in the wheel instead would undo exactly that
protection without anyone noticing. So only faults that say "the repository could not be
reached" (python-tuf's `DownloadError` family except an over-long download, an `OSError` such as a
refused connection or a timeout but not a local file error, urllib3's transport errors) allow the fallback, and the site
then says so on every page. Every other fault, TUF security errors first, stops the build.

sigstore wraps the TUF client's errors in its own `TUFError`, so the whole cause chain is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from generator.errors import InputError, Location

__all__ = ["RefreshFallback", "refresh_fallback"]

_SECURITY_HINT = (
    "check the TUF repository (or a proxy in between) for expired, rolled-back or tampered "
    "metadata and build again once it is fixed; only if you accept an older root, build with "
    "--offline or --trust-root FILE"
)


_LOCAL_FILE_ERRORS = (
    FileNotFoundError,
    FileExistsError,
    PermissionError,
    IsADirectoryError,
    NotADirectoryError,
)
"""OSErrors of the local TUF metadata store: not the network, so no reason to fall back."""


@dataclass(frozen=True)
class RefreshFallback:
    """Why the refresh could not reach the repository (the build falls back, with a banner)."""

    reason: str


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text}"[:300]


def refresh_fallback(exc: BaseException, *, url: str) -> RefreshFallback:
    """Classify a refresh failure: a `RefreshFallback` for a network fault; raises `InputError`
    (exit 2) for a TUF security error or any fault that is not plainly a network one."""
    from tuf.api import exceptions as tuf_errors
    from urllib3 import exceptions as urllib3_errors

    chain = list(_chain(exc))
    security_types = (tuf_errors.RepositoryError, tuf_errors.DownloadLengthMismatchError)
    network_types = (tuf_errors.DownloadError, OSError, urllib3_errors.HTTPError)
    remote = [e for e in chain if not isinstance(e, _LOCAL_FILE_ERRORS)]
    # The outermost classifiable error decides (a cause that was only being handled when it
    # happened, such as an invalid local copy replaced by a download, does not).
    first = next((e for e in remote if isinstance(e, security_types + network_types)), None)
    if first is not None and isinstance(first, security_types):
        raise InputError(
            "the TUF trust-root refresh failed a security check; refusing to fall back to an "
            "older root",
            location=Location(url),
            expected="current, correctly signed TUF metadata (no expiry, rollback or bad hash)",
            found=_describe(first),
            hint=_SECURITY_HINT,
        ) from exc
    if first is None:
        raise InputError(
            "the TUF trust-root refresh failed for a reason that is not a network fault; "
            "refusing to fall back to an older root",
            location=Location(url),
            expected="a refreshed trust root, or a network error that allows the fallback",
            found=_describe(chain[-1]),
            hint=_SECURITY_HINT,
        ) from exc
    detail = _describe(first)
    if chain[-1] is not first:
        detail = f"{detail}, caused by {_describe(chain[-1])}"
    return RefreshFallback(f"the TUF refresh of {url} could not reach the repository ({detail})")
