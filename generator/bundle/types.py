"""The bundle seam's interface: size limits, what a fetched bundle looks like, and how fetching fails.

Every source (an OCI layout, the local cache, a registry) returns the same `Materialized` value
or raises `BundleFetchError` with one of aicr's failure classes (spec 5.6), so the verifier can
turn a fetch failure into a verdict (or into "no verdict") without knowing where it happened.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from generator.errors import BundleError, Location
from generator.model import BundleRef, FailureClass, OciDigest

MiB = 1024 * 1024

MAX_SIGNATURES = 8
"""At most this many signature referrers are fetched and offered to the verifier."""

Origin = Literal["layout", "cache", "registry"]

FORBIDDEN_HINT = (
    "make the evidence package public, or provide registry credentials (--registry-auth FILE)"
)
OFFLINE_HINT = (
    "supply the bundle and its signature referrer in an OCI layout with --oci-layout DIR, "
    "or run without --offline so it can be fetched (and cached)"
)
TRANSIENT_HINT = "retry later; this says nothing about the evidence itself"


@dataclass(frozen=True)
class Limits:
    """Byte and count caps for every untrusted read (spec 5.8, plus caps of our own)."""

    manifest_json: int = 1 * MiB
    referrer_manifest: int = 1 * MiB
    sigstore_bundle: int = 10 * MiB
    compressed_layer: int = 64 * MiB
    unpacked_total: int = 256 * MiB
    tar_entries: int = 10_000
    unpack_ratio: int = 200
    recipe_yaml: int = 1 * MiB
    manifest_file: int = 1 * MiB
    """`manifest.json` inside the bundle."""
    ctrf_file: int = 10 * MiB
    """Each `ctrf/<phase>.json`."""


@dataclass(frozen=True)
class SignatureCandidate:
    """One Sigstore-bundle referrer of a bundle manifest: its manifest digest and its layer bytes."""

    referrer_digest: OciDigest
    bundle_json: bytes


@dataclass(frozen=True)
class Materialized:
    """A bundle whose manifest and layer bytes matched their digests, unpacked in memory.

    `files` maps bundle-relative paths (any `summary-bundle/` prefix removed) to bytes.
    `signatures` holds at most `MAX_SIGNATURES` candidates, ordered by referrer digest.
    """

    digest: OciDigest
    manifest: bytes
    layer_digest: OciDigest
    files: Mapping[str, bytes]
    signatures: tuple[SignatureCandidate, ...]
    origin: Origin
    needed_credentials: bool = False

    @property
    def signed(self) -> bool:
        return bool(self.signatures)


class BundleFetchError(BundleError):
    """Getting a bundle failed. `failure_class` is aicr's class for it (spec 5.6).

    `policy_excluded` is True only when the bundle's registry/repo is outside every trusted
    prefix: the bundle was not fetched at all, on purpose.
    """

    def __init__(
        self,
        message: str,
        *,
        failure_class: FailureClass,
        http_status: int | None = None,
        transient: bool = False,
        policy_excluded: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, http_status=http_status, transient=transient, **kwargs)
        self.failure_class = failure_class
        self.policy_excluded = policy_excluded


class RegistryPolicyError(BundleFetchError):
    """The bundle's `<registry>/<repo>` is outside every trusted prefix; it was not fetched."""


class PrivateAddressError(RegistryPolicyError):
    """A registry host resolved to a non-public address that no option allows; nothing was sent.

    `published_detail` is the reason the verdict shows (the tool's words, the same for every
    host, so the published data says nothing about which ports answer)."""

    @property
    def published_detail(self) -> str:
        return self.message


class BundleSource(Protocol):
    """Anything that can turn a pointer's bundle reference into a materialized bundle."""

    def fetch(self, ref: BundleRef) -> Materialized:
        """Return the bundle `ref.digest` names; raise `BundleFetchError` when it cannot."""
        ...


# --------------------------------------------------------------------------- error constructors


