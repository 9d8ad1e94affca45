"""The engine of an evaluation: the trust root, the bundle source and the verdict cache.

Built once per build (and once per worker process when workers cannot inherit it). The OCI
layouts are indexed on the other core while the tree is hashed and read: a build starts the
`IndexPrefetch` first of all (`start_prefetch`) and hands it to its `Engines`, which hands its
answers to the layout sources (other callers let `Engines` start one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from generator.bundle.cache import BundleCache, default_cache_dir
from generator.bundle.chain import ChainSource
from generator.bundle.layout import OciLayoutSource
from generator.bundle.layoutmemo import LayoutIndexMemo
from generator.bundle.prefetch import IndexPrefetch
from generator.bundle.types import Limits
from generator.cacheauth import CacheAuth
from generator.options import EngineOptions
from generator.verify.cache import VerdictCache
from generator.verify.trust import Trust, load_trust
from generator.verify.trustmemo import TrustRecords

if TYPE_CHECKING:
    from generator.bundle.registry import RegistryClient

__all__ = ["CacheLookup", "Engine", "Engines", "build_engine", "cache_root", "start_prefetch"]


@dataclass(frozen=True)
class Engine:
    """What verifies a pointer: trust root, bundle source, verdict cache."""

    trust: Trust
    """The Sigstore trust root every bundle is verified against."""
    source: ChainSource
    """Where bundles come from: OCI layouts, the bundle cache, the registry."""
    verdicts: VerdictCache
    """Verdicts by bundle, trust root, verifier and policy (a hit skips verification)."""


@dataclass(frozen=True)
class CacheLookup:
    """What answers from the verdict cache without touching a bundle: the trust root and the
    cache (an `Engine` without its bundle source)."""

    trust: Trust
    verdicts: VerdictCache


def cache_root(options: EngineOptions) -> Path:
    """`--cache`, else the user's cache folder."""
    return options.cache or default_cache_dir()


def build_engine(options: EngineOptions, indexes: IndexPrefetch | None = None) -> Engine:
    """Trust, bundle source and verdict cache for these options (`indexes`: an
    `IndexPrefetch` of the layouts, when one was started), the root parsed: this engine
    verifies."""
    engine = _with_source(options, _lookup(options), indexes)
    engine.trust.parse_now()
    return engine


def _lookup(options: EngineOptions) -> CacheLookup:
    """The trust root (parsed now unless this cache has seen these bytes parse, see
    `generator.verify.trustmemo`) and the verdict cache."""
    auth, cache = CacheAuth.from_environment(), cache_root(options)
    records = TrustRecords(cache / "trust", auth)
    trust = load_trust(
        mode=options.trust_mode,
        root_file=options.trust_root,
        offline=options.offline,
        vouched=records.vouches,
    )
    records.remember(trust.digest)  # parsed by now, or vouched for already
    return CacheLookup(trust, VerdictCache(cache / "verify", auth))


def _with_source(
    options: EngineOptions, lookup: CacheLookup, indexes: IndexPrefetch | None
) -> Engine:
    """The engine of `lookup` with its bundle source (waiting for `indexes`' answers)."""
    limits = Limits()
    bundle_cache = BundleCache(cache_root(options) / "bundles", limits, lookup.verdicts.auth)
    layouts = [
        OciLayoutSource(path, limits, None if indexes is None else indexes.get(path))
        for path in options.oci_layouts
    ]
    registry = None if options.offline else _registry(options, limits)
    source = ChainSource(
        layouts,
        bundle_cache,
        registry,
        options.offline,
        trusted_prefixes=options.trusted_registries,
        limits=limits,
    )
    return Engine(lookup.trust, source, lookup.verdicts)


def start_prefetch(options: EngineOptions) -> IndexPrefetch:
    """The layouts of `options` indexed in a forked child from now on (a layout whose index
    the cache kept is not, `generator.bundle.layoutmemo`): for a caller that has other work
    to do before it builds its `Engines`."""
    memo = LayoutIndexMemo(cache_root(options) / "layouts", CacheAuth.from_environment())
    return IndexPrefetch(options.oci_layouts, Limits(), memo)


class Engines:
    """Builds a build's engine once, with the OCI layouts indexed meanwhile in a forked
    process (`prefetch=True`; a layout whose index the cache kept is not indexed again,
    `generator.bundle.layoutmemo`); `close` stops an index that is not needed (the evaluation
    was reused from the memo). A context manager."""

    def __init__(
        self,
        options: EngineOptions,
        *,
        prefetch: bool = True,
        indexes: IndexPrefetch | None = None,
    ) -> None:
        """`indexes`: the layouts' prefetch when the caller started it already
        (`start_prefetch`), else one is started here (with `prefetch`)."""
        self._options = options
        self._indexes = indexes
        if indexes is None and prefetch:
            self._indexes = start_prefetch(options)
        self._engine: Engine | None = None
        self._lookup: CacheLookup | None = None

    def lookup(self) -> CacheLookup:
        """The trust root and verdict cache, without waiting for the layouts' index: a build
        whose verdicts all come from the cache never needs a bundle."""
        if self._lookup is None:
            self._lookup = _lookup(self._options)
        return self._lookup

    def engine(self) -> Engine:
        """The engine, built on first use (its layouts checked: an unusable one raises)."""
        if self._engine is None:
            self._engine = _with_source(self._options, self.lookup(), self._indexes)
        return self._engine

    def check_layouts(self) -> None:
        """Raise as `engine` does when a layout cannot be used; a layout whose index an earlier
        build kept (`generator.bundle.layoutmemo`: the same `index.json` and blobs folder) was
        usable then and is not read again unless a bundle is needed."""
        if self._engine is None and (self._indexes is None or not self._indexes.all_kept()):
            self.engine()

    def verifying(self) -> Engine:
        """The engine, its trust root parsed: what every path that verifies asks for, so a
        root that cannot be used stops the build (exit 2) before anything is verified and
        never becomes a verdict (`engine` alone parses nothing: a build whose verdicts all
        come from the cache never needs the root parsed)."""
        engine = self.engine()
        engine.trust.parse_now()
        return engine

    def close(self) -> None:
        if self._indexes is not None:
            self._indexes.close()

    def __enter__(self) -> Engines:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _registry(options: EngineOptions, limits: Limits) -> RegistryClient:
    """The registry client of an online build (imported here: HTTP libraries cost an offline
    build, which never asks a registry, a tenth of a second)."""
    from generator.bundle.registry import RegistryClient

    return RegistryClient(
        mirrors=dict(options.registry_mirrors),
        trusted_prefixes=options.trusted_registries,
        auth_file=options.registry_auth,
        limits=limits,
        deadline=options.fetch_timeout,
        allow_private=options.allow_private_registries,
    )
