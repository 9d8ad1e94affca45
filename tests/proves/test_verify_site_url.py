"""`verify-site https://...`: the signed demo site served over HTTPS on 127.0.0.1 verifies; a
byte changed, a file added (reachable from the sitemap), a file removed or a file served larger
than listed exits 1 naming it; a dropped connection, a redirect to another host and an address
that is not allowed give no verdict (exit 3); a hostile server cannot make the fetch unbounded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli import main
from generator.errors import UsageError
from generator.publish import TEST_SIGNER_IDENTITY, TEST_SIGNER_ISSUER
from generator.remotesite import local_links, run_verify_site_url, sitemap_paths
from generator.sitefetch import FetchLimits, SiteFetcher, SiteFetchError, SiteTooLarge
from tests.proves._https import Faults, SiteCA, make_ca, serve_https
from tests.proves.conftest import TRUST_ROOT, identity_args

PAGE = "about/index.html"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> SiteCA:
    return make_ca(tmp_path_factory.mktemp("tls"))


def _run(url: str, ca: SiteCA, *extra: str, allow: bool = True) -> Result:
    args = ["verify-site", url, *identity_args(), "--site-ca-bundle", str(ca.ca_pem)]
    if allow:
        args += ["--allow-private-site", url.split("/")[2]]
    return CliRunner().invoke(main, [*args, *extra, "--format", "json"], catch_exceptions=False)


@pytest.fixture
def served(site_copy: Path, ca: SiteCA) -> Iterator[tuple[str, Path, Faults]]:
    faults = Faults()
    with serve_https(site_copy, ca, faults) as url:
        yield url, site_copy, faults


def test_the_served_signed_site_verifies(served: tuple[str, Path, Faults], ca: SiteCA) -> None:
    url, _site, faults = served
    result = _run(url, ca)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["exit"] == 0 and doc["problems"] == [] and doc["site"] == url
    assert doc["signedBy"]["identity"] == TEST_SIGNER_IDENTITY
    assert doc["signedBy"]["issuer"] == TEST_SIGNER_ISSUER
    assert PAGE in faults.requested and "data/manifest.json" in faults.requested


def test_a_changed_byte_is_named(served: tuple[str, Path, Faults], ca: SiteCA) -> None:
    url, site, _ = served
    page = site / PAGE
    data = bytearray(page.read_bytes())
    data[len(data) // 2] ^= 0x01
    page.write_bytes(bytes(data))
    doc = json.loads(_run(url, ca).stdout)
    assert doc["exit"] == 1
    assert {(p["kind"], p["path"]) for p in doc["problems"]} == {("changed", PAGE)}


def test_a_removed_file_is_named(served: tuple[str, Path, Faults], ca: SiteCA) -> None:
    url, site, _ = served
    (site / "badges" / "board.svg").unlink()
    doc = json.loads(_run(url, ca).stdout)
    assert doc["exit"] == 1
    assert {(p["kind"], p["path"]) for p in doc["problems"]} == {("missing", "badges/board.svg")}


def test_an_added_page_reachable_from_the_sitemap_is_named(
    served: tuple[str, Path, Faults], ca: SiteCA
) -> None:
    url, site, _ = served
    (site / "extra").mkdir()
    (site / "extra" / "index.html").write_text("<p>not signed</p>\n", encoding="utf-8")
    sitemap = site / "sitemap.xml"
    text = sitemap.read_text(encoding="utf-8")
    end = text.rfind("</urlset>")
    sitemap.write_text(
        text[:end]
        + "<url><loc>https://example.invalid/aicr-evidence/extra/</loc></url>\n"
        + text[end:],
        encoding="utf-8",
    )
    doc = json.loads(_run(url, ca).stdout)
    assert doc["exit"] == 1
    kinds = {(p["kind"], p["path"]) for p in doc["problems"]}
    assert ("unlisted", "extra/index.html") in kinds
    assert ("changed", "sitemap.xml") in kinds


def test_an_added_file_linked_from_a_page_is_named(
    served: tuple[str, Path, Faults], ca: SiteCA
) -> None:
    """A page that links an unlisted script: the page differs and the script is served."""
    url, site, _ = served
    (site / "assets" / "extra.js").write_text("alert(1)\n", encoding="utf-8")
    page = site / PAGE
    page.write_text(
        page.read_text(encoding="utf-8").replace(
            "</body>", '<script src="../assets/extra.js"></script></body>'
        ),
        encoding="utf-8",
    )
    doc = json.loads(_run(url, ca).stdout)
    kinds = {(p["kind"], p["path"]) for p in doc["problems"]}
    assert ("unlisted", "assets/extra.js") in kinds and ("changed", PAGE) in kinds


def test_a_file_served_larger_than_listed_is_named_and_not_read_whole(
    served: tuple[str, Path, Faults], ca: SiteCA
) -> None:
    url, site, faults = served
    target = site / "badges" / "board.svg"
    target.write_bytes(target.read_bytes() + b" " * (8 << 20))
    doc = json.loads(_run(url, ca).stdout)
    assert doc["exit"] == 1
    assert [p["path"] for p in doc["problems"]] == ["badges/board.svg"]
    assert "more than" in doc["problems"][0]["detail"]


def test_a_server_that_drops_mid_transfer_gives_no_verdict(
    served: tuple[str, Path, Faults], ca: SiteCA
) -> None:
    url, _site, faults = served
    faults.drop_half.add(PAGE)
    result = _run(url, ca)
    assert result.exit_code == 3, result.output
    doc = json.loads(result.stdout)
    assert doc["exit"] == 3 and PAGE in (doc["file"] or "")


def test_a_redirect_to_another_host_is_refused(
    served: tuple[str, Path, Faults], ca: SiteCA
) -> None:
    url, _site, faults = served
    port = url.rstrip("/").rsplit(":", 1)[1]
    faults.redirect[PAGE] = f"https://localhost:{port}/{PAGE}"
    result = _run(url, ca)
    assert result.exit_code == 3, result.output
    doc = json.loads(result.stdout)
    assert "another host" in doc["message"] and f"localhost:{port}" in doc["found"]
    assert faults.requested.count(PAGE) == 1  # never followed


def test_a_loopback_site_needs_to_be_allowed(served: tuple[str, Path, Faults], ca: SiteCA) -> None:
    url, _site, faults = served
    result = _run(url, ca, allow=False)
    assert result.exit_code == 3, result.output
    assert "private" in json.loads(result.stdout)["message"]
    assert faults.requested == []  # refused before anything was sent


def test_an_untrusted_certificate_gives_no_verdict(
    served: tuple[str, Path, Faults], tmp_path: Path
) -> None:
    url, _site, faults = served
    other = make_ca(tmp_path / "other")
    result = _run(url, other)
    assert result.exit_code == 3, result.output
    assert "TLS" in json.loads(result.stdout)["message"]


def test_an_endless_manifest_is_cut_at_its_cap(
    served: tuple[str, Path, Faults], ca: SiteCA
) -> None:
    url, _site, faults = served
    faults.endless.add("data/manifest.json")
    verdict = run_verify_site_url(
        url,
        identity=TEST_SIGNER_IDENTITY,
        issuer=TEST_SIGNER_ISSUER,
        engine={"trust_root": TRUST_ROOT, "offline": True},
        ca_bundle=ca.ca_pem,
        allow_private=[url.split("/")[2]],
    )
    assert verdict.exit == 1
    assert [(str(p.kind), p.path) for p in verdict.problems] == [("manifest", "data/manifest.json")]


def test_the_fetch_is_bounded_in_files_bytes_and_time(
    served: tuple[str, Path, Faults], ca: SiteCA
) -> None:
    url, _site, faults = served
    host = url.split("/")[2]

    def verify(limits: FetchLimits) -> None:
        run_verify_site_url(
            url,
            identity=TEST_SIGNER_IDENTITY,
            issuer=TEST_SIGNER_ISSUER,
            engine={"trust_root": TRUST_ROOT, "offline": True},
            ca_bundle=ca.ca_pem,
            allow_private=[host],
            limits=limits,
        )

    with pytest.raises(SiteFetchError, match="more than 5 requests"):
        verify(FetchLimits(max_files=5))
    assert len(faults.requested) == 5
    with pytest.raises(SiteFetchError, match="bytes in all"):
        verify(FetchLimits(max_total_bytes=100_000))
    faults.endless.add("sitemap.xml")
    with pytest.raises(SiteTooLarge):
        with SiteFetcher(url, ca_bundle=ca.ca_pem, allow_private=[host]) as fetcher:
            fetcher.get("sitemap.xml", cap=1 << 20)
    ticks = iter(range(1_000_000))
    fetcher = SiteFetcher(
        url,
        ca_bundle=ca.ca_pem,
        allow_private=[host],
        limits=FetchLimits(deadline=50.0),
        clock=lambda: float(next(ticks)),
    )
    with pytest.raises(SiteFetchError, match="ran out of time"), fetcher:
        while True:
            fetcher.get(PAGE)


def test_plain_http_and_odd_addresses_are_usage_errors() -> None:
    for bad in ("http://example.com/", "ftp://x/", "https:///", "https://x/?q=1"):
        with pytest.raises(UsageError):
            SiteFetcher(bad)


def test_sitemap_and_link_discovery() -> None:
    sitemap = (
        b"<urlset><url><loc>https://h.example/base/</loc></url>"
        b"<url><loc>https://h.example/base/a/b/</loc></url>"
        b"<url><loc>https://h.example/base/x.html</loc></url>"
        b"<url><loc>https://h.example/elsewhere/</loc></url></urlset>"
    )
    assert sitemap_paths(sitemap) == {"index.html", "a/b/index.html", "x.html"}
    page = (
        b'<a href="../">home</a><a href="../c/#top">c</a><img src="../img/x.png">'
        b'<a href="https://other.example/">o</a><a href="#frag">f</a>'
        b'<a href="../../../etc/passwd">up</a>'
    )
    assert local_links("a/index.html", page) == {"index.html", "c/index.html", "img/x.png"}
