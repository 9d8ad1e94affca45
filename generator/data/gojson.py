"""JSON written the way Go's `encoding/json` `MarshalIndent` writes it (aicr 2.5).

Sorted keys, 2-space indent, trailing newline, raw UTF-8, and Go's HTML escaping of `<`, `>`,
`&` plus U+2028 and U+2029, so two builds from the same inputs are byte-identical and aicr's
own output can be compared byte for byte.
"""

from __future__ import annotations

import json
from typing import Any

_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def go_json(obj: Any) -> str:
    """Serialise `obj` like Go `json.MarshalIndent(obj, "", "  ")` plus a newline."""
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    # These characters only ever occur inside JSON strings, so a plain replacement is exact.
    for raw, escaped in _GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text + "\n"
