"""data/manifest.json: every file of the built site, with the right sha256 and size."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from generator.manifest import MANIFEST_PATH, SIGNATURE_PATH, parse_manifest
from generator.outdir import MARKER_NAME
from tests.proves.conftest import (
    EPOCH,
    PUBLISHER_ARGS,
    RECIPES,
    TRUST_ROOT,
    VerifySite,
    build_args,
    build_site,
)

SCHEMA = (
    Path(__file__).resolve().parents[2] / "generator" / "data" / "schema" / "manifest.schema.json"
)


def test_every_file_is_listed_with_its_digest_and_size(signed_site: Path) -> None:
    manifest = json.loads((signed_site / MANIFEST_PATH).read_text(encoding="utf-8"))
    listed = {f["path"]: (f["sha256"], f["size"]) for f in manifest["files"]}
    on_disk = {
        p.relative_to(signed_site).as_posix(): p for p in signed_site.rglob("*") if p.is_file()
    }
    assert set(on_disk) - set(listed) == {MANIFEST_PATH, SIGNATURE_PATH}
    assert set(listed) <= set(on_disk)
    for name, (sha, size) in listed.items():
        data = on_disk[name].read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (sha, size), name
    assert MARKER_NAME in listed  # the marker is listed, not excused
    assert "badges/board.svg" in listed and "data/index.json" in listed
    assert [f["path"] for f in manifest["files"]] == sorted(listed)


def test_manifest_records_what_shaped_the_output(signed_site: Path) -> None:
    doc = json.loads((signed_site / MANIFEST_PATH).read_text(encoding="utf-8"))
    jsonschema.validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert doc["options"]["sourceDateEpoch"] == EPOCH
    assert (
        doc["options"]["trust"]["rootDigest"] == hashlib.sha256(TRUST_ROOT.read_bytes()).hexdigest()
    )
    build_info = json.loads((signed_site / "data" / "build-info.json").read_text("utf-8"))
    assert doc["commit"] == build_info["commit"]
    assert (signed_site / "data" / "schema" / "manifest.schema.json").is_file()


def test_a_site_over_its_size_limits_still_proves_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify_site: VerifySite
) -> None:
    """A signed site whose size raises warnings records them before its manifest is written:
    nothing changes the published site after it is signed, so verify-site passes, and the
    manifest lists build-info.json as it is, warnings included. (The record was once written
    into the published site after the swap, and the signed manifest no longer matched it.)"""
    from click.testing import CliRunner

    from generator import outputsize
    from generator.cli import main
    from generator.limits import OutputLimits

    if not (RECIPES / "evidence").is_dir() or not (RECIPES / "bundles").is_dir():
        pytest.skip("the demo tree (recipes/) is absent")
    monkeypatch.setattr(outputsize, "LIMITS", OutputLimits(site_bytes=1 << 20, page_bytes=1000))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    site = tmp_path / "site"
    args = build_args(site, recipes=RECIPES, cache=tmp_path / "cache")
    built = CliRunner().invoke(main, [*args, *PUBLISHER_ARGS], catch_exceptions=False)
    assert built.exit_code == 0, built.output
    info = site / "data" / "build-info.json"
    recorded = json.loads(info.read_text(encoding="utf-8"))["output"]
    assert "budget" in recorded["warnings"][0] and recorded["bytes"] > 1 << 20
    manifest = parse_manifest((site / MANIFEST_PATH).read_bytes(), file="m")
    entry = next(f for f in manifest.files if f.path == "data/build-info.json")
    assert entry.sha256 == hashlib.sha256(info.read_bytes()).hexdigest()
    # measured in staging: every file published but the manifest, its signature and the
    # record itself (build-info.json counted as it was before the record)
    others = sum(
        f.stat().st_size
        for f in site.rglob("*")
        if f.is_file()
        and f.relative_to(site).as_posix() not in {MANIFEST_PATH, SIGNATURE_PATH, entry.path}
    )
    assert others < recorded["bytes"] < others + info.stat().st_size
    verified = verify_site(site)
    assert verified.exit_code == 0, verified.output


def test_a_data_only_build_lists_its_data_and_writes_no_badges(tmp_path: Path) -> None:
    site = build_site(tmp_path / "site", cache=tmp_path / "cache", extra=("--data-only",))
    assert not (site / "badges").exists()
    manifest = parse_manifest((site / MANIFEST_PATH).read_bytes(), file="m")
    assert manifest.options.data_only
    found = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert {f.path for f in manifest.files} == found - {MANIFEST_PATH, SIGNATURE_PATH}


def test_files_hashed_as_written_are_taken_only_while_they_are_those_files(
    tmp_path: Path,
) -> None:
    """`file_entries(known=...)`: a recorded file still as it was recorded is not read (a
    record that lies shows through); a file rewritten (other size or time) or replaced (other
    inode) is read again."""
    import os

    from generator.manifest import Written, file_entries

    site = tmp_path / "site"
    (site / "data").mkdir(parents=True)
    kept, grown, touched, replaced = (site / "data" / f"{n}.json" for n in "abcd")
    for path in (kept, grown, touched, replaced):
        path.write_bytes(b"{}\n")
    lie = "0" * 64
    known = {f"data/{p.name}": Written.of(p, lie) for p in (kept, grown, touched, replaced)}
    grown.write_bytes(b'{"a": 1}\n')
    info = touched.stat()
    os.utime(touched, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    replaced.unlink()
    replaced.write_bytes(b"{}\n")
    entries = {e.path: e.sha256 for e in file_entries(site, known)}
    assert entries["data/a.json"] == lie
    for path in (grown, touched, replaced):
        assert entries[f"data/{path.name}"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_kind_of_entry_is_listed_as_the_manifest_says(tmp_path: Path) -> None:
    """Small files (hashed inline) and large ones (on threads) with their bytes' digest and
    size; a link (to a file or a folder, never followed) as its target's text; anything else
    that is not a regular file as an empty link; the manifest and its signature unlisted."""
    import os

    from generator.manifest import file_entries

    site = tmp_path / "site"
    (site / "a" / "b").mkdir(parents=True)
    small = site / "a" / "b" / "small.txt"
    small.write_bytes(b"x" * 10)
    large = site / "large.bin"
    large.write_bytes(os.urandom(3 << 20))
    (site / MANIFEST_PATH).parent.mkdir()
    (site / MANIFEST_PATH).write_text("{}")
    (site / SIGNATURE_PATH).write_text("{}")
    (site / "to-folder").symlink_to("a")
    (site / "to-file").symlink_to("large.bin")
    os.mkfifo(site / "fifo")
    entries = {e.path: (e.sha256, e.size) for e in file_entries(site)}

    def link(target: bytes) -> tuple[str, int]:
        return "link:" + hashlib.sha256(target).hexdigest(), -1

    assert entries == {
        "a/b/small.txt": (hashlib.sha256(b"x" * 10).hexdigest(), 10),
        "large.bin": (hashlib.sha256(large.read_bytes()).hexdigest(), 3 << 20),
        "to-folder": link(b"a"),
        "to-file": link(b"large.bin"),
        "fifo": link(b""),
    }
    assert [e.path for e in file_entries(site)] == sorted(entries)
