"""Laid-out pointer entries whose text lies in a file, as a reused recipe product's do
(`generator.evaluate.productstore`), for the tests of `generator.data`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from generator.data.gojson import finish_layout, subtree_layout
from generator.data.gonumbers import number_steps
from generator.data.laidout import ENTRY_PAD, LaidOutEntry, LayoutFile, Span, head_of


def stored_entries(
    folder: Path, docs: list[dict[str, Any]], *, steps: bool = False, finished: bool = False
) -> tuple[list[LaidOutEntry], LayoutFile]:
    """`docs` as entries whose text lies in `folder/entries.layouts`, none read yet; `steps`:
    with their number steps known, as a stored product's are; `finished`: with their text as
    data/pointers.json holds it stored after the layouts, as a stored product's is."""
    layouts = [subtree_layout(d) for d in docs]
    texts = [finish_layout(layout, ENTRY_PAD) for layout in layouts] if finished else []
    path = folder / "entries.layouts"
    path.write_bytes(b"".join(layouts + texts))
    file = LayoutFile(path, path.stat().st_size)
    entries, offset = [], 0
    for doc, layout in zip(docs, layouts, strict=True):
        known = number_steps(layout) if steps else None
        span = Span(file, offset, len(layout), hashlib.sha256(layout).digest(), known)
        entries.append(LaidOutEntry.from_head(span, head_of(doc)))
        offset += len(layout)
    for entry, text in zip(entries, texts, strict=False):
        entry.finished = Span(file, offset, len(text), hashlib.sha256(text).digest())
        offset += len(text)
    return entries, file
