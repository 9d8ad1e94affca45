"""Reproducible builds: the same inputs give the same bytes; the clock and the inputs show.

Every build runs the real CLI in its own process. Two builds of the demo tree that differ only
in hash seed, time zone, locale, job count and cache temperature (the second offline from the
first one's cache alone) must be byte-identical, file by file. Moving SOURCE_DATE_EPOCH may
change only what is derived from the build time, and changing an input (a recipe overlay, a
pointer) must change the output.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.determinism.conftest import ENV_A, EPOCH, build, copy_demo

Builds = Callable[[str], Path]
#: An age relative to the build: "N days before this build", "N days before build", "1 day ...".
AGE = re.compile(rb"\b(\d+)(?= days?\b)")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative POSIX path, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def differences(left: dict[str, bytes], right: dict[str, bytes]) -> list[str]:
    """What `diff -r` would report: files only on one side, then files whose bytes differ."""
    only = [f"only in one tree: {name}" for name in sorted(left.keys() ^ right.keys())]
    changed = [
        f"differs: {name}"
        for name in sorted(left.keys() & right.keys())
        if left[name] != right[name]
    ]
    return only + changed


def first_difference(a: bytes, b: bytes) -> str:
    index = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"at byte {index}: {a[max(0, index - 80) : index + 80]!r} vs {b[max(0, index - 80) : index + 80]!r}"


def assert_identical(left_root: Path, right_root: Path) -> None:
    left, right = tree(left_root), tree(right_root)
    found = differences(left, right)
    detail = ""
    for line in found:
        name = line.removeprefix("differs: ")
        if name in left and name in right:
            detail = f"\nfirst: {name} {first_difference(left[name], right[name])}"
            break
    assert not found, f"{len(found)} differences:\n" + "\n".join(found[:20]) + detail
    assert len(left) > 10, "the build wrote suspiciously few files"


def pointers(root: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads((root / "data" / "pointers.json").read_text(encoding="utf-8"))
    return {entry["path"]: entry for entry in doc["pointers"]}


# --------------------------------------------------------------------------- same inputs


def test_other_seed_zone_locale_jobs_and_a_warm_offline_cache_give_the_same_bytes(
    builds: Builds,
) -> None:
    assert_identical(builds("a"), builds("b"))


def test_a_cold_parallel_build_gives_the_same_bytes(builds: Builds) -> None:
    assert_identical(builds("a"), builds("c"))


def test_the_comparison_sees_a_one_byte_change(tmp_path: Path) -> None:
    """The tree comparison itself can fail: an edited, a missing and an extra file are found."""
    for name in ("a", "b"):
        (tmp_path / name / "sub").mkdir(parents=True)
        (tmp_path / name / "sub" / "same.txt").write_bytes(b"x")
    (tmp_path / "a" / "edit.bin").write_bytes(b"\x00\x01")
    (tmp_path / "b" / "edit.bin").write_bytes(b"\x00\x02")
    (tmp_path / "a" / "only-a").write_bytes(b"")
    found = differences(tree(tmp_path / "a"), tree(tmp_path / "b"))
    assert found == ["only in one tree: only-a", "differs: edit.bin"]


# --------------------------------------------------------------------------- the clock


def _stamp(epoch: int) -> tuple[bytes, bytes]:
    moment = datetime.fromtimestamp(epoch, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ").encode(), moment.strftime("%Y-%m-%d").encode()


def _readable(name: str, data: bytes) -> bytes:
    return gzip.decompress(data) if name.endswith(".gz") else data


def _normalise(data: bytes, epoch: int) -> bytes:
    stamp, day = _stamp(epoch)
    data = data.replace(stamp, b"<BUILD-TIME>").replace(day, b"<BUILD-DAY>")
    return AGE.sub(b"<N>", data)


def test_source_date_epoch_changes_only_what_depends_on_the_build_time(builds: Builds) -> None:
    early, late = tree(builds("a")), tree(builds("day9"))
    assert early.keys() == late.keys()
    assert differences(early, late), "moving the clock by 9 days changed nothing"
    advanced = 0
    # The site manifest holds every file's digest: it changes exactly where the files do.
    manifests = [
        {f["path"]: f["sha256"] for f in json.loads(t["data/manifest.json"])["files"]}
        for t in (early, late)
    ]
    assert manifests[0].keys() == manifests[1].keys()
    assert {n for n in manifests[0] if manifests[0][n] != manifests[1][n]} == {
        n for n in manifests[0] if early[n] != late[n]
    }
    for name in early:
        if name == "data/manifest.json":
            continue
        a, b = _readable(name, early[name]), _readable(name, late[name])
        assert _stamp(EPOCH)[0] not in b, f"{name} shows the other build's time"
        left, right = _normalise(a, EPOCH), _normalise(b, EPOCH + 9 * 86400)
        assert left == right, (
            f"{name} differs in more than the build time: {first_difference(left, right)}"
        )
        # An age either advanced with the clock or is fixed text (an example on the about page).
        steps = [int(y) - int(x) for x, y in zip(AGE.findall(a), AGE.findall(b), strict=True)]
        assert set(steps) <= {0, 9}, f"{name}: ages moved by {sorted(set(steps))} days, not 9"
        advanced += steps.count(9)
    assert advanced > 0, "no age on the site advanced with the clock"


def test_the_build_time_is_recorded_in_build_info(builds: Builds) -> None:
    info = json.loads((builds("day9") / "data" / "build-info.json").read_text(encoding="utf-8"))
    assert info["buildTime"] == _stamp(EPOCH + 9 * 86400)[0].decode()


# --------------------------------------------------------------------------- changed inputs

OVERLAY = "h200-k0s-ubuntu-training"


def test_an_edited_overlay_makes_its_signed_digest_stale(builds: Builds, tmp_path: Path) -> None:
    recipes = copy_demo(tmp_path / "recipes")
    overlay = recipes / "overlays" / f"{OVERLAY}.yaml"
    text = overlay.read_text(encoding="utf-8")
    assert "version: v25.3.0" in text
    overlay.write_text(text.replace("version: v25.3.0", "version: v25.3.1", 1), encoding="utf-8")
    edited = build(tmp_path / "site", recipes=recipes, cache=tmp_path / "cache", env=ENV_A)

    before, after = pointers(builds("a")), pointers(edited)
    assert before.keys() == after.keys()
    changed = {path for path in before if before[path] != after[path]}
    assert changed and all(path.startswith(f"evidence/{OVERLAY}/") for path in changed)
    for path in changed:
        assert before[path]["freshness"]["state"] == "fresh"
        assert after[path]["freshness"]["state"] == "stale"
        assert after[path]["freshness"]["signed"] == before[path]["freshness"]["signed"]
        assert after[path]["freshness"]["current"] != before[path]["freshness"]["current"]
    page = f"recipes/{OVERLAY}/index.html"
    assert tree(builds("a"))[page] != tree(edited)[page]


def test_a_dropped_pointer_leaves_the_output(builds: Builds, tmp_path: Path) -> None:
    recipes = copy_demo(tmp_path / "recipes")
    dropped = next((recipes / "evidence" / OVERLAY).rglob("sha256-*.yaml"))
    dropped_path = dropped.relative_to(recipes).as_posix()
    dropped.unlink()
    site = build(tmp_path / "site", recipes=recipes, cache=tmp_path / "cache", env=ENV_A)

    before, after = pointers(builds("a")), pointers(site)
    assert set(before) - set(after) == {dropped_path}
    assert set(after) <= set(before)
    digest = dropped.name.removesuffix(".yaml").removeprefix("sha256-")
    assert digest.encode() in tree(builds("a"))["data/pointers.json"]
    assert all(
        digest.encode() not in data
        for name, data in tree(site).items()
        if name.endswith((".json", ".html")) and not name.startswith("search/")
    )
    assert differences(tree(builds("a")), tree(site))


@pytest.mark.parametrize("name", ["a", "b"])
def test_builds_record_the_fixed_build_time_not_the_clock(builds: Builds, name: str) -> None:
    info = json.loads((builds(name) / "data" / "build-info.json").read_text(encoding="utf-8"))
    assert info["buildTime"] == _stamp(EPOCH)[0].decode()
