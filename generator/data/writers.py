"""The data contract writers: JSON-ready documents from the board and the pointer records.

Field names follow aicr's `aicr-corroboration/v1` exactly; additions are documented as ours in
docs/data-contract.md. `write_data` is the only function here that touches the file system.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.corroborate import Board, safe_slug
from generator.data._board_docs import (
    LINKS,
    SCHEMA,
    index_document,
    omitted_document,
    series_document,
    series_documents,
)
from generator.data._pointer_docs import evidence_document, pointer_document, pointers_document
from generator.data.gojson import INDEX_WALK, WALKED_DEPTH, go_json_bytes, write_go_json
from generator.data.records import PointerRecord
from generator.data.schemaid import SCHEMA_FILES, schema_text, with_schema_id
from generator.errors import BuildError, Location
from generator.quickwrite import write_or_link

if TYPE_CHECKING:
    from generator.data.spool import DeferredWrite

__all__ = [
    "LINKS",
    "SCHEMA",
    "SCHEMA_FILES",
    "build_info_document",
    "data_documents",
    "default_build_time",
    "evidence_document",
    "index_document",
    "omitted_document",
    "pointer_document",
    "pointers_document",
    "report_cache_failures",
    "schema_text",
    "series_document",
    "series_documents",
    "series_file_name",
    "write_data",
    "write_documents",
]


# --------------------------------------------------------------------------- build-info.json


def build_info_document(
    *,
    build_time: str,
    commit: str | None,
    source_url: str | None,
    verifier: str,
    trust_name: str,
    trust_production: bool,
    trust_refreshed: str | None,
    trusted_registries: Sequence[str] | None,
    preview: bool,
    trust_fallback: str | None = None,
    publisher: Mapping[str, str] | None = None,
    verify_with: Mapping[str, Any] | None = None,
    log_search_url: str | None = None,
) -> dict[str, Any]:
    """`data/build-info.json` (ours): how and from what this site was built. `trustRootFallback`
    is only written when a TUF refresh could not reach its repository (so every page warns)."""
    info: dict[str, Any] = {
        "buildTime": build_time,
        "commit": commit,
        "sourceUrl": source_url,
        "verifier": verifier,
        "trust": {"name": trust_name, "production": trust_production, "refreshed": trust_refreshed},
        "trustedRegistries": list(trusted_registries) if trusted_registries is not None else None,
        "preview": preview,
    }
    if trust_fallback:
        info["trustRootFallback"] = {"reason": trust_fallback}
    if publisher:  # who signs data/manifest.json (`build --publisher-identity`)
        info["publisher"] = {"identity": publisher["identity"], "issuer": publisher["issuer"]}
    if verify_with is not None:  # the options a reader repeats a verification with
        info["verifyWith"] = dict(verify_with)
    if log_search_url:  # `--log-search-url`: a transparency-log search page, `{logIndex}`
        info["logSearchUrl"] = log_search_url
    return info


def report_cache_failures(data_dir: Path) -> None:
    """Add this build's cache report to `<data_dir>/build-info.json`: how many cache entries
    failed authentication (`generator.cacheauth`) and were read as misses. Written once all
    cache reads are done and after the evaluation memo took its copy, so a reused evaluation
    never carries an earlier build's count."""
    from generator.cacheauth import failures

    path = data_dir / "build-info.json"
    doc = json.loads(path.read_bytes())
    doc["cache"] = {"authenticationFailures": len(failures())}
    with path.open("wb") as fh:
        write_go_json(doc, fh)


