"""First-party evidence without a pointer: `--bundle-refs FILE` (issue 3).

aicr's own CI signs and pushes evidence bundles but commits no pointer file. A bundle-refs file
lists such bundles, each digest-pinned and with the identity policy its signature must meet:

    - ref: ghcr.io/nvidia/aicr-evidence@sha256:<64 hex>
      issuer: https://token.actions.githubusercontent.com
      identityPattern: '^https://github\\.com/NVIDIA/aicr/\\.github/workflows/uat-aws\\.yaml@refs/heads/.+$'
      recipe: <recipe name>          # optional; when given, the bundle must be for it

Each entry is verified by the same pipeline as a pointer, against the same trust root, bundle
source and registry policy. The pointer fields a file would carry are derived from the bundle
(recipe, profile, attestedAt, predicateType from its DSSE statement) and the claimed signer is
the certificate identity, taken only when its SAN fully matches `identityPattern` (RE2) and its
issuer equals `issuer`; the pipeline then proves that exact identity signed the bundle. The
allowlist classifies the signer like any other, so only a first-party entry makes such runs count.

An entry gets the synthetic path `bundle-refs/<index>-sha256-<hex>`: never a path derived from the
ref, which is untrusted text. Malformed entries are an `InputError` naming the file and index.

Reading and validating the file is `_parse`; verifying an entry is `_verify`.
"""

from generator.bundlerefs._parse import (
    MAX_CANDIDATES,
    MAX_FILE_BYTES,
    NO_MATCH_HINT,
    SCHEMA_VERSION,
    BundleRefEntry,
    load_bundle_refs,
    parse_bundle_refs,
)
from generator.bundlerefs._verify import derived_pointer, verify_bundle_ref

__all__ = [
    "MAX_CANDIDATES",
    "MAX_FILE_BYTES",
    "NO_MATCH_HINT",
    "SCHEMA_VERSION",
    "BundleRefEntry",
    "derived_pointer",
    "load_bundle_refs",
    "parse_bundle_refs",
    "verify_bundle_ref",
]
