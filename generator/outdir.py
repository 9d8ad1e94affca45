"""The build's output folder is the tool's alone: where `--out` may point, and one build at a time.

A build replaces `--out` whole, so pointing it at the wrong folder deletes that folder. Before
anything is written, `claim_output`:

- follows a symlinked `--out` to its target (the link stays a link; the target is swapped),
- refuses a target that equals, lies inside or contains a folder the build reads (the evidence
  tree, the cache, the other inputs, this program's own source folders) or contains the
  current folder,
- refuses a target that exists, is not empty and carries no marker file (`MARKER_NAME`, written
  into every site the tool publishes): a folder the tool did not build is never replaced,
- takes an exclusive lock (`fcntl.flock` on `<parent>/.<name>.lock`, a sibling that survives
  the swap) so concurrent builds into one folder take turns; a build that cannot get it within
  the timeout fails with exit 2, and the state is checked again once the lock is held.

Every refusal is a `UsageError` (exit 2) naming the folder, raised before anything is touched.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.errors import UsageError

if TYPE_CHECKING:
    from generator.build import BuildOptions

__all__ = [
    "LOCK_TIMEOUT",
    "MARKER_NAME",
    "MARKER_TEXT",
    "Protected",
    "build_guards",
    "check_output",
    "claim_output",
    "lock_path",
    "output_lock",
    "source_folders",
    "write_marker",
]

MARKER_NAME = ".evidence-dashboard-site"
"""The marker file at the root of every site the tool publishes."""
MARKER_TEXT = (
    "This folder was built by evidence-dashboard (`evidence-dashboard build --out`).\n"
    "Each build replaces the whole folder; do not keep other files here.\n"
    "A build only replaces a folder that is absent, empty or carries this file.\n"
)
LOCK_TIMEOUT = 600.0
"""Seconds a build waits for another build into the same folder (`--lock-timeout`)."""
_POLL = 0.1


@dataclass(frozen=True)
class Protected:
    """A path the output must keep clear of. `label` names it in errors (`--recipes`, ...);
    with `inside_ok` the output may lie inside it (the current folder), but not be it or hold it."""

    label: str
    path: Path
    inside_ok: bool = False


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def source_folders() -> list[Protected]:
    """This program's own folders: the `generator` package and, in a checkout, the
    `site_templates` and `tests` folders next to it."""
    package = _real(Path(__file__)).parent
    found = [Protected("the evidence-dashboard package", package)]
    for name in ("site_templates", "tests"):
        folder = package.parent / name
        if folder.is_dir():
            found.append(Protected(f"the evidence-dashboard source folder {name}/", folder))
    return found


def build_guards(options: BuildOptions) -> list[Protected]:
    """Everything a build reads, which its output must keep clear of, plus the current folder
    (the output may lie inside it, but not be it or contain it)."""
    from generator.bundle.cache import default_cache_dir

    named: list[tuple[str, Path | None]] = [
        ("the evidence tree (--recipes)", options.tree.recipes),
        (
            "the cache (--cache or the default cache folder)",
            options.engine.cache or default_cache_dir(),
        ),
        ("--trust-root", options.engine.trust_root),
        ("--config", options.output.config),
        ("--digests", options.freshness.digests),
        ("--bundle-refs", options.tree.bundle_refs),
        ("--registry-auth", options.engine.registry_auth),
        ("--aicr", options.freshness.aicr),
        *(("--oci-layout", layout) for layout in options.engine.oci_layouts),
    ]
    return [
        *(Protected(label, path) for label, path in named if path is not None),
        *source_folders(),
        Protected("the current folder", Path.cwd(), inside_ok=True),
    ]


def _overlap(target: Path, guarded: Protected) -> str | None:
    """How `target` collides with `guarded` (both resolved), or None."""
    if target == guarded.path:
        return "is"
    if target in guarded.path.parents:
        return "contains"
    if not guarded.inside_ok and guarded.path in target.parents:
        return "lies inside"
    return None


def _refuse(out: Path, message: str, *, expected: str, found: str, hint: str) -> UsageError:
    from generator.errors import Location

    return UsageError(
        message, location=Location(str(out)), expected=expected, found=found, hint=hint
    )


def _marked(folder: Path) -> bool:
    try:
        return os.path.isfile(folder / MARKER_NAME) and not os.path.islink(folder / MARKER_NAME)
    except OSError:
        return False


def _check_folder(path: Path, shown: Path, role: str) -> None:
    """`path` (resolved) must be absent, an empty folder, or a folder carrying the marker."""
    if not os.path.lexists(path):
        return
    if os.path.islink(path) or not os.path.isdir(path):
        raise _refuse(
            shown,
            f"the {role} is not a folder",
            expected="a folder (or nothing)",
            found="a file or a link",
            hint="remove it, or pass another --out",
        )
    try:
        with os.scandir(path) as entries:
            empty = next(entries, None) is None
    except OSError as exc:
        raise _refuse(
            shown,
            f"the {role} cannot be read",
            expected="a readable folder",
            found=exc.strerror or type(exc).__name__,
            hint="fix its permissions, or pass another --out",
        ) from exc
    if empty or _marked(path):
        return
    raise _refuse(
        shown,
        f"the {role} holds files this tool did not put there",
        expected=f"an absent or empty folder, or one carrying {MARKER_NAME} "
        "(written by every evidence-dashboard build)",
        found=f"a non-empty folder without {MARKER_NAME}" + (f" ({path})" if path != shown else ""),
        hint="a build replaces the whole folder: pass an empty or new --out; if this is an "
        "earlier evidence-dashboard site, delete it first",
    )


def check_output(out: Path, protected: Iterable[Protected]) -> Path:
    """Where a build into `out` would publish (symlinks followed), or `UsageError` when the
    folder is not the tool's to replace. Touches nothing."""
    target = _real(out)
    for guarded in protected:
        where = _real(guarded.path)
        how = _overlap(target, Protected(guarded.label, where, guarded.inside_ok))
        if how is not None:
            raise _refuse(
                out,
                f"--out {how} {guarded.label} ({where})",
                expected=f"an output folder apart from {guarded.label}",
                found=f"{target} {how} {where}",
                hint="a build replaces the whole output folder; pass a separate one, "
                "e.g. --out site",
            )
    if target.parent == target:
        raise _refuse(
            out,
            "--out is the file system root",
            expected="a separate folder",
            found=str(target),
            hint="pass a separate folder, e.g. --out site",
        )
    _check_folder(target, out, "output folder")
    from generator.site.swap import old_path

    _check_folder(old_path(target), old_path(target), "previous output left by a killed build")
    return target


