"""`build --previous SITE`: data/changes.json, feed.xml (Atom 1.0), one feed per recipe, the
Changes page and each recipe page's recent changes, over real demo builds."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from generator.changes import BOARD_MARKER, RECIPE_MARKER
from generator.cli import main
from generator.data.writers import schema_text
from generator.manifest import MANIFEST_PATH
from tests.changes.conftest import DAY, EPOCH, RECIPE, Sites, build
from tests.proves.conftest import identity_args

A = "{http://www.w3.org/2005/Atom}"
ATOM_TIME = "%Y-%m-%dT%H:%M:%SZ"


def _changes(site: Path) -> dict:
    return json.loads((site / "data" / "changes.json").read_bytes())


def _feed(path: Path) -> ET.Element:
    return ET.fromstring(path.read_bytes())


def _entries(path: Path) -> list[ET.Element]:
    return _feed(path).findall(f"{A}entry")


def _time(epoch: int) -> str:
    import time

    return time.strftime(ATOM_TIME, time.gmtime(epoch))


def test_the_state_change_is_in_changes_json_with_both_builds(sites: Sites) -> None:
    doc = _changes(sites.after)
    jsonschema.validate(doc, json.loads(schema_text("changes.schema.json")))
    assert doc["buildTime"] == _time(EPOCH + DAY)
    assert doc["previous"]["read"] is True and doc["previous"]["warnings"] == []
    assert doc["previous"]["buildTime"] == _time(EPOCH)
    assert "commit" in doc and "commit" in doc["previous"]
    found = {
        (c["recipe"], c["kind"], c["subject"], c["before"], c["after"]) for c in doc["changes"]
    }
    assert (RECIPE, "rollup", "", "SINGLE", "CONFIRMED") in found
    assert {c["recipe"] for c in doc["changes"]} == {RECIPE}
    checks = [c for c in doc["changes"] if c["kind"] == "check"]
    assert checks and all((c["before"], c["after"]) == ("SINGLE", "CONFIRMED") for c in checks)
    added = [c for c in doc["changes"] if c["kind"] == "evidence-added"]
    assert len(added) == 1 and added[0]["subject"].startswith(f"evidence/{RECIPE}/")
    assert doc["board"]["recipes"][RECIPE]["rollup"] == "CONFIRMED"


def test_the_feed_is_valid_atom_with_one_entry_per_change(sites: Sites) -> None:
    feed = _feed(sites.after / "feed.xml")
    assert feed.tag == f"{A}feed"
    for name in ("id", "title", "updated"):
        assert (feed.findtext(f"{A}{name}") or "").strip(), name
    assert feed.findtext(f"{A}updated") == _time(EPOCH + DAY)
    assert feed.find(f"{A}author/{A}name") is not None
    assert feed.find(f"{A}link[@rel='self']") is not None
    entries = feed.findall(f"{A}entry")
    changes = _changes(sites.after)["changes"]
    assert len(entries) == len(changes) > 0
    assert [e.findtext(f"{A}id") for e in entries] == [c["id"] for c in changes]
    assert len({e.findtext(f"{A}id") for e in entries}) == len(entries)
    for entry in entries:
        for name in ("id", "title", "updated", "summary"):
            assert (entry.findtext(f"{A}{name}") or "").strip(), name
        assert entry.findtext(f"{A}updated") == _time(EPOCH + DAY)
        href = entry.find(f"{A}link[@rel='alternate']").get("href")
        assert href == f"recipes/{RECIPE}/" and (sites.after / href / "index.html").is_file()
    titles = [e.findtext(f"{A}title") for e in entries]
    assert f"{RECIPE}: single signer → confirmed" in titles


def test_ids_and_bytes_are_stable_across_rebuilds(sites: Sites) -> None:
    for path in ("feed.xml", "data/changes.json", f"recipes/{RECIPE}/feed.xml", MANIFEST_PATH):
        assert (sites.after / path).read_bytes() == (sites.after_again / path).read_bytes(), path
    assert (sites.after / "changes" / "index.html").read_bytes() == (
        sites.after_again / "changes" / "index.html"
    ).read_bytes()


def test_the_history_is_carried_over(sites: Sites) -> None:
    assert _changes(sites.later)["changes"] == []
    assert _changes(sites.later)["previous"]["buildTime"] == _time(EPOCH + DAY)
    old = [e.findtext(f"{A}id") for e in _entries(sites.after / "feed.xml")]
    new = _entries(sites.later / "feed.xml")
    assert [e.findtext(f"{A}id") for e in new] == old
    assert all(e.findtext(f"{A}updated") == _time(EPOCH + DAY) for e in new)
    assert _feed(sites.later / "feed.xml").findtext(f"{A}updated") == _time(EPOCH + 2 * DAY)
    own = _entries(sites.later / "recipes" / RECIPE / "feed.xml")
    assert [e.findtext(f"{A}id") for e in own] == old
    assert own[0].find(f"{A}link[@rel='alternate']").get("href") == "./"
    other = next(p for p in (sites.later / "recipes").iterdir() if p.name != RECIPE)
    assert _entries(other / "feed.xml") == []


def test_the_pages_show_the_history(sites: Sites) -> None:
    page = (sites.later / "changes" / "index.html").read_text(encoding="utf-8")
    assert BOARD_MARKER in page
    assert f'<a href="../recipes/{RECIPE}/">{RECIPE}</a>' in page
    assert "single signer → confirmed" in page
    assert 'href="../feed.xml"' in page
    recipe = (sites.later / "recipes" / RECIPE / "index.html").read_text(encoding="utf-8")
    assert RECIPE_MARKER in recipe and "single signer → confirmed" in recipe
    assert 'href="feed.xml"' in recipe
    other = next(p for p in (sites.later / "recipes").iterdir() if p.name != RECIPE)
    assert "No changes recorded for this recipe yet" in (other / "index.html").read_text(
        encoding="utf-8"
    )
    nav = (sites.later / "index.html").read_text(encoding="utf-8")
    assert 'href="changes/"' in nav


def test_without_previous_the_feed_starts_empty(sites: Sites) -> None:
    doc = _changes(sites.before)
    assert doc["previous"] == {
        "read": False,
        "buildTime": None,
        "commit": None,
        "warnings": [],
        "board": None,
    }
    assert doc["changes"] == [] and _entries(sites.before / "feed.xml") == []
    assert "No changes recorded yet" in (sites.before / "changes" / "index.html").read_text(
        encoding="utf-8"
    )


def test_the_manifest_lists_the_feed_and_verify_site_passes(sites: Sites) -> None:
    listed = {e["path"] for e in json.loads((sites.later / MANIFEST_PATH).read_bytes())["files"]}
    assert {"feed.xml", "data/changes.json", "changes/index.html"} <= listed
    assert "data/schema/changes.schema.json" in listed
    recipes = [p.name for p in (sites.later / "recipes").iterdir() if p.is_dir()]
    assert all(f"recipes/{r}/feed.xml" in listed for r in recipes)
    result = CliRunner().invoke(
        main,
        ["verify-site", str(sites.later), *identity_args(), "--format", "json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("previous", ["missing", "not-a-site"])
def test_a_missing_or_unreadable_previous_site_is_a_warning(
    sites: Sites, tmp_path: Path, previous: str
) -> None:
    target = tmp_path / previous
    if previous == "not-a-site":
        (target / "data").mkdir(parents=True)
        (target / "data" / "changes.json").write_text("{not json", encoding="utf-8")
        (target / "feed.xml").write_text("<feed", encoding="utf-8")
    done = build(
        tmp_path / "site", cache=sites.cache, epoch=EPOCH + DAY, extra=["--previous", str(target)]
    )
    assert "previous site" in done.stderr
    doc = _changes(tmp_path / "site")
    assert doc["previous"]["read"] is False and doc["previous"]["warnings"]
    assert doc["changes"] == [] and _entries(tmp_path / "site" / "feed.xml") == []


def test_the_previous_site_can_be_an_https_url(sites: Sites, tmp_path: Path) -> None:
    """The same history as from the folder, read through the bounded site fetcher."""
    from tests.proves._https import Faults, make_ca, serve_https

    ca = make_ca(tmp_path / "tls")
    faults = Faults()
    with serve_https(sites.after, ca, faults) as url:
        build(
            tmp_path / "site",
            cache=sites.cache,
            epoch=EPOCH + 2 * DAY,
            extra=[
                "--previous",
                url,
                "--site-ca-bundle",
                str(ca.ca_pem),
                "--allow-private-site",
                url.split("/")[2],
            ],
        )
    assert "data/changes.json" in faults.requested and "feed.xml" in faults.requested
    for path in ("feed.xml", "data/changes.json", f"recipes/{RECIPE}/feed.xml"):
        assert (tmp_path / "site" / path).read_bytes() == (sites.later / path).read_bytes(), path


def test_rebuild_of_a_site_with_a_feed_is_identical(sites: Sites, tmp_path: Path) -> None:
    """`verify-site --rebuild` replays the previous board and history the site recorded."""
    from tests.proves.conftest import RECIPES

    for site in (sites.after, sites.later):
        result = CliRunner().invoke(
            main,
            [
                "verify-site",
                str(site),
                *identity_args(),
                "--rebuild",
                "--recipes",
                str(RECIPES),
                "--oci-layout",
                str(RECIPES / "bundles"),
                "--cache",
                str(tmp_path / "cache"),
                "--format",
                "json",
            ],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output


def test_a_page_from_the_page_cache_gets_its_history_which_the_cache_never_holds(
    sites: Sites,
) -> None:
    """`after_again` takes every recipe page `after` rendered from the page cache: each carries
    its build's history all the same, and no cached page may hold one (it would go stale)."""
    history = "single signer → confirmed".encode()
    rendered = (sites.after / "recipes" / RECIPE / "index.html").read_bytes()
    cached = (sites.after_again / "recipes" / RECIPE / "index.html").read_bytes()
    assert history in rendered and cached == rendered
    entries = list((sites.cache / "pages").glob("*.html"))
    assert entries
    assert not [p.name for p in entries if history in p.read_bytes()]
    assert any(RECIPE_MARKER.encode() in p.read_bytes() for p in entries)
