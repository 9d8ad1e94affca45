"""`verify-site https://...`: check a published site over the network against its manifest.

The same three questions as for a folder (generator.verifysite), asked of what the host serves:

- the manifest and its Sigstore bundle are fetched and the signature checked as for a folder;
- every listed file is fetched (never more bytes than the manifest says it has) and its sha256
  and size compared;
- nothing unlisted is served: every page the sitemap names and every site-local link of the
  fetched pages and data files is a listed file, or the host does not serve it (a probe reads
  no body: one byte is enough to say it is there).

Everything goes through one bounded `SiteFetcher` (files, bytes per file, bytes in all, time).
A transfer that fails is no verdict (exit 3); any difference is a mismatch (exit 1, files named).
"""

from __future__ import annotations

import hashlib
import html
import posixpath
import re
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from generator.errors import InputError
from generator.manifest import MANIFEST_PATH, SIGNATURE_PATH, UNLISTED, Manifest, parse_manifest
from generator.sitefetch import FetchLimits, SiteFetcher, SiteTooLarge
from generator.verifysite import Problem, ProblemKind, SiteVerdict, check_signature

__all__ = ["local_links", "run_verify_site_url", "sitemap_paths"]

MiB = 1024 * 1024
MANIFEST_CAP = 64 * MiB
SIGNATURE_CAP = 16 * MiB
MAX_PROBES = 2_000
"""Unlisted paths probed at most (each one request); more are reported as not checked."""
_LOC = re.compile(rb"<loc>\s*([^<\s]{1,4096})\s*</loc>")
DEFAULT_LIMITS = FetchLimits()
DISCOVERY_CAP = 16 * MiB
"""Bytes read of a changed page, sitemap or data file to find what it links to."""


def _discovers(path: str) -> bool:
    return (
        path == "sitemap.xml"
        or path.endswith(".html")
        or (path.startswith("data/") and path.endswith(".json"))
    )


class _Links(HTMLParser):
    """Collects `href` and `src` attribute values (bounded)."""

    def __init__(self, cap: int) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.cap = cap

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value and len(self.found) < self.cap:
                self.found.append(value)


def _site_path(page: str, link: str) -> str | None:
    """The site path a relative link from `page` names, else None (external, fragment, escape)."""
    parts = urlsplit(link.strip())
    if parts.scheme or parts.netloc or not parts.path or link.startswith("//"):
        return None
    target = unquote(parts.path)
    base = posixpath.dirname(page)
    joined = posixpath.normpath(posixpath.join(base, target))
    if joined.startswith("..") or joined.startswith("/") or joined == ".":
        return "index.html" if joined == "." else None
    if target.endswith("/"):
        joined += "/index.html"
    return joined


def local_links(page: str, body: bytes, cap: int = 10_000) -> set[str]:
    """Site paths the HTML page at `page` links to (href and src, relative links only)."""
    parser = _Links(cap)
    try:
        parser.feed(body.decode("utf-8", errors="replace"))
        parser.close()
    except (AssertionError, ValueError):
        pass
    return {p for p in (_site_path(page, link) for link in parser.found) if p}


def sitemap_paths(body: bytes, cap: int = 100_000) -> set[str]:
    """The site files the sitemap's `<loc>` pages are (`a/b/` -> `a/b/index.html`), relative
    to the site root, taken as the shortest page address (the home page)."""
    paths: list[str] = []
    for match in _LOC.finditer(body):
        if len(paths) >= cap:
            break
        loc = html.unescape(match.group(1).decode("utf-8", errors="replace"))
        path = unquote(urlsplit(loc).path or "/")
        paths.append(path if path.startswith("/") else "/" + path)
    if not paths:
        return set()
    root = min(paths, key=len)
    root = root if root.endswith("/") else posixpath.dirname(root) + "/"
    found: set[str] = set()
    for path in paths:
        if not path.startswith(root):
            continue
        rel = path[len(root) :]
        rel = rel + "index.html" if rel == "" or rel.endswith("/") else rel
        normal = posixpath.normpath(rel)
        if not normal.startswith(".."):
            found.add(normal)
    return found


def _json_links(body: bytes) -> set[str]:
    """Site paths a data file names in string values that look like site-relative files."""
    found: set[str] = set()
    for match in re.finditer(rb'"((?:data|badges|recipes|assets)/[^"\\\s]{1,512})"', body):
        found.add(posixpath.normpath(match.group(1).decode("utf-8", errors="replace")))
        if len(found) > 10_000:
            break
    return found


def _fetch_manifest(fetcher: SiteFetcher) -> tuple[bytes, Manifest] | Problem:
    data = None
    try:
        data = fetcher.get(MANIFEST_PATH, cap=MANIFEST_CAP)
    except SiteTooLarge:
        return Problem(
            ProblemKind.MANIFEST, MANIFEST_PATH, f"larger than {MANIFEST_CAP} bytes: not read"
        )
    if data is None:
        return Problem(ProblemKind.MANIFEST, MANIFEST_PATH, "the site serves no manifest")
    try:
        return data, parse_manifest(data, file=fetcher.url(MANIFEST_PATH))
    except InputError as error:
        return Problem(ProblemKind.MANIFEST, MANIFEST_PATH, error.diagnostics().splitlines()[0])


