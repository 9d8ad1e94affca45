"""`report` and `render-report`: what a pull request does to recipe evidence."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from generator.cli.shell import (
    engine_options,
    epilog,
    fail,
    format_option,
    main,
    opt,
)
from generator.errors import EvidenceDashError


@main.command("report", epilog=epilog("report"))
@opt("--base", "base_rev", required=True, metavar="REV", help="The PR's base revision.")
@opt("--head", "head_rev", required=True, metavar="REV", help="The PR's head revision.")
@engine_options
@opt(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text (the sticky PR comment, Markdown; `markdown` is the same) or the report as "
    "JSON, whose `exit` field is the machine signal.",
)
@opt(
    "--fail-on",
    type=click.Choice(["none", "invalid", "stale", "any"]),
    default="none",
    show_default=True,
    help="Exit 1 when such warnings exist (default: warning-only).",
)
def report_cmd(base_rev: str, head_rev: str, fmt: str, fail_on: str, **kwargs: Any) -> None:
    """Report what BASE...HEAD does to recipe evidence (run inside a git checkout)."""
    # imported when the command runs: --help and completion stay fast
    from generator.options import evaluation_from_cli
    from generator.report import FailOn, render_json, render_markdown, run_report

    try:
        result = run_report(evaluation_from_cli(kwargs), base_rev, head_rev)
    except EvidenceDashError as error:
        fail(error, fmt, exit_code=2)
    code = 1 if result.fails(FailOn(fail_on)) else 0
    if fmt == "json":
        click.echo(render_json(result, fail_on=fail_on, exit_code=code), nl=False)
    else:
        click.echo(render_markdown(result), nl=False)
    sys.exit(code)


@main.command("render-report", epilog=epilog("render-report"))
@click.argument("json_file", metavar="REPORT.json", type=click.Path(dir_okay=False, path_type=Path))
@format_option
def render_report_cmd(json_file: Path, fmt: str) -> None:
    """Render the PR comment (Markdown) from a JSON report of `report --format json`.

    The file is validated against the report schema first; this code, not the file, decides
    every word of the comment. With --format json: {"markdown": ..., "exit": 0}.
    """
    # imported when the command runs: --help and completion stay fast
    from generator.report import render_document
    from generator.report.schema import load_report

    try:
        doc = load_report(json_file)
    except EvidenceDashError as error:
        fail(error, fmt)
    markdown = render_document(doc)
    if fmt == "json":
        click.echo(json.dumps({"markdown": markdown, "exit": 0}, indent=2, sort_keys=True))
    else:
        click.echo(markdown, nl=False)
