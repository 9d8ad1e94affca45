""".ci/run: strict bash, runs from the repo root, always runs lint and test, fails if either fails.

The real script runs on a copy of itself inside a sandbox repo, with a fake `make` first on PATH
that records its arguments and working folder and exits with a chosen code.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CI_RUN = REPO / ".ci" / "run"
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")


def run_ci(
    tmp_path: Path, lint_rc: int = 0, test_rc: int = 0, mutation_rc: int = 0
) -> tuple[int, str, list[str]]:
    """Run a copy of .ci/run from an unrelated folder; return exit code, output, make calls."""
    repo = tmp_path / "clone"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(CI_RUN, repo / ".ci" / "run")
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    log = tmp_path / "make.log"
    make = fakes / "make"
    make.write_text(
        f'#!{BASH}\necho "$PWD $*" >> "{log}"\n'
        f'case "$1" in lint) exit {lint_rc};; test) exit {test_rc};; '
        f"mutation-ci) exit {mutation_rc};; esac\n",
        encoding="utf-8",
    )
    make.chmod(make.stat().st_mode | stat.S_IXUSR)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PATH": f"{fakes}{os.pathsep}{os.environ.get('PATH', '')}", "CI": "true"}
    done = subprocess.run(
        [str(BASH), str(repo / ".ci" / "run")],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return (
        done.returncode,
        done.stdout + done.stderr,
        [c.replace(str(repo), "<repo>") for c in calls],
    )


def test_shebang_and_strict_mode() -> None:
    text = CI_RUN.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text


def test_runs_lint_then_test_from_the_repo_root(tmp_path: Path) -> None:
    code, output, calls = run_ci(tmp_path)
    assert code == 0, output
    assert calls == ["<repo> lint", "<repo> test", "<repo> mutation-ci"]
    assert "CI passed" in output


@pytest.mark.parametrize(("lint_rc", "test_rc"), [(2, 0), (0, 2), (2, 2), (0, 1)])
def test_any_failing_step_fails_ci_and_both_steps_still_run(
    tmp_path: Path, lint_rc: int, test_rc: int
) -> None:
    code, output, calls = run_ci(tmp_path, lint_rc, test_rc)
    assert code != 0
    assert calls == ["<repo> lint", "<repo> test", "<repo> mutation-ci"]
    assert f"make lint: exit {lint_rc}" in output
    assert f"make test: exit {test_rc}" in output


def test_a_mutation_score_below_target_is_reported_not_fatal(tmp_path: Path) -> None:
    """The mutation step reports until every module meets its target; lint and test gate."""
    code, output, calls = run_ci(tmp_path, mutation_rc=1)
    assert code == 0
    assert calls == ["<repo> lint", "<repo> test", "<repo> mutation-ci"]
    assert "make mutation-ci: exit 1" in output
    assert "reported only" in output


def test_pytest_no_tests_is_not_a_pass(tmp_path: Path) -> None:
    # `make test` turns pytest's exit 5 into a non-zero make exit (see test_makefile.py);
    # .ci/run must pass that on rather than treat it as success.
    code, _, _ = run_ci(tmp_path, test_rc=5)
    assert code != 0


RELAXING = ("UPDATE_GOLDEN", "PYTEST_ADDOPTS", "PYTEST_ARGS", "COV_MIN", "SKIP_SYSTEM_DEPS")


def test_the_environment_cannot_relax_the_run(tmp_path: Path) -> None:
    """A CI environment that sets UPDATE_GOLDEN, PYTEST_ADDOPTS, ... reaches no step."""
    repo = tmp_path / "clone"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(CI_RUN, repo / ".ci" / "run")
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    seen = tmp_path / "env.log"
    make = fakes / "make"
    names = " ".join(RELAXING)
    make.write_text(
        f'#!{BASH}\nfor n in {names}; do [ -n "${{!n+set}}" ] && echo "$n" >> "{seen}"; done\n'
        "exit 0\n",
        encoding="utf-8",
    )
    make.chmod(make.stat().st_mode | stat.S_IXUSR)
    env = {
        **os.environ,
        "PATH": f"{fakes}{os.pathsep}{os.environ.get('PATH', '')}",
        "CI": "true",
        "UPDATE_GOLDEN": "1",
        "PYTEST_ADDOPTS": "-k nothing",
        "PYTEST_ARGS": "--deselect x",
        "COV_MIN": "0",
        "SKIP_SYSTEM_DEPS": "1",
    }
    done = subprocess.run(
        [str(BASH), str(repo / ".ci" / "run")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not seen.exists(), seen.read_text(encoding="utf-8")
    for name in RELAXING:
        assert f"ignoring {name}" in done.stdout


@pytest.mark.parametrize("ci", ["false", "", None])
def test_the_environment_cannot_turn_ci_off(tmp_path: Path, ci: str | None) -> None:
    """CI=true is what fails a skipped browser/registry/fixtures/node test; .ci/run forces it."""
    repo = tmp_path / "clone"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(CI_RUN, repo / ".ci" / "run")
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    seen = tmp_path / "ci.log"
    make = fakes / "make"
    make.write_text(
        f'#!{BASH}\necho "$1 CI=${{CI-<unset>}}" >> "{seen}"\nexit 0\n', encoding="utf-8"
    )
    make.chmod(make.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = f"{fakes}{os.pathsep}{os.environ.get('PATH', '')}"
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        [str(BASH), str(repo / ".ci" / "run")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert seen.read_text(encoding="utf-8").splitlines() == [
        "lint CI=true",
        "test CI=true",
        "mutation-ci CI=true",
    ]
