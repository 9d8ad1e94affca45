"""Recipe pages rendered by helper processes: the same bytes as the build's own, and a helper
that dies, hangs or answers for other recipes costs speed only."""

from __future__ import annotations

import queue
import sys
from pathlib import Path
from typing import Any

import pytest

import generator.site.pagehelper as pagehelper
import generator.site.recipepages as recipepages
from generator.site.mkdocs_adapter import PageShell
from generator.site.pagecache import PageCache
from generator.site.pages import SiteModel
from generator.site.recipepages import (
    input_digests,
    page_keys,
    templates_digest,
    write_recipe_pages,
)
from generator.site.resources import locate

SHELL = PageShell("<html><title>@@TITLE@@</title><body>", "</body></html>")


def _model(documents: dict[str, Any]) -> SiteModel:
    return SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )


def _pages(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted((site / "recipes").rglob("index.html"))
    }


def _write(model: SiteModel, site: Path, helpers: int, cache: PageCache | None = None) -> list[Any]:
    keys = (
        page_keys(input_digests(model), templates_digest(locate().pages)).bodies
        if cache is not None
        else ()
    )
    return write_recipe_pages(
        model, locate().pages, SHELL, site, keys=keys, cache=cache, helpers=helpers
    )


def _rendered_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The recipes whose pages the build renders in this process, as it renders them."""
    here: list[str] = []
    render = recipepages._render_page

    def counted(job: Any, tab: Any, key: str) -> None:
        here.append(tab.recipe)
        render(job, tab, key)

    monkeypatch.setattr(recipepages, "_render_page", counted)
    return here


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Share even a handful of pages, one recipe per helper task."""
    monkeypatch.setattr(pagehelper, "MIN_SHARED_PAGES", 1)
    monkeypatch.setattr(pagehelper, "_CHUNK", 1)


