"""Pure parsing of bundle references and the trusted-registry policy (aicr ingest semantics).

A bundle is always fetched by digest: `registry/repo@sha256:<hex>`, the tag in `bundle.oci` is
only a label. The policy matches trusted prefixes on path-segment boundaries, so `ghcr.io/nvidia`
covers `ghcr.io/nvidia/x` but not `ghcr.io/nvidiax/y`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.errors import Location
from generator.model import BundleRef, FailureClass, OciDigest

from .types import BundleFetchError, policy_error

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_REPO_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")


@dataclass(frozen=True)
class Reference:
    """A digest-pinned reference split into its registry host and repository path."""

    registry: str
    repository: str
    digest: OciDigest

    @property
    def name(self) -> str:
        """`<registry>/<repo>`, what trusted prefixes are matched against."""
        return f"{self.registry}/{self.repository}"


def is_digest(value: str) -> bool:
    """True for `sha256:` + 64 lowercase hex."""
    return bool(_DIGEST.match(value))


def digest_hex(digest: OciDigest) -> str:
    return digest.split(":", 1)[1]


def parse_reference(ref: BundleRef) -> Reference:
    """Split `ref` into registry, repository and pinned digest, or raise a `BundleFetchError`."""
    if ref.digest is None or not is_digest(ref.digest):
        raise BundleFetchError(
            "bundle reference is not digest-pinned",
            failure_class=FailureClass.SCHEMA,
            location=Location(ref.oci or "(empty bundle.oci)", "bundle.digest"),
            expected="bundle.digest of the form sha256:<64 lowercase hex>",
            found=repr(ref.digest),
            hint="push the bundle and record its manifest digest in the pointer",
        )
    name = ref.repository
    if name.startswith("oci://"):
        name = name[len("oci://") :]
    host, _, repo = name.partition("/")
    valid_host = (
        bool(host)
        and host not in (".", "..")
        and ("." in host or ":" in host or host == "localhost")
    )
    if not valid_host or not repo or not all(_REPO_COMPONENT.match(c) for c in repo.split("/")):
        raise BundleFetchError(
            "bundle.oci is not a registry reference",
            failure_class=FailureClass.SCHEMA,
            location=Location(ref.oci or "(empty bundle.oci)", "bundle.oci"),
            expected="<registry host>/<repository>[:tag], e.g. ghcr.io/owner/aicr-evidence:tag",
            found=repr(ref.oci),
            hint="fix bundle.oci in the pointer file",
        )
    return Reference(registry=host, repository=repo, digest=ref.digest)


def prefix_matches(prefix: str, name: str) -> bool:
    """Whether trusted `prefix` covers `<registry>/<repo>` `name`, on a path-segment boundary."""
    prefix = prefix.strip().rstrip("/")
    if not prefix:
        return False
    return name == prefix or name.startswith(prefix + "/")


def check_policy(reference: Reference, trusted_prefixes: tuple[str, ...] | None) -> None:
    """Raise the policy exclusion when `trusted_prefixes` is set and none covers `reference`."""
    if trusted_prefixes is None:
        return
    if not any(prefix_matches(p, reference.name) for p in trusted_prefixes):
        raise policy_error(reference.name, trusted_prefixes)
