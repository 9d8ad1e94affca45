"""The benchmark's table: every build per size, ratios to the floor, and the target verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.run import BUILDS, Measured, child_env, cold_ratio, median_round, report


def _row(size: int, cold: float, warm: float, peak: float, misses: int = 0) -> dict[str, Any]:
    def built(wall: float, hits: int, miss: int, evaluation: str) -> Measured:
        return Measured(
            wall,
            peak,
            {
                "hits": hits,
                "misses": miss,
                "evaluation": evaluation,
                "phases": {"verify": 1.0, "evaluate": 2.0, "site": 1.5, "mkdocs": 0.5},
            },
        )

    return {
        "size": size,
        "recipes": size // 10,
        "jobs": 2,
        "pages": size // 10 + 10,
        "cold": built(cold, 0, size, "evaluated"),
        "warm": built(warm, 0, 0, "reused"),
        "rewarm": built(warm * 2, size, misses, "evaluated"),
        "floor1": Measured(1.0, 50, {"total": size / 400}),
        "floorN": Measured(1.0, 50, {"total": size / 800}),
    }


def test_every_build_is_reported_with_its_floor_ratio() -> None:
    text = report([_row(1000, 10.0, 2.0, 300)])
    for label in BUILDS:
        assert f"  1000 {label:<6}" in text or f"  1000 {label}" in text
    assert "4.00" in text  # cold 10 s against a 2.5 s one-process floor


def test_targets_are_judged_on_the_10000_row() -> None:
    good = report([_row(1000, 10.0, 2.0, 300), _row(10_000, 50.0, 8.0, 900)])
    assert "cold <= 60 s: met" in good and "warm <= 15 s: met" in good
    assert "peak memory < 1 GiB: met" in good and "warm verifies nothing: met" in good
    bad = report([_row(10_000, 90.0, 20.0, 1500, misses=3)])
    assert "cold <= 60 s: MISSED" in bad and "warm <= 15 s: MISSED" in bad
    assert "peak memory < 1 GiB: MISSED" in bad and "warm verifies nothing: MISSED" in bad


def test_the_sampler_sees_a_grandchild_s_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys
    import time

    import bench.run
    from bench.run import PeakSampler

    monkeypatch.setattr(bench.run, "PSS_EVERY_S", 0.0)  # no once-a-second PSS throttle here

    # Explicit signals, no fixed sleep: the grandchild touches its buffer, says `ready`, and
    # holds the buffer until the test says `release` (after it has sampled).
    ready, release = tmp_path / "ready", tmp_path / "release"
    child = (
        "import pathlib, time\nx = bytearray(120 * 2**20)\n"
        "for i in range(0, len(x), 4096):\n    x[i] = 1\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        f"while not pathlib.Path({str(release)!r}).exists():\n    time.sleep(0.01)\n"
    )
    parent = (
        f"import subprocess, sys\np = subprocess.Popen([sys.executable, '-c', "
        f"{child!r}])\nsys.exit(p.wait())"
    )
    proc = subprocess.Popen([sys.executable, "-c", parent])
    try:
        sampler = PeakSampler(proc.pid)
        while not ready.exists():
            assert proc.poll() is None, "the helper process ended before it was ready"
            sampler.sample()
            time.sleep(0.01)
        sampler.sample()
    finally:
        release.touch()
        proc.wait(timeout=60)
    assert proc.returncode == 0
    assert sampler.peak >= 120 * 1024  # KiB: the grandchild's buffer is counted


def test_read_through_reads_every_regular_file_once_and_skips_links(tmp_path: Path) -> None:
    from bench.run import read_through

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "one").write_bytes(b"x" * 10)
    (tmp_path / "a" / "b" / "two").write_bytes(b"y" * (3 << 20))  # more than one chunk
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_bytes(b"z" * 1000)
    (tmp_path / "link").symlink_to(outside)
    (tmp_path / "dirlink").symlink_to(tmp_path / "a", target_is_directory=True)
    assert read_through(tmp_path) == 10 + (3 << 20)


def _with_loop(row: dict[str, Any], change_s: float, overlay_s: float) -> dict[str, Any]:
    done = {"hits": 1, "misses": 0, "recipes evaluated": 1000, "pages rendered": 3, "phases": {}}
    row["loop"] = {
        "base": Measured(5.0, 500, dict(done)),
        "pointer removed": Measured(change_s, 500, dict(done)),
        "overlay changed": Measured(overlay_s, 500, dict(done)),
    }
    return row


def test_the_loop_is_judged_on_its_one_pointer_changes_and_on_its_slowest_change() -> None:
    """floor1 at 10,000 is 25 s here: cold 45 s is under 2x, warm 4 s under 0.2x. The issue's
    target is a one-pointer change; every other change is held to it too, and named."""
    good = report([_with_loop(_row(10_000, 45.0, 4.0, 900), 2.5, 2.9)])
    assert "one-pointer change <= 3 s (slowest 2.5 s): met" in good
    assert "every change <= 3 s (slowest: overlay changed, 2.9 s): met" in good
    assert "cold <= 2x floor1 (1.80x): met" in good and "warm <= 0.2x floor1 (0.16x): met" in good
    assert "1000/3" in good  # recipes evaluated / pages rendered
    bad = report([_with_loop(_row(10_000, 55.0, 6.0, 900), 3.5, 1.0)])
    assert "one-pointer change <= 3 s (slowest 3.5 s): MISSED" in bad
    assert "every change <= 3 s (slowest: pointer removed, 3.5 s): MISSED" in bad
    assert "cold <= 2x floor1 (2.20x): MISSED" in bad and "(0.24x): MISSED" in bad
    mixed = report([_with_loop(_row(10_000, 45.0, 4.0, 900), 2.5, 9.9)])
    assert "one-pointer change <= 3 s (slowest 2.5 s): met" in mixed
    assert "every change <= 3 s (slowest: overlay changed, 9.9 s): MISSED" in mixed


def test_a_measured_build_caches_bytecode_whatever_the_shell_says() -> None:
    """A shell's PYTHONDONTWRITEBYTECODE would have every measured build compile the package
    again: the builds run as a default Python does; nothing else of the caller's is dropped."""
    env = child_env({"PYTHONDONTWRITEBYTECODE": "1", "HOME": "/home/x", "PATH": "/bin"})
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["HOME"] == "/home/x" and env["PATH"] == "/bin"
    assert env["NO_MKDOCS_2_WARNING"] == "1"


