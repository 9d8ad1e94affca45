"""The data contract (`<out>/data/`): JSON documents the site is built from, and their schemas.

Field names follow aicr's `aicr-corroboration/v1`; additions are ours and documented in
docs/data-contract.md. JSON is written byte-compatibly with Go's `encoding/json`.

`writers` assembles and writes the documents; the board's (`_board_docs`: index and series) and
the pointers' (`_pointer_docs`) are made in private modules behind it. The face below is lazy:
naming a name imports only its module, so the data helper (`python -m generator.data.spool`),
which needs the JSON writer alone, never loads the board.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.lazyface import lazy_face

if TYPE_CHECKING:
    from generator.data._pointer_docs import freshness_document
    from generator.data.gojson import go_json
    from generator.data.records import FreshnessExplanation, FreshnessInfo, PointerRecord
    from generator.data.writers import (
        LINKS,
        SCHEMA,
        SCHEMA_FILES,
        build_info_document,
        data_documents,
        default_build_time,
        evidence_document,
        index_document,
        pointer_document,
        pointers_document,
        schema_text,
        series_document,
        series_documents,
        series_file_name,
        write_data,
        write_documents,
    )

__all__ = [
    "LINKS",
    "SCHEMA",
    "SCHEMA_FILES",
    "data_documents",
    "write_documents",
    "FreshnessExplanation",
    "FreshnessInfo",
    "PointerRecord",
    "build_info_document",
    "default_build_time",
    "evidence_document",
    "freshness_document",
    "go_json",
    "index_document",
    "pointer_document",
    "pointers_document",
    "schema_text",
    "series_document",
    "series_documents",
    "series_file_name",
    "write_data",
]

_WRITERS = (
    "LINKS SCHEMA SCHEMA_FILES build_info_document data_documents default_build_time "
    "evidence_document index_document pointer_document pointers_document schema_text "
    "series_document series_documents series_file_name write_data write_documents"
)
_HOME = {
    **dict.fromkeys(_WRITERS.split(), "writers"),
    "freshness_document": "_pointer_docs",
    "go_json": "gojson",
    "FreshnessExplanation": "records",
    "FreshnessInfo": "records",
    "PointerRecord": "records",
}
"""Which submodule defines each public name."""

__getattr__, __dir__ = lazy_face(__name__, _HOME, __all__, globals())
