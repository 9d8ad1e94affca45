"""The build benchmark: `python -m bench.run --sizes 100,1000,10000`.

For each size it generates (or reuses) a synthetic signed tree (`bench.gen`), then measures in
child processes, one at a time:

- cold: `evidence-dashboard build` with an empty cache;
- warm: the same build again, same cache, nothing changed (must verify nothing again); the
  evaluation memo answers it;
- rewarm: warm again with `--reevaluate`, every stage on its per-item caches (the cost of a
  rebuild after a change);
- the floor: sigstore-python `verify_dsse` alone over the same bundles, in one process and
  over `--jobs` processes; the cold build and the one-process floor are measured in pairs,
  `--cold-rounds` times (a cold build, then the floor right after it: a slow stretch of a shared
  machine weighs on both sides of their ratio alike), and the pair with the middle ratio counts;
- the maintainer's loop (`bench.loop`): builds after one small change each, every change
  measured `--loop-rounds` times (its median round counts; the highest peak memory of its
  rounds is held to the memory target with the cold build's).

It prints per size the wall times, each build as a ratio to the floor, verdict-cache hits and
misses, pages per second, the phases and the peak memory of the whole process tree (the sum of
the proportional set sizes of the child and its descendants, sampled from /proc every 20 ms),
then the time per attestation between sizes. Before each measured run the input tree is read
once (`read_through`), so every run finds it in the OS file cache. Only public tools: Python's own timers and /proc.

What an earlier run left (its caches and sites, tens of thousands of files at 10,000) is moved
aside at once (`Trash`) and deleted only after the last measurement: on ext4 without a journal,
a new file skips, one by one, every inode freed in the last minute or more, so a cold build
started right after such a deletion measured the deletion too (about 5 s more at 10,000).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.gen import TreeInfo, generate_tree, shape_for
from bench.loop import CHANGES, copy_tree

TARGETS = {"cold_s": 60.0, "cold_ratio": 4.0, "warm_s": 15.0, "memory_mib": 1024.0}
"""The issue's targets at 10,000 attestations on a 2-core machine."""
LOOP_TARGETS = {"change_s": 3.0, "cold_ratio": 2.0, "warm_ratio": 0.2}
"""The maintainer's-loop targets at 10,000: a one-pointer change (every change held to it too),
cold and warm against floor1."""
SAMPLE_S = 0.1
"""How often the resident sets of the process tree are read (cheap kernel counters)."""
PSS_EVERY_S = 1.0
"""At most this often the proportional set sizes are read (see `PeakSampler`)."""
BUILDS = ("cold", "warm", "rewarm")
"""cold: empty cache. warm: same cache, nothing changed (the evaluation memo answers).
rewarm: the same again with `--reevaluate`, so every stage runs on its per-item caches
(verdicts, freshness, pages): what a build costs when something did change."""


@dataclass(frozen=True)
class Measured:
    """One child run: wall time, peak tree memory and what the child reported."""

    wall: float
    peak_mib: float
    result: dict[str, Any]


def _children_of() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _field_kib(path: str, name: str) -> int | None:
    """The `name:` line of a /proc file in KiB, or None when the file or line is missing."""
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith(name):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _pss_kib(pid: int) -> int:
    """The proportional set size of `pid` (shared pages split between their sharers), in KiB,
    else its resident set (where smaps_rollup is missing)."""
    found = _field_kib(f"/proc/{pid}/smaps_rollup", "Pss:")
    if found is None:
        found = _field_kib(f"/proc/{pid}/status", "VmRSS:")
    return found or 0


def _rss_kib(pid: int) -> int:
    """The resident set of `pid` in KiB: a kernel counter, cheap to read."""
    return _field_kib(f"/proc/{pid}/status", "VmRSS:") or 0


