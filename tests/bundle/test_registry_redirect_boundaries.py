"""Every redirect status a registry may answer with (301, 302, 303, 307, 308) is followed to
the blob, against the real registry behind a redirecting 127.0.0.1 proxy; 300 and 304 are not
redirects and fail the fetch."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
import requests

from generator.bundle.push import push_artifacts
from generator.bundle.registry import RegistryClient
from generator.bundle.types import BundleFetchError
from tests.bundle.test_registry_hardening import (
    REPO,
    Recorder,
    _recording_server,
    _reply,
    run_bounded,
)


def _redirecting_proxy(registry: str, recorder: Recorder, status: int) -> Any:
    """Blob requests answer `status` pointing at `/direct/...` on this proxy; everything else
    (and `/direct/...`) is passed to the registry."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        path = handler.path
        if "/blobs/" in path and not path.startswith("/direct/"):
            _reply(handler, status, b"", {"Location": f"{recorder.url}/direct{path}"})
            return
        upstream = requests.get(
            registry + path.removeprefix("/direct"),
            timeout=10,
            headers={"Accept": handler.headers.get("Accept", "*/*")},
        )
        _reply(
            handler,
            upstream.status_code,
            upstream.content,
            {"Content-Type": upstream.headers.get("Content-Type", "application/json")},
        )

    return _recording_server(recorder, answer)


@pytest.mark.registry
@pytest.mark.parametrize(
    ("status", "followed"),
    [(301, True), (302, True), (303, True), (307, True), (308, True), (300, False), (304, False)],
)
def test_each_redirect_status_is_followed_to_the_blob(
    docker_registry: str, sample: Any, status: int, followed: bool
) -> None:
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    recorder = Recorder()
    proxy = _redirecting_proxy(docker_registry, recorder, status)
    try:
        client = RegistryClient(mirrors={"ghcr.io": recorder.url}, credentials={})
        got = run_bounded(lambda: client.fetch(sample.ref()))
    finally:
        proxy.shutdown()
        proxy.server_close()
    if followed:
        assert not isinstance(got, BaseException), got
        assert got.files == sample.files
        assert any(path.startswith("/direct/") for path, _ in recorder.seen)
    else:
        assert isinstance(got, BaseException)
        assert not any(path.startswith("/direct/") for path, _ in recorder.seen)


def _chaining_proxy(registry: str, recorder: Recorder, hops: int) -> Any:
    """Each blob request is redirected `hops` times (`/hop/1/...`, `/hop/2/...`, ...) before
    the last hop is passed to the registry; everything else is passed straight on."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        path = handler.path
        done = 0
        if path.startswith("/hop/"):
            _, _, count, rest = path.split("/", 3)
            done, path = int(count), "/" + rest
        if "/blobs/" in path and done < hops:
            _reply(handler, 307, b"", {"Location": f"{recorder.url}/hop/{done + 1}{path}"})
            return
        upstream = requests.get(
            registry + path,
            timeout=10,
            headers={"Accept": handler.headers.get("Accept", "*/*")},
        )
        _reply(
            handler,
            upstream.status_code,
            upstream.content,
            {"Content-Type": upstream.headers.get("Content-Type", "application/json")},
        )

    return _recording_server(recorder, answer)


@pytest.mark.registry
@pytest.mark.parametrize(("hops", "followed"), [(1, True), (5, True), (6, False)])
def test_a_chain_of_five_redirects_is_followed_a_sixth_is_refused(
    docker_registry: str, sample: Any, hops: int, followed: bool
) -> None:
    """At most 5 redirects per request (a CDN hop or two is normal; a loop must end)."""
    push_artifacts(docker_registry, REPO, sample.bundle, sample.signatures)
    recorder = Recorder()
    proxy = _chaining_proxy(docker_registry, recorder, hops)
    try:
        client = RegistryClient(mirrors={"ghcr.io": recorder.url}, credentials={})
        got = run_bounded(lambda: client.fetch(sample.ref()))
    finally:
        proxy.shutdown()
        proxy.server_close()
    if followed:
        assert not isinstance(got, BaseException), got
        assert got.files == sample.files
    else:
        assert isinstance(got, BundleFetchError), got
        assert "redirected too often" in got.message
        assert got.expected == "at most 5 redirects"
    deepest = max(
        (int(path.split("/")[2]) for path, _ in recorder.seen if path.startswith("/hop/")),
        default=0,
    )
    assert deepest == min(hops, 5)
