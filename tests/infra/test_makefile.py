"""The Makefile's promises, checked by running GNU make for real on a sandbox copy with fakes.

The sandbox holds a copy of the Makefile, a stub pyproject.toml / constraints.txt / system-deps
script, and a fake `python3` whose `-m venv DIR` makes a fake venv (python, ruff, mypy,
evidence-dashboard) that logs every call. Dry runs (`make -n`) on the real repo check the exact
commands without running them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.infra._make import MAKE, MAKEFILE, REPO, flat
from tests.infra._make import run_make as make

BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(MAKE is None or BASH is None, reason="needs GNU make and bash")

SITE_COMMAND = (
    ".venv/bin/evidence-dashboard build --recipes recipes --out site --offline "
    "--oci-layout recipes/bundles --trust-root recipes/trust/trusted_root.json"
)


def _exe(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{BASH}\n{body}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


class Sandbox:
    """A throw-away project folder driven by the real Makefile and fake tools."""

    def __init__(self, root: Path) -> None:
        self.root = root / "project"
        self.root.mkdir()
        self.log = root / "calls.log"
        shutil.copy(MAKEFILE, self.root / "Makefile")
        (self.root / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
        (self.root / "constraints.txt").write_text("click==8.1.0\n", encoding="utf-8")
        _exe(
            self.root / "scripts" / "install-system-deps.sh",
            f'echo "system-deps" >> "{self.log}"\n',
        )
        template = root / "venv-template" / "bin"
        _exe(
            template / "python",
            f'echo "venv-python $* MK2=${{NO_MKDOCS_2_WARNING:-}}/${{DISABLE_MKDOCS_2_WARNING:-}}"'
            f' >> "{self.log}"\n'
            'case "$2" in pip) exit "${FAKE_PIP_RC:-0}";; pytest) exit "${FAKE_PYTEST_RC:-0}";;\n'
            '  tests.mutation.mutate) exec sleep "${FAKE_MUTATE_SLEEP:-0}";; esac\n',
        )
        for tool in ("ruff", "mypy", "evidence-dashboard"):
            var = "FAKE_" + tool.upper().replace("-", "_") + "_RC"
            _exe(template / tool, f'echo "{tool} $*" >> "{self.log}"\nexit "${{{var}:-0}}"\n')
        self.python = root / "fake-python3"
        _exe(
            self.python,
            f'echo "python3 $*" >> "{self.log}"\n'
            f'if [ "$1 $2" = "-m venv" ]; then cp -r "{template.parent}" "$3"; fi\n',
        )

    def make(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return make(self.root, f"PYTHON={self.python}", *args, **env)

    def calls(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []

    def touch_later(self, name: str) -> None:
        """Give `name` an mtime clearly after the stamp's."""
        stamp = (self.root / ".venv" / ".install-stamp").stat().st_mtime
        os.utime(self.root / name, (stamp + 10, stamp + 10))


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def _pip_installs(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("venv-python -m pip install")]


# --------------------------------------------------------------------------- venv


def test_venv_is_created_with_PYTHON_and_installs_the_locked_extras(sandbox: Sandbox) -> None:
    done = sandbox.make("venv")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = sandbox.calls()
    assert calls[0] == "python3 -m venv .venv"
    (install,) = _pip_installs(calls)
    words = shlex.split(install.split(" MK2=")[0])
    assert words[words.index("-c") + 1] == "constraints.txt"
    assert words[words.index("-e") + 1] == ".[test,lint,authority]"


def test_venv_reinstalls_only_when_pyproject_or_constraints_change(sandbox: Sandbox) -> None:
    assert sandbox.make("venv").returncode == 0
    assert sandbox.make("venv").returncode == 0
    assert len(_pip_installs(sandbox.calls())) == 1  # up to date: nothing ran
    for changed, expected in (("constraints.txt", 2), ("pyproject.toml", 3)):
        sandbox.touch_later(changed)
        assert sandbox.make("venv").returncode == 0
        assert len(_pip_installs(sandbox.calls())) == expected
    venvs = [c for c in sandbox.calls() if c.startswith("python3 -m venv")]
    assert len(venvs) == 1  # an existing venv is reused


def test_a_failed_install_leaves_no_stamp_so_the_next_run_retries(sandbox: Sandbox) -> None:
    assert sandbox.make("venv", FAKE_PIP_RC="1").returncode != 0
    assert not (sandbox.root / ".venv" / ".install-stamp").exists()
    assert sandbox.make("venv").returncode == 0
    assert len(_pip_installs(sandbox.calls())) == 2


def test_python_defaults_to_python3() -> None:
    assert "PYTHON ?= python3" in MAKEFILE.read_text(encoding="utf-8").splitlines()
    dry = make(REPO, "-n", "-B", "venv", "VENV=never-created-venv")
    assert dry.returncode == 0, dry.stderr
    assert "python3 -m venv never-created-venv" in dry.stdout


# --------------------------------------------------------------------------- site


