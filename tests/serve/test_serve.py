"""`evidence-dashboard serve`: the live preview of a copy of the demo tree.

The browser test runs the real command in a subprocess and Debian Chromium on the served page;
the other tests run `serve` in a thread of this process and talk to it over loopback HTTP. Every
wait is bounded and ends on an explicit signal: a line the command prints, a page condition.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.polling import PollingObserver

from generator.build import BuildOptions
from generator.cli import build, main, serve_cmd
from generator.errors import UsageError
from generator.serve import PreviewServer, ServeOptions, serve, templates_root, watched_paths
from generator.site.resources import locate

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "recipes"
ASIDE = "h200-k0s-ubuntu-training"
"""The demo recipe with a single pointer: kept out at the start, added while serving."""
ROW = f".catalog-row[data-recipe='{ASIDE}']"
WAIT = 120.0
"""Upper bound of any one wait (a bound, not an expectation: builds of the demo take seconds)."""


def demo_copy(tmp: Path) -> tuple[Path, Path]:
    """The demo tree copied to `tmp/recipes` without the ASIDE recipe (kept at `tmp/aside`)."""
    recipes = tmp / "recipes"
    shutil.copytree(DEMO, recipes, ignore=shutil.ignore_patterns("demo"))
    aside = tmp / "aside"
    shutil.move(recipes / "evidence" / ASIDE, aside)
    return recipes, aside


def engine_args(recipes: Path, cache: Path) -> list[str]:
    return [
        "--recipes",
        str(recipes),
        "--offline",
        "--oci-layout",
        str(recipes / "bundles"),
        "--trust-root",
        str(recipes / "trust" / "trusted_root.json"),
        "--cache",
        str(cache),
        "--quiet",
        "--jobs",
        "1",
    ]


def build_options(recipes: Path, cache: Path) -> BuildOptions:
    return BuildOptions.flat(
        recipes=recipes,
        out=Path("unused"),
        trust_root=recipes / "trust" / "trusted_root.json",
        oci_layouts=(recipes / "bundles",),
        offline=True,
        cache=cache,
        quiet=True,
        jobs=1,
    )


class Lines:
    """Lines a running preview printed, with a bounded wait for one that matches."""

    def __init__(self) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []

    def put(self, text: str | None) -> None:
        self._queue.put(text)

    def wait_for(self, pattern: str) -> re.Match[str]:
        regex = re.compile(pattern)
        while True:
            try:
                line = self._queue.get(timeout=WAIT)
            except queue.Empty:
                pytest.fail(
                    f"no line matching {pattern!r} within {WAIT} s; got:\n" + "\n".join(self.seen)
                )
            if line is None:
                pytest.fail(
                    f"the preview ended before printing {pattern!r}; got:\n" + "\n".join(self.seen)
                )
            self.seen.append(line)
            found = regex.search(line)
            if found:
                return found


def get(url: str) -> str:
    """A page over loopback; a server that holds the request fails the test (bounded)."""
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - loopback only
        assert response.status == 200
        return response.read().decode("utf-8")


# --------------------------------------------------------------------------- in this process


class InProcess:
    """`serve` on a thread of this process, stopped through the server it hands back."""

    def __init__(self, options: ServeOptions) -> None:
        self.lines = Lines()
        self.servers: queue.Queue[PreviewServer] = queue.Queue()
        self.error: BaseException | None = None

        def echo(text: str) -> None:
            for line in text.splitlines():
                self.lines.put(line)

        def run() -> None:
            try:
                serve(options, echo=echo, started=self.servers.put)
            except BaseException as exc:  # noqa: BLE001 - reported to the test
                self.error = exc
            finally:
                self.lines.put(None)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def url(self) -> str:
        return self.lines.wait_for(r"serving on (http://\S+)").group(1)

    def stop(self) -> None:
        try:
            self.servers.get(timeout=WAIT).shutdown()
        finally:
            self.thread.join(timeout=WAIT)
        assert not self.thread.is_alive()


@pytest.fixture
def preview(tmp_path: Path) -> Iterator[tuple[InProcess, Path, Path]]:
    recipes, aside = demo_copy(tmp_path)
    running = InProcess(ServeOptions(build=build_options(recipes, tmp_path / "cache"), port=0))
    yield running, recipes, aside
    if running.thread.is_alive():
        running.stop()


def test_a_failed_rebuild_keeps_the_last_good_site_on_display(
    preview: tuple[InProcess, Path, Path],
) -> None:
    running, recipes, aside = preview
    url = running.url()
    assert ASIDE not in get(url)
    allowlist = recipes / "evidence" / "allowlist.yaml"
    good = allowlist.read_bytes()
    allowlist.write_text("signers: [\n", encoding="utf-8")  # not YAML: the build cannot go on
    running.lines.wait_for(r"rebuild failed; the last good site stays on display")
    running.lines.wait_for(r"allowlist\.yaml.*not valid YAML")
    page = get(url)  # answered at once (MkDocs' server would hold it until a build succeeds)
    assert "livereload(" in page and ASIDE not in page
    # The next change is built: the pointer added meanwhile shows up.
    shutil.copytree(aside, recipes / "evidence" / ASIDE)
    allowlist.write_bytes(good)
    running.lines.wait_for(r"^rebuilt .*: 8 recipes, 18 pointers")
    assert ASIDE in get(url)
    running.stop()
    assert running.error is None


def test_a_changed_config_file_is_rebuilt_and_served(tmp_path: Path) -> None:
    recipes, _ = demo_copy(tmp_path)
    config = tmp_path / "site.yml"
    packaged = locate().default_config.read_text(encoding="utf-8")
    config.write_text(packaged, encoding="utf-8")
    options = build_options(recipes, tmp_path / "cache").replace(config=config)
    running = InProcess(ServeOptions(build=options, port=0))
    try:
        url = running.url()
        assert "Preview site name" not in get(url)
        config.write_text(
            packaged.replace("site_name: Recipe evidence", "site_name: Preview site name"),
            encoding="utf-8",
        )
        running.lines.wait_for(r"^rebuilt ")
        assert "Preview site name" in get(url)
    finally:
        running.stop()
    assert running.error is None


def test_the_watchers_are_the_operating_systems_where_it_has_them(tmp_path: Path) -> None:
    """Polling a tree of 10,000 pointers costs about a second a look: inotify is used."""
    (tmp_path / "tree").mkdir()
    (tmp_path / "file.yml").write_text("x: 1\n", encoding="utf-8")
    server = PreviewServer("127.0.0.1", 0, tmp_path)
    try:
        assert server.watch_all([tmp_path / "tree", tmp_path / "file.yml"]) == "native"
    finally:
        server.shutdown()


@pytest.mark.parametrize("native", [True, False], ids=["native", "polling"])
def test_reading_a_watched_file_is_not_a_change(
    tmp_path: Path, native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build reads every watched file; the OS reports opens and closes too, and counting
    them as changes rebuilt forever. Only the write after the read may be seen."""
    tree = tmp_path / "tree"
    tree.mkdir()
    read = tree / "read.yaml"
    read.write_text("x: 1\n", encoding="utf-8")
    server = PreviewServer("127.0.0.1", 0, tmp_path)
    if not native:
        server.observer = PollingObserver(timeout=0.1)
        monkeypatch.setattr("generator.serve._native_observer", lambda paths: None)
    seen: queue.Queue[str] = queue.Queue()

    class Record(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            seen.put(f"{type(event).__name__} {event.src_path!s}")

    try:
        server.watch_all([tree])
        # Scheduled through the same observer, as MkDocs' `watch` is: the same filter applies.
        server.observer.schedule(Record(), str(tree), recursive=True)
        server.observer.start()
        time.sleep(0.3)  # a polling observer's first look, before anything is touched
        assert read.read_bytes() == b"x: 1\n"
        (tree / "written.yaml").write_text("y: 2\n", encoding="utf-8")
        events: list[str] = []
        while not any("written.yaml" in event for event in events):
            events.append(seen.get(timeout=WAIT))
        assert not [event for event in events if str(read) in event]
    finally:
        server.observer.stop()
        server.shutdown()


def test_the_temporary_site_is_removed_when_the_preview_stops(
    preview: tuple[InProcess, Path, Path],
) -> None:
    running, _, _ = preview
    folder = Path(running.lines.wait_for(r"building into (\S+) \(a temporary folder").group(1))
    running.url()
    assert (folder / "index.html").is_file()
    running.stop()
    assert running.error is None
    assert not folder.parent.exists()


def test_a_port_in_use_is_refused_before_any_build(tmp_path: Path) -> None:
    recipes, _ = demo_copy(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        lines: list[str] = []
        with pytest.raises(UsageError) as err:
            serve(
                ServeOptions(build=build_options(recipes, tmp_path / "cache"), port=port),
                echo=lines.append,
            )
    text = err.value.diagnostics()
    assert f"127.0.0.1:{port}" in text and "in use" in text and "--port" in text
    assert err.value.exit_code == 2
    assert not any(line.startswith("built") for line in lines)
    folder = Path(lines[0].split()[2])
    assert not folder.parent.exists()


def test_serve_refuses_an_out_folder_it_did_not_build(tmp_path: Path) -> None:
    recipes, _ = demo_copy(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    result = CliRunner().invoke(
        main,
        ["serve", *engine_args(recipes, tmp_path / "cache"), "--port", "0", "--out", str(mine)],
    )
    assert result.exit_code == 2, result.output
    assert "mine" in result.stderr
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_serve_takes_the_build_options_and_its_own() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for option in (
        "--recipes",
        "--trust-root",
        "--oci-layout",
        "--offline",
        "--cache",
        "--config",
        "--preview",
        "--source-url",
        "--out",
        "--host",
        "--port",
    ):
        assert option in result.stdout
    defaults = {p.name: p.default for p in serve_cmd.params}
    assert defaults["host"] == "127.0.0.1" and defaults["port"] == 8000
    assert defaults["out"] is None  # a fresh temporary folder, never ./site
    assert {p.name for p in build.params} - set(defaults) == {
        "allow_private_sites",
        "data_only",
        "fmt",
        "previous",
        "site_ca_bundle",
        "publisher_identity",
        "publisher_issuer",
        "sign_with_test_authority",
    }


def test_the_watched_paths_are_the_tree_the_overlays_the_templates_and_the_config(
    tmp_path: Path,
) -> None:
    (tmp_path / "evidence").mkdir()
    config = tmp_path / "site.yml"
    config.write_text("site_name: x\n", encoding="utf-8")
    options = BuildOptions.flat(recipes=tmp_path, out=tmp_path / "out", config=config)
    templates = templates_root()
    assert templates == locate().pages.parent  # the folder the site build reads
    assert watched_paths(options, templates) == (tmp_path / "evidence", templates, config)
    (tmp_path / "overlays").mkdir()
    assert watched_paths(options, templates) == (
        tmp_path / "evidence",
        tmp_path / "overlays",
        templates,
        config,
    )


# --------------------------------------------------------------------------- mkdocs at the root


def test_mkdocs_build_at_the_repository_root_does_what_the_readme_says(tmp_path: Path) -> None:
    """The README says plain `mkdocs build` there stops at once, naming the missing file."""
    assert not (REPO / "mkdocs.yml").exists()
    assert (REPO / "mkdocs.example.yml").is_file()
    said = "Config file 'mkdocs.yml' does not exist"
    assert said in (REPO / "README.md").read_text(encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode != 0
    assert said in done.stdout + done.stderr
    assert not (tmp_path / "site").exists()


# --------------------------------------------------------------------------- the real command


@pytest.mark.browser
def test_serve_reloads_the_open_page_after_a_pointer_is_added(tmp_path: Path, browser: Any) -> None:
    recipes, aside = demo_copy(tmp_path)
    argv = [
        sys.executable,
        "-c",
        "from generator.cli import main; main()",
        "serve",
        *engine_args(recipes, tmp_path / "cache"),
        "--port",
        "0",
    ]
    proc = subprocess.Popen(
        argv,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    lines = Lines()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    context = browser.new_context()
    try:
        folder = Path(lines.wait_for(r"building into (\S+) \(a temporary folder").group(1))
        url = lines.wait_for(r"serving on (http://127\.0\.0\.1:\d+/)").group(1)
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector(".catalog-row")
        assert page.locator(ROW).count() == 0
        page.evaluate("window.__notReloaded = true")
        shutil.copytree(aside, recipes / "evidence" / ASIDE)  # a signed pointer is added
        # The page reloads by itself (our marker is gone) and lists the added recipe.
        page.wait_for_function(
            f'() => window.__notReloaded === undefined && document.querySelector("{ROW}")',
            timeout=WAIT * 1000,
        )
        lines.wait_for(r"^rebuilt .*: 8 recipes, 18 pointers .*; reloading the browser")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT) == 0
        lines.wait_for(r"^stopped$")
        assert not folder.parent.exists()
    finally:
        context.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT)
