"""One CLI contract, checked on every command of the group (click's `main.commands`):
`--format text|json` where a command has a result, `exit` in every JSON document (results and
errors), exit codes at the end of `--help`, options from `EVIDENCE_DASHBOARD_<OPTION>`, only the
options a command uses, shell completion and `python -m generator`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from generator.cli import main

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "recipes"
NO_RESULT = {"completion", "serve"}  # a shell script; a server until stopped: no result
COMMANDS = sorted(main.commands)


def _invoke(args: list[str], env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args, env=dict(env or {}), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _options(name: str) -> list[click.Option]:
    return [
        p for p in main.commands[name].params if isinstance(p, click.Option) and p.name != "help"
    ]


def test_the_group_has_the_documented_commands() -> None:
    assert set(COMMANDS) >= {
        "build",
        "check-tree",
        "index",
        "verify",
        "recipe-digest",
        "report",
        "render-report",
        "completion",
    }


@pytest.mark.parametrize("name", [c for c in COMMANDS if c not in NO_RESULT])
def test_every_command_with_a_result_takes_format_text_or_json(name: str) -> None:
    fmt = next((o for o in _options(name) if "--format" in o.opts), None)
    assert fmt is not None, f"{name} has no --format"
    assert isinstance(fmt.type, click.Choice)
    assert {"text", "json"} <= set(fmt.type.choices) and fmt.default == "text"


@pytest.mark.parametrize("name", COMMANDS)
def test_help_ends_with_the_exit_codes(name: str) -> None:
    code, out, _ = _invoke([name, "--help"])
    assert code == 0
    last = out.strip().splitlines()[-1].strip()
    assert last.startswith("Exit codes: 0 "), f"{name} --help ends with {last!r}"


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_can_come_from_the_environment_and_help_says_so(name: str) -> None:
    _, out, _ = _invoke([name, "--help"])
    flat = " ".join(out.split())
    for option in _options(name):
        long_name = next(o for o in option.opts if o.startswith("--"))
        expected = "EVIDENCE_DASHBOARD_" + long_name[2:].replace("-", "_").upper()
        assert option.envvar == expected, (name, long_name, option.envvar)
        assert option.show_envvar, (name, long_name)
        assert f"env var: {expected}" in flat, (name, long_name)


def test_an_option_from_the_environment_is_used(tmp_path: Path) -> None:
    doc = tmp_path / "r.yaml"
    doc.write_text("zoo: 1\napple: 2\n")
    code, out, _ = _invoke(["recipe-digest", str(doc)], env={"EVIDENCE_DASHBOARD_FORMAT": "json"})
    assert code == 0 and json.loads(out)["exit"] == 0
    code, out, _ = _invoke(
        ["check-tree", "--format", "json"],
        env={"EVIDENCE_DASHBOARD_RECIPES": str(tmp_path / "missing")},
    )
    assert code == 2 and json.loads(out)["exit"] == 2
    # A flag from the environment: --offline; with it and no layout nothing can be fetched.
    code, _, _ = _invoke(["verify", "--help"], env={"EVIDENCE_DASHBOARD_OFFLINE": "1"})
    assert code == 0


# Options a command offered without using them: verify checks one pointer (no tree, no jobs, no
# extra bundle list, no freshness), and build/report always list pending pointers as pending.
NOT_OFFERED = {
    "verify": {
        "--recipes",
        "--jobs",
        "--bundle-refs",
        "--allow-pending",
        "--quiet",
        "--aicr",
        "--digests",
    },
    "build": {"--allow-pending"},
    "report": {"--allow-pending"},
}


@pytest.mark.parametrize("name", sorted(NOT_OFFERED))
def test_commands_offer_only_options_they_use(name: str) -> None:
    offered = {o for option in _options(name) for o in option.opts}
    assert not offered & NOT_OFFERED[name]
    _, out, _ = _invoke([name, "--help"])
    for opt in NOT_OFFERED[name]:
        assert f"{opt} " not in out and not out.rstrip().endswith(opt)


class _Recording(dict[str, Any]):
    """A mapping that remembers which keys were read."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)


def test_every_build_option_reaches_the_build_options() -> None:
    from generator.build import BuildOptions

    values = _Recording(
        {p.name: None for p in main.commands["build"].params if p.name not in {"help", "fmt"}}
    )
    values["recipes"] = Path("recipes")
    BuildOptions.from_cli(values)
    assert set(values) - values.read == set()


