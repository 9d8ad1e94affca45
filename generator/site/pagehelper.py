"""Recipe pages rendered by helper processes beside the build's own rendering.

Rendering is CPU-bound Python (one GIL): at 10,000 attestations a cold build's recipe pages are
seconds of one core. When there are enough pages to render, `SharedPages` starts `helpers` fresh
interpreters (`python -m generator.site.pagehelper`: not forked, since a fork of the build would
copy the pages of the documents it reads, see `recipepages`; and not `multiprocessing`'s spawn,
which runs the caller's main script again in the child) and hands each a few recipes at a time,
from the end of the list, while the build renders from the front. Requests and pages travel as
length-prefixed pickles over the helper's standard input and output.

The helpers start before the pages' shell exists: while the build renders its Markdown pages
and runs the theme, a helper renders pages and holds them (compressed); once the build sends
it the shell and the `Placer` (`SharedPages.finish`) it places what it holds, and from then on
every page as it renders it.

A helper is sent only what those recipes' pages read, which is exactly what the page cache keys
hash (`recipepages.input_digests`): the shared context (sources, states, phases, build info)
once, then per recipe its catalog entry, series and pointers. It builds a `SiteModel` of those
alone and renders with the same templates, so its pages are byte for byte the build's own. A
helper that fails, for any reason, costs only speed: its recipes are rendered in the build.
"""

from __future__ import annotations

import pickle
import queue
import subprocess
import sys
import threading
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from generator.helperio import helper_env
from generator.site.mkdocs_adapter import Finished, PageShell
from generator.site.pages import RecipePages, SiteModel, Tab

__all__ = ["MIN_SHARED_PAGES", "Part", "SharedPages", "part_of", "render_bodies", "render_shared"]

Bodies = list[tuple[str, str, bytes]]
"""Rendered, not yet finished pages: (recipe, title, body) in the order asked for."""

MIN_SHARED_PAGES = 48
"""Below this many pages to render, starting a process costs more than it saves."""
_CHUNK = 6
"""Recipes per helper task: small, so the build and its helpers finish close together."""
_PATIENCE_S = 120.0
"""A helper silent for this long while the build waits on it is given up (its recipes are
rendered here); a chunk takes a fraction of a second."""
_POLL_S = 0.05
"""How often a feeding thread looks whether the build has taken over its helper."""


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


@dataclass(frozen=True)
class Finish:
    """The message that lets a helper place pages: the shell and where they go."""

    shell: PageShell
    placer: Placer


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


def render_bodies(
    templates: Path, context: Mapping[str, Any], build_info: Mapping[str, Any], part: Part
) -> Bodies:
    """The rendered (not yet finished) pages of a part's recipes, in its order."""
    model = _model(context, build_info, part)
    renderer = RecipePages(model, templates)
    bodies = []
    for tab in model.tabs:
        page = renderer.render(tab)
        bodies.append((tab.recipe, page.title, page.body.encode()))
    return bodies


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


def _place(finish: Finish, keys: Sequence[str], bodies: Bodies) -> list[str]:
    """Finish and place rendered pages under their page `keys`; their recipes, in order."""
    for (recipe, title, body), key in zip(bodies, keys, strict=True):
        finish.placer.place(recipe, key, finish.shell.finish(recipe, title, body))
    return [recipe for recipe, _, _ in bodies]


def _held(bodies: Bodies) -> Bodies:
    """Pages as a helper holds them until the shell comes: compressed (to an eighth, for a
    tenth of their rendering time), so hundreds held do not add up in its memory."""
    return [(recipe, title, zlib.compress(body, 1)) for recipe, title, body in bodies]


def _unheld(bodies: Bodies) -> Bodies:
    return [(recipe, title, zlib.decompress(body)) for recipe, title, body in bodies]


def _serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """The helper's loop: the setup, then parts (answered `("rendered", recipes)`, pages held,
    before the `Finish`, answered `("placed", recipes held)`; `("placed", recipes)` after)."""
    setup = _receive(inp)
    if setup is None:
        return
    templates, context, build_info = setup
    finish: Finish | None = None
    held: list[tuple[Sequence[str], Bodies]] = []
    while (message := _receive(inp)) is not None:
        if isinstance(message, Finish):
            finish = message
            placed = [r for keys, bodies in held for r in _place(finish, keys, _unheld(bodies))]
            _send(out, ("placed", placed))
            held.clear()
            continue
        bodies = render_bodies(templates, context, build_info, message)
        if finish is None:
            held.append((message.keys, _held(bodies)))
            _send(out, ("rendered", [recipe for recipe, _, _ in bodies]))
        else:
            _send(out, ("placed", _place(finish, message.keys, bodies)))


# ---------------------------------------------------------------------------- the build side
def _command() -> list[str]:
    """The helper's command line: this interpreter running this module."""
    return [sys.executable, "-m", __name__]


class _Helper:
    """One helper process, fed by a writer thread and read by a reader thread (pipes block)."""

    def __init__(self, setup: tuple[Any, ...]) -> None:
        self.proc = subprocess.Popen(
            _command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=helper_env(),
        )
        self.requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.requests.put(setup)
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
            while (answer := _receive(stdout)) is not None:
                self.answers.put(answer)
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


