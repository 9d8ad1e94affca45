"""Sigstore trust roots: which root verifies, whether it was refreshed, and its digest.

Three sources (sigstore-offline.md 3):

- the public-good production or staging root, refreshed through TUF when online;
- the copy embedded in the sigstore wheel, read straight from the package resources (never through
  the user cache, which an older copy can shadow, pitfall 11) when offline or when a refresh fails;
- an explicit file: a bare `trusted_root.json` or a ClientTrustConfig wrapping one.

`Trust.digest` (sha256 of the root JSON bytes) feeds the verdict cache key, so a new root never
reuses verdicts made under an old one.

A root is parsed when it is loaded, so one that cannot be used is refused before anything is
verified, unless the caller vouches for its exact bytes (`vouched`: the build's cache records
the roots it has seen parse, `generator.verify.trustmemo`); such a root is parsed on first use
of `Trust.trusted_root`, which a build that verifies does before its first verification.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from generator.errors import InputError, Location, UsageError
from generator.verify.refresh import refresh_fallback

if TYPE_CHECKING:  # sigstore is imported where a root is parsed: a build whose output is
    # already published (the memo) never loads it
    from sigstore.models import TrustedRoot

PRODUCTION_TUF_URL = "https://tuf-repo-cdn.sigstore.dev"
STAGING_TUF_URL = "https://tuf-repo-cdn.sigstage.dev"
PUBLIC_LOG_SEARCH = "https://search.sigstore.dev/?logIndex="
"""Rekor search UI for the public-good production v1 log; the only log we link to."""

TRUSTED_ROOT_MEDIA_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
CLIENT_TRUST_CONFIG_PREFIX = "application/vnd.dev.sigstore.clienttrustconfig"

_MODES: dict[str, tuple[str, bool]] = {
    "production": (PRODUCTION_TUF_URL, True),
    "staging": (STAGING_TUF_URL, False),
}

Refresher = Callable[[str], bytes]
"""Fetches the current trusted_root.json bytes of a TUF repository URL (may raise anything)."""


@dataclass(frozen=True)
class Trust:
    """One trust root and where it came from."""

    name: str
    production: bool
    refreshed: bool
    digest: str
    public_log_base: str | None
    parsed: Callable[[], TrustedRoot] = field(repr=False, compare=False)
    """The parsed root (parsed already, or on the first call)."""
    fallback: str | None = None
    """Why a refresh fell back to the wheel's root (a network fault), for the site's banner."""

    @cached_property
    def trusted_root(self) -> TrustedRoot:
        """The parsed root; `InputError` (exit 2) when it cannot be used."""
        return self.parsed()

    def parse_now(self) -> None:
        """Parse the root if it was not (`InputError`, exit 2, when it cannot be used): called
        before anything is verified, so a bad root stops a build and never becomes a verdict."""
        _ = self.trusted_root

    def log_url(self, log_index: int | None, *, rekor_v2: bool = False) -> str | None:
        """A public transparency-log link for a v1 entry of the public-good log, else None."""
        if self.public_log_base is None or log_index is None or rekor_v2:
            return None
        return f"{self.public_log_base}{log_index}"


def embedded_root_bytes(mode: str) -> bytes:
    """The trusted_root.json shipped inside the sigstore wheel for `production` or `staging`."""
    url, _ = _mode(mode)
    folder = url.replace(":", "%3A").replace("/", "%2F")
    return (resources.files("sigstore._store") / folder / "trusted_root.json").read_bytes()


def tuf_refresh(url: str) -> bytes:
    """Refresh the TUF repository at `url` online and return the verified trusted root bytes."""
    from sigstore._internal.tuf import TrustUpdater  # private, but the only verified TUF path

    return Path(TrustUpdater(url, offline=False).get_trusted_root_path()).read_bytes()


def load_trust(
    *,
    mode: str = "production",
    root_file: Path | None = None,
    offline: bool = False,
    refresh: Refresher | None = None,
    vouched: Callable[[str], bool] | None = None,
) -> Trust:
    """Load the trust root to verify with (parsed now, unless `vouched` says these bytes,
    named by their sha256, have parsed before: see the module).

    `root_file` wins over `mode`. Otherwise the public-good root of `mode` is refreshed through
    TUF (`refresh`, default `tuf_refresh`) unless `offline`. When offline, or when the refresh
    could not reach the repository (a network fault), the wheel's embedded copy is used and
    `refreshed` is False; a network fallback also sets `fallback`, which every page shows. A
    TUF security error (expired, rolled back, unsigned, bad hash) or any other fault raises
    `InputError` (exit 2): falling back then would defeat TUF's rollback and freeze protection.
    """
    if root_file is not None:
        return _from_file(root_file, vouched)
    url, production = _mode(mode)
    data: bytes | None = None
    fallback: str | None = None
    if not offline:
        try:
            data = (refresh or tuf_refresh)(url)
        except Exception as exc:  # noqa: BLE001 - classified: only a network fault falls back
            fallback = refresh_fallback(exc, url=url).reason
            data = None
    refreshed = data is not None
    if data is None:
        data = embedded_root_bytes(mode)
    digest = hashlib.sha256(data).hexdigest()
    return Trust(
        name=mode,
        production=production,
        refreshed=refreshed,
        digest=digest,
        public_log_base=PUBLIC_LOG_SEARCH if production else None,
        fallback=f"{fallback}; verified with the root bundled in sigstore instead"
        if fallback
        else None,
        parsed=_parser(lambda: _parse_root(data, file=f"{mode} trusted root"), digest, vouched),
    )


def _parser(
    parse: Callable[[], TrustedRoot], digest: str, vouched: Callable[[str], bool] | None
) -> Callable[[], TrustedRoot]:
    """`parse`, run now (its error raised now) unless `vouched` vouches for `digest`."""
    if vouched is not None and vouched(digest):
        return parse
    root = parse()
    return lambda: root


def _mode(mode: str) -> tuple[str, bool]:
    try:
        return _MODES[mode]
    except KeyError:
        raise UsageError(
            f"unknown trust mode {mode!r}",
            expected="production or staging",
            found=mode,
            hint="pass --trust production, --trust staging or --trust-root FILE",
        ) from None


def _from_file(path: Path, vouched: Callable[[str], bool] | None = None) -> Trust:
    """A bare trusted root or a ClientTrustConfig, told apart by `mediaType`."""
    file = path.name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            "cannot read the trust root file",
            location=Location(str(path)),
            expected="a readable trusted_root.json or ClientTrustConfig JSON",
            found=str(exc),
            hint="check the --trust-root path",
        ) from exc
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise InputError(
            "trust root file is not JSON",
            location=Location(file),
            expected="a trusted_root.json or ClientTrustConfig JSON document",
            found=str(exc),
            hint="pass the trusted_root.json of your Sigstore instance",
        ) from exc
    media = doc.get("mediaType") if isinstance(doc, dict) else None
    digest = hashlib.sha256(data).hexdigest()

    def parse() -> TrustedRoot:
        if isinstance(media, str) and media.startswith(CLIENT_TRUST_CONFIG_PREFIX):
            return _parse_config(data, file, media)
        return _parse_root(data, file=file)

    return Trust(
        name=file,
        production=False,
        refreshed=False,
        digest=digest,
        public_log_base=None,
        parsed=_parser(parse, digest, vouched),
    )


def _parse_config(data: bytes, file: str, media: str) -> TrustedRoot:
    from sigstore.models import ClientTrustConfig

    try:
        return ClientTrustConfig.from_json(data.decode("utf-8")).trusted_root
    except Exception as exc:  # noqa: BLE001 - sigstore raises pydantic and own errors
        raise _bad_root(file, media, exc) from exc


def _parse_root(data: bytes, *, file: str) -> TrustedRoot:
    from sigstore.models import TrustedRoot
    from sigstore_models.trustroot import v1 as trustroot_v1

    try:
        return TrustedRoot(trustroot_v1.TrustedRoot.from_json(data))
    except Exception as exc:  # noqa: BLE001 - pydantic ValidationError or sigstore Error
        media = None
        try:
            doc = json.loads(data)
            media = doc.get("mediaType") if isinstance(doc, dict) else None
        except ValueError:
            pass
        raise _bad_root(file, media, exc) from exc


def _bad_root(file: str, media: object, exc: Exception) -> InputError:
    return InputError(
        "trust root cannot be used",
        location=Location(file, "mediaType"),
        expected=f"{TRUSTED_ROOT_MEDIA_TYPE} or a ClientTrustConfig v0.1",
        found=f"{media!r}: {exc}".splitlines()[0],
        hint="pass a protobuf-JSON trusted root (sigstore trust root format 0.1)",
    )
