"""The thin click shell: parse options, wire the seams together, map errors to exit codes.

The contract every command keeps (tests/cli/test_contract.py): `--format text|json` where there
is a result, `exit` in every JSON document, exit codes at the end of `--help`, only the options
the command uses, each also read from `EVIDENCE_DASHBOARD_<OPTION>`.

Exit codes (also in the README):

| command         | 0            | 1                        | 2                          | 3                   |
| --------------- | ------------ | ------------------------ | -------------------------- | ------------------- |
| `build`         | site built   | -                        | usage, tree or allowlist   | internal error      |
| `serve`         | stopped      | -                        | usage, first build, port   | internal error      |
| `check-tree`    | clean        | violations               | usage or operational error | -                   |
| `verify`        | valid        | valid, phase failures    | invalid                    | no verdict          |
| `recipe-digest` | printed      | -                        | usage or unparseable YAML  | -                   |
| `report`        | printed      | `--fail-on` triggered    | usage or operational error | -                   |
| `render-report` | printed      | -                        | usage or invalid JSON      | -                   |
| `verify-site`   | verified     | mismatch (files named)   | usage                      | no verdict          |
| `index`         | printed      | -                        | usage or unreadable tree   | -                   |
| `completion`    | printed      | -                        | unknown shell              | -                   |
"""

from __future__ import annotations

from generator.cli import build_cmds, report_cmds, tree_cmds, verify_cmds
from generator.cli.build_cmds import build, serve_cmd
from generator.cli.shell import ENV_PREFIX, EXIT_CODES, fail, main
from generator.errors import UsageError

__all__ = ["ENV_PREFIX", "EXIT_CODES", "build", "main", "run", "serve_cmd"]

_COMMANDS = (build_cmds, report_cmds, tree_cmds, verify_cmds)
"""The command modules: importing them adds their commands to `main`."""


def run() -> None:  # pragma: no cover - console entry alias
    """Entry point used by `python -m generator`."""
    try:
        main(prog_name="evidence-dashboard")
    except UsageError as error:
        fail(error, "text")
