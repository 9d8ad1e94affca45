"""Deep and oversized documents at every reader that is not a bundle's own file: a registry's
referrers list and token answer (a 127.0.0.1 fake registry), an OCI layout's listed manifests
and nested indexes, the `--bundle-refs` and `--digests` files, the allowlist and the overlays.

Each is that item's refusal with a reason naming the limit (`registry` for a registry's answer),
never a `RecursionError`; a layout with one unreadable blob still serves every other bundle.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from generator.bundle.artifact import write_to_layout
from generator.bundle.layout import OciLayoutSource
from generator.bundle.layout_writer import LayoutWriter
from generator.bundle.oci import INDEX_TYPE, MANIFEST_TYPE
from generator.bundle.registry import RegistryClient
from generator.bundle.types import BundleFetchError
from generator.errors import AllowlistError, InputError
from generator.model import BundleRef, FailureClass, PredicateType
from tests.bundle.conftest import FakeRegistry, _handler, make_sample

REPO = "nvidia/aicr-evidence"
DEEP = 10_000


def deep_json(depth: int, open_: bytes = b"[", close: bytes = b"]") -> bytes:
    return open_ * depth + close * depth


def deep_object(depth: int) -> bytes:
    """A JSON object (so callers that want one read past the type check) nested `depth` deep."""
    return b'{"manifests": ' + deep_json(depth - 1) + b"}"


# --------------------------------------------------------------------------- registry


class ScriptedRegistry(FakeRegistry):
    """The bundle seam's fake registry, answering referrers and token requests with set bodies."""

    referrers_body: bytes | None = None
    token_body: bytes | None = None


@pytest.fixture
def registry() -> Iterator[ScriptedRegistry]:
    state = ScriptedRegistry()
    base = _handler(state)

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?", 1)[0]
            if "/referrers/" in path and state.referrers_body is not None:
                state.log.append((self.command, self.path, ""))
                self._send(200, state.referrers_body, {"Content-Type": INDEX_TYPE})
                return
            if path == "/token" and state.token_body is not None:
                state.log.append((self.command, self.path, ""))
                self._send(200, state.token_body, {"Content-Type": "application/json"})
                return
            super().do_GET()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    import threading

    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()


def _fetch_failure(registry: ScriptedRegistry) -> BundleFetchError:
    sample = make_sample()
    registry.add(REPO, sample)
    client = RegistryClient(
        mirrors={"ghcr.io": registry.base_url}, credentials={}, read_timeout=5.0
    )
    with pytest.raises(BundleFetchError) as caught:
        client.fetch(sample.ref())
    return caught.value


@pytest.mark.parametrize("depth", [65, DEEP])
def test_a_deep_referrers_response_is_a_registry_refusal(
    registry: ScriptedRegistry, depth: int
) -> None:
    registry.referrers_body = deep_object(depth)
    error = _fetch_failure(registry)
    assert error.failure_class is FailureClass.REGISTRY
    assert "referrers index exceeds a parse limit" in error.message
    assert "nested more than 64 deep" in error.diagnostics()


def test_a_referrers_response_64_deep_is_read(registry: ScriptedRegistry) -> None:
    # 64 levels in all: the index object, its manifests list, and 62 more inside an annotation
    registry.referrers_body = (
        b'{"schemaVersion": 2, "manifests": [], "annotations": {"x": ' + deep_json(61) + b"}}"
    )
    sample = make_sample()
    registry.add(REPO, sample)
    got = RegistryClient(
        mirrors={"ghcr.io": registry.base_url}, credentials={}, read_timeout=5.0
    ).fetch(sample.ref())
    assert got.digest == sample.digest and not got.signatures


@pytest.mark.parametrize("depth", [65, DEEP])
def test_a_deep_token_response_is_a_registry_refusal(
    registry: ScriptedRegistry, depth: int
) -> None:
    registry.auth = "bearer"
    registry.token_body = b'{"token": ' + deep_json(depth - 1) + b"}"
    error = _fetch_failure(registry)
    assert error.failure_class is FailureClass.REGISTRY
    assert "token endpoint returned junk" in error.message
    assert "nested more than 64 deep" in error.diagnostics()
    assert registry.requests_to(r"^/token")


# --------------------------------------------------------------------------- OCI layout


def _layout_with_two_bundles(root: Path) -> tuple[Any, Any]:
    good, other = make_sample("good"), make_sample("other")
    writer = LayoutWriter(root)
    for sample in (good, other):
        write_to_layout(writer, sample.bundle, sample.signatures)
    writer.close()
    return good, other


@pytest.mark.parametrize("depth", [65, DEEP])
def test_a_deep_manifest_in_a_layout_refuses_that_bundle_only(tmp_path: Path, depth: int) -> None:
    good, _ = _layout_with_two_bundles(tmp_path)
    writer = LayoutWriter(tmp_path)
    deep = deep_object(depth)
    digest = writer.add_manifest(deep, MANIFEST_TYPE, ref_name="deep")
    nested = writer.add_manifest(deep_object(depth) + b" ", INDEX_TYPE, ref_name="deep-index")
    writer.close()
    source = OciLayoutSource(tmp_path)  # indexing skips what it cannot read
    assert source.fetch(good.ref()).digest == good.digest
    assert [s.referrer_digest for s in source.fetch(good.ref()).signatures] == [
        good.signatures[0].digest
    ]
    for bad in (digest, nested):
        with pytest.raises(BundleFetchError) as caught:
            source.fetch(
                BundleRef(
                    oci="ghcr.io/nvidia/aicr-evidence:deep",
                    digest=bad,
                    predicate_type=PredicateType.V3,
                )
            )
        assert caught.value.failure_class is FailureClass.INTEGRITY
        assert "bundle manifest exceeds a parse limit" in caught.value.message
        assert "nested more than 64 deep" in caught.value.message