def _check_listed(fetcher: SiteFetcher, manifest: Manifest, problems: list[Problem]) -> set[str]:
    """Fetch every listed file and compare it; returns the site paths the files link to."""
    reachable: set[str] = set()
    for entry in manifest.files:
        if entry.size > fetcher.limits.max_file_bytes:
            problems.append(
                Problem(
                    ProblemKind.CHANGED,
                    entry.path,
                    f"listed with {entry.size} bytes, more than the {fetcher.limits.max_file_bytes}"
                    " a file may have: not fetched",
                )
            )
            continue
        # A page, the sitemap or a data file is read whole (up to a bound) even when it grew:
        # what it links to is where an unlisted file would be found.
        cap = max(entry.size, DISCOVERY_CAP) if _discovers(entry.path) else entry.size
        try:
            body = fetcher.get(entry.path, cap=cap)
        except SiteTooLarge:
            problems.append(
                Problem(
                    ProblemKind.CHANGED,
                    entry.path,
                    f"served with more than the {entry.size} bytes the manifest says"
                    if cap == entry.size
                    else f"served with more than {cap} bytes (the manifest says {entry.size})",
                )
            )
            continue
        if body is None:
            problems.append(
                Problem(ProblemKind.MISSING, entry.path, "listed in the manifest but not served")
            )
            continue
        digest = hashlib.sha256(body).hexdigest()
        if (digest, len(body)) != (entry.sha256, entry.size):
            problems.append(
                Problem(
                    ProblemKind.CHANGED,
                    entry.path,
                    f"sha256 {digest} ({len(body)} bytes), manifest says "
                    f"{entry.sha256} ({entry.size} bytes)",
                )
            )
        if entry.path == "sitemap.xml":
            reachable |= sitemap_paths(body)
        elif entry.path.endswith(".html"):
            reachable |= local_links(entry.path, body)
        elif entry.path.endswith(".json") and entry.path.startswith("data/"):
            reachable |= _json_links(body)
    return reachable


def _probe_unlisted(
    fetcher: SiteFetcher, candidates: Iterable[str], problems: list[Problem]
) -> list[str]:
    """Report every candidate path the site serves; notes on what was not probed."""
    todo = sorted(candidates)
    notes = []
    if len(todo) > MAX_PROBES:
        notes.append(
            f"note: {len(todo) - MAX_PROBES} linked paths beyond the first {MAX_PROBES} "
            "were not probed"
        )
        todo = todo[:MAX_PROBES]
    for path in todo:
        try:
            served = fetcher.get(path, cap=0) is not None
        except SiteTooLarge:
            served = True
        if served:
            problems.append(
                Problem(
                    ProblemKind.UNLISTED,
                    path,
                    "served and reachable from the site, but not listed in the manifest",
                )
            )
    return notes


def run_verify_site_url(
    url: str,
    *,
    identity: str,
    issuer: str,
    engine: dict[str, Any],
    ca_bundle: Path | None = None,
    allow_private: Iterable[str] = (),
    limits: FetchLimits = DEFAULT_LIMITS,
) -> SiteVerdict:
    """The whole `verify-site` check of a site served at `url`. Raises `SiteFetchError`
    (no verdict) when the site cannot be read; `engine` gives the trust options."""
    fetcher = SiteFetcher(url, ca_bundle=ca_bundle, allow_private=allow_private, limits=limits)
    with fetcher:
        got = _fetch_manifest(fetcher)
        if isinstance(got, Problem):
            return SiteVerdict(site=url, files=0, problems=(got,))
        manifest_bytes, manifest = got
        try:
            bundle = fetcher.get(SIGNATURE_PATH, cap=SIGNATURE_CAP)
        except SiteTooLarge:
            bundle = b""
        problems: list[Problem] = []
        signed_by, trouble = check_signature(
            manifest_bytes, bundle, identity=identity, issuer=issuer, engine=engine
        )
        problems.extend(trouble)
        reachable = _check_listed(fetcher, manifest, problems)
        if not any(e.path == "sitemap.xml" for e in manifest.files):
            sitemap = fetcher.get("sitemap.xml", cap=limits.max_file_bytes)
            if sitemap is not None:
                reachable |= sitemap_paths(sitemap) | {"sitemap.xml"}
        listed = {e.path for e in manifest.files} | UNLISTED
        notes = _probe_unlisted(fetcher, reachable - listed, problems)
    return SiteVerdict(
        site=url,
        files=len(manifest.files),
        problems=tuple(sorted(problems, key=lambda p: (p.path, str(p.kind)))),
        signed_by=signed_by,
        commit=manifest.commit,
        notes=tuple(notes),
    )