def lock_path(target: Path) -> Path:
    """The lock file of the output folder `target`: a hidden sibling, never swapped."""
    return target.with_name(f".{target.name}.lock")


@contextmanager
def output_lock(
    target: Path, timeout: float = LOCK_TIMEOUT, notify: Callable[[str], None] | None = None
) -> Iterator[Path]:
    """Hold the exclusive lock of `target` (resolved) for the block; wait at most `timeout`
    seconds for another build to release it (saying so once through `notify`)."""
    say = notify if notify is not None else (lambda text: print(text, file=sys.stderr))
    lock = lock_path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock, flags, 0o644)
    except OSError as exc:
        found = (
            "a symbolic link" if exc.errno == errno.ELOOP else (exc.strerror or type(exc).__name__)
        )
        raise _refuse(
            lock,
            "the output lock file cannot be opened",
            expected="a regular file the build may create",
            found=found,
            hint="remove it (no build may be running), then build again",
        ) from exc
    try:
        deadline = time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _refuse(
                        target,
                        "another build is still writing into this output folder",
                        expected=f"the lock {lock.name} free within {timeout:g} s",
                        found="it is still held",
                        hint="wait for the other build, or raise --lock-timeout",
                    ) from None
                if not waited:
                    say(
                        f"waiting for another build into {target} (lock {lock}; at most "
                        f"{timeout:g} s, see --lock-timeout)"
                    )
                    waited = True
                time.sleep(min(_POLL, max(0.0, deadline - time.monotonic())))
        yield lock
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextmanager
def claim_output(
    out: Path,
    protected: Iterable[Protected],
    *,
    timeout: float = LOCK_TIMEOUT,
    notify: Callable[[str], None] | None = None,
) -> Iterator[Path]:
    """Check `out`, lock it and check it again under the lock; yields the resolved folder to
    publish into. Refusals happen before anything is created."""
    guards = list(protected)
    target = check_output(out, guards)
    with output_lock(target, timeout, notify):
        again = check_output(out, guards)
        if again != target:
            raise _refuse(
                out,
                "--out changed while the build waited for its lock",
                expected=str(target),
                found=str(again),
                hint="keep the output link stable during a build, then build again",
            )
        yield target


def write_marker(folder: Path) -> None:
    """Put the marker file into a site about to be published."""
    (folder / MARKER_NAME).write_text(MARKER_TEXT, encoding="utf-8")
