"""The verify seam: real Sigstore verification and aicr's five-step verifier, fail closed.

- `trust`: which Sigstore trust root verifies (`load_trust`), refreshed or embedded.
- `policy`: the exact (issuer, SAN) identity policy and certificate identity reading.
- `signature`: the adapter around sigstore-python's `Verifier` (`verify_signature`).
- `pipeline`: `verify_pointer` / `verify_materialized`, producing a `Verdict` with aicr's steps.
- `serialize`: verdict JSON round trip and aicr's `VerifyResult` shape.
- `cache`: the on-disk verdict cache.

Nothing here reads the network or the clock, except `trust.tuf_refresh` when asked to refresh.
"""