class _Lane:
    """What one helper was asked: the chunks sent and not yet placed, in order, of which the
    first `rendered` are held rendered; `covers`: how many chunks the answer to `Finish` places
    (None before it was sent, -1 once it came)."""

    def __init__(self, helper: _Helper) -> None:
        self.helper = helper
        self.asked: deque[Sequence[Tab]] = deque()
        self.rendered = 0
        self.covers: int | None = None

    def pending(self) -> int:
        """Chunks sent that the helper has not rendered yet."""
        return len(self.asked) - self.rendered

    def take(self, answer: Any) -> bool:
        """Account for one answer; False when it is not the one this lane waits for."""
        if not isinstance(answer, tuple) or len(answer) != 2 or not isinstance(answer[1], list):
            return False
        kind, recipes = answer
        if kind == "rendered":
            limit = len(self.asked) if self.covers is None else self.covers
            if self.rendered >= limit or recipes != _names(self.asked[self.rendered]):
                return False
            self.rendered += 1
            return True
        if kind != "placed" or self.covers is None:
            return False
        count = self.covers if self.covers >= 0 else 1
        if count > len(self.asked):
            return False
        chunks = [self.asked[n] for n in range(count)]
        if recipes != [name for chunk in chunks for name in _names(chunk)]:
            return False
        for _ in range(count):
            self.asked.popleft()
        self.rendered = max(0, self.rendered - count)
        self.covers = -1
        return True


def _names(chunk: Sequence[Tab]) -> list[str]:
    return [tab.recipe for tab in chunk]


class SharedPages:
    """The pages of `todo` shared with up to `helpers` helper processes (one per
    `MIN_SHARED_PAGES` pages at most), which start rendering from the back of the list at once;
    `finish` hands them the shell and renders the rest here. `stop` ends them (always call it)."""

    def __init__(
        self,
        model: SiteModel,
        templates: Path,
        todo: Sequence[Tab],
        helpers: int,
        keys: Mapping[str, str],
    ) -> None:
        self.model, self.todo, self.keys = model, list(todo), keys
        self.recipes = frozenset(tab.recipe for tab in self.todo)
        self.front, self.back = 0, len(self.todo)
        self._lock = threading.Lock()
        self._taken_over = threading.Event()
        self._lanes: list[_Lane] = []
        count = min(helpers, len(self.todo) // MIN_SHARED_PAGES)
        setup = (templates, _context(model), dict(model.build_info))
        try:
            for _ in range(count):
                self._lanes.append(_Lane(_Helper(setup)))
        except OSError:
            pass  # fewer helpers (or none): the build renders what they would have
        self._alive = set(range(len(self._lanes)))
        self._feeders = [
            threading.Thread(target=self._feed, args=(i,), daemon=True) for i in self._alive
        ]
        for feeder in self._feeders:
            feeder.start()

    def _feed(self, i: int) -> None:  # before `finish`: keep helper `i` rendering
        while not self._taken_over.is_set() and i in self._alive:
            self._ask(i)
            if self._lanes[i].asked:
                self._collect(i, wait=_POLL_S)
            else:  # nothing to wait for: never spin (the build's own thread renders)
                self._taken_over.wait(_POLL_S)

    def _ask(self, i: int) -> None:  # chunks from the back until helper `i` has two to render
        lane = self._lanes[i]
        while lane.pending() < 2:
            with self._lock:
                if self.back - self.front <= 2 * _CHUNK:
                    return
                chunk = self.todo[self.back - _CHUNK : self.back]
                self.back -= _CHUNK
            lane.helper.requests.put(part_of(self.model, chunk, self.keys))
            lane.asked.append(chunk)

    def _collect(self, i: int, *, wait: float | None) -> bool:
        """Take the answers helper `i` has sent, waiting up to `wait` seconds for the first
        (None: not at all). False when waited for in vain; a helper that answered wrong or
        ended is taken out of the living."""
        lane = self._lanes[i]
        while lane.asked:
            try:
                answer = lane.helper.answers.get(block=wait is not None, timeout=wait)
            except queue.Empty:
                return wait is None
            if answer is None or not lane.take(answer):
                self._alive.discard(i)
                return True
            wait = None
        return True

    def finish(
        self,
        shell: PageShell,
        placer: Placer,
        render_here: Callable[[Tab], None],
        first: Sequence[Tab] = (),
    ) -> None:
        """Hand the helpers the shell and `placer`, render `first` and then the rest of the
        list here from the front, and wait until every page is placed (a helper that fails,
        hangs or answers for other recipes has its chunks rendered here)."""
        self._taken_over.set()
        for feeder in self._feeders:
            feeder.join()
        for i in sorted(self._alive):
            lane = self._lanes[i]
            lane.covers = len(lane.asked)
            lane.helper.requests.put(Finish(shell, placer))
        for tab in first:
            render_here(tab)
        while self.front < self.back or any(lane.asked for lane in self._lanes):
            for i in sorted(self._alive):
                self._ask(i)
            if self.front < self.back:
                render_here(self.todo[self.front])
                self.front += 1
            for i in sorted(self._alive):
                if not self._collect(i, wait=_PATIENCE_S if self.front >= self.back else None):
                    self._alive.discard(i)
            for lane in (self._lanes[i] for i in range(len(self._lanes)) if i not in self._alive):
                while lane.asked:
                    for tab in lane.asked.popleft():
                        render_here(tab)

    def stop(self) -> None:  # the helpers and the threads feeding them
        self._taken_over.set()
        for feeder in self._feeders:
            feeder.join()
        for lane in self._lanes:
            lane.helper.stop()


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
    """Render every page of `todo` at once (`SharedPages` started and finished here):
    `render_here` renders (and places) one in this process; a helper places what it renders
    with (a copy of) `placer`, under the page's key in `keys`."""
    shared = SharedPages(model, templates, todo, helpers, keys)
    try:
        shared.finish(shell, placer, render_here)
    finally:
        shared.stop()


if __name__ == "__main__":
    # The module's own copy (not this `__main__`), whose `Finish` is the class the build pickles.
    from generator.site.pagehelper import _serve as serve

    serve(sys.stdin.buffer, sys.stdout.buffer)