def _children(pid: int) -> list[int] | None:
    """Child pids from /proc/<pid>/task/*/children, or None where the kernel lacks it."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                found.extend(int(c) for c in fh.read().split())
        except FileNotFoundError:
            return None
        except OSError:
            continue
    return found


def tree_pids(root: int) -> list[int]:
    """`root` and all its descendants."""
    out, todo = [], [root]
    tree: dict[int, list[int]] | None = None
    while todo:
        pid = todo.pop()
        out.append(pid)
        kids = _children(pid) if tree is None else None
        if kids is None:
            tree = tree if tree is not None else _children_of()
            kids = tree.get(pid, [])
        todo.extend(kids)
    return out


class PeakSampler:
    """The peak memory of a process tree (sum of proportional set sizes), cheaply.

    Reading a process's PSS makes the kernel walk its page tables under the process's mmap
    lock (15 ms for a 800 MB process): read often, it slows the build it measures. The
    resident set is a counter and never smaller than the PSS, so the sampler reads resident
    sets every `SAMPLE_S` and the PSS only when their sum could beat the peak so far (at most
    once a second).
    """

    def __init__(self, root: int) -> None:
        self.root = root
        self.peak = 0
        self._last = -1.0

    def sample(self) -> None:
        pids = tree_pids(self.root)
        if sum(_rss_kib(pid) for pid in pids) <= self.peak:
            return
        now = time.monotonic()
        if now - self._last >= PSS_EVERY_S:
            self._last = now
            self.peak = max(self.peak, sum(_pss_kib(pid) for pid in pids))


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a measured build runs in: the caller's, without MkDocs' banner, and
    caching bytecode as Python does by default: a shell that sets PYTHONDONTWRITEBYTECODE
    would have every build compile the package again (about 0.15 s of every build here)."""
    env = dict(environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(argv: Sequence[str], result_file: Path) -> Measured:
    """Run `argv` as a child, sampling the process tree's memory; read its JSON result."""
    env = child_env(os.environ)
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), env=env, stdout=subprocess.DEVNULL)
    sampler_state = PeakSampler(proc.pid)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            sampler_state.sample()
            done.wait(SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = proc.wait()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if code != 0:
        raise SystemExit(f"bench: {' '.join(argv[:4])} ... exited {code}")
    result = json.loads(result_file.read_text(encoding="utf-8"))
    return Measured(wall, sampler_state.peak / 1024, result)


def build_argv(info: TreeInfo, out: Path, cache: Path, jobs: int, result: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "bench.child",
        "build",
        str(result),
        "--",
        "--recipes",
        str(info.root),
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--oci-layout",
        str(info.layout),
        "--trust-root",
        str(info.trust_root),
        "--offline",
        "--quiet",
        "--jobs",
        str(jobs),
        "--config",
        str(_config()),
    ]


def _config() -> Path:
    """The repository's example site configuration (a copy of the packaged default)."""
    return Path(__file__).resolve().parents[1] / "mkdocs.example.yml"


def floor_argv(info: TreeInfo, jobs: int, result: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "bench.child",
        "floor",
        str(result),
        str(info.layout),
        str(info.trust_root),
        "--jobs",
        str(jobs),
    ]


def _pages(site: Path) -> int:
    return sum(1 for _ in site.rglob("*.html"))


def read_through(folder: Path) -> int:
    """Read every regular file under `folder` once; returns the bytes read.

    Each measured run starts with the input tree in the OS file cache, as it is right after a
    checkout: otherwise whichever run comes first after the tree is reused pays for this
    machine's disk, and the floor and the builds would not be measured alike.
    """
    total = 0
    pending = [str(folder)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    with open(entry.path, "rb") as handle:
                        while chunk := handle.read(1 << 20):
                            total += len(chunk)
    return total


class Trash:
    """Folders the benchmark is done with: renamed into `<work>/.trash` at once (no file is
    freed while builds are measured) and deleted by `empty`, after the last measurement. A
    trash folder a killed run left behind is deleted with this run's."""

    def __init__(self, work: Path) -> None:
        self.folder = work / ".trash"
        self._count = 0
        if self.folder.exists():  # a killed run's trash
            leftover = work / f".trash-{os.getpid()}"
            self.folder.rename(leftover)
            self.discard(leftover)

    def discard(self, path: Path) -> None:
        """Move `path` (a folder or nothing) into the trash."""
        if not path.exists() and not path.is_symlink():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self._count += 1
        path.rename(self.folder / f"{path.name}-{os.getpid()}-{self._count}")

    def empty(self) -> None:
        """Delete everything in the trash, and put the deletions on disk."""
        shutil.rmtree(self.folder, ignore_errors=True)
        os.sync()


def run_size(
    size: int, work: Path, jobs: int, rounds: int, trash: Trash, cold_rounds: int = 1
) -> dict[str, Any]:
    """Generate (or reuse) the tree of `size` attestations and measure it (the loop's changes
    `rounds` times; the cold build and the one-process floor `cold_rounds` times, in pairs)."""
    shape = shape_for(size)
    folder = work / f"tree-{size}-{shape.key()}"
    start = time.perf_counter()
    info = generate_tree(shape, folder)
    generated = time.perf_counter() - start
    print(
        f"  tree: {info.pointers} pointers, {shape.recipes} recipes x {shape.signers} signers "
        f"x {shape.builds} builds ({'reused' if info.reused else f'generated in {generated:.1f} s'})",
        flush=True,
    )
    runs = work / f"run-{size}"
    trash.discard(runs)  # deleted after the last measurement, see `Trash`
    runs.mkdir(parents=True)
    os.sync()  # start each size with the last run's writes on disk, not pending
    cache, out = runs / "cache", runs / "site"
    figures: dict[str, Any] = {"size": size, "recipes": shape.recipes, "jobs": jobs}
    pairs = []
    for turn in range(1, max(1, cold_rounds) + 1):
        if turn > 1:  # every cold build starts from nothing: no cache, no output to link from
            trash.discard(cache)
            trash.discard(out)
        cold = _measure_build(info, folder, runs, "cold", turn, out, cache, jobs)
        pairs.append((cold, _measure_floor(info, folder, runs, "floor1", turn, 1)))
    figures["cold"], figures["floor1"] = median_round(pairs)
    figures["cold_ratios"] = [cold_ratio(pair) for pair in pairs]
    figures["cold_peak_mib"] = max(cold.peak_mib for cold, _ in pairs)  # held to the target
    for label in BUILDS[1:]:
        figures[label] = _measure_build(info, folder, runs, label, 1, out, cache, jobs)
    figures["pages"] = _pages(out)
    figures["floorN"] = _measure_floor(info, folder, runs, "floorN", 1, jobs)
    figures["loop"], figures["loop_walls"], figures["loop_peaks"] = run_loop(
        info, runs, cache, out, jobs, rounds
    )
    trash.discard(out)
    return figures


def _measure_build(
    info: TreeInfo,
    folder: Path,
    runs: Path,
    label: str,
    turn: int,
    out: Path,
    cache: Path,
    jobs: int,
) -> Measured:
    """One build of `label` (cold, warm or rewarm), its line printed."""
    result = _ready(folder, runs, label, turn)
    argv = build_argv(info, out, cache, jobs, result)
    if label == "rewarm":
        argv.append("--reevaluate")
    m = measure(argv, result)
    print(
        f"  {label}: {m.wall:.1f} s, peak {m.peak_mib:.0f} MiB, "
        f"{m.result['hits']} hits / {m.result['misses']} misses, evaluation "
        f"{m.result.get('evaluation', '?')}",
        flush=True,
    )
    return m


def _measure_floor(
    info: TreeInfo, folder: Path, runs: Path, label: str, turn: int, processes: int
) -> Measured:
    """One floor run over `processes`, its line printed."""
    result = _ready(folder, runs, label, turn)
    m = measure(floor_argv(info, processes, result), result)
    print(
        f"  floor over {processes} process(es): {m.result['total']:.1f} s "
        f"({m.result['verified']}/{m.result['bundles']} bundles verified)",
        flush=True,
    )
    return m


def _ready(folder: Path, runs: Path, label: str, turn: int) -> Path:
    """Before a measured run: the previous run's writes flushed (not during this one), the tree
    read into the page cache; the file its figures go to (`<label>[-<turn>].json`)."""
    os.sync()
    read_through(folder)
    return runs / (f"{label}.json" if turn == 1 else f"{label}-{turn}.json")


def cold_ratio(pair: tuple[Measured, Measured]) -> float:
    """A cold build's wall time over the one-process floor measured right after it."""
    cold, floor1 = pair
    return float(cold.wall / floor1.result["total"])


def median_round(pairs: Sequence[tuple[Measured, Measured]]) -> tuple[Measured, Measured]:
    """The middle (cold build, floor1) pair by their ratio (of an even number, the lower of
    the two middle ones). Each pair ran back to back, so a stretch in which this machine runs
    everything slower weighs on both sides of its ratio alike; the pair shown is one that ran,
    its build and its floor side by side, not an average."""
    return sorted(pairs, key=cold_ratio)[(len(pairs) - 1) // 2]


def run_loop(
    info: TreeInfo, runs: Path, cache: Path, out: Path, jobs: int, rounds: int
) -> tuple[dict[str, Measured], dict[str, list[float]], dict[str, float]]:
    """The maintainer's loop (`bench.loop`): a base build of a copy of the tree on the warm
    cache, then `rounds` times one measured build after each small change (every change makes
    a tree no build has seen: the pointer goes and comes back while the overlay and the label
    keep changing). Per change: the median build (the middle one of its rounds) and every
    round's wall time, since one build on a busy disk can take a second more or less; and per
    change the highest peak memory of its rounds (held to the memory target, like the cold
    build's)."""
    tree = copy_tree(info.root, runs / "loop")
    measured: dict[str, list[Measured]] = {}
    steps = [("base", None), *((c.name, c) for _ in range(rounds) for c in CHANGES)]
    for name, change in steps:
        what = change.apply(tree) if change is not None else "the copied tree"
        os.sync()
        read_through(tree.root)
        done = measured.setdefault(name, [])
        result = runs / f"loop-{name.replace(' ', '-')}-{len(done) + 1}.json"
        argv = build_argv(info, out, cache, jobs, result)
        argv[argv.index("--recipes") + 1] = str(tree.root)
        argv += ["--commit", tree.commit()]
        m = measure(argv, result)
        done.append(m)
        print(
            f"  loop, {name} ({what}): {m.wall:.1f} s, {m.result['hits']} hits / "
            f"{m.result['misses']} misses, evaluation {m.result.get('evaluation', '?')}, "
            f"recipes evaluated / pages rendered {_redone(m.result)}",
            flush=True,
        )
    medians = {name: median_build(ms) for name, ms in measured.items()}
    walls = {name: [m.wall for m in ms] for name, ms in measured.items()}
    return medians, walls, {name: max(m.peak_mib for m in ms) for name, ms in measured.items()}


def _phase_text(result: dict[str, Any]) -> str:
    phases = result["phases"]
    verify = phases.get("verify", 0.0)
    order = [
        ("verify", verify),
        ("evaluate-rest", phases.get("evaluate", 0.0) - verify),
        ("data", phases.get("data writers", 0.0)),
        ("pages", _pages_s(phases)),
        ("mkdocs", phases.get("mkdocs", 0.0)),
    ]
    return " ".join(f"{k} {v:.1f}" for k, v in order)


def _loop_phase_text(build: Measured) -> str:
    """A loop build's phases, with the memo key's fingerprint first and the rest of its wall
    time last (start-up, the summary, waiting for the replaced output's deletion)."""
    phases = build.result.get("phases")
    if not isinstance(phases, dict) or not phases:
        return "?"
    fingerprint = phases.get("fingerprint", 0.0)
    timed = fingerprint + sum(phases.get(k, 0.0) for k in ("evaluate", "data writers", "site"))
    rest = max(0.0, build.wall - timed)
    return f"fingerprint {fingerprint:.1f} {_phase_text(build.result)} rest {rest:.1f}"


def _pages_s(phases: dict[str, float]) -> float:
    """The site build without MkDocs: page rendering (or page-cache reads) and writing."""
    return max(0.0, phases.get("site", 0.0) - phases.get("mkdocs", 0.0))


def report(rows: Sequence[dict[str, Any]]) -> str:
    """The table: one block per size, then the scaling between sizes and the targets."""
    lines = []
    head = (
        f"{'size':>6} {'build':<6} {'wall s':>7} {'x floor1':>8} {'x floorN':>8} "
        f"{'hits':>6} {'misses':>6} {'pages/s':>7} {'peak MiB':>8}  phases (s)"
    )
    lines.append(head)
    lines.append("-" * len(head))
    for row in rows:
        f1 = row["floor1"].result["total"]
        fn = row["floorN"].result["total"]
        for label in BUILDS:
            m: Measured = row[label]
            site_s = m.result["phases"].get("site", 0.0)
            pps = row["pages"] / site_s if site_s else 0.0
            lines.append(
                f"{row['size']:>6} {label:<6} {m.wall:>7.1f} {m.wall / f1:>8.2f} "
                f"{m.wall / fn:>8.2f} {m.result['hits']:>6} {m.result['misses']:>6} "
                f"{pps:>7.1f} {m.peak_mib:>8.0f}  {_phase_text(m.result)}"
            )
        lines.append(
            f"{row['size']:>6} floor {f1:>7.1f} (1 process), {fn:.1f} s over "
            f"{row['jobs']} processes; {row['pages']} pages, {row['recipes']} recipes"
        )
        ratios = row.get("cold_ratios") or []
        if len(ratios) > 1:
            lines.append(
                f"{row['size']:>6} cold / floor1 of each of {len(ratios)} rounds (a cold build, "
                f"then the floor): {' '.join(f'{r:.2f}' for r in sorted(ratios))}; the middle "
                "round is the one shown"
            )
    loops = [row for row in rows if row.get("loop")]
    if loops:
        lines.append("")
        lines.append(
            "the maintainer's loop (warm cache, one change, then a build), wall s "
            "(of several rounds, the median):"
        )
        names = list(loops[0]["loop"])
        lines.append(f"  {'size':>6} " + " ".join(f"{n:>17}" for n in names))
        lines.extend(
            f"  {row['size']:>6} "
            + " ".join(f"{row['loop'][n].wall:>17.1f}" for n in names if n in row["loop"])
            for row in loops
        )
        spread = [
            row for row in loops if any(len(w) > 1 for w in row.get("loop_walls", {}).values())
        ]
        if spread:
            lines += _per_change(
                "every round of each change, fastest to slowest:",
                spread,
                names,
                lambda row, n: _walls(row["loop_walls"].get(n, [])),
            )
        lines += _per_change(
            "CPU s of those builds, user + system (the disk's share shows in system):",
            loops,
            names,
            lambda row, n: _cpu_text(row["loop"][n].result) if n in row["loop"] else None,
        )
        peaks = [row for row in loops if row.get("loop_peaks")]
        if peaks:
            lines += _per_change(
                "peak memory, MiB (the highest of each change's rounds):",
                peaks,
                names,
                lambda row, n: f"{row['loop_peaks'].get(n, 0.0):.0f}",
            )
        lines += _per_change(
            "recipes evaluated / recipe pages rendered by each of those builds:",
            loops,
            names,
            lambda row, n: _redone(row["loop"][n].result) if n in row["loop"] else None,
        )
        for row in loops:
            lines.append(f"  where the time of those builds went, size {row['size']} (s):")
            lines.extend(
                f"    {n:<18} {_loop_phase_text(row['loop'][n])}" for n in names if n in row["loop"]
            )
    lines.append("")
    lines.append("time per attestation (ms): size, cold, warm, rewarm, floor1")
    for row in rows:
        n = row["size"]
        lines.append(
            f"  {n:>6} {1000 * row['cold'].wall / n:>8.2f} "
            f"{1000 * row['warm'].wall / n:>8.2f} "
            f"{1000 * row['rewarm'].wall / n:>8.2f} "
            f"{1000 * row['floor1'].result['total'] / n:>8.2f}"
        )
    for a, b in zip(rows, rows[1:], strict=False):
        grow = (b["cold"].wall / b["size"]) / (a["cold"].wall / a["size"])
        lines.append(
            f"  cold per attestation {a['size']} -> {b['size']}: x{grow:.2f} "
            f"({'flat or better' if grow <= 1.1 else 'GROWS'})"
        )
    big = next((r for r in rows if r["size"] == 10_000), None)
    if big is not None:
        cold, warm = big["cold"], big["warm"]
        checks = [
            ("cold <= 60 s", cold.wall <= TARGETS["cold_s"]),
            (
                "cold <= 4x floor (1 process)",
                cold.wall <= TARGETS["cold_ratio"] * big["floor1"].result["total"],
            ),
            ("warm <= 15 s", warm.wall <= TARGETS["warm_s"]),
            (
                "peak memory < 1 GiB",
                max(
                    big.get("cold_peak_mib", 0.0),
                    *(m.peak_mib for m in (cold, warm, big["rewarm"])),
                    *(big.get("loop_peaks") or {}).values(),
                )
                < TARGETS["memory_mib"],
            ),
            (
                "warm verifies nothing",
                warm.result["misses"] == 0 and big["rewarm"].result["misses"] == 0,
            ),
        ]
        lines.append("")
        lines.append(
            "targets at 10,000: "
            + "; ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in checks)
        )
        lines.append(_loop_targets(big))
    return "\n".join(lines)


def _per_change(
    title: str,
    rows: Sequence[dict[str, Any]],
    names: Sequence[str],
    cell: Callable[[dict[str, Any], str], str | None],
) -> list[str]:
    """A title, then per size a line of one cell per change of the loop (None: left out)."""
    lines = [f"  {title}"]
    for row in rows:
        cells = (cell(row, name) for name in names)
        lines.append(f"  {row['size']:>6} " + " ".join(f"{c:>17}" for c in cells if c is not None))
    return lines


def median_build(builds: Sequence[Measured]) -> Measured:
    """The middle build by wall time (of an even number, the faster of the two middle ones):
    a build that ran, with its own phases and counts, not an average of several."""
    return sorted(builds, key=lambda m: m.wall)[(len(builds) - 1) // 2]


def _walls(walls: Sequence[float]) -> str:
    """One change's wall times, fastest first: `11.9/12.6/14.4`."""
    return "/".join(f"{w:.1f}" for w in sorted(walls))


def _cpu_text(result: dict[str, Any]) -> str:
    """`<user>+<system>` CPU seconds of one build ("?" where not measured)."""
    cpu = result.get("cpu")
    if not isinstance(cpu, dict):
        return "?"
    return f"{cpu.get('user', 0.0):.1f}+{cpu.get('sys', 0.0):.1f}"


def _redone(result: dict[str, Any]) -> str:
    """`<recipes evaluated>/<pages rendered>` of one build ("?" where not counted)."""
    return f"{result.get('recipes evaluated', '?')}/{result.get('pages rendered', '?')}"


POINTER_CHANGES = ("pointer removed", "pointer added")
"""The loop's one-pointer changes: the issue's target is stated for these."""


def _loop_targets(big: dict[str, Any]) -> str:
    """The maintainer's-loop targets at 10,000 (a one-pointer change <= 3 s, cold <= 2x and
    warm <= 0.2x the one-process floor), met or MISSED, with the figures they were judged
    on; every other change is held to the same 3 s and its slowest named."""
    floor1 = big["floor1"].result["total"]
    loop = {name: m.wall for name, m in (big.get("loop") or {}).items() if name != "base"}
    pointer = [wall for name, wall in loop.items() if name in POINTER_CHANGES]
    slowest_pointer = max(pointer) if pointer else float("nan")
    slowest = max(loop, key=loop.__getitem__) if loop else None
    limit = LOOP_TARGETS["change_s"]
    checks = [
        (
            f"one-pointer change <= {limit:.0f} s (slowest {slowest_pointer:.1f} s)",
            bool(pointer) and slowest_pointer <= limit,
        ),
        (
            f"every change <= {limit:.0f} s (slowest: "
            + ("none measured" if slowest is None else f"{slowest}, {loop[slowest]:.1f} s")
            + ")",
            slowest is not None and loop[slowest] <= limit,
        ),
        (
            f"cold <= {LOOP_TARGETS['cold_ratio']:.0f}x floor1 ({big['cold'].wall / floor1:.2f}x)",
            big["cold"].wall <= LOOP_TARGETS["cold_ratio"] * floor1,
        ),
        (
            f"warm <= {LOOP_TARGETS['warm_ratio']}x floor1 ({big['warm'].wall / floor1:.2f}x)",
            big["warm"].wall <= LOOP_TARGETS["warm_ratio"] * floor1,
        ),
    ]
    return "loop targets at 10,000: " + "; ".join(
        f"{name}: {'met' if ok else 'MISSED'}" for name, ok in checks
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        default="100,1000,10000",
        help="attestation counts, comma-separated (multiples of 10)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="--jobs for the builds and the parallel floor",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path("build") / "bench",
        help="where trees, caches and results go (trees are reused)",
    )
    parser.add_argument(
        "--loop-rounds",
        type=int,
        default=3,
        help="how many times each change of the maintainer's loop is measured (the median counts)",
    )
    parser.add_argument(
        "--cold-rounds",
        type=int,
        default=3,
        help="how many times a cold build and then the one-process floor are measured (the "
        "pair with the middle ratio counts)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        for size in sizes:
            shape_for(size)
    except ValueError as exc:
        parser.error(f"--sizes: {exc}")
    rows = []
    trash = Trash(args.work.absolute())
    try:
        for size in sizes:
            print(f"size {size}:", flush=True)
            rows.append(
                run_size(
                    size,
                    args.work.absolute(),
                    args.jobs,
                    args.loop_rounds,
                    trash,
                    args.cold_rounds,
                )
            )
    finally:
        trash.empty()
    print()
    print(report(rows))
    if args.json is not None:
        args.json.write_text(
            json.dumps([_plain(r) for r in rows], indent=2) + "\n", encoding="utf-8"
        )
    return 0


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    def plain(v: Any) -> Any:
        if isinstance(v, Measured):
            return {"wall": v.wall, "peakMiB": v.peak_mib, **v.result}
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return {k: plain(v) for k, v in row.items()}


if __name__ == "__main__":
    sys.exit(main())
