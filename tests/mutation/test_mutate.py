"""The mutation tool's pure parts: which mutants it makes, how it splices them, the equivalents
file, and the target map (every mapped module and test file exists)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.mutation.mutate import (
    REPO,
    apply,
    defined_scopes,
    in_scopes,
    load_equivalents,
    mutants_of,
)
from tests.mutation.targets import TARGETS

SOURCE = '''"""doc"""
def f(a, b, data, names):
    """doc"""
    if a == b and not names:
        raise ValueError("x")
    if len(data) < 2:
        return data[:12]
    return any(n.lower() for n in names)
'''


def _described() -> set[str]:
    return {f"{m.operator}:{m.original} => {m.replacement}" for m in mutants_of("m.py", SOURCE)}


def test_the_operators_the_issue_names_are_made() -> None:
    found = _described()
    assert "compare:a == b => a != b" in found
    assert "boolop:a == b and not names => (a == b) or (not names)" in found
    assert "not:not names => names" in found
    assert "compare:len(data) < 2 => len(data) <= 2" in found
    assert "constant:2 => 3" in found and "constant:2 => 1" in found
    assert "slice:data[:12] => data[:]" in found
    assert any(d.startswith("casefold:a == b =>") for d in found)
    assert any(d.startswith("raise:raise ValueError") for d in found)
    assert "return:return data[:12] => return None" in found
    assert "call:any => all" in found


def test_docstrings_and_messages_are_not_mutated() -> None:
    constants = {d for d in _described() if d.startswith("constant:")}
    assert constants == {
        "constant:2 => 3",
        "constant:2 => 1",
        "constant:12 => 13",
        "constant:12 => 11",
    }


def test_every_mutant_parses_and_changes_the_source() -> None:
    for mutant in mutants_of("m.py", SOURCE):
        mutated = apply(SOURCE, mutant)
        assert mutated != SOURCE
        ast.parse(mutated)


def test_keys_are_unique_and_free_of_line_numbers() -> None:
    mutants = mutants_of("m.py", SOURCE)
    keys = [m.key for m in mutants]
    assert len(keys) == len(set(keys))
    shifted = mutants_of("m.py", SOURCE.replace('"""doc"""\n', '"""doc"""\n\n\n', 1))
    assert sorted(m.key for m in shifted) == sorted(keys)


NESTED = """X = 1
def f(a):
    def inner(b):
        return b == 2
    return a < 3
class C:
    def m(self):
        return 4
"""


def test_named_scopes_limit_the_mutants() -> None:
    def scopes(names: tuple[str, ...]) -> set[str]:
        return {m.scope for m in mutants_of("m.py", NESTED, scopes=names)}

    assert scopes(("f",)) == {"f", "f.inner"}
    assert scopes(("f.inner",)) == {"f.inner"}
    assert scopes(("C",)) == {"C.m"}
    assert scopes(("<module>",)) == {"<module>"}
    assert scopes(("g",)) == set()
    assert not in_scopes("ff", ("f",))  # a name is not a prefix of a longer one
    assert defined_scopes(NESTED) == {"<module>", "f", "f.inner", "C", "C.m"}


def test_every_named_scope_exists() -> None:
    """A renamed or moved function must fail here, not silently leave nothing to mutate."""
    for target in TARGETS:
        if target.scopes is None:
            continue
        source = (REPO / target.path).read_text(encoding="utf-8")
        missing = set(target.scopes) - defined_scopes(source)
        assert not missing, f"{target.path}: no such scope {sorted(missing)} (see targets.py)"
        assert mutants_of(target.path, source, target.strings, target.scopes)


def test_equivalents_file_format(tmp_path: Path) -> None:
    path = tmp_path / "eq.txt"
    path.write_text(
        "# comment\n\na.py::f::compare::x => y\n    why one\n    why two\n"
        "b.py::<module>::constant::1 => 2\n",
        encoding="utf-8",
    )
    assert load_equivalents(path) == {
        "a.py::f::compare::x => y": "why one why two",
        "b.py::<module>::constant::1 => 2": "",
    }


def test_the_checked_in_equivalents_each_say_why_and_still_exist() -> None:
    """A listed mutant that the tool no longer makes is stale; one without a reason is a guess."""
    listed = load_equivalents()
    paths = {key.split("::", 1)[0] for key in listed}
    made: set[str] = set()
    for target in (t for t in TARGETS if t.path in paths):
        source = (REPO / target.path).read_text(encoding="utf-8")
        made |= {m.key for m in mutants_of(target.path, source, target.strings, target.scopes)}
    for key, why in listed.items():
        assert why, f"equivalents.txt: {key} has no reason"
        assert key in made, f"equivalents.txt: {key} is no longer a mutant of the code"


def test_every_target_and_mapped_test_exists() -> None:
    for target in TARGETS:
        assert (REPO / target.path).is_file(), target.path
        for test in target.tests:
            assert (REPO / test.split("::")[0]).exists(), test


def test_a_mutant_runs_the_tests_that_execute_its_lines() -> None:
    from tests.mutation.mutate import _test_of, tests_for

    assert _test_of("tests/a.py::test_x[param-1]|run") == "tests/a.py::test_x"
    assert _test_of("tests/a.py::Case::test_y|setup") == "tests/a.py::Case::test_y"
    mutant = mutants_of("m.py", NESTED, scopes=("f.inner",))[0]
    lines = {4: {"t.py::test_b", "t.py::test_a"}, 5: {"t.py::test_c"}}
    assert tests_for(mutant, lines) == ["t.py::test_a", "t.py::test_b"]
    assert tests_for(mutant, None) is None  # no map: every mapped test
    assert tests_for(mutant, {4: set()}) is None  # run only at import time: every mapped test
    assert tests_for(mutant, {3: {"t.py::test_d"}}) == ["t.py::test_d"]  # its statement's line


def _collected(*args: str) -> set[str]:
    """The node ids pytest collects (and does not deselect) for `args`, run from the repo."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_a_targets_filter_leaves_out_the_slow_tests_and_nothing_else() -> None:
    """Each selection's extra arguments may drop the tests marked `slow` only: a `-k` word
    (once "not deadline") also dropped fast tests of the deadline that a mutant must meet."""
    selections = {(target.tests, target.extra) for target in TARGETS if target.extra}
    assert selections, "no target filters its tests"
    kept_by_registry: set[str] = set()
    for tests, extra in selections:
        assert "-k" not in extra, extra
        files = [t for t in tests if (REPO / t.split("::")[0]).exists()]
        everything = _collected(*files)
        kept = _collected(*files, *extra)
        slow = _collected(*files, "-m", "slow")
        assert everything - kept == slow, sorted((everything - kept) ^ slow)
        if "tests/bundle/test_registry_hardening.py" in files:
            kept_by_registry = kept
    for name in (
        "test_the_total_deadline_bounds_a_fetch",
        "test_the_deadline_does_not_cut_a_healthy_fetch",
    ):
        assert any(node.endswith(f"::{name}") for node in kept_by_registry), name
