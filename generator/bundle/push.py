"""A small OCI pusher for tests and the demo: blobs, manifests by digest and tag, referrers.

It speaks the plain distribution API (monolithic `POST` + `PUT ?digest=` uploads) and also writes
the OCI 1.1 tag-schema referrers index `sha256-<hex>`, so registries without the referrers API
(distribution 2.8) still expose the signature referrer.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urljoin

import requests

from generator.errors import Location
from generator.model import FailureClass, OciDigest

from .artifact import Artifact, referrers_index
from .oci import INDEX_TYPE, referrers_tag, sha256_digest
from .types import BundleFetchError, status_error


def _check(response: requests.Response, expected: tuple[int, ...], what: str) -> None:
    if response.status_code not in expected:
        raise status_error(response.status_code, what, url=response.url)


def _blob(
    session: requests.Session, base: str, repository: str, blob: bytes, timeout: float
) -> OciDigest:
    digest = sha256_digest(blob)
    head = session.head(f"{base}/v2/{repository}/blobs/{digest}", timeout=timeout)
    if head.status_code == 200:
        return digest
    start = session.post(f"{base}/v2/{repository}/blobs/uploads/", timeout=timeout)
    _check(start, (202,), "a blob upload")
    location = start.headers.get("Location")
    if not location:
        raise BundleFetchError(
            "registry gave no upload location",
            failure_class=FailureClass.REGISTRY,
            location=Location(base),
            expected="a Location header on 202",
            found="none",
        )
    target = urljoin(f"{base}/", location)
    sep = "&" if "?" in target else "?"
    put = session.put(
        f"{target}{sep}digest={digest}",
        data=blob,
        timeout=timeout,
        headers={"Content-Type": "application/octet-stream"},
    )
    _check(put, (201, 204), f"blob {digest}")
    return digest


def _manifest(
    session: requests.Session,
    base: str,
    repository: str,
    reference: str,
    body: bytes,
    media_type: str,
    timeout: float,
) -> None:
    put = session.put(
        f"{base}/v2/{repository}/manifests/{reference}",
        data=body,
        headers={"Content-Type": media_type},
        timeout=timeout,
    )
    _check(put, (201, 204), f"manifest {reference}")


def push_artifacts(
    base_url: str,
    repository: str,
    bundle: Artifact,
    signatures: Sequence[Artifact] = (),
    *,
    tag: str | None = None,
    tag_schema: bool = True,
    timeout: float = 30.0,
    session: requests.Session | None = None,
) -> OciDigest:
    """Push `bundle` (by digest, and by `tag`), its `signatures` and the referrers tag index.

    Returns the bundle manifest digest. Raises `BundleFetchError` on an HTTP failure.
    """
    base = base_url.rstrip("/")
    http = session or requests.Session()
    for artifact in (bundle, *signatures):
        for blob in artifact.blobs:
            _blob(http, base, repository, blob, timeout)
    digest = bundle.digest
    _manifest(http, base, repository, digest, bundle.manifest, bundle.media_type, timeout)
    if tag:
        _manifest(http, base, repository, tag, bundle.manifest, bundle.media_type, timeout)
    for signature in signatures:
        _manifest(
            http,
            base,
            repository,
            signature.digest,
            signature.manifest,
            signature.media_type,
            timeout,
        )
    if tag_schema and signatures:
        _manifest(
            http,
            base,
            repository,
            referrers_tag(digest),
            referrers_index(signatures),
            INDEX_TYPE,
            timeout,
        )
    return digest
