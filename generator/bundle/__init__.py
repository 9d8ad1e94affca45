"""The bundle seam: get evidence bundles from OCI layouts, the local cache or a registry.

`ChainSource.fetch(BundleRef) -> Materialized` is what the verifier calls; every source checks
each blob against its digest, unpacks the layer safely in memory (`extract.extract_layer`) and
raises `types.BundleFetchError` carrying aicr's failure class when it cannot.

The registry client (`registry.RegistryClient`) is layered over private modules: its options
(`_registry_config`), HTTP with deadlines and caps (`_registry_http`) and authorization
(`_registry_auth`). The face below is lazy: naming a name imports only its module, so reading
an OCI layout never loads `requests`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.lazyface import lazy_face

if TYPE_CHECKING:
    from generator.bundle.cache import BundleCache, default_cache_dir
    from generator.bundle.chain import ChainSource
    from generator.bundle.extract import extract_layer
    from generator.bundle.layout import LayoutReader, OciLayoutSource, read_capped
    from generator.bundle.layout_writer import LayoutWriter
    from generator.bundle.prefetch import IndexPrefetch
    from generator.bundle.push import push_artifacts
    from generator.bundle.refs import Reference, parse_reference
    from generator.bundle.registry import (
        RegistryClient,
        check_allowed_host,
        check_mirror_url,
        load_credentials,
    )
    from generator.bundle.types import (
        BundleFetchError,
        BundleSource,
        Limits,
        Materialized,
        PrivateAddressError,
        RegistryPolicyError,
        SignatureCandidate,
    )

__all__ = [
    "BundleCache",
    "BundleFetchError",
    "BundleSource",
    "ChainSource",
    "IndexPrefetch",
    "LayoutReader",
    "LayoutWriter",
    "Limits",
    "Materialized",
    "OciLayoutSource",
    "PrivateAddressError",
    "Reference",
    "RegistryClient",
    "RegistryPolicyError",
    "SignatureCandidate",
    "check_allowed_host",
    "check_mirror_url",
    "default_cache_dir",
    "extract_layer",
    "load_credentials",
    "parse_reference",
    "push_artifacts",
    "read_capped",
]

_HOME = {
    "BundleCache": "cache",
    "BundleFetchError": "types",
    "BundleSource": "types",
    "ChainSource": "chain",
    "IndexPrefetch": "prefetch",
    "LayoutReader": "layout",
    "LayoutWriter": "layout_writer",
    "Limits": "types",
    "Materialized": "types",
    "OciLayoutSource": "layout",
    "PrivateAddressError": "types",
    "Reference": "refs",
    "RegistryClient": "registry",
    "RegistryPolicyError": "types",
    "SignatureCandidate": "types",
    "check_allowed_host": "registry",
    "check_mirror_url": "registry",
    "default_cache_dir": "cache",
    "extract_layer": "extract",
    "load_credentials": "registry",
    "parse_reference": "refs",
    "push_artifacts": "push",
    "read_capped": "layout",
}
"""Which submodule defines each public name."""


__getattr__, __dir__ = lazy_face(__name__, _HOME, __all__, globals())
