"""What the tree seam reads: signer identities, pointers (parsed or rejected), allowlist entries."""

from __future__ import annotations

from dataclasses import dataclass

from generator.model._enums import PredicateType, SignerClass
from generator.model._ids import OciDigest, RecipeName, SourceId, SourceSlug, source_id, source_slug


@dataclass(frozen=True)
class SignerIdentity:
    """A signer's (issuer, identity) pair. Verified when it comes from a certificate."""

    issuer: str
    identity: str

    @property
    def slug(self) -> SourceSlug:
        return source_slug(self.issuer, self.identity)

    @property
    def source_id(self) -> SourceId:
        return source_id(self.issuer, self.identity)

    @property
    def consensus_key(self) -> str:
        return f"{self.issuer}\n{self.identity}"


@dataclass(frozen=True)
class ClaimedSigner:
    """The signer a pointer claims (unverified until the certificate agrees)."""

    identity: SignerIdentity
    rekor_log_index: int | None = None


@dataclass(frozen=True)
class BundleRef:
    """`attestations[0].bundle`: where the OCI evidence artifact is and what it claims to be."""

    oci: str
    digest: OciDigest | None
    predicate_type: PredicateType

    @property
    def repository(self) -> str:
        """`registry/repo` without tag or digest."""
        ref = self.oci.split("@", 1)[0]
        last = ref.rsplit("/", 1)
        if len(last) == 2 and ":" in last[1]:
            return f"{last[0]}/{last[1].split(':', 1)[0]}"
        return ref

    @property
    def pinned_ref(self) -> str:
        """The digest-pinned `<registry>/<repo>@sha256:<hex>` (aicr's `evidenceRef`)."""
        return f"{self.repository}@{self.digest}" if self.digest else self.oci


@dataclass(frozen=True)
class Pointer:
    """A schema-valid pointer (spec 2.1). `attested_at` is normalised RFC 3339 UTC with `Z`."""

    schema_version: str
    recipe: RecipeName
    profile: str | None
    bundle: BundleRef
    signer: ClaimedSigner | None
    attested_at: str

    @property
    def pending(self) -> bool:
        return self.signer is None


@dataclass(frozen=True)
class PointerLocation:
    """Where a pointer file sits, relative to the recipes root (forward slashes)."""

    path: str
    """e.g. `evidence/<recipe>/<source>/sha256-<hex>.yaml`, or `evidence/<recipe>.yaml` if flat."""
    folder_recipe: str | None
    folder_source: str | None

    @property
    def flat(self) -> bool:
        return self.folder_source is None


@dataclass(frozen=True)
class ParsedPointer:
    location: PointerLocation
    pointer: Pointer


@dataclass(frozen=True)
class RejectedPointer:
    """A pointer file that cannot be used: `rule` names the schema/contract rule that failed."""

    location: PointerLocation
    rule: str
    message: str
    hint: str
    recipe: str | None = None
    """The recipe it seems to be for (folder or `recipe:` value), for display only."""


PointerFile = ParsedPointer | RejectedPointer


# --------------------------------------------------------------------------- allowlist


@dataclass(frozen=True)
class AllowlistEntry:
    """One allowlist entry: exactly one of `source` and `identity_pattern` is set."""

    signer_class: SignerClass
    issuer: str
    label: str | None
    source: SourceSlug | None
    identity_pattern: str | None
    position: int
    """Index inside its class list, for messages and stable order."""


@dataclass(frozen=True)
class Classification:
    """How the allowlist classifies a verified signer. Unlisted: community, not allowlisted."""

    signer_class: SignerClass
    allowlisted: bool
    entry: AllowlistEntry | None
