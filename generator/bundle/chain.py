"""The bundle source the build uses: local layouts first, then the cache, then the registry.

The trusted-registry policy is checked before anything is read, so an excluded bundle is never
fetched from any source. Registry pulls enter the cache. A cached bundle without signatures is
re-checked against the registry when one may be asked, because a signature referrer can be
attached after the bundle was first seen; offline, the cached copy is used as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from generator.model import BundleRef

from .cache import BundleCache
from .layout import OciLayoutSource
from .oci import materialize
from .refs import check_policy, parse_reference
from .types import Limits, Materialized, offline_error

if TYPE_CHECKING:
    from .registry import RegistryClient

log = logging.getLogger(__name__)


class ChainSource:
    """A `BundleSource` chaining layouts, the cache and the registry (never when `offline`)."""

    def __init__(
        self,
        layouts: Sequence[OciLayoutSource],
        cache: BundleCache | None,
        registry: RegistryClient | None,
        offline: bool,
        *,
        trusted_prefixes: tuple[str, ...] | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.layouts = tuple(layouts)
        self.cache = cache
        self.registry = registry
        self.offline = offline
        if trusted_prefixes is None and registry is not None:
            trusted_prefixes = registry.trusted_prefixes
        self.trusted_prefixes = trusted_prefixes
        self.limits = limits or (registry.limits if registry is not None else Limits())

    def fetch(self, ref: BundleRef) -> Materialized:
        """The bundle `ref.digest` names, from the first source that holds it."""
        reference = parse_reference(ref)
        check_policy(reference, self.trusted_prefixes)
        for layout in self.layouts:
            found = layout.find(ref)
            if found is not None:
                return found
        cached = self.cache.get(reference.digest) if self.cache is not None else None
        usable_registry = self.registry if not self.offline else None
        if cached is not None and (cached.signatures or usable_registry is None):
            return cached
        if usable_registry is None:
            reason = "--offline" if self.offline else "no registry client"
            raise offline_error(ref, f"not in any --oci-layout, not cached, {reason}")
        raw = usable_registry.fetch_raw(ref)
        materialized = materialize(
            raw, origin="registry", limits=usable_registry.limits, where=ref.pinned_ref
        )
        if self.cache is not None:
            try:
                self.cache.put(raw)
            except OSError as exc:
                log.warning("could not cache bundle %s in %s: %s", raw.digest, self.cache.root, exc)
        return materialized