def status_error(status: int, what: str, *, url: str) -> BundleFetchError:
    """The error for an HTTP status from a registry, classified as aicr's `classifyFailure`."""
    location = Location(url)
    if status in (401, 403):
        return BundleFetchError(
            f"registry refused access to {what} (HTTP {status})",
            failure_class=FailureClass.REGISTRY_FORBIDDEN,
            http_status=status,
            location=location,
            expected="an anonymous or credentialed pull to succeed",
            found=f"HTTP {status}",
            hint=FORBIDDEN_HINT,
        )
    if status == 404:
        return BundleFetchError(
            f"registry has no {what} (HTTP 404)",
            failure_class=FailureClass.NOT_FOUND,
            http_status=status,
            location=location,
            expected=f"{what} to exist",
            found="HTTP 404",
            hint="check the pointer's bundle.oci and bundle.digest; the artifact may have been deleted",
        )
    if status == 429 or status >= 500:
        return BundleFetchError(
            f"registry failed to serve {what} (HTTP {status})",
            failure_class=FailureClass.TRANSIENT,
            http_status=status,
            transient=True,
            location=location,
            expected="HTTP 200",
            found=f"HTTP {status}",
            hint=TRANSIENT_HINT,
        )
    return BundleFetchError(
        f"registry answered HTTP {status} for {what}",
        failure_class=FailureClass.REGISTRY,
        http_status=status,
        location=location,
        expected="HTTP 200",
        found=f"HTTP {status}",
        hint="check the registry reference and any --registry-mirror mapping",
    )


def transient_error(message: str, *, url: str, found: str | None = None) -> BundleFetchError:
    """A transport fault (timeout, reset, truncated body): no verdict on the evidence."""
    return BundleFetchError(
        message,
        failure_class=FailureClass.TRANSIENT,
        transient=True,
        location=Location(url),
        found=found,
        hint=TRANSIENT_HINT,
    )


def digest_mismatch(what: str, *, expected: str, found: str, where: str) -> BundleFetchError:
    """Bytes that do not hash to the digest they were fetched by: a storage or transport fault."""
    return BundleFetchError(
        f"{what} does not match its digest",
        failure_class=FailureClass.REGISTRY,
        transient=True,
        location=Location(where),
        expected=expected,
        found=found,
        hint="the bytes were corrupted in storage or transit; retry, or fetch from another source",
    )


def cap_error(
    what: str, cap_name: str, cap: int, *, where: str, found: str | None = None
) -> BundleFetchError:
    """A size or count cap was exceeded: the content is refused (`integrity`)."""
    return BundleFetchError(
        f"{what} exceeds the {cap_name} limit of {cap} {'entries' if cap_name == 'tar_entries' else 'bytes'}",
        failure_class=FailureClass.INTEGRITY,
        location=Location(where),
        expected=f"at most {cap} ({cap_name})",
        found=found,
        hint="an evidence bundle this large is refused; rebuild it with fewer or smaller files",
    )


def integrity_error(
    message: str,
    *,
    where: str,
    expected: str | None = None,
    found: str | None = None,
    hint: str | None = None,
) -> BundleFetchError:
    """Content that cannot be a valid bundle (bad manifest, unsafe tar): `integrity`."""
    return BundleFetchError(
        message,
        failure_class=FailureClass.INTEGRITY,
        location=Location(where),
        expected=expected,
        found=found,
        hint=hint or "re-create and re-push the evidence bundle with aicr",
    )


def offline_error(ref: BundleRef, reason: str) -> BundleFetchError:
    """The bundle is in no layout and not cached, and the registry may not be asked."""
    return BundleFetchError(
        f"bundle {ref.digest} is not available offline ({reason})",
        failure_class=FailureClass.TRANSIENT,
        transient=True,
        location=Location(ref.pinned_ref),
        expected="the bundle in an --oci-layout directory or the local cache",
        found="neither holds it",
        hint=OFFLINE_HINT,
    )


def policy_error(repository: str, prefixes: tuple[str, ...]) -> RegistryPolicyError:
    """The bundle's `<registry>/<repo>` is outside every trusted prefix."""
    return RegistryPolicyError(
        "excluded by registry policy",
        failure_class=FailureClass.REGISTRY,
        policy_excluded=True,
        location=Location(repository),
        expected="a repository under one of: " + ", ".join(prefixes or ("(none)",)),
        found=repository,
        hint="add the registry prefix to the trusted registries, or move the evidence there",
    )
