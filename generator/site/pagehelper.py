"""Recipe pages rendered by helper processes beside the build's own rendering.

Rendering is CPU-bound Python (one GIL), and on a cold build every recipe page is rendered: at
10,000 attestations that is seconds of one core while the other idles. When there are enough
pages to render, `render_shared` starts `helpers` fresh interpreters (`python -m
generator.site.pagehelper`: not forked, since a fork of the build would copy the pages of the
documents it reads, see `recipepages`; and not `multiprocessing`'s spawn, which runs the
caller's main script again in the child) and hands each a few recipes at a time, from the end
of the list, while the build renders from the front. Requests and pages travel as
length-prefixed pickles over the helper's standard input and output, between this process and
its own child running this module's code.

A helper is sent only what those recipes' pages read, which is exactly what the page cache keys
hash (`recipepages.input_digests`): the shared context (sources, states, phases, build info)
once, then per recipe its catalog entry, series and pointers. It builds a `SiteModel` of those
alone and renders with the same templates, so its pages are byte for byte the build's own. A
helper that fails, for any reason, costs only speed: its recipes are rendered in the build.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from generator.site.mkdocs_adapter import Finished, PageShell
from generator.site.pages import RecipePages, SiteModel, Tab

__all__ = ["MIN_SHARED_PAGES", "Part", "part_of", "render_part", "render_shared"]

Pages = list[tuple[str, Finished]]
"""Finished pages by recipe, in the order asked for."""

MIN_SHARED_PAGES = 48
"""Below this many pages to render, starting a process costs more than it saves."""
_CHUNK = 6
"""Recipes per helper task: small, so the build and its helpers finish close together."""
_PATIENCE_S = 120.0
"""A helper silent for this long while the build waits on it is given up (its recipes are
rendered here); a chunk takes a fraction of a second."""


@dataclass(frozen=True)
class Part:
    """What the pages of some recipes read, as plain (picklable) data."""

    tabs: tuple[tuple[str, str, str, Mapping[str, Any]], ...]
    series: Mapping[str, Any]
    pointers: tuple[Mapping[str, Any], ...]
    keys: tuple[str, ...]
    """The page cache keys of the recipes, in order (for `Placer.place`)."""


class Placer(Protocol):
    """Writes a finished page into the site (and the page cache); picklable, since a helper
    writes the pages it renders itself."""

    def place(self, recipe: str, key: str, page: Finished) -> None: ...


def _context(model: SiteModel) -> dict[str, Any]:
    """The index without its catalog: what every page reads (sources, states, phases, meta)."""
    return {k: v for k, v in model.index.items() if k != "groups"}


def part_of(model: SiteModel, tabs: Sequence[Tab], keys: Mapping[str, str]) -> Part:
    """The documents the pages of `tabs` read, and nothing else, with their page keys."""
    pointers = tuple(p for t in tabs for p in model.pointers_for(t.recipe))
    series = {t.recipe: model.series[t.recipe] for t in tabs if t.recipe in model.series}
    return Part(
        tuple((t.service, t.accelerator, t.os, t.doc) for t in tabs),
        series,
        pointers,
        tuple(keys[t.recipe] for t in tabs),
    )


def _model(context: Mapping[str, Any], build_info: Mapping[str, Any], part: Part) -> SiteModel:
    groups = [
        {"service": s, "dashboards": [{"accelerator": a, "os": o, "tabs": [doc]}]}
        for s, a, o, doc in part.tabs
    ]
    index = {**context, "groups": groups}
    return SiteModel(index, part.series, {"pointers": list(part.pointers)}, build_info)


def render_part(
    templates: Path,
    context: Mapping[str, Any],
    build_info: Mapping[str, Any],
    shell: PageShell,
    part: Part,
) -> Pages:
    """The finished pages of a part's recipes, in its order."""
    model = _model(context, build_info, part)
    renderer = RecipePages(model, templates)
    pages = []
    for tab in model.tabs:
        page = renderer.render(tab)
        pages.append((tab.recipe, shell.finish(tab.recipe, page.title, page.body.encode())))
    return pages


# ------------------------------------------------------------------------------- the wire
_HEADER = 8


