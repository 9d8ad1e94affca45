"""The size of a built site against its budget (`generator.limits`): warn, never fail.

The count limits bound what one recipe adds; a tree with enough recipes can still outgrow a
host (GitHub Pages publishes at most 1 GB). The staged site is measured once (one directory
walk), before its manifest is written (`generator.publish`: nothing changes a site after its
manifest, which the manifest's signature covers); past `site_warn_share` of the budget, or
with a page or data file past its own limit, the build summary and `data/build-info.json`
(`output`, ours) carry a warning.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.limits import LIMITS, MIB, OutputLimits
from generator.wholefile import write_whole

__all__ = ["SiteSize", "measure", "record"]


@dataclass(frozen=True)
class SiteSize:
    """Bytes of a built site, its largest page and data file, and the warnings they raise."""

    total: int
    largest_page: tuple[str, int]
    largest_data: tuple[str, int]
    budget: int
    warnings: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "bytes": self.total,
            "budget": self.budget,
            "largestPage": {"path": self.largest_page[0], "bytes": self.largest_page[1]},
            "largestDataFile": {"path": self.largest_data[0], "bytes": self.largest_data[1]},
            "warnings": list(self.warnings),
        }


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f} MiB"


def measure(site: Path, limits: OutputLimits | None = None) -> SiteSize:
    """Walk `site` once and compare it with `limits` (default `LIMITS`).

    Top-down, in name order, a folder's files before its subfolders; a link is measured as a
    link and never followed (a link to a folder is left out)."""
    limits = limits or LIMITS
    total = 0
    page = ("", 0)
    data = ("", 0)
    warnings: list[str] = []
    for rel, size in _files(str(site), ""):
        total += size
        if rel.endswith(".html"):
            page = max(page, (rel, size), key=lambda p: p[1])
            if size > limits.page_bytes:
                warnings.append(
                    f"page {rel} is {_mib(size)}, over the {_mib(limits.page_bytes)} page limit"
                )
        elif rel.startswith("data/"):
            data = max(data, (rel, size), key=lambda p: p[1])
            if size > limits.data_file_bytes:
                warnings.append(
                    f"data file {rel} is {_mib(size)}, over the "
                    f"{_mib(limits.data_file_bytes)} data file limit"
                )
    if total >= limits.site_warn_bytes:
        share = 100 * total / limits.site_bytes
        warnings.insert(
            0,
            f"the site is {_mib(total)}, {share:.0f}% of the "
            f"{_mib(limits.site_bytes)} budget (GitHub Pages publishes at most "
            "1 GB): split the tree or drop old evidence before it no longer fits",
        )
    return SiteSize(total, page, data, limits.site_bytes, tuple(warnings))


def _files(folder: str, prefix: str) -> Iterator[tuple[str, int]]:
    """(path relative to the site, size) of every file under `folder`, in `measure`'s order."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:
        return
    folders = []
    for entry in entries:
        try:
            if entry.is_dir():
                if not entry.is_symlink():
                    folders.append(entry)
                continue
            size = entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
        yield prefix + entry.name, size
    for entry in folders:
        yield from _files(entry.path, f"{prefix}{entry.name}/")


def record(build_info: Path, size: SiteSize) -> None:
    """Add `output` (the size and its warnings) to a written `build-info.json`, atomically."""
    from generator.data.gojson import write_go_json

    doc = json.loads(build_info.read_text(encoding="utf-8"))
    doc["output"] = size.as_dict()
    buffer = io.BytesIO()
    write_go_json(doc, buffer)
    write_whole(build_info, buffer.getvalue(), mode=0o644)
