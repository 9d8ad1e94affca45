"""Live preview: build the site, serve it on loopback, rebuild and reload it when an input changes.

`evidence-dashboard serve` is `build` in a loop. The server (MkDocs' `LiveReloadServer`, which
adds a small reload script to every HTML page it sends) is bound first, so a port in use fails
before any work and `--port 0` can pick a free one; then the first build runs (a failing one
ends the command as `build` would). The evidence tree (pointers and the allowlist), the
overlays, the site templates and a `--config` file are watched; once the file system has been
quiet for a moment after a change, `run_build` runs again with the same options. The caches
(verdicts, the evaluation memo, the page cache) make that rebuild incremental: only what changed
is verified and rendered again. A rebuild that fails prints its diagnostics and leaves the last
good site on display (the build never replaces its output on failure); the next change retries.
The pages are built with the preview's address as the site's URL (canonical links, sitemap).

By default the site goes to a fresh temporary folder, removed on exit, so `serve` never replaces
a folder of the user's; a given `--out` follows the rules of `build --out` (generator.outdir).
"""

from __future__ import annotations

import errno
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from mkdocs.livereload import LiveReloadServer
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from generator.build import BuildOptions, run_build
from generator.errors import EvidenceDashError, InternalError, UsageError
from generator.site import csp

__all__ = [
    "CHANGES",
    "DEBOUNCE",
    "POLL_INTERVAL",
    "PreviewServer",
    "ServeOptions",
    "serve",
    "serve_from_cli",
    "templates_root",
    "watched_paths",
]

POLL_INTERVAL = 1.0
"""Seconds between two looks at the watched folders where the OS cannot report changes. A look
at a tree of 10,000 pointers takes about a second, so the OS's notifications (inotify) are
used wherever they can be had."""
DEBOUNCE = 0.3
"""Seconds without a further change before a rebuild starts (an editor's save is many events)."""
CHANGES: tuple[type[FileSystemEvent], ...] = (
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirModifiedEvent,
    DirDeletedEvent,
    DirMovedEvent,
)
"""The events that start a rebuild. Opening or reading a file is not a change: the OS reports
those too, and the build reads every watched file, so counting them rebuilt forever."""


@dataclass(frozen=True)
class ServeOptions:
    """A preview: the build's options (its `out` is replaced) plus where to listen."""

    build: BuildOptions
    host: str = "127.0.0.1"
    port: int = 8000
    out: Path | None = None
    """`--out`; None builds into a fresh temporary folder that is removed on exit."""


def serve_from_cli(values: Mapping[str, Any], *, host: str, port: int) -> None:
    """The `serve` command: the build's options from click's keyword arguments, then `serve`."""
    given = values.get("out")
    build = BuildOptions.from_cli({**values, "out": given or Path("site")})
    serve(ServeOptions(build=build, host=host, port=port, out=given))


def templates_root() -> Path:
    """The folder the site build reads its templates from (site_templates/)."""
    from generator.site.resources import locate

    return locate().pages.parent


def watched_paths(options: BuildOptions, templates: Path) -> tuple[Path, ...]:
    """What a change of starts a rebuild: pointers and the allowlist (`<recipes>/evidence`),
    `<recipes>/overlays`, the site templates and a `--config` file; those that exist."""
    candidates = [options.tree.recipes / "evidence", options.tree.recipes / "overlays", templates]
    if options.output.config is not None:
        candidates.append(options.output.config)
    return tuple(path for path in candidates if path.exists())


def _echo(text: str) -> None:
    print(text, file=sys.stderr, flush=True)  # noqa: T201 - the command's progress lines


class PreviewServer(LiveReloadServer):
    """MkDocs' live-reload server, listening before the first build (see the module doc)."""

    def _inject_js_into_html(self, content: bytes, epoch: int) -> bytes:
        """MkDocs' inline reload script, allowed by the page's CSP through its hash (the
        pages refuse every inline script they do not list; generator.site.csp)."""
        injected: bytes = super()._inject_js_into_html(content, epoch)  # type: ignore[no-untyped-call]
        return csp.allow_added_scripts(content, injected)

    def __init__(self, host: str, port: int, root: Path) -> None:
        super().__init__(
            builder=lambda: None,
            host=host,
            port=port,
            root=str(root),
            polling_interval=POLL_INTERVAL,
        )
        self.build_delay = DEBOUNCE
        self._address = (host, port)
        self._listening = False
        self.on_ready: Callable[[PreviewServer], None] | None = None
        """Called once, from the serving thread, when the server first answers or idles."""

    def listen(self) -> str:
        """Bind and listen (once); returns the URL. A port that cannot be had is a UsageError."""
        if not self._listening:
            host, port = self._address
            try:
                super().server_bind()
                super().server_activate()
            except OSError as exc:
                self.server_close()
                in_use = exc.errno == errno.EADDRINUSE
                raise UsageError(
                    f"cannot listen on {host}:{port}",
                    expected="a free port on an address of this machine",
                    found="the port is in use" if in_use else (exc.strerror or str(exc)),
                    hint="pass another --port (0 picks a free one)"
                    if in_use
                    else "check --host and --port",
                ) from exc
            self._listening = True
            bound_host, bound_port = self.socket.getsockname()[:2]
            shown = f"[{bound_host}]" if ":" in str(bound_host) else str(bound_host)
            self.url = f"http://{shown}:{bound_port}/"
        return str(self.url)

    def watch_all(self, paths: Sequence[Path]) -> str:
        """Watch `paths` (before `run`) with the OS's change notifications where they can be
        had for all of them, else by polling (see POLL_INTERVAL). Returns "native" or
        "polling"."""
        native = _native_observer(paths)
        if native is not None:
            self.observer = native  # type: ignore[assignment]  # MkDocs types it as polling
        _changes_only(self.observer)
        for path in paths:
            self.watch(str(path))
        return "polling" if native is None else "native"

    def run(self) -> None:
        """Serve and rebuild on change until interrupted (MkDocs' loop, in this thread)."""
        self.serve()  # type: ignore[no-untyped-call]

    def service_actions(self) -> None:
        super().service_actions()
        ready, self.on_ready = self.on_ready, None
        if ready is not None:
            ready(self)

    def server_bind(self) -> None:
        self.listen()  # `serve()` binds again: already done

    def server_activate(self) -> None:
        self.listen()


