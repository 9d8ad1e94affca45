"""The version of the signature rules, apart from the code that applies them (which imports
sigstore): the verdict cache reads it for every key, also in builds that verify nothing."""

from __future__ import annotations

__all__ = ["RULES_VERSION"]

RULES_VERSION = "signature-rules/2"
"""What a signature must satisfy here, beyond sigstore (2: one signer per certificate, trust-root
windows at signing time). Part of the verdict-cache key, so a verdict made under older rules is
verified again instead of being reused."""
