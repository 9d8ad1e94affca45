"""The tree seam: read and check an aicr evidence tree (pointers, allowlist, pointer index).

Pure parsing lives in `yamlio` (over the private `_yaml_builder` and `_yaml_scalars`), `pointer`
and `allowlist`; `safeio` and `scan` are the thin shell that reads the filesystem (bounded, never
following links); `index` derives the pointer index.
"""

from __future__ import annotations

from generator.tree.allowlist import (
    UNLISTED,
    Allowlist,
    display_label,
    load_allowlist,
    organisation_of,
    parse_allowlist,
)
from generator.tree.index import (
    default_index_path,
    index_drift,
    index_entries,
    render_index,
    write_index,
)
from generator.tree.pointer import (
    RULES,
    load_pointer_doc,
    normalise_rfc3339,
    parse_pointer,
    parse_profile,
    profile_segment,
    validate_pointer,
)
from generator.tree.safeio import (
    ALLOWLIST_LIMIT,
    POINTER_LIMIT,
    FileRefusedError,
    read_bounded,
)
from generator.tree.scan import (
    LAYOUT_RULES,
    ParsePointer,
    TreeScan,
    Violation,
    check_tree,
    scan_tree,
)
from generator.tree.yamlio import load_yaml

__all__ = [
    "ALLOWLIST_LIMIT",
    "LAYOUT_RULES",
    "POINTER_LIMIT",
    "ParsePointer",
    "RULES",
    "UNLISTED",
    "Allowlist",
    "FileRefusedError",
    "TreeScan",
    "Violation",
    "check_tree",
    "default_index_path",
    "display_label",
    "load_pointer_doc",
    "index_drift",
    "index_entries",
    "load_allowlist",
    "load_yaml",
    "normalise_rfc3339",
    "organisation_of",
    "parse_allowlist",
    "parse_pointer",
    "parse_profile",
    "profile_segment",
    "read_bounded",
    "render_index",
    "scan_tree",
    "validate_pointer",
    "write_index",
]
