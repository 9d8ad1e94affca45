"""The shapes the verifier needs of the bundle seam and of the signature adapter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from generator.model import BundleRef, OciDigest, SignerIdentity
from generator.verify.signature import SignatureOk
from generator.verify.trust import Trust


class SignatureCandidateLike(Protocol):
    @property
    def referrer_digest(self) -> OciDigest: ...

    @property
    def bundle_json(self) -> bytes: ...


class MaterializedLike(Protocol):
    """What the verifier needs of `generator.bundle.types.Materialized`."""

    @property
    def digest(self) -> OciDigest: ...

    @property
    def files(self) -> Mapping[str, bytes]: ...

    @property
    def signatures(self) -> Sequence[SignatureCandidateLike]: ...


class BundleSourceLike(Protocol):
    """`generator.bundle.types.BundleSource`: fetch by digest or raise `BundleFetchError`."""

    def fetch(self, ref: BundleRef) -> Any: ...


class SignatureVerifier(Protocol):
    """`verify_signature`'s shape, so tests can pass a fake."""

    def __call__(
        self,
        bundle_json: bytes,
        trust: Trust,
        *,
        expected: SignerIdentity | None,
        rekor_log_index: int | None = None,
    ) -> SignatureOk: ...
