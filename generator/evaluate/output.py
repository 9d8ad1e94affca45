"""Output: write data/ and the site into a staging folder, then swap it in atomically."""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from generator.bundle.cache import default_cache_dir
from generator.changes import previous_warnings
from generator.data import SCHEMA_FILES, spool, write_documents
from generator.data.schemaid import stamp_schema_ids
from generator.data.spool import DeferredWrite
from generator.data.writers import report_cache_failures
from generator.errors import BuildError, EvidenceDashError
from generator.evaluate.tabstore import release_made
from generator.manifest import Written
from generator.options import BuildOptions
from generator.pids import dead_folders
from generator.publish import finish_site, plan_site_changes
from generator.site.build import SiteInputs, build_site
from generator.site.pagecache import PageCache
from generator.site.prestage import Prestage, start_prestage
from generator.site.recipepages import InputDigests
from generator.site.sparedirs import spare
from generator.site.swap import publish_atomically

__all__ = [
    "STAGING_PREFIX",
    "Background",
    "finish_retiring",
    "retire",
    "size_warnings",
    "start_linking_ahead",
    "sweep_dead_staging",
    "write_output",
]


STAGING_PREFIX = ".evidence-build-"


def sweep_dead_staging(parent: Path) -> list[Path]:
    """Remove staging folders left by builds that were killed (their process no longer runs).

    A staging folder is named `.evidence-build-<pid>-<random>`; one whose pid is alive belongs to
    a concurrent build and is left alone. Returns what was removed.
    """
    removed = dead_folders(parent, STAGING_PREFIX)
    for folder in removed:
        shutil.rmtree(folder, ignore_errors=True)
    return removed


_RETIRING: list[Background] = []
"""The replaced outputs this process is deleting (`retire`)."""


def retire(old: Path) -> None:
    """Take a replaced output away: renamed at once to a staging name of this process (so a
    later swap never finds it, and `sweep_dead_staging` removes it should this process be
    killed), then deleted on a thread while the build measures and stamps what it published,
    but for its recipe folders, emptied and kept for the next build (`generator.site.sparedirs`).
    `finish_retiring` waits for it."""
    trash = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-retired-", dir=old.parent))
    target = trash / "old"
    try:
        os.rename(old, target)
    except OSError:
        shutil.rmtree(trash, ignore_errors=True)
        return  # the swap deletes it in place

    def delete() -> None:
        spare(target, old)  # its recipe folders, emptied, for the next build's site
        shutil.rmtree(trash, ignore_errors=True)

    _RETIRING.append(Background(delete))


def finish_retiring() -> None:
    """Wait until every replaced output `retire` took away is deleted."""
    while _RETIRING:
        _RETIRING.pop().wait(quietly=True)