def test_a_deep_top_level_index_names_the_limit(tmp_path: Path) -> None:
    _layout_with_two_bundles(tmp_path)
    (tmp_path / "index.json").write_bytes(deep_object(DEEP))
    with pytest.raises(InputError) as caught:
        OciLayoutSource(tmp_path)
    assert "nested more than 64 deep" in caught.value.diagnostics()


def test_a_layout_index_listing_more_than_one_document_may_hold_is_read(tmp_path: Path) -> None:
    """The top-level index.json lists every bundle (two entries each): it is read under the
    listing limits, so a large layout stays usable past the per-document item and size caps."""
    from generator.limits import LISTING_LIMITS, PARSE_LIMITS

    good, _ = _layout_with_two_bundles(tmp_path)
    index = json.loads((tmp_path / "index.json").read_bytes())
    filler = {
        "mediaType": MANIFEST_TYPE,
        "size": 1,
        "artifactType": "application/x-other",
        "annotations": {"org.example.padding": "p" * 40},
    }
    extra = PARSE_LIMITS.container_items + 10
    index["manifests"] += [dict(filler, digest=f"sha256:{i:064x}") for i in range(extra)]
    data = json.dumps(index).encode()
    assert PARSE_LIMITS.document_bytes < len(data) <= LISTING_LIMITS.document_bytes
    (tmp_path / "index.json").write_bytes(data)
    source = OciLayoutSource(tmp_path)
    assert source.fetch(good.ref()).digest == good.digest


# --------------------------------------------------------------------------- option files


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("refs.json", deep_json(DEEP)),
        ("refs.json", deep_json(65)),
        ("refs.yaml", b"[" * DEEP + b"]" * DEEP + b"\n"),
        ("refs.yaml", b"- " * 65 + b"x\n"),
    ],
)
def test_a_deep_bundle_refs_file_is_an_input_error(tmp_path: Path, name: str, data: bytes) -> None:
    from generator.bundlerefs import load_bundle_refs

    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        load_bundle_refs(path)
    text = caught.value.diagnostics()
    assert str(path) in text
    assert "nested more than 64 deep" in text or "nesting too deep" in text


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("digests.json", b'{"r": ' + deep_json(DEEP) + b"}"),
        ("digests.json", b'{"r": ' + deep_json(64) + b"}"),
        ("digests.yaml", b"r: " + b"[" * DEEP + b"]" * DEEP + b"\n"),
    ],
)
def test_a_deep_digests_file_is_an_input_error(tmp_path: Path, name: str, data: bytes) -> None:
    from generator.freshness import DigestsFileProvider

    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        DigestsFileProvider.load(path)
    text = caught.value.diagnostics()
    assert str(path) in text
    assert "nested more than 64 deep" in text or "nesting too deep" in text


def test_a_digests_file_at_the_depth_limit_is_read(tmp_path: Path) -> None:
    from generator.freshness import DigestsFileProvider

    path = tmp_path / "digests.json"
    path.write_text(json.dumps({"r": {"v3": "ab" * 32}}), encoding="utf-8")
    assert DigestsFileProvider.load(path).table == {"r": {"v3": "ab" * 32}}


# --------------------------------------------------------------------------- tree YAML


def _bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize(
    "data",
    [
        b"signers:\n  - " + b"[" * 65 + b"]" * 65 + b"\n",
        b"signers: " + b"[" * DEEP + b"]" * DEEP + b"\n",
        _bomb(),
    ],
    ids=["65-deep", "10000-deep", "alias-bomb"],
)
def test_a_hostile_allowlist_is_refused_with_its_reason(tmp_path: Path, data: bytes) -> None:
    from generator.tree import load_allowlist

    path = tmp_path / "allowlist.yaml"
    path.write_bytes(data)
    with pytest.raises(AllowlistError) as caught:
        load_allowlist(path, display="evidence/allowlist.yaml")
    assert caught.value.location is not None
    assert caught.value.location.file == "evidence/allowlist.yaml"
    assert caught.value.message in (
        "nesting too deep",
        "document expands to too many nodes",
        "too many aliases",
    )


@pytest.mark.parametrize(
    "data",
    [
        b"kind: RecipeResult\nspec: " + b"[" * DEEP + b"]" * DEEP + b"\n",
        b"kind: RecipeResult\nspec: " + b"{a: " * 65 + b"1" + b"}" * 65 + b"\n",
        b"kind: RecipeResult\n" + _bomb(),
    ],
    ids=["10000-deep", "65-deep", "alias-bomb"],
)
def test_a_hostile_overlay_has_no_current_digest_and_no_error(tmp_path: Path, data: bytes) -> None:
    from generator.freshness import NativeProvider
    from generator.model import Canonicalizer
    from generator.report.run import load_overlays

    overlays = tmp_path / "overlays"
    overlays.mkdir()
    (overlays / "r.yaml").write_bytes(data)
    assert NativeProvider(overlays).current("r", None, Canonicalizer.V3) is None
    assert set(load_overlays(tmp_path)) == {"r"}