def test_each_loop_build_shows_where_its_time_went() -> None:
    """A loop build's phases, from the child's timers: the fingerprint, verification, the rest
    of the evaluation, the data files, the pages and MkDocs, and what no timer covers."""
    row = _with_loop(_row(10_000, 45.0, 4.0, 900), 3.5, 1.0)
    phases = {
        "fingerprint": 0.2,
        "verify": 0.1,
        "evaluate": 1.3,
        "data writers": 0.2,
        "site": 1.4,
        "mkdocs": 0.3,
    }
    row["loop"]["pointer removed"] = Measured(
        3.5, 500, {**row["loop"]["base"].result, "phases": phases}
    )
    text = report([row])
    assert "where the time of those builds went, size 10000 (s):" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("pointer removed"))
    assert line.split(None, 2)[2] == (
        "fingerprint 0.2 verify 0.1 evaluate-rest 1.2 data 0.2 pages 1.1 mkdocs 0.3 rest 0.4"
    )
    base = next(x for x in text.splitlines() if x.strip().startswith("base "))
    assert base.split()[-1] == "?"  # no phases recorded


def _pair(cold: float, floor1: float) -> tuple[Measured, Measured]:
    phases = {"verify": 1.0, "evaluate": 2.0, "site": 1.5, "mkdocs": 0.5}
    built = Measured(cold, 800, {"hits": 0, "misses": 10, "phases": phases})
    return built, Measured(floor1, 50, {"total": floor1})


def test_the_cold_round_shown_is_the_one_with_the_middle_ratio() -> None:
    # ratios 2.5, 1.8, 2.1: the middle pair is (42, 20), a pair that ran, not a mix of two
    pairs = [_pair(50.0, 20.0), _pair(36.0, 20.0), _pair(42.0, 20.0)]
    cold, floor1 = median_round(pairs)
    assert (cold.wall, floor1.result["total"]) == (42.0, 20.0)
    assert [round(cold_ratio(p), 2) for p in pairs] == [2.5, 1.8, 2.1]
    # a slow stretch that lengthens one round's build and floor alike does not move its ratio
    slow = [_pair(36.0, 20.0), _pair(63.0, 30.0), _pair(50.0, 20.0)]
    assert cold_ratio(median_round(slow)) == pytest.approx(2.1)
    # of an even number, the lower of the two middle ones
    even = [_pair(40.0, 20.0), _pair(44.0, 20.0), _pair(46.0, 20.0), _pair(50.0, 20.0)]
    assert median_round(even)[0].wall == 44.0
    assert median_round([_pair(30.0, 20.0)])[0].wall == 30.0


def test_every_cold_round_is_reported_and_the_loop_target_judges_the_round_shown() -> None:
    row = _row(10_000, 42.0, 2.0, 300)
    row["cold"], row["floor1"] = median_round(
        [_pair(50.0, 20.0), _pair(36.0, 20.0), _pair(42.0, 20.0)]
    )
    row["cold_ratios"] = [2.5, 1.8, 2.1]
    text = report([row])
    assert (
        "cold / floor1 of each of 3 rounds (a cold build, then the floor): 1.80 2.10 2.50" in text
    )
    assert "cold <= 2x floor1 (2.10x): MISSED" in text
    assert "peak memory < 1 GiB: met" in text
    row["cold_peak_mib"] = 1100.0  # a round not shown went over: the target is missed
    assert "peak memory < 1 GiB: MISSED" in report([row])
    row["cold_ratios"] = [2.1]
    assert "rounds (a cold build" not in report([row])  # one round: nothing more to show


def test_the_loop_builds_peaks_are_printed_and_held_to_the_memory_target() -> None:
    """A change's highest round is its peak; a loop build over 1 GiB misses the target even
    when every cold, warm and rewarm build stayed under it."""
    row = _with_loop(_row(10_000, 45.0, 4.0, 900), 2.5, 2.9)
    row["loop_peaks"] = {"base": 700.0, "pointer removed": 810.0, "overlay changed": 655.0}
    text = report([row])
    assert "peak memory, MiB (the highest of each change's rounds):" in text
    line = text.split("peak memory, MiB (the highest of each change's rounds):\n", 1)[1]
    assert line.splitlines()[0].split() == ["10000", "700", "810", "655"]
    assert "peak memory < 1 GiB: met" in text
    row["loop_peaks"]["overlay changed"] = 1030.0
    assert "peak memory < 1 GiB: MISSED" in report([row])