def write_output(
    options: BuildOptions,
    documents: Mapping[str, Any],
    *,
    data_from: Path | None = None,
    keep_data: Callable[[Path, Mapping[str, Written]], None] | None = None,
    page_digests: Any = None,
    prestaged: Prestage | None = None,
) -> dict[str, Any] | None:
    """Write data/ and the site into a staging folder, then swap it in atomically.

    data/ is written from `documents`, or copied from `data_from` (the evaluation memo's
    copy of the same files); `keep_data` is handed the written data folder (to memoize it)
    and the digests of its files, made as they were written,
    on a thread of its own, while the site is built (copying is file-system work, which lets
    go of the interpreter), and is waited for before the folder moves into the site.
    `page_digests` are the site's document digests stored with the memo; the digests the
    site used are returned (for the memo), None without a site. `prestaged`: recipe pages
    linked ahead (`start_linking_ahead`).
    """
    out = options.output.out.absolute()  # staging and MkDocs' docs_dir must not be relative
    out.parent.mkdir(parents=True, exist_ok=True)
    sweep_dead_staging(out.parent)
    work = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out.parent))
    keeper = Background(None)
    written: dict[str, Written] = {}  # the data files, hashed as they were written
    deferred: DeferredWrite | None = None
    data_done: Callable[[], None] = lambda: None  # noqa: E731 - replaced when a helper writes
    try:
        data_dir = work / "data"
        if data_from is not None:
            shutil.copytree(data_from, data_dir)
            stamp_schema_ids(
                data_dir, SCHEMA_FILES, options.output.site_url
            )  # memo: any site's $id
        else:
            deferred = _deferred(options, documents, work)
            keeper, data_done = _write_data(options, documents, work, written, keep_data, deferred)
            release_made(documents)  # the tabs' text: the data files are written from it now
        if options.output.data_only:
            _publish_data(options, documents, work, keeper, out, data_done)
            return None
        used = _publish_site(
            options, documents, work, keeper, out, page_digests, written, data_done, prestaged
        )
        keeper.wait()
        return used
    except EvidenceDashError:
        raise
    except Exception as exc:
        raise BuildError(
            f"the site build failed: {type(exc).__name__}: {exc}",
            hint="the previous output was left in place; rerun with the same inputs to reproduce",
        ) from exc
    finally:
        if deferred is not None:
            deferred.abandon()  # a no-op once finished
        keeper.wait(quietly=True)  # never delete a folder a thread still reads
        shutil.rmtree(work, ignore_errors=True)


def _write_data(
    options: BuildOptions,
    documents: Mapping[str, Any],
    work: Path,
    written: dict[str, Written],
    keep_data: Callable[[Path, Mapping[str, Written]], None] | None,
    deferred: DeferredWrite | None,
) -> tuple[Background, Callable[[], None]]:
    """Write `<work>/data/` (the big documents by `deferred`'s helpers, when given), hashing
    each file into `written`; the thread keeping the memo's copy, and what completes data/."""
    data_dir = work / "data"

    def hashed(path: Path, sha256: str) -> None:
        written["data/" + path.relative_to(data_dir).as_posix()] = Written.of(path, sha256)

    write_documents(
        work,
        documents,
        site_url=options.output.site_url,
        hashed=hashed,
        previous=options.output.out.absolute(),
        deferred=deferred,
    )
    keeper = Background(None)
    if keep_data is not None:
        keeper = Background(
            functools.partial(_keep_when_written, deferred, keep_data, data_dir, written, hashed)
        )
    done = (lambda: None) if deferred is None else functools.partial(deferred.finish, hashed)
    return keeper, done


def _deferred(
    options: BuildOptions, documents: Mapping[str, Any], work: Path
) -> DeferredWrite | None:
    """A helper writes the big data documents while the site is built, when the build has a
    second process to spare and the documents are big (`generator.data.spool`)."""
    pointers = documents.get("pointers", {}).get("pointers", ())
    if options.engine.jobs < 2 or len(pointers) < spool.MIN_SPOOLED_POINTERS:
        return None
    folder, owned = spool.spool_folder(len(pointers), work)
    return DeferredWrite(folder, owned=owned)


def _keep_when_written(
    deferred: DeferredWrite | None,
    keep_data: Callable[[Path, Mapping[str, Written]], None],
    data_dir: Path,
    written: dict[str, Written],
    hashed: Callable[[Path, str], None],
) -> None:
    """`keep_data`, once data/ is complete: as soon as the helper wrote its documents, or
    when the build wrote them itself (not at all when the build failed first)."""
    if deferred is not None:
        digests = deferred.helper_digests()
        if digests is not None:
            for path, digest in digests.items():
                hashed(path, digest)
        elif not deferred.wait_written():
            return
    keep_data(data_dir, written)


def _publish_data(
    options: BuildOptions,
    documents: Mapping[str, Any],
    work: Path,
    keeper: Background,
    out: Path,
    data_done: Callable[[], None],
) -> None:
    """`--data-only`: the site is data/ alone (with the manifest and badges)."""
    data_dir = work / "data"
    staging = work / "site"
    staging.mkdir()
    data_done()  # the big documents, when a helper writes them
    keeper.wait()
    report_cache_failures(data_dir)
    shutil.copytree(data_dir, staging / "data")
    finish_site(options, documents, staging)
    publish_atomically(staging, out, retire)


