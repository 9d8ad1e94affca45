"""The registry client against a scripted fake registry: auth, referrers and every fault class."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from generator.bundle.artifact import write_to_layout
from generator.bundle.cache import BundleCache
from generator.bundle.chain import ChainSource
from generator.bundle.layout import OciLayoutSource
from generator.bundle.layout_writer import LayoutWriter
from generator.bundle.refs import prefix_matches
from generator.bundle.registry import RegistryClient, load_credentials
from generator.bundle.types import BundleFetchError, Limits, RegistryPolicyError
from generator.errors import InputError
from generator.model import BundleRef, FailureClass, PredicateType

REPO = "nvidia/aicr-evidence"


def client(fake: Any, **kwargs: Any) -> RegistryClient:
    kwargs.setdefault("credentials", {})
    return RegistryClient(mirrors={"ghcr.io": fake.base_url}, read_timeout=2.0, **kwargs)


def failure(fake: Any, sample: Any, **kwargs: Any) -> BundleFetchError:
    with pytest.raises(BundleFetchError) as caught:
        client(fake, **kwargs).fetch(sample.ref())
    return caught.value


def test_anonymous_pull_with_the_referrers_api(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    got = client(fake_registry).fetch(sample.ref())
    assert got.origin == "registry"
    assert got.files == sample.files
    assert [s.referrer_digest for s in got.signatures] == [sample.signatures[0].digest]
    assert got.needed_credentials is False
    assert fake_registry.requests_to(r"/referrers/")
    assert not fake_registry.requests_to(r"/manifests/sha256-")


def test_tag_schema_fallback_when_the_api_is_missing(fake_registry: Any, sample: Any) -> None:
    fake_registry.referrers_api = False
    fake_registry.add(REPO, sample, tag_schema=True)
    got = client(fake_registry).fetch(sample.ref())
    assert [s.referrer_digest for s in got.signatures] == [sample.signatures[0].digest]
    assert fake_registry.requests_to(r"/manifests/sha256-")


def test_no_referrers_anywhere_is_unsigned(fake_registry: Any, sample_factory: Any) -> None:
    fake_registry.referrers_api = False
    unsigned = sample_factory(signatures=0)
    fake_registry.add(REPO, unsigned)
    assert client(fake_registry).fetch(unsigned.ref()).signatures == ()


def test_401_then_anonymous_token_flow(fake_registry: Any, sample: Any) -> None:
    fake_registry.auth = "bearer"
    fake_registry.add(REPO, sample)
    got = client(fake_registry).fetch(sample.ref())
    assert got.files == sample.files and got.needed_credentials is False
    tokens = fake_registry.requests_to(r"^/token")
    assert len(tokens) == 1, "the token is reused for the following requests"
    assert tokens[0][2] == "", "the token is requested anonymously"
    assert "scope=repository" in tokens[0][1]
    later = [e for e in fake_registry.log if "/blobs/" in e[1]]
    assert later and all(e[2] == "Bearer anon-token" for e in later)


def auth_file(tmp_path: Path, host: str, secret: str = "secret") -> Path:
    path = tmp_path / "config.json"
    token = base64.b64encode(f"user:{secret}".encode()).decode()
    path.write_text(json.dumps({"auths": {host: {"auth": token}}}), encoding="utf-8")
    return path


def host_of(fake: Any) -> str:
    return str(fake.base_url.split("://", 1)[1])


def test_credentials_are_used_only_after_an_anonymous_refusal(
    fake_registry: Any, sample: Any, tmp_path: Path
) -> None:
    fake_registry.auth = "credentials"
    fake_registry.add(REPO, sample)
    path = auth_file(tmp_path, f"http://{host_of(fake_registry)}")
    got = RegistryClient(mirrors={"ghcr.io": fake_registry.base_url}, auth_file=path).fetch(
        sample.ref()
    )
    assert got.files == sample.files
    assert got.needed_credentials is True
    tokens = fake_registry.requests_to(r"^/token")
    assert tokens[0][2] == "", "first an anonymous token"
    assert any(e[2].startswith("Basic ") for e in tokens[1:])


def test_anonymous_success_never_sends_credentials(
    fake_registry: Any, sample: Any, tmp_path: Path
) -> None:
    fake_registry.auth = "bearer"
    fake_registry.add(REPO, sample)
    path = auth_file(tmp_path, host_of(fake_registry))
    got = RegistryClient(mirrors={"ghcr.io": fake_registry.base_url}, auth_file=path).fetch(
        sample.ref()
    )
    assert got.needed_credentials is False
    assert not any(e[2].startswith("Basic ") for e in fake_registry.log)


def test_private_package_without_credentials_is_forbidden(fake_registry: Any, sample: Any) -> None:
    fake_registry.auth = "credentials"
    fake_registry.add(REPO, sample)
    error = failure(fake_registry, sample)
    assert error.failure_class is FailureClass.REGISTRY_FORBIDDEN
    assert error.http_status == 401 and error.transient is False
    assert "public" in (error.hint or "")


def test_wrong_credentials_stay_forbidden(fake_registry: Any, sample: Any, tmp_path: Path) -> None:
    fake_registry.auth = "credentials"
    fake_registry.add(REPO, sample)
    creds = load_credentials(auth_file(tmp_path, host_of(fake_registry), secret="wrong"))
    error = failure(fake_registry, sample, credentials=creds)
    assert error.failure_class is FailureClass.REGISTRY_FORBIDDEN


STATUSES = [
    (401, FailureClass.REGISTRY_FORBIDDEN, False),
    (403, FailureClass.REGISTRY_FORBIDDEN, False),
    (404, FailureClass.NOT_FOUND, False),
    (429, FailureClass.TRANSIENT, True),
    (500, FailureClass.TRANSIENT, True),
    (503, FailureClass.TRANSIENT, True),
    (400, FailureClass.REGISTRY, False),
]


@pytest.mark.parametrize(
    ("target", "status", "failure_class", "transient"),
    [
        (target, *row)
        for target in ("manifests/sha256:", "blobs/", "referrers/")
        for row in STATUSES
        # a 404 from the referrers API means "no API": the client takes the tag schema
        if not (target == "referrers/" and row[0] == 404)
    ],
)
def test_statuses_map_to_failure_classes(
    fake_registry: Any,
    sample: Any,
    target: str,
    status: int,
    failure_class: FailureClass,
    transient: bool,
) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault(target, status)
    error = failure(fake_registry, sample)
    assert error.failure_class is failure_class
    assert error.http_status == status
    assert error.transient is transient


def test_a_transient_fault_then_success(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault("blobs/", 503, times=1)
    assert failure(fake_registry, sample).transient is True
    assert client(fake_registry).fetch(sample.ref()).files == sample.files


@pytest.mark.parametrize("target", ["manifests/sha256:", "blobs/"])
def test_bytes_that_do_not_match_their_digest(fake_registry: Any, sample: Any, target: str) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault(target, "corrupt", times=1)
    error = failure(fake_registry, sample)
    assert error.failure_class is FailureClass.REGISTRY
    assert error.transient is True
    assert "does not match its digest" in error.message


def test_a_corrupt_referrer_layer_is_caught(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    sig_layer = json.loads(sample.signatures[0].manifest)["layers"][0]["digest"]
    fake_registry.fault(f"blobs/{sig_layer}", "corrupt")
    error = failure(fake_registry, sample)
    assert error.failure_class is FailureClass.REGISTRY and error.transient is True


def test_mismatching_blobs_never_enter_the_cache(
    fake_registry: Any, sample: Any, tmp_path: Path
) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault("blobs/", "corrupt")
    cache = BundleCache(tmp_path / "cache")
    chain = ChainSource([], cache, client(fake_registry), offline=False)
    with pytest.raises(BundleFetchError):
        chain.fetch(sample.ref())
    assert cache.get(sample.digest) is None
    blobs = tmp_path / "cache" / "blobs" / "sha256"
    assert not blobs.exists() or not any(blobs.iterdir())


def test_redirects_to_another_host_drop_the_token(fake_registry: Any, sample: Any) -> None:
    fake_registry.auth = "bearer"
    fake_registry.add(REPO, sample)
    fake_registry.fault("^/v2/.*/blobs/", "redirect")
    # The redirect target is another loopback host name: allowed explicitly (address guard).
    got = client(fake_registry, allow_private=["localhost"]).fetch(sample.ref())
    assert got.files == sample.files
    cdn = fake_registry.requests_to(r"^/cdn/")
    assert cdn and all(entry[2] == "" for entry in cdn)
    redirected = fake_registry.requests_to(r"^/v2/.*/blobs/")
    assert redirected and all(entry[2] == "Bearer anon-token" for entry in redirected)


def test_a_redirect_loop_is_a_registry_error(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault("/blobs/", "redirect")
    error = failure(fake_registry, sample, allow_private=["localhost"])
    assert error.failure_class is FailureClass.REGISTRY and "redirected too often" in error.message


def test_the_policy_error_is_a_distinct_type(fake_registry: Any, sample: Any) -> None:
    with pytest.raises(RegistryPolicyError):
        client(fake_registry, trusted_prefixes=()).fetch(sample.ref())


def test_a_truncated_body_is_transient(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault("blobs/", "truncate", times=1)
    error = failure(fake_registry, sample)
    assert error.failure_class is FailureClass.TRANSIENT and error.transient is True


def test_a_server_that_never_answers_times_out(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault("manifests/", "hang")
    with pytest.raises(BundleFetchError) as caught:
        RegistryClient(
            mirrors={"ghcr.io": fake_registry.base_url}, credentials={}, read_timeout=0.3
        ).fetch(sample.ref())
    assert caught.value.failure_class is FailureClass.TRANSIENT
    assert caught.value.transient is True


def test_the_total_deadline_bounds_a_fetch(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    ticks = iter([0.0, 0.0, 100.0, 100.0, 100.0, 100.0])
    with pytest.raises(BundleFetchError) as caught:
        RegistryClient(
            mirrors={"ghcr.io": fake_registry.base_url},
            credentials={},
            deadline=10.0,
            clock=lambda: next(ticks, 100.0),
        ).fetch(sample.ref())
    assert "deadline" in caught.value.message and caught.value.transient is True


def test_an_oversized_declared_body_is_refused_unread(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    fake_registry.fault("blobs/", "oversize")
    error = failure(fake_registry, sample)
    assert error.failure_class is FailureClass.INTEGRITY
    assert "compressed_layer" in error.message


def test_a_streamed_body_over_the_cap_is_refused(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    error = failure(fake_registry, sample, limits=Limits(manifest_json=100))
    assert error.failure_class is FailureClass.INTEGRITY
    assert "manifest_json" in error.message


def test_policy_exclusion_happens_before_any_request(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    error = failure(fake_registry, sample, trusted_prefixes=("ghcr.io/nvidiax",))
    assert error.policy_excluded is True
    assert error.failure_class is FailureClass.REGISTRY and error.transient is False
    assert error.message == "excluded by registry policy"
    assert fake_registry.log == []


def test_policy_allows_a_trusted_prefix(fake_registry: Any, sample: Any) -> None:
    fake_registry.add(REPO, sample)
    got = client(fake_registry, trusted_prefixes=("ghcr.io/nvidia",)).fetch(sample.ref())
    assert got.files == sample.files


@pytest.mark.parametrize(
    ("prefix", "name", "matches"),
    [
        ("ghcr.io/nvidia", "ghcr.io/nvidia/x", True),
        ("ghcr.io/nvidia", "ghcr.io/nvidiax/y", False),
        ("ghcr.io/nvidia/", "ghcr.io/nvidia/x", True),
        ("ghcr.io/nvidia", "ghcr.io/nvidia", True),
        ("ghcr.io", "ghcr.io/anything/deep", True),
        ("ghcr.io/nvidia/x", "ghcr.io/nvidia", False),
        ("", "ghcr.io/nvidia/x", False),
    ],
)
def test_prefix_matching_is_on_segment_boundaries(prefix: str, name: str, matches: bool) -> None:
    assert prefix_matches(prefix, name) is matches


def test_unpinned_refs_are_refused(fake_registry: Any) -> None:
    ref = BundleRef("ghcr.io/nvidia/aicr-evidence:tag", None, PredicateType.V3)
    with pytest.raises(BundleFetchError) as caught:
        client(fake_registry).fetch(ref)
    assert "digest-pinned" in caught.value.message
    assert fake_registry.log == []


def test_non_mirrors_are_https_only() -> None:
    reg = RegistryClient(mirrors={"ghcr.io": "http://127.0.0.1:1"}, credentials={})
    assert reg.base_url("ghcr.io") == "http://127.0.0.1:1"
    assert reg.base_url("quay.io") == "https://quay.io"
    with pytest.raises(InputError):
        RegistryClient(mirrors={"ghcr.io": "ftp://example"}, credentials={})


@pytest.mark.parametrize(
    "content",
    ["not json", '{"auths": []}', '{"auths": {"h": {"auth": "!!!"}}}'],
    ids=["garbage", "auths-not-object", "bad-base64"],
)
def test_an_explicit_bad_auth_file_is_an_input_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "auth.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError):
        load_credentials(path)


def test_auth_file_sources(tmp_path: Path) -> None:
    path = auth_file(tmp_path, "https://ghcr.io/v1/")
    assert load_credentials(path) == {"ghcr.io": ("user", "secret")}
    assert load_credentials(None, {"DOCKER_CONFIG": str(tmp_path)}) == {
        "ghcr.io": ("user", "secret")
    }
    assert load_credentials(None, {"DOCKER_CONFIG": str(tmp_path / "none")}) == {}
    with pytest.raises(InputError):
        load_credentials(tmp_path / "missing.json")


# --------------------------------------------------------------------------- chain


def test_chain_prefers_layouts_then_cache_then_registry(
    fake_registry: Any, sample: Any, sample_factory: Any, tmp_path: Path
) -> None:
    local = sample_factory("local")
    writer = LayoutWriter(tmp_path / "layout")
    write_to_layout(writer, local.bundle, local.signatures)
    writer.close()
    fake_registry.add(REPO, sample)
    cache = BundleCache(tmp_path / "cache")
    chain = ChainSource(
        [OciLayoutSource(tmp_path / "layout")], cache, client(fake_registry), offline=False
    )
    assert chain.fetch(local.ref()).origin == "layout"
    assert fake_registry.log == []
    assert chain.fetch(sample.ref()).origin == "registry"
    seen = len(fake_registry.log)
    again = chain.fetch(sample.ref())
    assert again.origin == "cache" and again.files == sample.files
    assert len(fake_registry.log) == seen


def test_offline_uses_only_local_sources(fake_registry: Any, sample: Any, tmp_path: Path) -> None:
    fake_registry.add(REPO, sample)
    chain = ChainSource([], BundleCache(tmp_path), client(fake_registry), offline=True)
    with pytest.raises(BundleFetchError) as caught:
        chain.fetch(sample.ref())
    error = caught.value
    assert error.failure_class is FailureClass.TRANSIENT and error.transient is True
    assert "--oci-layout" in (error.hint or "") and "--offline" in (error.hint or "")
    assert fake_registry.log == []


def test_offline_policy_still_applies(tmp_path: Path, sample: Any) -> None:
    writer = LayoutWriter(tmp_path)
    write_to_layout(writer, sample.bundle, sample.signatures)
    writer.close()
    chain = ChainSource(
        [OciLayoutSource(tmp_path)], None, None, offline=True, trusted_prefixes=("quay.io",)
    )
    with pytest.raises(BundleFetchError) as caught:
        chain.fetch(sample.ref())
    assert caught.value.policy_excluded is True


def test_an_unsigned_cached_bundle_is_rechecked_online(
    fake_registry: Any, sample: Any, tmp_path: Path
) -> None:
    from generator.bundle.oci import RawBundle

    cache = BundleCache(tmp_path)
    cache.put(RawBundle(sample.bundle.manifest, sample.bundle.blobs[-1]))
    fake_registry.add(REPO, sample)
    offline = ChainSource([], cache, None, offline=True).fetch(sample.ref())
    assert offline.origin == "cache" and offline.signatures == ()
    online = ChainSource([], cache, client(fake_registry), offline=False).fetch(sample.ref())
    assert online.origin == "registry" and len(online.signatures) == 1
    assert len(cache.get(sample.digest).signatures) == 1  # type: ignore[union-attr]


def test_a_listed_referrer_about_another_bundle_is_skipped(
    fake_registry: Any, sample_factory: Any
) -> None:
    """A referrers index may list a Sigstore referrer whose subject is another bundle: it is
    not this bundle's signature, so it is left out (never fetched as one, never a crash)."""
    from tests.bundle.conftest import INDEX_TYPE, referrers_index, referrers_tag

    ours, theirs = sample_factory("a"), sample_factory("b")
    fake_registry.referrers_api = False
    fake_registry.add(REPO, ours)
    fake_registry.add(REPO, theirs)
    fake_registry.manifests[(REPO, referrers_tag(ours.digest))] = (
        referrers_index((*theirs.signatures, *ours.signatures)),
        INDEX_TYPE,
    )
    got = client(fake_registry).fetch(ours.ref())
    assert [s.referrer_digest for s in got.signatures] == [ours.signatures[0].digest]


