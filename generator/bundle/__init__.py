"""The bundle seam: get evidence bundles from OCI layouts, the local cache or a registry.

`ChainSource.fetch(BundleRef) -> Materialized` is what the verifier calls; every source checks
each blob against its digest, unpacks the layer safely in memory (`extract.extract_layer`) and
raises `types.BundleFetchError` carrying aicr's failure class when it cannot.
"""