def _publish_site(
    options: BuildOptions,
    documents: Mapping[str, Any],
    work: Path,
    keeper: Background,
    out: Path,
    page_digests: Any,
    written: dict[str, Written],
    data_done: Callable[[], None],
    prestaged: Prestage | None = None,
) -> dict[str, Any] | None:
    """Build the site around data/ and publish it; the document digests it used.
    `data_done` completes data/ (the big documents, when a helper writes them)."""
    data_dir = work / "data"
    inputs = SiteInputs(
        index=documents["index"],
        series=documents["series"],
        pointers=documents["pointers"],
        build_info=documents["build_info"],
        preview=options.stamp.preview,
        site_url=options.output.site_url,
    )

    def data_ready() -> None:
        data_done()
        keeper.wait()  # the memo has its copy: the build's cache report goes in now
        report_cache_failures(data_dir)
        written.pop("data/build-info.json", None)  # rewritten: hashed again

    changes = plan_site_changes(options, documents)
    used = build_site(
        inputs,
        out=out,
        config=options.output.config,  # None: the packaged one, never ./mkdocs.yml (site.siteconfig)
        work_dir=work,
        data_dir=data_dir,
        move_data=True,
        page_cache=_page_cache(options),
        digests=InputDigests.from_dict(page_digests) if page_digests else None,
        data_ready=data_ready,
        before_publish=lambda staging: finish_site(options, documents, staging, written, changes),
        retire=retire,
        helpers=options.engine.jobs - 1,  # --jobs processes render pages, this one included
        recipe_lists=changes.recipe_lists(),
        known=written,
        prestaged=prestaged,
    )
    return None if used is None else used.as_dict()


def _page_cache(options: BuildOptions) -> Path:
    return (options.engine.cache or default_cache_dir()) / "pages"


def start_linking_ahead(options: BuildOptions) -> Prestage | None:
    """The recipe pages of the output this build replaces, linked ahead by a forked child
    while the build evaluates (`generator.site.prestage`); None without a site to build over
    an earlier one, or without a folder for them (it only ever saves time)."""
    if options.output.data_only:
        return None
    out = options.output.out.absolute()
    try:
        folder = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out.parent)
    except OSError:
        return None
    return start_prestage(out, PageCache(_page_cache(options)), Path(folder))


class Background:
    """Run `task` on a thread (None: nothing to run); `wait` joins it and raises what the task
    raised, once. The build's own threads only ever do file-system work."""

    def __init__(self, task: Callable[[], None] | None) -> None:
        self._error: BaseException | None = None
        self._thread: Any = None
        if task is not None:

            def run() -> None:
                try:
                    task()
                except BaseException as exc:  # noqa: BLE001 - handed to `wait`
                    self._error = exc

            self._thread = threading.Thread(target=run, name="evidence-dashboard-keep", daemon=True)
            self._thread.start()

    def wait(self, *, quietly: bool = False) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None and not quietly:
            raise error


def size_warnings(options: BuildOptions) -> tuple[str, ...]:
    """The size warnings of the published site: those its build-info.json records (measured
    in staging, before the manifest: `generator.publish.finish_site`), and those the build
    recorded about the site it replaced."""
    out = options.output.out.absolute()
    return _recorded_warnings(out / "data" / "build-info.json") + previous_warnings(out)


def _recorded_warnings(info: Path) -> tuple[str, ...]:
    """The size warnings a published build-info.json states (none when it states none)."""
    try:
        doc = json.loads(info.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    output = doc.get("output") if isinstance(doc, dict) else None
    warnings = output.get("warnings") if isinstance(output, dict) else None
    if not isinstance(warnings, list):
        return ()
    return tuple(str(w) for w in warnings)