@pytest.mark.parametrize(
    ("base", "port"),
    [
        ("https://mirror.internal", 443),
        ("http://mirror.internal", 80),
        ("https://mirror.internal:8443", 8443),
    ],
    ids=["https-default", "http-default", "explicit"],
)
def test_a_mirror_is_reachable_at_its_own_port_and_no_other(
    base: str, port: int, sample: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mirror may sit on a private address: its host is allowed, at the URL's port (the
    scheme's default when the URL names none), and at no neighbouring port."""
    seen: dict[str, Any] = {}

    def stop_before_sending(self: Any, ref: Any, reference: Any, attempt: Any) -> Any:
        seen["allowance"] = attempt.transfer.allowance
        raise LookupError("stopped before the first request")

    monkeypatch.setattr(RegistryClient, "_fetch_raw", stop_before_sending)
    with pytest.raises(LookupError):
        RegistryClient(mirrors={"ghcr.io": base}, credentials={}).fetch_raw(sample.ref())
    allowance = seen["allowance"]
    assert allowance.allows("mirror.internal", port)
    assert not allowance.allows("mirror.internal", port + 1)
    assert not allowance.allows("mirror.internal", port - 1)
    assert not allowance.allows("other.internal", port)


def test_every_request_says_what_it_accepts(fake_registry: Any, sample: Any) -> None:
    """Manifests are asked for by their media types, blobs with `*/*` (some registries and
    proxies answer 406 to a request without an Accept they can serve)."""
    fake_registry.add(REPO, sample)
    client(fake_registry).fetch(sample.ref())
    blobs = [accept for path, accept in fake_registry.accepts if "/blobs/" in path]
    manifests = [accept for path, accept in fake_registry.accepts if "/manifests/" in path]
    assert blobs and set(blobs) == {"*/*"}
    assert manifests and all(
        a and "application/vnd.oci.image.manifest.v1+json" in a for a in manifests
    )


def test_authorization_is_dropped_on_a_redirect_to_the_host_spelled_otherwise(
    fake_registry: Any, sample: Any
) -> None:
    """Authorization follows a redirect only to the very same `host:port` as written; a
    Location that spells the host otherwise (`LOCALHOST`) gets the request without it."""
    fake_registry.auth = "bearer"
    fake_registry.add(REPO, sample)
    port = fake_registry.base_url.rsplit(":", 1)[1]
    fake_registry.fault("/blobs/", "redirect-upper", times=1)
    mirrored = RegistryClient(
        mirrors={"ghcr.io": f"http://localhost:{port}"},
        credentials={},
        read_timeout=2.0,
        allow_private=[f"127.0.0.1:{port}"],  # the fake's token realm
    )
    got = mirrored.fetch(sample.ref())
    assert got.files == sample.files
    cdn = fake_registry.requests_to(r"^/cdn/")
    assert cdn and all(auth == "" for _method, _path, auth in cdn), cdn
    assert any(auth.startswith("Bearer") for _m, _p, auth in fake_registry.log)


def test_a_compressed_answer_is_decoded_and_checked_by_its_content(
    fake_registry: Any, sample: Any
) -> None:
    """A CDN may gzip a manifest or a blob (`Content-Encoding: gzip`, Content-Length the wire
    size): the client reads the decoded bytes, which must still match their digests."""
    fake_registry.add(REPO, sample)
    fake_registry.fault("/(manifests|blobs)/", "gzip")
    got = client(fake_registry).fetch(sample.ref())
    assert got.files == sample.files
    assert [s.referrer_digest for s in got.signatures] == [sample.signatures[0].digest]


def test_a_compressed_answer_is_capped_by_its_decoded_size(fake_registry: Any, sample: Any) -> None:
    """A gzip answer small on the wire but over the cap once decoded (a compression bomb in
    small) is refused: the cap counts the bytes the client would keep, not the wire bytes."""
    import gzip
    from dataclasses import replace

    fake_registry.add(REPO, sample)
    fake_registry.fault("/manifests/", "gzip")
    manifest = sample.bundle.manifest
    packed = len(gzip.compress(manifest, mtime=0))
    assert packed < len(manifest) - 1
    limits = replace(Limits(), manifest_json=len(manifest) - 1)
    assert limits.manifest_json >= packed
    with pytest.raises(BundleFetchError, match="exceeds the manifest_json limit"):
        client(fake_registry, limits=limits).fetch(sample.ref())
