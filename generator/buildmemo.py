"""The evaluation memo: an unchanged tree is not evaluated again.

A build's data documents are a pure function of its inputs: the files of the evidence tree
and its overlays, the bundle-refs file, the trust root, the options that reach the
evaluation, `SOURCE_DATE_EPOCH`, the git commit the freshness history is read at, the aicr
binary used for digests, and the code and libraries that evaluate. `fingerprint` hashes all
of them. A build whose evaluation was definite (every pointer got a verdict of its own: no
registry outage answered by an older verdict, no "no verdict") keeps its documents and the
data files it wrote under `<cache>/evaluation/`; the next build with the same fingerprint
reads them back instead of evaluating, so it reads no bundle, verifies nothing, and writes
data/ by copying. The site is still built from the documents (its own page cache decides what to
render). `--reevaluate` skips the memo.

The few big data files (pointers.json and index.json are hundreds of MB at 10,000 attestations)
are not copied into the memo: writing them twice cost every changed build about 0.3 s of disk
work. The sealed meta lists their digests and the data folder of the site they were published
in; a build the memo answers reads them back from there (any file that is missing, changed or
not a regular file makes a miss) and restores them into the memo before it copies data/.

The cache is not trusted (`generator.cacheauth`): `meta.json` carries an HMAC tag and lists
the sha256 of every file of the memo's data/ copy; a memo whose tag does not check, or whose
data/ holds a file that is missing, added or changed, is a miss counted as an authentication
failure, and the tree is evaluated again.

Nothing network-dependent is memoized: an online build on the production trust root (whose
root TUF may refresh) never uses the memo, and neither does a build that reached a registry
for an answer it did not have in its cache.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from generator.cacheauth import CacheAuth, Purpose, note_failure, read_cache_file
from generator.data.writers import series_file_name
from generator.errors import EvidenceDashError
from generator.folderdigest import listing, streamed_digest, tree_digest
from generator.manifest import Written
from generator.memofiles import (
    Changed,
    Checked,
    big_files,
    copied_digest,
    linking_copy,
    restored,
)
from generator.options import EvaluationOptions, MemoRole, memo_role
from generator.treeprefetch import take

MEMO_VERSION = "3"
MAX_META_BYTES = 256 << 20
"""A memo's meta.json larger than this is a miss (it is hundreds of KB at 10,000
attestations); no memo file is read through a link or from a FIFO."""
_LIBRARIES = ("sigstore", "cryptography", "pyyaml", "rfc8785", "google-re2")


@dataclass(frozen=True)
class Counts:
    """The build summary's counts, kept with the documents."""

    pointers: int
    verified: int
    rejected: int
    pending: int
    no_verdict: int
    build_time: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "pointers": self.pointers,
            "verified": self.verified,
            "rejected": self.rejected,
            "pending": self.pending,
            "noVerdict": self.no_verdict,
            "buildTime": self.build_time,
        }


@dataclass(frozen=True)
class Memo:
    """A loaded memo: the documents and counts of the evaluation, and its data files."""

    documents: Mapping[str, Any]
    counts: Counts
    data_dir: Path
    page_digests: Any = None
    """What the site hashed of these documents when they were first built (or None)."""


def _file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return streamed_digest(path)
    except OSError:
        return "unreadable"


