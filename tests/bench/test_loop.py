"""The maintainer's loop of the benchmark: each change edits the copied tree, never the original."""

from __future__ import annotations

from pathlib import Path

from bench.loop import CHANGES, copy_tree, first_pointer
from bench.run import Measured, report
from tests.bench.test_report import _row


def _tree(root: Path) -> Path:
    source = root / "source"
    (source / "evidence" / "r1" / "s1").mkdir(parents=True)
    (source / "evidence" / "r1" / "s1" / "sha256-a.yaml").write_text("a: 1\n", encoding="utf-8")
    (source / "evidence" / "r1" / "s2").mkdir(parents=True)
    (source / "evidence" / "r1" / "s2" / "sha256-b.yaml").write_text("b: 1\n", encoding="utf-8")
    (source / "evidence" / "allowlist.yaml").write_text(
        "community:\n  - label: first\n    source: x\n  - label: second\n", encoding="utf-8"
    )
    (source / "overlays").mkdir()
    (source / "overlays" / "r1.yaml").write_text("kind: RecipeResult\n", encoding="utf-8")
    (source / "bundles").mkdir()
    return source


def test_each_change_edits_the_copy_in_order_and_leaves_the_source_alone(tmp_path: Path) -> None:
    source = _tree(tmp_path)
    before = {p: p.read_bytes() for p in source.rglob("*") if p.is_file()}
    tree = copy_tree(source, tmp_path / "loop")
    assert not (tree.root / "bundles").exists()
    assert first_pointer(tree).name == "sha256-a.yaml"
    done = {change.name: change.apply(tree) for change in CHANGES[:1]}
    assert done["pointer removed"] == "r1/s1/sha256-a.yaml"
    assert not (tree.evidence / "r1" / "s1" / "sha256-a.yaml").exists()
    assert CHANGES[1].apply(tree) == "r1/s1/sha256-a.yaml"
    assert (tree.evidence / "r1" / "s1" / "sha256-a.yaml").read_text() == "a: 1\n"
    CHANGES[2].apply(tree)
    assert (tree.overlays / "r1.yaml").read_text().endswith("# changed by the benchmark\n")
    assert CHANGES[3].apply(tree) == "label 'first'"
    text = (tree.evidence / "allowlist.yaml").read_text()
    assert "- label: first (renamed)\n" in text and "- label: second\n" in text
    relabelled = text
    assert CHANGES[4].apply(tree) == "entry 'newcomer' first"
    text = (tree.evidence / "allowlist.yaml").read_text()
    assert text.startswith("community:\n  - label: newcomer\n    issuer: ")
    assert text.endswith(relabelled.split("community:\n", 1)[1])
    assert CHANGES[5].apply(tree) == "entry 'newcomer'"
    assert (tree.evidence / "allowlist.yaml").read_text() == relabelled
    files = {p: p.read_bytes() for p in tree.root.rglob("*") if p.is_file()}
    assert tree.commit() == "0" * 40
    assert CHANGES[6].apply(tree) == "commit 00000001"
    assert CHANGES[6].apply(tree) == "commit 00000002"
    assert tree.commit() == "0" * 39 + "2"
    assert {p: p.read_bytes() for p in tree.root.rglob("*") if p.is_file()} == files
    assert {p: p.read_bytes() for p in source.rglob("*") if p.is_file()} == before


def test_the_report_shows_the_loop_per_size() -> None:
    row = _row(1000, 10.0, 2.0, 300)
    row["loop"] = {
        name: Measured(wall, 100, {"hits": 1, "misses": 0})
        for name, wall in (("base", 4.0), ("pointer removed", 3.25), ("pointer added", 3.5))
    }
    text = report([row])
    assert "the maintainer's loop" in text
    section = text.split("the maintainer's loop", 1)[1].split("time per attestation")[0]
    assert "pointer removed" in section and "pointer added" in section
    row_line = next(line for line in section.splitlines() if line.strip().startswith("1000"))
    assert row_line.split()[1:] == ["4.0", "3.2", "3.5"]
    cpu = section.split("CPU s of those builds", 1)[1].splitlines()[1]
    assert cpu.split()[1:] == ["?", "?", "?"]  # not measured: said so, never a zero


def test_the_loop_shows_each_builds_user_and_system_cpu() -> None:
    row = _row(1000, 10.0, 2.0, 300)
    row["loop"] = {
        "base": Measured(4.0, 100, {"hits": 1, "misses": 0, "cpu": {"user": 3.14, "sys": 0.96}}),
        "pointer added": Measured(3.5, 100, {"cpu": {"user": 2.0, "sys": 1.25}}),
    }
    section = report([row]).split("CPU s of those builds", 1)[1]
    assert section.splitlines()[1].split()[1:] == ["3.1+1.0", "2.0+1.2"]


def test_each_change_counts_by_its_median_round_and_the_report_shows_every_round() -> None:
    """Three rounds of a change: the middle build is the one judged (not the fastest, not an
    average), and every round's wall time is printed beside it."""
    from bench.run import median_build

    rounds = [
        Measured(w, 100, {"hits": 1, "misses": 0, "round": n})
        for n, w in enumerate((14.4, 11.9, 12.6))
    ]
    assert median_build(rounds).result["round"] == 2
    assert median_build(rounds[:2]).wall == 11.9  # of two, the faster middle one
    assert median_build(rounds[:1]).wall == 14.4
    row = _row(10_000, 45.0, 4.0, 900)
    row["loop"] = {"base": Measured(5.0, 100, {}), "pointer removed": median_build(rounds)}
    row["loop_walls"] = {"base": [5.0], "pointer removed": [14.4, 11.9, 12.6]}
    text = report([row])
    section = text.split("the maintainer's loop", 1)[1].split("time per attestation")[0]
    lines = [line.split() for line in section.splitlines() if line.strip().startswith("10000")]
    assert lines[0][1:] == ["5.0", "12.6"]
    assert lines[1][1:] == ["5.0", "11.9/12.6/14.4"]
    assert "one-pointer change <= 3 s (slowest 12.6 s): MISSED" in text


def test_the_one_pointer_target_names_changes_the_loop_makes() -> None:
    """A renamed change would leave the issue's one-pointer target judged on nothing."""
    from bench.loop import CHANGES
    from bench.run import POINTER_CHANGES

    assert set(POINTER_CHANGES) <= {c.name for c in CHANGES}
