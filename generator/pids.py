"""Whether a process still runs, and the folders of builds that no longer do (what the build's
sweeps of folders left by killed builds ask)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["dead_folders", "process_alive"]


def process_alive(pid: int) -> bool:
    """True while process `pid` runs (or exists under another user); this process is alive."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_folders(parent: Path, prefix: str) -> list[Path]:
    """The folders (not links) directly in `parent` named `<prefix><pid>-...` whose process
    `pid` no longer runs, in name order; none when `parent` cannot be listed."""
    try:
        with os.scandir(parent) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:
        return []
    dead: list[Path] = []
    for entry in entries:
        if not entry.name.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
            continue
        pid = entry.name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)):
            dead.append(Path(entry.path))
    return dead
