"""The OCI layouts indexed in a forked process while the build reads its tree
(`IndexPrefetch`), or read from the indexes an earlier build kept
(`generator.bundle.layoutmemo`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from generator.forkedcall import ForkedCall, start_forked

from .layout import LayoutIndex, LayoutReader
from .layoutmemo import LayoutIndexMemo
from .types import Limits

__all__ = ["IndexPrefetch"]


class IndexPrefetch:
    """Index layouts in a forked process while this one does other work.

    Indexing reads every listed manifest (ten thousand small files for as many bundles) and
    takes seconds; a build needs the index only once it starts verifying, after hashing and
    reading the tree, which need no index. A layout whose index `memo` kept (its `index.json`
    and blobs folder as they were, `generator.bundle.layoutmemo`) is not indexed at all; the
    others are, in the child, and what it made is kept for the next build. `get` waits for the
    child's answer; any failure there (an unusable layout included) answers None, and the
    layout is then indexed in this process, which reports the error as usual. `close` stops a
    child that is not needed (an evaluation reused from the memo). Where no child starts
    sound (`generator.forkedcall.start_forked`: not Linux, other threads running, no process
    to spare), `get` indexes in this process, and what it made is kept the same way.
    """

    def __init__(
        self, roots: Sequence[Path], limits: Limits, memo: LayoutIndexMemo | None = None
    ) -> None:
        self._answers: dict[str, LayoutIndex | None] | None = None
        self._process: ForkedCall | None = None
        self._here: tuple[Sequence[Path], Limits] | None = None
        """What `get` indexes in this process when no child could start."""
        self._memo = memo
        self._kept: list[str] = []
        """The layouts whose index the memo holds (read when first asked for)."""
        self._keys: dict[str, str] = {}
        todo = []
        for root in roots:
            key = memo.key(root, limits) if memo is not None else None
            if memo is None or key is None:
                todo.append(root)
                continue
            self._keys[str(root)] = key
            if memo.has(key):
                self._kept.append(str(root))
            else:
                todo.append(root)
        self._all_kept = bool(roots) and not todo
        if memo is not None and self._keys:
            memo.keep_only(set(self._keys.values()))
        if todo:  # else nothing to index: the kept indexes are read when asked for
            self._process = start_forked(_index_in_child, (todo, limits))
            if self._process is None:
                self._here = (todo, limits)

    def get(self, root: Path) -> LayoutIndex | None:
        """The index of `root` as kept or as the child made it, or None (then index it
        yourself)."""
        if self._answers is None:
            if self._process is not None:
                answers = self._process.result()
            else:  # no child could start: indexed here, and kept like a child's answer
                answers = _index_in_child(*self._here) if self._here is not None else None
            self._process, self._here = None, None
            made = answers if isinstance(answers, dict) else {}
            for name, index in made.items():
                key = self._keys.get(name)
                if self._memo is not None and key is not None and isinstance(index, LayoutIndex):
                    self._memo.store(key, index)
            self._answers = {**made, **self._kept_answers()}
        return self._answers.get(str(root))

    def all_kept(self) -> bool:
        """Whether the memo holds every layout's index (none is indexed this build)."""
        return self._all_kept

    def _kept_answers(self) -> dict[str, LayoutIndex | None]:
        """The kept indexes (None for one that no longer reads back: indexed by the caller)."""
        memo = self._memo
        if memo is None:
            return {}
        return {name: memo.load(self._keys[name]) for name in self._kept}

    def close(self) -> None:
        """Stop the child (when still running) and let its pipe go."""
        self._here = None
        if self._process is not None:
            self._process.close()
            self._process = None


def _index_in_child(roots: Sequence[Path], limits: Limits) -> dict[str, LayoutIndex | None]:
    """The child of `IndexPrefetch` (or `get`, when none started): each layout's index, None
    where indexing failed."""
    answers: dict[str, LayoutIndex | None] = {}
    for root in roots:
        try:
            answers[str(root)] = LayoutReader(root, limits).index()
        except Exception:  # noqa: BLE001 - the parent indexes it again and reports the error
            answers[str(root)] = None
    return answers