def _send(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(_HEADER, "big") + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    """The next value, or None at the end of the stream (or a cut one)."""
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        return None
    size = int.from_bytes(header, "big")
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


def _serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """The helper's loop: the setup, then one part per request, answered with its pages."""
    setup = _receive(inp)
    if setup is None:
        return
    templates, context, build_info, shell, placer = setup
    while (part := _receive(inp)) is not None:
        pages = render_part(templates, context, build_info, shell, part)
        for (recipe, page), key in zip(pages, part.keys, strict=True):
            placer.place(recipe, key, page)
        _send(out, [recipe for recipe, _ in pages])


# ---------------------------------------------------------------------------- the build side
def _command() -> list[str]:
    """The helper's command line: this interpreter running this module."""
    return [sys.executable, "-m", __name__]


class _Helper:
    """One helper process, fed by a writer thread and read by a reader thread (pipes block)."""

    def __init__(self, setup: tuple[Any, ...]) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (package_root, path)))}
        self.proc = subprocess.Popen(
            _command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.requests: queue.SimpleQueue[Part | None] = queue.SimpleQueue()
        self.answers: queue.SimpleQueue[list[str] | None] = queue.SimpleQueue()
        self.requests.put(setup)  # type: ignore[arg-type]
        threading.Thread(target=self._write, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    def _write(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            while (request := self.requests.get()) is not None:
                _send(stdin, request)
            stdin.close()
        except (OSError, ValueError):
            pass  # the helper is gone: the reader reports it
        except Exception:  # noqa: BLE001 - a request that cannot travel: end the helper now
            self.proc.kill()  # (its reader ends, and the build renders those pages itself)

    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while (placed := _receive(stdout)) is not None:
                self.answers.put(placed)
        except Exception:  # noqa: BLE001 - a broken answer ends this helper
            pass
        self.answers.put(None)

    def stop(self) -> None:
        """End the helper: at once when idle (its input closes), killed when it is not."""
        self.requests.put(None)
        try:
            self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def render_shared(
    model: SiteModel,
    templates: Path,
    shell: PageShell,
    todo: Sequence[Tab],
    helpers: int,
    *,
    render_here: Callable[[Tab], None],
    placer: Placer,
    keys: Mapping[str, str],
) -> None:
    """Render every page of `todo`: `render_here` renders (and places) one in this process; a
    helper places what it renders with (a copy of) `placer`, under the page's key in `keys`.
    One helper is started per `MIN_SHARED_PAGES` pages at most (a helper costs an interpreter's
    start and memory); with fewer pages or no helpers, every page is rendered here."""
    helpers = min(helpers, len(todo) // MIN_SHARED_PAGES)
    if helpers < 1:
        for tab in todo:
            render_here(tab)
        return
    setup = (templates, _context(model), dict(model.build_info), shell, placer)
    started: list[_Helper] = []
    try:
        try:
            for _ in range(helpers):
                started.append(_Helper(setup))  # noqa: PERF401 - keep those started
        except OSError:
            pass  # fewer helpers (or none): the build renders what they would have
        _share(model, started, todo, render_here, keys)
    finally:
        for helper in started:
            helper.stop()


def _share(
    model: SiteModel,
    helpers: Sequence[_Helper],
    todo: Sequence[Tab],
    render_here: Callable[[Tab], None],
    keys: Mapping[str, str],
) -> None:
    """The build renders from the front; each helper keeps two chunks from the back asked for
    while more than that is left; a helper that fails has its chunks rendered here."""
    front, back = 0, len(todo)
    asked: dict[int, deque[Sequence[Tab]]] = {i: deque() for i in range(len(helpers))}
    alive = set(asked)
    while front < back or any(asked.values()):
        for i in sorted(alive):
            while len(asked[i]) < 2 and back - front > 2 * _CHUNK:
                chunk = todo[back - _CHUNK : back]
                back -= _CHUNK
                helpers[i].requests.put(part_of(model, chunk, keys))
                asked[i].append(chunk)
        if front < back:
            render_here(todo[front])
            front += 1
        for i in sorted(alive):
            _collect(helpers[i], asked[i], alive, i, block=front >= back)
        for i in [i for i in asked if i not in alive]:
            while asked[i]:
                for tab in asked[i].popleft():
                    render_here(tab)


def _collect(
    helper: _Helper,
    asked: deque[Sequence[Tab]],
    alive: set[int],
    index: int,
    *,
    block: bool,
) -> None:
    """Take the chunks a helper has placed (waiting for the next when `block`); a helper that
    answers nothing or other recipes is taken out of `alive` (its chunks are then rendered
    here, over whatever it may have written)."""
    while asked:
        try:
            placed = helper.answers.get(block=block, timeout=_PATIENCE_S if block else None)
        except queue.Empty:
            if block:
                alive.discard(index)
            return
        if placed is None or placed != [t.recipe for t in asked[0]]:
            alive.discard(index)
            return
        asked.popleft()
        block = False


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