def test_site_runs_the_offline_demo_build(sandbox: Sandbox) -> None:
    done = sandbox.make("site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sandbox.calls()[-1] == SITE_COMMAND.replace(".venv/bin/", "")


def test_site_paths_are_variables() -> None:
    dry = make(REPO, "-n", "site", "RECIPES=elsewhere", "SITE_OUT=public")
    assert dry.returncode == 0, dry.stderr
    assert (
        "build --recipes elsewhere --out public --offline --oci-layout elsewhere/bundles "
        "--trust-root elsewhere/trust/trusted_root.json"
    ) in flat(dry.stdout)


def test_site_fails_when_the_build_fails(sandbox: Sandbox) -> None:
    assert sandbox.make("site", FAKE_EVIDENCE_DASHBOARD_RC="2").returncode != 0


def test_demo_regenerates_the_tree_from_the_scenario(sandbox: Sandbox) -> None:
    done = sandbox.make("demo")
    assert done.returncode == 0, done.stdout + done.stderr
    last = sandbox.calls()[-1].split(" MK2=")[0]
    assert last == "venv-python -m generator.testing.demo recipes/demo/scenario.yaml --out recipes"


# --------------------------------------------------------------------------- test


def test_test_installs_system_deps_first_then_runs_pytest_with_coverage(sandbox: Sandbox) -> None:
    done = sandbox.make("test")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = sandbox.calls()
    pytest_calls = [c for c in calls if c.startswith("venv-python -m pytest")]
    assert len(pytest_calls) == 1
    assert calls.index("system-deps") < calls.index(pytest_calls[0])
    words = pytest_calls[0].split()
    assert "--cov=generator" in words
    assert "--cov-fail-under=92" in words
    assert pytest_calls[0].endswith("MK2=1/true")  # the MkDocs 2 banner switches are exported


@pytest.mark.parametrize(("pytest_rc", "fails"), [(0, False), (1, True), (2, True), (5, True)])
def test_test_passes_exactly_when_pytest_passes(
    sandbox: Sandbox, pytest_rc: int, fails: bool
) -> None:
    done = sandbox.make("test", FAKE_PYTEST_RC=str(pytest_rc))
    assert (done.returncode != 0) is fails
    assert ("collected no tests" in done.stderr) is (pytest_rc == 5)


def test_pytest_args_pass_through(sandbox: Sandbox) -> None:
    assert sandbox.make("test", "PYTEST_ARGS=tests/infra -q").returncode == 0
    assert any(c.split(" MK2=")[0].endswith("tests/infra -q") for c in sandbox.calls())


# --------------------------------------------------------------------------- lint, bench, clean


def test_lint_runs_ruff_and_strict_mypy_on_generator(sandbox: Sandbox) -> None:
    done = sandbox.make("lint")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ruff check ." in sandbox.calls()
    assert "mypy generator" in sandbox.calls()


@pytest.mark.parametrize("failing", ["RUFF", "MYPY"])
def test_lint_reports_both_linters_and_fails_if_either_fails(
    sandbox: Sandbox, failing: str
) -> None:
    done = sandbox.make("lint", **{f"FAKE_{failing}_RC": "1"})
    assert done.returncode != 0
    assert {"ruff check .", "mypy generator"} <= set(sandbox.calls())


def test_lint_checks_the_import_contract_and_fails_when_it_fails(sandbox: Sandbox) -> None:
    assert sandbox.make("lint").returncode == 0
    assert any("-m pytest" in c and "tests/architecture" in c for c in sandbox.calls())
    assert sandbox.make("lint", FAKE_PYTEST_RC="1").returncode != 0


def test_bench_runs_the_benchmark_at_three_sizes(sandbox: Sandbox) -> None:
    done = sandbox.make("-n", "bench")
    assert done.returncode == 0
    assert "-m bench.run --sizes 100,1000,10000" in done.stdout
    smaller = sandbox.make("-n", "bench", "BENCH_SIZES=100")
    assert "-m bench.run --sizes 100" in smaller.stdout and "10000" not in smaller.stdout


def test_clean_removes_outputs_but_keeps_the_venv(sandbox: Sandbox) -> None:
    assert sandbox.make("venv").returncode == 0
    root = sandbox.root
    made = [
        root / "site" / "index.html",
        root / ".coverage",
        root / ".coverage.host.1",
        root / "tests" / "artifacts" / "shot.png",
        root / "generator" / "__pycache__" / "a.pyc",
        root / "x.egg-info" / "PKG-INFO",
        root / ".mypy_cache" / "x",
    ]
    kept = [root / ".venv" / "lib" / "__pycache__" / "b.pyc", root / "generator" / "cli.py"]
    for path in made + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")
    assert sandbox.make("clean").returncode == 0
    assert [p for p in made if p.exists()] == []
    assert all(p.exists() for p in kept)


def test_declared_targets_exist() -> None:
    database = make(REPO, "-pnq", "help").stdout
    targets = {
        line.split(":", 1)[0]
        for line in database.splitlines()
        if line and not line.startswith(("#", "\t", " ")) and ":" in line
    }
    assert {"venv", "site", "demo", "test", "lint", "bench", "clean"} <= targets


def test_site_installs_only_what_a_build_needs(sandbox: Sandbox) -> None:
    done = sandbox.make("site")
    assert done.returncode == 0, done.stdout + done.stderr
    (install,) = _pip_installs(sandbox.calls())
    words = shlex.split(install.split(" MK2=")[0])
    assert words[words.index("-e") + 1] == "."  # no [test,lint,authority]
    assert words[words.index("-c") + 1] == "constraints.txt"
    assert sandbox.calls()[-1] == SITE_COMMAND.replace(".venv/bin/", "")


def test_mutation_ci_is_stopped_at_its_deadline(sandbox: Sandbox) -> None:
    """CI's mutation step has a wall-clock bound (MUTATION_CI_SECONDS): a runner that would go
    on is stopped, and the step fails (report-only in .ci/run), instead of CI running over."""
    done = sandbox.make("mutation-ci", "MUTATION_CI_SECONDS=1", FAKE_MUTATE_SLEEP="100")
    assert done.returncode != 0, done.stdout + done.stderr
    assert any("-m tests.mutation.mutate --changed" in c for c in sandbox.calls())
    quick = sandbox.make("mutation-ci", "MUTATION_CI_SECONDS=60")
    assert quick.returncode == 0, quick.stdout + quick.stderr
