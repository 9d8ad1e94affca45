"""A small, read-only OCI distribution client over `requests`, built for untrusted registries.

It pulls a bundle by digest (manifest, single layer) and its Sigstore referrers (the OCI 1.1
referrers API, then the `sha256-<hex>` tag-schema fallback), checks every blob against its
digest, streams every body under a byte cap, and bounds each fetch with connect/read timeouts, a
total deadline enforced while bytes trickle in (see `transport`) and a minimum throughput. Auth is
anonymous bearer tokens from `WWW-Authenticate` (ghcr.io style); read-only credentials are read
only from an explicit `--registry-auth` file, used only after an anonymous 401/403, and only with
the registry host they were given for (never after a redirect to another host, never to a token
realm on another host, never over plain http except to a loopback mirror).
`--registry-mirror HOST=URL` fetches what names HOST from URL (plain http is allowed only for
mirrors). Hosts that resolve to non-public addresses are refused unless they are a mirror's
endpoint or named by `--allow-private-registry`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from urllib.parse import quote, urlsplit

from generator.model import BundleRef, FailureClass

from ._registry_auth import _Auth, _RegistryAuth
from ._registry_config import (
    Credentials,
    check_allowed_host,
    check_mirror_url,
    default_auth_file,
    load_credentials,
)
from ._registry_http import DEFAULT_FETCH_TIMEOUT, MIN_THROUGHPUT, THROUGHPUT_GRACE, _Attempt
from .oci import (
    INDEX_TYPE,
    MANIFEST_ACCEPT,
    SIGSTORE_TYPE,
    RawBundle,
    RawReferrer,
    bundle_layer,
    check_digest,
    index_candidates,
    materialize,
    referrer_layer,
    referrers_tag,
)
from .refs import Reference, check_policy, parse_reference
from .transport import HostAllowance, Transfer, transfer_scope
from .types import Limits, Materialized, status_error

__all__ = [
    "DEFAULT_FETCH_TIMEOUT",
    "MIN_THROUGHPUT",
    "THROUGHPUT_GRACE",
    "Credentials",
    "RegistryClient",
    "check_allowed_host",
    "check_mirror_url",
    "default_auth_file",
    "load_credentials",
]


class RegistryClient(_RegistryAuth):
    """A `BundleSource` that pulls from OCI registries (or their mirrors), read-only.

    `trusted_prefixes`, when set, limits fetches to `<registry>/<repo>` names under one of them.
    `allow_private` names hosts (`HOST` or `HOST:PORT`) that may resolve to non-public addresses;
    a mirror's own endpoint always may. `deadline` bounds each bundle fetch (`--fetch-timeout`).
    Credentials come from `credentials` or the explicit `auth_file`, never from a default file
    (`environ` is accepted for older callers and ignored).
    """

    def __init__(
        self,
        *,
        mirrors: Mapping[str, str] | None = None,
        trusted_prefixes: tuple[str, ...] | None = None,
        auth_file: Path | None = None,
        credentials: Credentials | None = None,
        limits: Limits | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        deadline: float = DEFAULT_FETCH_TIMEOUT,
        min_throughput: int = MIN_THROUGHPUT,
        throughput_grace: float = THROUGHPUT_GRACE,
        allow_private: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        del environ  # credentials are never read from a default location
        self.mirrors = {h.lower(): check_mirror_url(h, u) for h, u in (mirrors or {}).items()}
        self.trusted_prefixes = tuple(trusted_prefixes) if trusted_prefixes is not None else None
        if credentials is not None:
            self.credentials: Credentials = dict(credentials)
        else:
            self.credentials = load_credentials(auth_file) if auth_file is not None else {}
        self.allowance = HostAllowance(frozenset(check_allowed_host(h) for h in allow_private))
        self.min_throughput = min_throughput
        self.throughput_grace = throughput_grace
        self.limits = limits or Limits()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.deadline = deadline
        self._clock = clock
        self._local = threading.local()
        self._tokens: dict[tuple[str, str], _Auth] = {}
        self._challenges: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ public

    def fetch(self, ref: BundleRef) -> Materialized:
        """Pull, check and unpack the bundle `ref.digest` names, with its signatures."""
        raw = self.fetch_raw(ref)
        return materialize(raw, origin="registry", limits=self.limits, where=ref.pinned_ref)

    def fetch_raw(self, ref: BundleRef) -> RawBundle:
        """The digest-checked manifest, layer and Sigstore referrers, not yet unpacked."""
        reference = parse_reference(ref)
        check_policy(reference, self.trusted_prefixes)
        base = self.base_url(reference.registry)
        mirrored = reference.registry.lower() in self.mirrors
        allowance = self.allowance
        if mirrored:
            endpoint = urlsplit(base)
            port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
            allowance = allowance.with_entries([((endpoint.hostname or "").lower(), port)])
        attempt = _Attempt(
            base=base,
            repo=reference.repository,
            deadline_at=self._clock() + self.deadline,
            mirrored=mirrored,
            transfer=Transfer(deadline_at=time.monotonic() + self.deadline, allowance=allowance),
        )
        with transfer_scope(attempt.transfer):
            return self._fetch_raw(ref, reference, attempt)

    def _fetch_raw(self, ref: BundleRef, reference: Reference, attempt: _Attempt) -> RawBundle:
        limits = self.limits
        manifest = self._get(
            attempt,
            f"manifests/{reference.digest}",
            accept=MANIFEST_ACCEPT,
            cap=limits.manifest_json,
            cap_name="manifest_json",
            what="the bundle manifest",
        )
        assert manifest is not None
        where = ref.pinned_ref
        check_digest(manifest, reference.digest, "bundle manifest", where)
        layer_descriptor = bundle_layer(manifest, limits, where)
        layer = self._get(
            attempt,
            f"blobs/{layer_descriptor.digest}",
            accept="*/*",
            cap=limits.compressed_layer,
            cap_name="compressed_layer",
            what="the bundle layer",
        )
        assert layer is not None
        check_digest(layer, layer_descriptor.digest, "bundle layer", where)
        referrers = self._referrers(attempt, reference)
        return RawBundle(
            manifest=manifest,
            layer=layer,
            referrers=referrers,
            needed_credentials=attempt.needed_credentials,
        )

    def base_url(self, registry: str) -> str:
        """The mirror URL for `registry`, else `https://<registry>`."""
        return self.mirrors.get(registry.lower(), f"https://{registry}")

    # ------------------------------------------------------------------ referrers

    def _referrers(self, attempt: _Attempt, reference: Reference) -> tuple[RawReferrer, ...]:
        limits = self.limits
        api = f"referrers/{reference.digest}?artifactType={quote(SIGSTORE_TYPE, safe='')}"
        index = self._get(
            attempt,
            api,
            accept=INDEX_TYPE,
            cap=limits.referrer_manifest,
            cap_name="referrer_manifest",
            what="the referrers list",
            missing_ok=True,
        )
        if index is None:
            index = self._get(
                attempt,
                f"manifests/{referrers_tag(reference.digest)}",
                accept=INDEX_TYPE,
                cap=limits.referrer_manifest,
                cap_name="referrer_manifest",
                what="the referrers tag",
                missing_ok=True,
            )
        if index is None:
            return ()
        where = f"{reference.name} referrers of {reference.digest}"
        found: list[RawReferrer] = []
        for candidate in index_candidates(index, limits, where, FailureClass.REGISTRY):
            manifest = self._get(
                attempt,
                f"manifests/{candidate.digest}",
                accept=MANIFEST_ACCEPT,
                cap=limits.referrer_manifest,
                cap_name="referrer_manifest",
                what="a signature referrer manifest",
            )
            assert manifest is not None
            check_digest(manifest, candidate.digest, "signature referrer manifest", where)
            layer = referrer_layer(manifest, reference.digest, limits, where)
            if layer is None:
                continue
            blob = self._get(
                attempt,
                f"blobs/{layer.digest}",
                accept="*/*",
                cap=limits.sigstore_bundle,
                cap_name="sigstore_bundle",
                what="a signature referrer layer",
            )
            assert blob is not None
            check_digest(blob, layer.digest, "signature referrer layer", where)
            found.append(RawReferrer(manifest=manifest, layer=blob))
        return tuple(found)

    def _get(
        self,
        attempt: _Attempt,
        path: str,
        *,
        accept: str,
        cap: int,
        cap_name: str,
        what: str,
        missing_ok: bool = False,
    ) -> bytes | None:
        """GET `/v2/<repo>/<path>`; the body under `cap`, or None for a 404 when `missing_ok`."""
        url = f"{attempt.base}/v2/{attempt.repo}/{path}"
        response = self._authorized(attempt, url, accept)
        try:
            status = response.status_code
            if status == 404 and missing_ok:
                return None
            if status != 200:
                raise status_error(status, what, url=url)
            return self._body(attempt, response, url, cap, cap_name, what)
        finally:
            response.close()