def test_helper_pages_are_the_builds_own_bytes(
    documents: dict[str, Any], tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model(documents)
    alone = _write(model, tmp_path / "alone", helpers=0)
    here = _rendered_here(monkeypatch)
    cache = PageCache(tmp_path / "cache")
    helped = _write(model, tmp_path / "helped", helpers=2, cache=cache)
    assert len(here) < len(model.tabs), "the helpers rendered no page"
    assert _pages(tmp_path / "helped") == _pages(tmp_path / "alone")
    assert helped == alone  # the same titles, search texts and tags, in catalog order
    # the helpers' pages went into the page cache too: a second build renders nothing
    here.clear()
    _write(model, tmp_path / "again", helpers=2, cache=cache)
    assert here == []
    assert _pages(tmp_path / "again") == _pages(tmp_path / "alone")


def test_a_request_that_cannot_travel_ends_the_helper_at_once(
    documents: dict[str, Any], tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Something a helper cannot be sent (it does not pickle) ends that helper at once: the
    build renders those pages itself, without waiting out the helper's patience."""
    import threading
    import time

    model = _model(documents)
    _write(model, tmp_path / "alone", helpers=0)
    cache = PageCache(tmp_path / "cache")
    cache.unpicklable = threading.Lock()  # type: ignore[attr-defined]
    monkeypatch.setattr(pagehelper, "_PATIENCE_S", 60.0)
    started = time.monotonic()
    _write(model, tmp_path / "helped", helpers=1, cache=cache)
    assert time.monotonic() - started < 30.0
    assert _pages(tmp_path / "helped") == _pages(tmp_path / "alone")


def test_a_part_holds_only_its_recipes_documents(documents: dict[str, Any]) -> None:
    model = _model(documents)
    tab = model.tabs[0]
    part = pagehelper.part_of(model, [tab], {tab.recipe: "k"})
    assert {p["recipe"] for p in part.pointers} <= {tab.recipe}
    assert set(part.series) <= {tab.recipe}
    assert part.keys == ("k",)


_WRONG_RECIPES = """
import pickle, sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
def receive():
    header = inp.read(8)
    return None if len(header) < 8 else inp.read(int.from_bytes(header, "big"))
receive()
while receive() is not None:
    data = pickle.dumps(["not-a-recipe-of-this-chunk"])
    out.write(len(data).to_bytes(8, "big") + data)
    out.flush()
"""


def _broken_command(script: str) -> Any:
    return lambda: [sys.executable, "-c", script]


@pytest.mark.parametrize(
    "script",
    [
        "import sys; sys.exit(3)",  # dies at once
        "import sys; sys.stdin.buffer.read(8); sys.exit(0)",  # dies after the setup began
        "import sys\nwhile sys.stdin.buffer.read(8):\n    pass\n",  # never answers
        _WRONG_RECIPES,
    ],
    ids=["exits", "dies-mid-setup", "never-answers", "answers-for-other-recipes"],
)
def test_a_failing_helper_costs_speed_only(
    documents: dict[str, Any],
    tmp_path: Path,
    shared: None,
    monkeypatch: pytest.MonkeyPatch,
    script: str,
) -> None:
    model = _model(documents)
    _write(model, tmp_path / "alone", helpers=0)
    monkeypatch.setattr(pagehelper, "_command", _broken_command(script))
    monkeypatch.setattr(pagehelper, "_PATIENCE_S", 2.0)
    _write(model, tmp_path / "helped", helpers=1)
    assert _pages(tmp_path / "helped") == _pages(tmp_path / "alone")


class _T:
    def __init__(self, recipe: str) -> None:
        self.recipe = recipe


def _lane(chunks: list[list[str]], *, rendered: int = 0, covers: int | None = None) -> Any:
    lane = pagehelper._Lane(None)  # type: ignore[arg-type]
    lane.asked.extend([[_T(r) for r in chunk] for chunk in chunks])
    lane.rendered, lane.covers = rendered, covers
    return lane


@pytest.mark.parametrize(
    ("state", "answer", "taken", "left", "rendered"),
    [
        # before the shell was sent: a chunk is answered rendered, in order, and held
        ({}, ("rendered", ["a"]), True, 2, 1),
        ({}, ("rendered", ["b"]), False, 2, 0),  # not the next chunk
        ({}, ("placed", ["a"]), False, 2, 0),  # nothing is placed before the shell
        ({}, ["a"], False, 2, 0),  # not an answer of this protocol
        ({}, ("rendered", "a"), False, 2, 0),
        ({"rendered": 2}, ("rendered", ["a"]), False, 2, 2),  # both already rendered
        # the shell sent while both chunks were asked: its answer places exactly those two
        ({"rendered": 1, "covers": 2}, ("rendered", ["b"]), True, 2, 2),
        ({"rendered": 2, "covers": 2}, ("placed", ["a", "b"]), True, 0, 0),
        ({"rendered": 2, "covers": 2}, ("placed", ["a"]), False, 2, 2),
        ({"rendered": 2, "covers": 2}, ("placed", ["b", "a"]), False, 2, 2),
        ({"rendered": 1, "covers": 1}, ("rendered", ["b"]), False, 2, 1),  # asked after it
        ({"covers": 0}, ("placed", []), True, 2, 0),
        # after its answer: one chunk placed per answer, none rendered and held
        ({"covers": -1}, ("placed", ["a"]), True, 1, 0),
        ({"covers": -1}, ("placed", ["a", "b"]), False, 2, 0),
        ({"covers": -1}, ("placed", []), False, 2, 0),
        ({"covers": -1}, ("rendered", ["a"]), False, 2, 0),
    ],
)
def test_a_lane_takes_only_the_answer_it_waits_for(
    state: dict[str, Any], answer: Any, taken: bool, left: int, rendered: int
) -> None:
    lane = _lane([["a"], ["b"]], **state)
    assert lane.take(answer) is taken
    assert (len(lane.asked), lane.rendered) == (left, rendered)


class _Silent:
    """A helper that is started and never answers."""

    def __init__(self, *args: Any) -> None:
        self.requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.answers: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def stop(self) -> None:
        pass


def test_a_hung_helper_is_given_up_after_its_patience(
    documents: dict[str, Any], monkeypatch: pytest.MonkeyPatch, shared: None
) -> None:
    monkeypatch.setattr(pagehelper, "_Helper", _Silent)
    monkeypatch.setattr(pagehelper, "_PATIENCE_S", 0.05)
    model = _model(documents)
    here: list[Any] = []
    pages = pagehelper.SharedPages(
        model, locate().pages, model.tabs, 1, {t.recipe: "k" for t in model.tabs}
    )
    try:
        pages.finish(SHELL, None, here.append)  # type: ignore[arg-type]
    finally:
        pages.stop()
    assert sorted(map(id, here)) == sorted(map(id, model.tabs))  # each rendered here, once


def test_helpers_started_early_hold_their_pages_until_the_shell_comes(
    documents: dict[str, Any], tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started before the shell exists, a helper renders and holds its pages; given the
    shell, it places them: the same bytes as the build's own, and the build rendered fewer."""
    import time

    model = _model(documents)
    _write(model, tmp_path / "alone", helpers=0)
    here = _rendered_here(monkeypatch)
    early = pagehelper.SharedPages(
        model, locate().pages, model.tabs, 1, {t.recipe: "" for t in model.tabs}
    )
    try:
        deadline = time.monotonic() + 60
        while early._lanes[0].rendered < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert early._lanes[0].rendered >= 2, "the helper rendered nothing before the shell"
        assert not (tmp_path / "early").exists()  # held, not placed
        write_recipe_pages(model, locate().pages, SHELL, tmp_path / "early", shared=early)
    finally:
        early.stop()
    assert 0 < len(here) <= len(model.tabs) - 2
    assert _pages(tmp_path / "early") == _pages(tmp_path / "alone")


def test_few_pages_start_no_helper(
    documents: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []
    monkeypatch.setattr(pagehelper, "_Helper", lambda *a: started.append(1))
    _write(_model(documents), tmp_path / "site", helpers=4)
    assert started == []  # 8 pages are under MIN_SHARED_PAGES


@pytest.mark.parametrize(("pages", "started"), [(8, 0), (47, 0), (48, 1), (100, 2), (1000, 3)])
def test_one_helper_per_min_shared_pages_at_most(
    documents: dict[str, Any], monkeypatch: pytest.MonkeyPatch, pages: int, started: int
) -> None:
    made: list[int] = []

    class DeadHelper:
        """Started, then answers nothing: its chunks come back to the build."""

        def __init__(self, *args: Any) -> None:
            made.append(1)
            self.requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
            self.answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
            self.answers.put(None)

        def stop(self) -> None:
            pass

    monkeypatch.setattr(pagehelper, "_Helper", DeadHelper)
    model = _model(documents)
    todo = (model.tabs * pages)[:pages]
    here: list[object] = []
    pagehelper.render_shared(
        model,
        locate().pages,
        SHELL,
        todo,
        3,
        render_here=here.append,
        placer=None,  # type: ignore[arg-type]
        keys={t.recipe: "key" for t in model.tabs},
    )
    assert len(made) == started
    assert sorted(map(id, here)) == sorted(map(id, todo))  # every page rendered here, once


def test_a_page_cache_with_writes_pending_travels_to_a_helper(
    documents: dict[str, Any], tmp_path: Path, shared: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The placer a helper is sent holds the page cache, which may still be writing the
    Markdown pages on a thread of this process: it travels without those threads, and the
    helper places its pages (it is not given up)."""
    import pickle

    cache = PageCache(tmp_path / "cache")
    cache.root.mkdir()
    cache.put_markdown("k", {"index.md": "x" * 1_000_000})  # written on a thread
    assert cache._pending, "nothing was pending: the test proves nothing"
    copy = pickle.loads(pickle.dumps(cache))
    assert copy._pending == [] and copy.root == cache.root
    model = _model(documents)
    here = _rendered_here(monkeypatch)
    keys = page_keys(input_digests(model), templates_digest(locate().pages)).bodies
    key_of = dict(zip((t.recipe for t in model.tabs), keys, strict=True))
    early = pagehelper.SharedPages(model, locate().pages, model.tabs, 1, key_of)
    try:
        write_recipe_pages(
            model, locate().pages, SHELL, tmp_path / "site", keys=keys, cache=cache, shared=early
        )
    finally:
        early.stop()
    assert len(here) < len(model.tabs), "the helper was given up"
    cache.settle()
    assert cache.get_markdown("k") == {"index.md": "x" * 1_000_000}


def test_a_helper_holds_its_pages_compressed(documents: dict[str, Any]) -> None:
    """Held until the shell comes, a page takes a fraction of its size in the helper's memory
    (hundreds are held at 10,000 attestations), and comes back byte for byte."""
    model = _model(documents)
    part = pagehelper.part_of(model, model.tabs, {t.recipe: "k" for t in model.tabs})
    bodies = pagehelper.render_bodies(locate().pages, pagehelper._context(model), {}, part)
    held = pagehelper._held(bodies)
    assert pagehelper._unheld(held) == bodies
    assert sum(len(b) for _, _, b in held) * 4 < sum(len(b) for _, _, b in bodies)


def test_a_feeding_thread_with_nothing_to_send_does_not_spin(
    documents: dict[str, Any], monkeypatch: pytest.MonkeyPatch, shared: None
) -> None:
    """Too few pages to hand a helper any before the shell: its feeding thread waits for
    `finish` instead of looping (it would take the interpreter from the build's own work)."""
    import time

    monkeypatch.setattr(pagehelper, "_Helper", _Silent)
    model = _model(documents)
    asks: list[int] = []
    ask = pagehelper.SharedPages._ask
    monkeypatch.setattr(
        pagehelper.SharedPages, "_ask", lambda self, i: asks.append(i) or ask(self, i)
    )
    pages = pagehelper.SharedPages(model, locate().pages, model.tabs[:2], 1, {})
    try:
        time.sleep(0.5)
        assert 1 <= len(asks) <= 0.5 / pagehelper._POLL_S + 5
    finally:
        pages.stop()


def test_helpers_stopped_before_the_shell_came_leave_nothing_running(
    documents: dict[str, Any], shared: None
) -> None:
    """A build that fails between starting its helpers and sending the shell (its Markdown
    pages or the theme raised) stops them: every helper process has exited and no feeding
    thread is left."""
    import time

    model = _model(documents)
    early = pagehelper.SharedPages(
        model, locate().pages, model.tabs, 2, {t.recipe: "" for t in model.tabs}
    )
    deadline = time.monotonic() + 60
    while not all(lane.rendered for lane in early._lanes) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert early._lanes and all(lane.rendered for lane in early._lanes), "nothing was held"
    early.stop()
    assert all(lane.helper.proc.poll() is not None for lane in early._lanes)
    assert not any(feeder.is_alive() for feeder in early._feeders)