def _bad_pointer(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text("this: is not a pointer\n")
    return path


def _error_cases(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    missing = str(tmp_path / "missing")
    broken = tmp_path / "b.yaml"
    broken.write_text("a: [1, 2\n")
    bad_report = tmp_path / "report.json"
    bad_report.write_text('{"schemaVersion": "nonsense"}')
    yield "build", ["build", "--recipes", missing, "--out", str(tmp_path / "o"), "--offline"]
    yield "check-tree", ["check-tree", "--recipes", missing]
    yield "index", ["index", "--recipes", missing]
    yield "verify", ["verify", str(_bad_pointer(tmp_path)), "--offline"]
    yield "recipe-digest", ["recipe-digest", str(broken)]
    yield "report", ["report", "--base", "a", "--head", "b", "--recipes", missing, "--offline"]
    yield "render-report", ["render-report", str(bad_report)]
    yield (
        "verify-site",
        [
            "verify-site",
            "http://example.invalid/",  # plain http is refused before any request
            "--certificate-identity",
            "x",
            "--certificate-oidc-issuer",
            "y",
        ],
    )


def test_json_errors_carry_exit(tmp_path: Path) -> None:
    cases = dict(_error_cases(tmp_path))
    assert set(cases) == set(COMMANDS) - NO_RESULT
    for name, args in cases.items():
        code, out, err = _invoke([*args, "--format", "json"])
        assert code == 2, (name, out, err)
        doc = json.loads(out)
        assert doc["exit"] == code, (name, doc)
        assert doc["message"] and doc["hint"], (name, doc)


def test_json_results_carry_exit(tmp_path: Path) -> None:
    doc = tmp_path / "r.yaml"
    doc.write_text("zoo: 1\napple: 2\n")
    code, out, _ = _invoke(["recipe-digest", str(doc), "--format", "json"])
    result = json.loads(out)
    assert code == 0 and result["exit"] == 0
    assert result["digest"] == "8a7542418d447cec7effa1742625c3aab23b3b589a43554335f743f953ce405b"
    code, out, _ = _invoke(["index", "--recipes", str(DEMO), "--format", "json"])
    index = json.loads(out)  # JSON, not the YAML of the text format
    assert code == 0 and index["exit"] == 0 and isinstance(index["index"], dict)
    code, text, _ = _invoke(["index", "--recipes", str(DEMO)])
    import yaml

    assert yaml.safe_load(text) == index["index"]


def test_completion_prints_clicks_own_script() -> None:
    for shell in ("bash", "zsh", "fish"):
        code, script, _ = _invoke(["completion", shell])
        assert code == 0
        result = CliRunner().invoke(
            main,
            [],
            prog_name="evidence-dashboard",
            env={"_EVIDENCE_DASHBOARD_COMPLETE": f"{shell}_source"},
        )
        assert script.strip() == result.stdout.strip() and "evidence-dashboard" in script
    code, _, _ = _invoke(["completion", "tcsh"])
    assert code == 2


def test_completion_completes_command_names() -> None:
    result = CliRunner().invoke(
        main,
        [],
        prog_name="evidence-dashboard",
        env={
            "_EVIDENCE_DASHBOARD_COMPLETE": "bash_complete",
            "COMP_WORDS": "evidence-dashboard ver",
            "COMP_CWORD": "1",
        },
    )
    assert result.stdout.split() == ["plain,verify", "plain,verify-site"]


def test_python_dash_m_generator_runs_the_cli(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "generator", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("evidence-dashboard, version ")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "check-tree",
            "--recipes",
            str(tmp_path / "missing"),
            "--format",
            "json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and json.loads(done.stdout)["exit"] == 2


@pytest.mark.parametrize(
    "args",
    [
        ["build", "--no-such-option", "--format", "json"],
        ["report", "--format=json"],  # a required option missing
        ["verify-site", "--format", "json"],  # a required argument missing
    ],
    ids=["unknown-option", "missing-option", "missing-argument"],
)
def test_clicks_own_usage_errors_follow_the_json_contract(args: list[str]) -> None:
    """Errors click finds before a command runs are JSON with `exit` too, when JSON is asked."""
    code, out, _ = _invoke(args)
    assert code == 2
    doc = json.loads(out)
    assert doc["exit"] == 2 and doc["error"] == "UsageError" and doc["message"]


def test_clicks_own_usage_errors_stay_text_without_json() -> None:
    code, out, err = _invoke(["build", "--no-such-option"])
    assert code == 2 and "No such option" in out + err
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)