@functools.cache
def code_digest() -> str:
    """The evaluating code (this package's sources) and the libraries it relies on. Worked
    out once per process: it runs the code it imported, whatever is edited on disk later (a
    build asks four times: its memo key, the recipe products, the tabs, the pointer memo)."""
    h = hashlib.sha256(MEMO_VERSION.encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    for name in _LIBRARIES:
        try:
            h.update(f"{name}={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name}=none\0".encode())
    return h.hexdigest()


def git_head(folder: Path) -> str | None:
    """The commit git says `folder`'s checkout is at (None outside one, or without git)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _program(path: Path | None) -> Any:
    if path is None:
        return None
    try:
        info = path.stat()
    except OSError:
        return str(path)
    return [str(path), info.st_size, info.st_mtime_ns]


def fingerprint(
    options: EvaluationOptions, aicr: Path | None, *, hashed: dict[str, str] | None = None
) -> str | None:
    """The memo key of a build's evaluation, or None when it must not be memoized.

    Derived from the options themselves (`evaluation_inputs`): adding an option to an
    evaluation group without saying how it reaches the key is an error, not a stale memo.
    `hashed` is told the sha256 of each file of the trees read for it (`tree_digest`)."""
    engine = options.engine
    if not engine.offline and engine.trust_root is None and engine.trust_mode == "production":
        return None  # the production root may be refreshed by TUF between builds
    inputs = {"code": code_digest(), **evaluation_inputs(options, aicr, hashed=hashed)}
    text = json.dumps(inputs, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_NOT_PER_RECIPE = (MemoRole.LAYOUTS, MemoRole.SITE)
"""Options no recipe's product depends on (see `evaluation_inputs`)."""


def evaluation_inputs(
    options: Any,
    aicr: Path | None,
    *,
    per_recipe: bool = False,
    hashed: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Every option of every group of `options` (an `EvaluationOptions`), keyed
    `group.field`, as its declared `MemoRole` says (MemoRole.NONE leaves it out); `aicr` is the
    program a MemoRole.PROGRAM option resolves to. Raises TypeError for an option without a role.

    `per_recipe=True` gives what every recipe's product depends on
    (generator.evaluate.perrecipe): the tree stands for its folder only (each recipe's key
    names its own files; the few products the git commit reaches are bound to it themselves),
    and the OCI layouts (a bundle is named by its digest, as in the verdict cache's key) and
    what only the site shows (`MemoRole.SITE`) are left out."""
    inputs: dict[str, Any] = {}
    for group in dataclasses.fields(options):
        values = getattr(options, group.name)
        for item in dataclasses.fields(values):
            role = memo_role(item)
            if role is MemoRole.NONE or (per_recipe and role in _NOT_PER_RECIPE):
                continue
            value = getattr(values, item.name)
            if per_recipe and role is MemoRole.TREE:
                root = Path(value)
                inputs[f"{group.name}.{item.name}"] = [str(root.absolute())]
            else:
                inputs[f"{group.name}.{item.name}"] = _keyed(role, value, aicr, hashed)
    return inputs


def _keyed(
    role: MemoRole, value: Any, aicr: Path | None, hashed: dict[str, str] | None = None
) -> Any:
    """What an option of `role` contributes to the key (`hashed`: see `fingerprint`)."""
    if role is MemoRole.FILE:
        return None if value is None else [str(value), _file_digest(value)]
    if role is MemoRole.TREE:
        root = Path(value)
        return [str(root.absolute()), _tree_digest(root, hashed), git_head(root)]
    if role is MemoRole.LAYOUTS:
        return [[str(p), _file_digest(Path(p) / "index.json")] for p in value]
    if role is MemoRole.PROGRAM:
        return _program(aicr)
    if isinstance(value, Mapping):
        return sorted(value.items())
    return value


def _tree_digest(root: Path, hashed: dict[str, str] | None) -> str:
    """`tree_digest(root)`, as the child the command line started worked it out when it did
    (`generator.treeprefetch`), else here."""
    answer = take(root)
    if answer is None:
        return tree_digest(root, hashed=hashed)
    digest, files = answer
    if hashed is not None:
        hashed.update(files)
    return digest


class EvaluationMemo:
    """The memo folder under the cache: one evaluation, replaced atomically.

    It holds the data files the evaluation wrote (`data/`, exactly as published) and
    `meta.json` (key, counts, which series file is which recipe, the digest of every data
    file), sealed with an HMAC tag. A hit reads the documents back from those JSON files,
    each checked against its listed digest: nothing executable is ever loaded from the cache,
    and JSON parsing shares keys, so the documents take less memory than when first built.
    The folder is checked when loaded; a writer racing the build in between is outside the
    trust model (README, "The cache's trust model").
    """

    def __init__(self, cache_root: Path, auth: CacheAuth | None = None) -> None:
        self.root = cache_root / "evaluation"
        self._auth = auth

    @property
    def auth(self) -> CacheAuth:
        if self._auth is None:
            self._auth = CacheAuth.from_environment()
        return self._auth

    def _meta(self, folder: Path, key: str) -> dict[str, Any] | None:
        """The memo's checked `meta.json`, None when absent or unreadable, counted as a
        failure when its tag does not check."""
        stored = read_cache_file(folder / "meta.json", MAX_META_BYTES)
        if stored is None:
            return None
        body = self.auth.open(Purpose.MEMO, stored, key.encode(), f"memo {key}")
        if body is None:
            return None
        try:
            meta = json.loads(body)
        except ValueError:
            return None
        return meta if isinstance(meta, dict) and meta.get("key") == key else None

    def _write_meta(self, folder: Path, key: str, meta: Mapping[str, Any]) -> None:
        tmp = folder / ".meta.json.tmp"
        tmp.write_bytes(self.auth.seal(Purpose.MEMO, json.dumps(meta).encode(), key.encode()))
        os.replace(tmp, folder / "meta.json")

    def published(self, key: str, output_key: str) -> tuple[Counts, int, str] | None:
        """What `add_output` recorded for the memo of `key` under `output_key`: the counts, the
        number of recipes and the digest of the published folder; None otherwise."""
        meta = self._meta(self.root / key, key)
        if meta is None:
            return None
        stamp = meta.get("output")
        try:
            if not isinstance(stamp, dict) or stamp.get("key") != output_key:
                return None
            return _counts(meta), len(meta["series"]), str(stamp["tree"])
        except (KeyError, TypeError, ValueError):
            return None

    def add_output(self, key: str, output_key: str, tree: str) -> None:
        """Record with the memo of `key` that a site under `output_key` was published from it
        and its folder then had the digest `tree` (rewritten atomically)."""
        folder = self.root / key
        try:
            meta = self._meta(folder, key)
            if meta is None:
                return
            meta["output"] = {"key": output_key, "tree": tree}
            self._write_meta(folder, key, meta)
        except (OSError, ValueError):
            pass

    def load(self, key: str) -> Memo | None:
        """The memo of `key`, or None (absent, for another key, unreadable or failing its
        check)."""
        folder = self.root / key
        data = folder / "data"
        meta = self._meta(folder, key)
        if meta is None:
            return None
        try:
            files = meta["files"]
            if not isinstance(files, dict) or not restored(data, files, meta.get("away")):
                return None  # a big file is no longer in the site it was published in
            if sorted(files) != listing(data):
                note_failure(f"memo {key} data/")
                return None
            counts = _counts(meta)
            checked = Checked(data, files)
            documents = {
                "index": checked.json("index.json"),
                "pointers": checked.json("pointers.json"),
                "build_info": checked.json("build-info.json"),
                "series": {
                    str(recipe): checked.json(f"series/{name}") for recipe, name in meta["series"]
                },
            }
            checked.rest()
        except Changed as exc:
            note_failure(f"memo {key} data/{exc}")
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return Memo(documents, counts, data, meta.get("pageDigests"))

    def _replaced_data(self) -> Path | None:
        """The data/ of the memo a new one replaces (its files may be linked), if any."""
        try:
            kept = sorted(p for p in self.root.iterdir() if not p.name.startswith("."))
        except OSError:
            return None
        return kept[0] / "data" if kept else None

    def add_page_digests(self, key: str, digests: Mapping[str, Any]) -> None:
        """Keep the site's document digests with the memo of `key` (rewritten atomically)."""
        folder = self.root / key
        try:
            meta = self._meta(folder, key)
            if meta is None:
                return
            meta["pageDigests"] = dict(digests)
            self._write_meta(folder, key, meta)
        except (OSError, ValueError):
            pass

    def store(
        self,
        key: str,
        documents: Mapping[str, Any],
        counts: Counts,
        data_dir: Path,
        written: Mapping[str, Written] | None = None,
        published: Path | None = None,
    ) -> None:
        """Keep this evaluation (replacing any other); failures only cost the next build.
        `written`: the data files hashed as they were written (`data/<name>`), whose copies
        need not be read again while the original is still the file recorded. `published`:
        the data folder `data_dir` is about to become (the site's), where the big files are
        left (None: every file is copied)."""

        try:
            series = [[recipe, series_file_name(recipe)] for recipe in sorted(documents["series"])]
            self.root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".memo-", dir=self.root))
            replaced = self._replaced_data()
            away = big_files(data_dir) if published is not None else []
            shutil.copytree(
                data_dir,
                staging / "data",
                copy_function=linking_copy(data_dir, replaced),
                ignore=lambda folder, _names: away if Path(folder) == data_dir else [],
            )
            files = {
                name: copied_digest(data_dir, staging / "data", name, written or {})
                for name in listing(staging / "data")
            }
            for name in away:  # not copied: hashed where it is, unless hashed as written
                files[name] = copied_digest(data_dir, data_dir, name, written or {})
            meta = {"key": key, "counts": counts.as_dict(), "series": series, "files": files}
            if away:
                meta["away"] = {"site": str(published), "files": away}
            self._write_meta(staging, key, meta)
            for old in self.root.iterdir():
                if old != staging:
                    shutil.rmtree(old, ignore_errors=True)
            os.rename(staging, self.root / key)
        except (OSError, EvidenceDashError):
            shutil.rmtree(self.root, ignore_errors=True)


def _counts(meta: Mapping[str, Any]) -> Counts:
    """The counts a memo's meta lists (KeyError, TypeError or ValueError when malformed)."""
    c = meta["counts"]
    return Counts(
        int(c["pointers"]),
        int(c["verified"]),
        int(c["rejected"]),
        int(c["pending"]),
        int(c["noVerdict"]),
        str(c["buildTime"]),
    )
