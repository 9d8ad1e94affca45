"""A file of laid-out entries (`LayoutFile`: a recipe product's or a kept tab's), where each
entry's text lies in it (`Span`), and the error a text that is not what its sealed record names
raises (`LayoutError`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from generator.cacheauth import note_failure, read_cache_file

__all__ = ["KEEP_FILES", "LayoutError", "LayoutFile", "Span", "let_go_files"]


class LayoutError(ValueError):
    """A laid-out entry's text is not the JSON object its fields say it is, or not the text
    its digest names."""


KEEP_FILES = 64
"""How many files of laid-out entries stay read at once (up to a few MB each): a build that
makes every page reads every recipe's file, and would otherwise hold them all."""
_HOLDING: deque[LayoutFile] = deque()


def let_go_files() -> None:
    """Let go of every file's bytes still held (at a build's end)."""
    while _HOLDING:
        _HOLDING.popleft().let_go()


class LayoutFile:
    """A file of laid-out entries (a recipe product's, `generator.evaluate.productstore`, or a
    kept tab's, `generator.evaluate.tabstore`), read whole when one of its entries' text is
    asked for, and held while among the last `KEEP_FILES` so read. The file is not sealed: each entry's text is checked against its
    sha256, which the sealed product names. A file that is not what it was stored as is removed
    (the next build evaluates its recipe again) and raises `LayoutError`."""

    __slots__ = ("_data", "path", "size")

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size
        self._data: bytes | None = None

    def stored(self) -> bytes | None:
        """Its first `size` bytes as the file holds them now, unchecked (a product stored again
        appends after them); None when it is not a regular file that long."""
        data = read_cache_file(self.path, self.size, head=True)
        return data if data is not None and len(data) == self.size else None

    def text(self, span: Span) -> bytes:
        """The text of `span`, checked against its sha256."""
        data = self._data
        if data is None:
            data = self._data = self.stored()
            if data is None:
                self.damaged()
            _HOLDING.append(self)
            if len(_HOLDING) > KEEP_FILES:
                _HOLDING.popleft().let_go()
        text = data[span.offset : span.offset + span.length]
        if len(text) != span.length or hashlib.sha256(text).digest() != span.sha256:
            self.damaged()
        return text

    def let_go(self) -> None:
        """Let go of its bytes (read again, and checked, when asked)."""
        self._data = None

    def damaged(self) -> NoReturn:
        """Remove the file (its product is a miss from now on) and raise `LayoutError`."""
        self._data = None
        note_failure(f"recipe layouts {self.path.name}")
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        raise LayoutError(f"{self.path} is not the file of laid-out entries it was stored as")


@dataclass(frozen=True, slots=True)
class Span:
    """Where an entry's text lies in its `LayoutFile`, the sha256 of that text, and which of
    Go's number steps change it (`generator.data.gonumbers.number_steps`; None: not known), so
    writing it does not search for them again."""

    file: LayoutFile
    offset: int
    length: int
    sha256: bytes
    steps: int | None = None
