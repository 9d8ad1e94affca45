"""Pages rendered from documents read back from their data files equal those rendered from the
documents themselves: a build answered by the evaluation memo reads its documents back from
data/*.json, where Go's number form writes an integral float as `300`, which reads back as an
int (`300.0` in a chart before, `300` after, would make a warm build's page differ)."""

from __future__ import annotations

import json
from typing import Any

from generator.data.gojson import go_json_bytes
from tests.site.test_golden import rendered


def _read_back(documents: dict[str, Any]) -> dict[str, Any]:
    return {
        name: (
            json.loads(go_json_bytes(doc))
            if name != "series"
            else {k: json.loads(go_json_bytes(v)) for k, v in doc.items()}
        )
        for name, doc in documents.items()
    }


def test_pages_from_read_back_documents_are_the_same(documents: dict[str, Any]) -> None:
    read_back = _read_back(documents)
    assert b'"floor": 300,' in go_json_bytes(documents["pointers"])  # an integral float
    assert rendered(read_back) == rendered(documents)
