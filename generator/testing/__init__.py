"""The project's own test Sigstore authority and evidence bundle factory (tests, benchmark, demo).

- `authority.TestAuthority`: Fulcio-like CA, CT log, Rekor v1/v2-like logs and an RFC 3161 TSA whose
  bundles the real `sigstore.verify.Verifier` accepts against `trusted_root_json()`.
- `bundles.build_bundle(BundleSpec, TestAuthority) -> BuiltBundle`: aicr-shaped summary bundles,
  OCI manifests, signature referrers and pointers; `write_to_layout`; `tamper_*` negative cases.
"""

__all__: list[str] = []  # a namespace: import `generator.testing.authority` and the rest by name
