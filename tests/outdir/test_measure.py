"""The size walk of a built site: every file once, top-down in name order (a folder's files
before its subfolders, which decides the largest page among equals and the order of the
warnings), a link measured as a link and never followed."""

from __future__ import annotations

import os
from pathlib import Path

from generator.limits import OutputLimits
from generator.outputsize import measure


def _site(root: Path) -> Path:
    site = root / "site"
    for rel, size in {
        "b.html": 50,
        "a.html": 50,
        "z/index.html": 300,
        "data/b.json": 700,
        "data/a.json": 700,
        "data/series/x.json": 10,
        "assets/app.js": 5,
    }.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
    outside = root / "outside"
    outside.mkdir()
    (outside / "big.html").write_bytes(b"x" * 10_000)
    os.symlink(outside, site / "linked-folder")
    os.symlink(outside / "big.html", site / "linked.html")
    return site


def test_the_walk_counts_every_file_once_in_name_order(tmp_path: Path) -> None:
    site = _site(tmp_path)
    link = len(os.fsencode(tmp_path / "outside" / "big.html"))
    size = measure(site, OutputLimits(page_bytes=40, data_file_bytes=600, site_bytes=10**9))
    assert size.total == 50 + 50 + 300 + 700 + 700 + 10 + 5 + link
    assert size.largest_page == ("z/index.html", 300)
    assert size.largest_data == ("data/a.json", 700)  # the first of equals in name order
    assert size.warnings == (
        "page a.html is 0.0 MiB, over the 0.0 MiB page limit",
        "page b.html is 0.0 MiB, over the 0.0 MiB page limit",
        "page linked.html is 0.0 MiB, over the 0.0 MiB page limit",
        "data file data/a.json is 0.0 MiB, over the 0.0 MiB data file limit",
        "data file data/b.json is 0.0 MiB, over the 0.0 MiB data file limit",
        "page z/index.html is 0.0 MiB, over the 0.0 MiB page limit",
    )