def _changes_only(observer: BaseObserver) -> None:
    """Make every watch `observer` schedules (MkDocs' `watch` calls `schedule`) report only
    CHANGES."""
    schedule = observer.schedule

    def changes_only(
        handler: FileSystemEventHandler,
        path: str,
        *,
        recursive: bool = False,
        event_filter: list[type[FileSystemEvent]] | None = None,
    ) -> Any:
        return schedule(handler, path, recursive=recursive, event_filter=list(CHANGES))

    observer.schedule = changes_only  # type: ignore[method-assign,assignment]


def _native_observer(paths: Sequence[Path]) -> BaseObserver | None:
    """A fresh native observer, if one can watch every path (inotify has per-user limits)."""
    probe = Observer()
    if isinstance(probe, PollingObserver):
        return None  # no native API on this platform
    try:
        for path in paths:
            probe.schedule(FileSystemEventHandler(), str(path), recursive=True)
        probe.start()  # the watches are added here
    except OSError:
        return None
    finally:
        probe.stop()
        if probe.is_alive():
            probe.join()
    return Observer()


def _rebuild(options: BuildOptions, echo: Callable[[str], None]) -> None:
    """One rebuild after a change. A failure is reported, never raised: the server would
    otherwise hold every request until a build succeeds, and the last good site is intact."""
    echo("change detected: rebuilding")
    try:
        summary = run_build(options)
    except EvidenceDashError as error:
        echo(f"rebuild failed; the last good site stays on display\n{error.diagnostics()}")
        return
    except Exception as error:  # noqa: BLE001 - a bug must not stop the preview
        wrapped = InternalError(
            f"internal error: {type(error).__name__}: {error}",
            hint="this is a bug; the last good site stays on display",
        )
        echo(f"rebuild failed\n{wrapped.diagnostics()}")
        return
    echo(f"re{summary.describe()}; reloading the browser")


@contextmanager
def _output_folder(out: Path | None) -> Iterator[Path]:
    """`out` as given, or `<fresh temporary folder>/site`, removed (whole) on exit."""
    if out is not None:
        yield out
        return
    parent = Path(tempfile.mkdtemp(prefix="evidence-dashboard-serve-"))
    try:
        yield parent / "site"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the preview like Ctrl-C, so the temporary folder is removed."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve(
    options: ServeOptions,
    *,
    echo: Callable[[str], None] = _echo,
    started: Callable[[PreviewServer], None] | None = None,
) -> None:
    """Build, then serve with live reload until interrupted (Ctrl-C, SIGTERM, or the server's
    `shutdown()`; `started` is handed the server, from its serving thread, once it serves).

    Raises what the first build raises (`UsageError`, `InputError`, `BuildError`) and a
    `UsageError` for a port that cannot be had; later build failures are only reported."""
    with _terminate_as_interrupt(), _output_folder(options.out) as out:
        if options.out is None:
            echo(f"building into {out} (a temporary folder, removed on exit)")
        server = PreviewServer(options.host, options.port, out)
        try:
            url = server.listen()
            build = options.build.replace(out=out, site_url=url)
            echo(run_build(build).describe())
            server.builder = lambda: _rebuild(build, echo)
            kind = server.watch_all(watched_paths(build, templates_root()))
            if kind == "polling":
                echo(
                    f"note: file change notifications are not available; polling every "
                    f"{POLL_INTERVAL:g} s"
                )

            def ready(serving: PreviewServer) -> None:
                # Said from the serving thread, so the watches are in place by then: a change
                # made once this line is read is seen.
                echo(f"serving on {url} (watching for changes; Ctrl-C to stop)")
                if started is not None:
                    started(serving)

            server.on_ready = ready
            server.run()
        except KeyboardInterrupt:
            echo("stopped")
        finally:
            server.shutdown()
