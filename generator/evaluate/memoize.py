"""The evaluation memo of one build (generator.buildmemo): its key, what it reuses and keeps,
and whether `--out` already holds exactly what the build would publish.

A build whose evaluation the memo answers would publish a site that is a pure function of
that evaluation and the output's own inputs (`output_key`: the site options, the
configuration as loaded, the templates and assets, the installed libraries). After a build
publishes, the digest of the whole published folder (names and bytes of every file) is
recorded with the memo under that key. The next build with the same memo key and output key
first hashes `--out` again: if it matches, the folder is already what it would write, so it
writes nothing; any difference (a file edited, added or removed, in the site or its data) and
it builds as usual, which puts the folder right. The record sits in the memo's sealed
`meta.json` (generator.cacheauth); a record that does not check is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.buildmemo import Counts, EvaluationMemo, Memo, fingerprint
from generator.cacheauth import failures
from generator.errors import EvidenceDashError
from generator.evaluate.assess import aicr_program
from generator.evaluate.engine import cache_root
from generator.evaluate.evaluation import Evaluation
from generator.evaluate.products import StoredKind
from generator.folderdigest import file_sha256, streamed_digest, tree_digest
from generator.manifest import MANIFEST_PATH, Written, parse_manifest
from generator.model import NoVerdict, Pending, Verified
from generator.options import BuildOptions
from generator.site.resources import locate
from generator.site.siteconfig import load_site_config

__all__ = ["MemoSlot", "Published", "counts_of", "listed_digests", "output_key"]


def output_key(options: BuildOptions, memo_key: str) -> str | None:
    """The key of everything besides the evaluation that the published folder's bytes depend
    on, or None when they may depend on more (a signature made fresh, a previous site fetched,
    Markdown snippets read from files). The configuration counts as loaded, so the
    environment variables its `!ENV` tags read are in it."""
    o = options.output
    if o.sign_with_test_authority is not None or o.previous or o.previous_site is not None:
        return None
    resources = locate()
    try:
        loaded = load_site_config(o.config or resources.default_config)
        default_config = streamed_digest(resources.default_config)
    except (EvidenceDashError, OSError):
        return None  # the build itself says what is wrong with it
    config = json.dumps(loaded, sort_keys=True, default=str)
    if "snippets" in config:
        return None
    inputs = {
        "memo": memo_key,
        "siteUrl": o.site_url,
        "dataOnly": o.data_only,
        "config": hashlib.sha256(config.encode("utf-8")).hexdigest(),
        "templates": tree_digest(resources.pages.parent),
        "assets": tree_digest(resources.assets),
        "defaultConfig": default_config,
        "python": sys.version,
        "libraries": installed_libraries(),
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode("utf-8")).hexdigest()


def installed_libraries(path: list[str] | None = None) -> list[str]:
    """Every distribution installed on `path` (default `sys.path`), by its metadata folder:
    a wheel's `<name>-<version>.dist-info` names its version; an `.egg-info` folder, which
    may not, goes with the sha256 of its `PKG-INFO`. Sorted. What an upgrade changes, from
    folder listings: parsing each distribution's metadata cost 25 ms of every build."""
    found: set[str] = set()
    for entry in sys.path if path is None else path:
        try:
            with os.scandir(entry or ".") as listing:
                names = [e.name for e in listing if e.name.endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue
        for name in names:
            if name.endswith(".egg-info"):
                try:  # a regular file only, never through a link, read a chunk at a time
                    info = file_sha256(os.path.join(entry or ".", name, "PKG-INFO")).hex()
                except OSError:
                    info = "unreadable"
                name = f"{name} {info}"
            found.add(name)
    return sorted(found)


@dataclass(frozen=True)
class Published:
    """`--out` holds what this build would publish: the counts and recipes it was built from."""

    counts: Counts
    recipes: int


def counts_of(evaluation: Evaluation) -> Counts:
    """The summary counts of an evaluation."""
    records, reused = evaluation.records, evaluation.reused
    return Counts(
        pointers=len(records) + len(reused),
        verified=sum(1 for r in records if isinstance(r.verdict, Verified))
        + sum(1 for r in reused if r.outcome.kind is StoredKind.VERIFIED),
        rejected=evaluation.count(2),
        pending=sum(1 for r in records if isinstance(r.verdict, Pending))
        + sum(1 for r in reused if r.outcome.kind is StoredKind.PENDING),
        no_verdict=evaluation.count(3),
        build_time=evaluation.build_time,
    )


@dataclass
class MemoSlot:
    """A build's place in the memo: its key (None: not memoized, `--reevaluate` or an online
    production trust root), the memo folder and the output key of the site it publishes
    (`output_key`, made once; None: no key, or a site it cannot describe)."""

    key: str | None
    memos: EvaluationMemo
    output: str | None = None
    hashed: dict[str, str] = field(default_factory=dict)
    """The sha256 of each file of the tree the key read, by path (`tree_digest`): the
    evaluation's scan takes a pointer file it read from there (`PointerDocs.known_file`)."""

    @classmethod
    def for_build(cls, options: BuildOptions) -> MemoSlot:
        hashed: dict[str, str] = {}
        key = (
            None
            if options.output.reevaluate
            else fingerprint(options.evaluation, aicr_program(options.freshness), hashed=hashed)
        )
        output = None if key is None else output_key(options, key)
        return cls(key, EvaluationMemo(cache_root(options.engine)), output, hashed)

    def load(self) -> Memo | None:
        """The memo of an identical earlier evaluation, or None."""
        return self.memos.load(self.key) if self.key is not None else None

    def published(self, options: BuildOptions) -> Published | None:
        """What `--out` was published from, when it is byte for byte what this build would
        publish (see the module doc); None when the build must write."""
        if self.key is None or self.output is None:
            return None
        found = self.memos.published(self.key, self.output)
        if found is None or failures():  # a failure is reported in build-info.json
            return None
        counts, recipes, digest = found
        out = options.output.out
        if not out.is_dir() or tree_digest(out) != digest:
            return None
        return Published(counts, recipes)

    def stamp(self, options: BuildOptions) -> None:
        """Record the folder just published with this build's memo (nothing without one).

        The files its manifest lists were hashed for it moments ago and are not read again
        (`listed_digests`)."""
        if self.key is not None and self.output is not None and not failures():
            out = options.output.out
            self.memos.add_output(self.key, self.output, tree_digest(out, listed_digests(out)))

    def keeper(
        self, evaluation: Evaluation, counts: Counts, published: Path | None = None
    ) -> Callable[[Path, Mapping[str, Written]], None] | None:
        """What keeps this evaluation's data folder, or None when it must not be kept.
        `published`: the site's data folder it becomes, where the memo leaves its big files.

        Only a definite evaluation is kept: a verdict the registry could not give this time
        (none, or an older one reused) may change when it can."""
        definite = all(
            not isinstance(r.verdict, NoVerdict) and r.verified_at is None
            for r in evaluation.records
        )
        if self.key is None or not definite:
            self.key = None
            return None
        key, documents = self.key, evaluation.documents

        def keep(data_dir: Path, written: Mapping[str, Written]) -> None:
            self.memos.store(key, documents, counts, data_dir, written, published)

        return keep

    def add_page_digests(self, digests: Mapping[str, Any] | None) -> None:
        """Keep the site's document digests with the memo just stored (if any)."""
        if self.key is not None and digests is not None:
            self.memos.add_page_digests(self.key, digests)


def listed_digests(site: Path) -> dict[str, tuple[int, bytes]]:
    """The size and sha256 of every regular file a published site's manifest lists.

    Only ever used to record what a build published: should a file have changed since its
    manifest was written, the record does not match the folder, and the next build, which
    hashes the folder itself before it writes nothing, builds it again."""
    try:
        manifest = parse_manifest((site / MANIFEST_PATH).read_bytes(), file=MANIFEST_PATH)
    except (OSError, EvidenceDashError):
        return {}
    digests: dict[str, tuple[int, bytes]] = {}
    for entry in manifest.files:
        if entry.size >= 0 and len(entry.sha256) == 64:
            try:
                digests[entry.path] = (entry.size, bytes.fromhex(entry.sha256))
            except ValueError:
                continue
    return digests