def default_build_time(board: Board, source_date_epoch: int | None = None) -> str:
    """SOURCE_DATE_EPOCH as RFC 3339 when given, else the newest verified log time ("" if
    none); never a claimed attestedAt."""
    if source_date_epoch is not None:
        return datetime.fromtimestamp(source_date_epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return board.newest_logged_at or ""


# --------------------------------------------------------------------------- files


def series_file_name(recipe: str) -> str:
    """`<recipe>.json`, after checking the slug is a safe single path segment."""
    if not safe_slug(recipe):
        raise BuildError(
            "recipe slug cannot be used as a series file name",
            location=Location("data/series", recipe),
            expected="letters, digits, '.', '_' or '-', not starting with '.'",
            found=repr(recipe),
            hint="fix the recipe name in the pointer and predicate; the board should skip it",
        )
    return f"{recipe}.json"


def data_documents(
    *,
    board: Board,
    records: Iterable[PointerRecord],
    build_time: str,
    build_info: Mapping[str, Any],
    pointer_documents: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """All data documents of one build: index, series (by recipe), pointers and build-info
    (`pointer_documents`: pointers.json entries already made, see `pointers_document`)."""
    return {
        "index": index_document(board, build_time=build_time),
        "series": series_documents(board),
        "pointers": pointers_document(records, pointer_documents, board=board),
        "build_info": dict(build_info),
    }


def write_documents(
    out_dir: Path,
    documents: Mapping[str, Any],
    site_url: str | None = None,
    hashed: Callable[[Path, str], None] | None = None,
    previous: Path | None = None,
    deferred: DeferredWrite | None = None,
) -> list[Path]:
    """Write `<out_dir>/data/...` from `data_documents` output, plus the schemas (whose `$id`
    names `site_url`, see `generator.data.schemaid`).

    Returns the written files in write order. Same documents give byte-identical files.
    `hashed` is told each JSON document's sha256 (hex) once it is written and closed: the
    bytes were at hand, so whoever lists the files (the site manifest) need not read them.
    `previous` is the output this data replaces: a series file it holds byte for byte is
    linked (`write_or_link`), not written again. With `deferred`, pointers.json and index.json
    are handed to it first (each written by a helper process, `generator.data.spool`; their
    digests come from its `finish`).
    """
    data = out_dir / "data"
    big = [  # the largest first: a helper (`deferred`) starts on it at once
        (data / "pointers.json", documents["pointers"], WALKED_DEPTH),
        (data / "index.json", documents["index"], INDEX_WALK),
    ]
    # File names are checked before anything is written, as when all texts were made first.
    series = [
        (data / "series" / series_file_name(recipe), doc)
        for recipe, doc in sorted(documents["series"].items())
    ]
    data.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def done(path: Path, sha256: str) -> None:
        if hashed is not None:
            hashed(path, sha256)
        written.append(path)

    for path, doc, walk in big:
        if deferred is not None:
            deferred.take(path, doc, walk)
            written.append(path)
        else:
            done(path, _streamed(path, doc, walk))
    done(data / "build-info.json", _streamed(data / "build-info.json", documents["build_info"]))
    folders = {data}
    if series:
        (data / "series").mkdir(exist_ok=True)
        folders.add(data / "series")
    for path, doc in series:  # mostly unchanged from the output this replaces
        text = go_json_bytes(doc)
        before = None if previous is None else previous / path.relative_to(out_dir)
        write_or_link(path, text, before)
        done(path, hashlib.sha256(text).hexdigest())
    for name in SCHEMA_FILES:
        path = data / "schema" / name
        _write_text(path, with_schema_id(schema_text(name), name, site_url), folders)
        written.append(path)
    return written


def _streamed(path: Path, doc: Any, walk: int = WALKED_DEPTH) -> str:
    """Write `doc` as Go writes it into `path`, a subtree at a time (the big documents are
    never one string); the sha256 (hex) of what was written (`walk`: `go_json_plan`)."""
    with path.open("wb") as fh:
        return write_go_json(doc, fh, walk)


def _write_text(path: Path, text: str, folders: set[Path]) -> None:
    if path.parent not in folders:
        path.parent.mkdir(parents=True, exist_ok=True)
        folders.add(path.parent)
    path.write_text(text, encoding="utf-8", newline="\n")


def write_data(
    out_dir: Path,
    *,
    board: Board,
    records: Iterable[PointerRecord],
    build_time: str,
    build_info: Mapping[str, Any],
) -> list[Path]:
    """Write `<out_dir>/data/...`: index, series, pointers, build-info and schemas."""
    documents = data_documents(
        board=board, records=records, build_time=build_time, build_info=build_info
    )
    return write_documents(out_dir, documents)
