"""Comparison: the signed recipe digest against the current one, from the first provider
that knows it (`DigestProvider`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from generator.model import Canonicalizer, Freshness, PredicateType

HEX64 = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class FreshnessResult:
    """`data/pointers.json` `freshness`: state, the signed and current digests, the provider."""

    state: Freshness
    signed: str | None
    current: str | None
    provider: str | None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": str(self.state),
            "signed": self.signed,
            "current": self.current,
            "provider": self.provider,
        }

    def describe(self) -> str:
        """aicr's wording: fresh, `stale (<12 hex>… vs current <12 hex>…)`, or unknown."""
        if self.state is Freshness.STALE and self.signed and self.current:
            return f"stale ({self.signed[:12]}… vs current {self.current[:12]}…)"
        return str(self.state)


UNKNOWN = FreshnessResult(Freshness.UNKNOWN, None, None, None)


class DigestProvider(Protocol):
    """Gives the current digest of a recipe for one canonicalizer, or None when it cannot."""

    @property
    def name(self) -> str: ...

    def current(
        self, recipe: str, profile: str | None, canonicalizer: Canonicalizer
    ) -> str | None: ...


def compare(
    signed: str,
    predicate_type: PredicateType,
    recipe: str,
    profile: str | None,
    providers: Sequence[DigestProvider],
) -> FreshnessResult:
    """Pure comparison over the providers in order of precedence; the first answer wins."""
    for provider in providers:
        current = provider.current(recipe, profile, predicate_type.canonicalizer)
        if current is None:
            continue
        state = Freshness.FRESH if current == signed else Freshness.STALE
        return FreshnessResult(state, signed, current, provider.name)
    return FreshnessResult(Freshness.UNKNOWN, signed or None, None, None)


def _is_hex64(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= HEX64
