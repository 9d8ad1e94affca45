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

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from generator import __version__
from generator.errors import EvidenceDashError, UsageError

F = TypeVar("F", bound=Callable[..., Any])

ENV_PREFIX = "EVIDENCE_DASHBOARD"
"""Every option can also come from `EVIDENCE_DASHBOARD_<OPTION>` (dashes as underscores)."""

# Each command's exit codes: the last paragraph of its --help (`\b` keeps click from rewrapping).
EXIT_CODES: dict[str, str] = {
    "build": "0 site built; 2 usage, tree or allowlist error; 3 internal error",
    "serve": "0 stopped; 2 usage, first build or port error; 3 internal error",
    "check-tree": "0 clean; 1 violations; 2 usage or operational error",
    "index": "0 printed or written; 2 usage or unreadable tree",
    "verify": "0 valid; 1 valid, phase failures; 2 invalid; 3 no verdict",
    "recipe-digest": "0 printed; 2 usage or unparseable YAML",
    "report": "0 report printed; 1 --fail-on triggered; 2 usage or operational error",
    "render-report": "0 printed; 2 unreadable or invalid JSON report",
    "completion": "0 script printed; 2 usage (unknown shell)",
    "verify-site": "0 verified; 1 mismatch (files named); 2 usage; 3 no verdict",
}


def _epilog(name: str) -> str:
    return "\b\nExit codes: " + EXIT_CODES[name]


def _fail(error: EvidenceDashError, fmt: str, exit_code: int | None = None) -> NoReturn:
    """End a command with `error`: diagnostics on stderr, or JSON (with `exit`) on stdout."""
    code = error.exit_code if exit_code is None else exit_code
    if fmt == "json":
        click.echo(json.dumps({**error.as_dict(), "exit": code}, indent=2, sort_keys=True))
    else:
        click.echo(error.diagnostics(), err=True)
    sys.exit(code)


def _opt(*decls: str, **kwargs: Any) -> Callable[[F], F]:
    """A click option that can also come from `EVIDENCE_DASHBOARD_<OPTION>` (shown in --help)."""
    long_name = next(d for d in decls if d.startswith("--"))
    envvar = f"{ENV_PREFIX}_{long_name[2:].replace('-', '_').upper()}"
    return click.option(*decls, envvar=envvar, show_envvar=True, **kwargs)


def _format_option(func: F) -> F:
    return _opt(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="Output format; with json the `exit` field is the machine signal.",
    )(func)


def _apply(func: F, options: list[Callable[[F], F]]) -> F:
    for option in reversed(options):
        func = option(func)
    return func


def _recipes_option(help_text: str) -> Callable[[F], F]:
    return _opt(
        "--recipes",
        type=click.Path(path_type=Path, file_okay=False),
        default=Path("recipes"),
        show_default=True,
        help=help_text,
    )


def _transport_options(func: F) -> F:
    """Trust, transport and cache: what fetching and verifying one bundle needs."""
    return _apply(
        func,
        [
            _opt(
                "--trust",
                "trust_mode",
                type=click.Choice(["production", "staging"]),
                default="production",
                show_default=True,
                help="Sigstore trust root.",
            ),
            _opt(
                "--trust-root",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="A trusted_root.json or ClientTrustConfig JSON (overrides --trust).",
            ),
            _opt(
                "--oci-layout",
                "oci_layouts",
                multiple=True,
                type=click.Path(path_type=Path, file_okay=False, exists=True),
                help="Read bundles from this local OCI image layout (repeatable).",
            ),
            _opt(
                "--registry-mirror",
                "registry_mirrors",
                multiple=True,
                metavar="HOST=URL",
                help="Fetch what a pointer names on HOST from URL instead (repeatable).",
            ),
            _opt(
                "--trusted-registry",
                "trusted_registries",
                multiple=True,
                metavar="PREFIX",
                help="Only fetch bundles under this registry/repo prefix (repeatable).",
            ),
            _opt(
                "--registry-auth",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="Read-only registry credentials (container auth file); without it "
                "no credentials are read or sent.",
            ),
            _opt(
                "--allow-private-registry",
                "allow_private_registries",
                multiple=True,
                metavar="HOST[:PORT]",
                help="Let pointers name this registry host although it resolves to a "
                "loopback, private or other non-public address (repeatable).",
            ),
            _opt(
                "--fetch-timeout",
                type=click.FloatRange(min=0, min_open=True),
                default=120.0,
                show_default=True,
                metavar="SECONDS",
                help="Total deadline of one bundle fetch from a registry (connect, headers "
                "and every body).",
            ),
            _opt("--offline", is_flag=True, help="Never use the network (layouts and cache only)."),
            _opt(
                "--cache",
                type=click.Path(path_type=Path, file_okay=False),
                help="Content-addressed bundle and verdict cache (default: user cache dir).",
            ),
        ],
    )


def _tree_options(func: F) -> F:
    """What evaluating a whole tree adds: parallelism, progress, freshness, extra bundles."""
    return _apply(
        func,
        [
            _opt(
                "--jobs",
                type=click.IntRange(min=1),
                default=None,
                help="Parallel verification jobs (default: CPU count).",
            ),
            _opt("--quiet", is_flag=True, help="No progress bars."),
            _opt(
                "--aicr",
                type=click.Path(path_type=Path, dir_okay=False),
                help="An aicr binary for `aicr evidence digest` (freshness).",
            ),
            _opt(
                "--digests",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="Precomputed current recipe digests (YAML or JSON).",
            ),
            _opt(
                "--bundle-refs",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="Also verify these digest-pinned bundles (YAML or JSON list of ref, "
                "issuer, identityPattern, optional recipe), e.g. aicr's own CI runs.",
            ),
        ],
    )


def _engine_options(func: F) -> F:
    """Options shared by `build` and `report` (a whole tree through trust and transport)."""
    func = _tree_options(func)
    func = _transport_options(func)
    return _recipes_option("The recipes folder that holds evidence/ (aicr layout).")(func)


def _wants_json(args: Sequence[str]) -> bool:
    """Whether a command line asks for `--format json` (also `--format=json` or the variable)."""
    for n, arg in enumerate(args):
        if arg == "--format" and n + 1 < len(args):
            return args[n + 1] == "json"
        if arg.startswith("--format="):
            return arg.partition("=")[2] == "json"
    return os.environ.get(f"{ENV_PREFIX}_FORMAT") == "json"


class _Cli(click.Group):
    """The command group; click's own usage errors follow the JSON contract too."""

    def main(self, args: Sequence[str] | None = None, *pos: Any, **kwargs: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if not _wants_json(argv):
            return super().main(args, *pos, **kwargs)
        try:
            return super().main(argv, *pos, **{**kwargs, "standalone_mode": False})
        except click.UsageError as error:
            _fail(
                UsageError(
                    error.format_message(),
                    expected="a valid command line",
                    found=" ".join(argv),
                    hint="see --help",
                ),
                "json",
            )
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.Abort:
            sys.exit(1)


@click.group(
    cls=_Cli,
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": ENV_PREFIX},
)
@click.version_option(__version__, prog_name="evidence-dashboard")
def main() -> None:
    """Verify signed aicr recipe evidence and build a static corroboration dashboard.

    Every option can also be set as EVIDENCE_DASHBOARD_<OPTION> (for example
    EVIDENCE_DASHBOARD_CACHE); `evidence-dashboard completion bash` prints shell completion.
    """


@main.command(epilog=_epilog("build"))
@_engine_options
@_opt(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("site"),
    show_default=True,
    help="The site root; the data lands in <out>/data/. Must be "
    "absent, empty or a folder this tool built (it holds .evidence-dashboard-site).",
)
@_opt(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Site configuration (default: the packaged one; ./mkdocs.yml is never read "
    "implicitly). No hooks, no plugins beyond search and tags, no !!python tags.",
)
@_opt(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="Wait at most this long for another build into the same --out (then exit 2).",
)
@_opt("--preview", is_flag=True, help="Mark every page as a preview and noindex.")
@_opt(
    "--source-url",
    metavar="TEMPLATE",
    help="Link template for pointer files, e.g. https://github.com/o/r/blob/{commit}/{path}.",
)
@_opt("--commit", metavar="SHA", help="The evidence tree's commit (footer, links).")
@_opt(
    "--log-search-url",
    metavar="TEMPLATE",
    help="A transparency-log search page for each entry, with {logIndex} where the index "
    "goes (default: the public-good log's search, under the production trust root).",
)
@_opt(
    "--max-unverified",
    type=click.FloatRange(0, 100),
    default=None,
    metavar="PCT",
    help="Fail (keeping the last good site) when more pointers end without a verdict.",
)
@_opt("--data-only", is_flag=True, help="Write only <out>/data/ (no MkDocs site).")
@_opt(
    "--reevaluate",
    is_flag=True,
    help="Evaluate the tree even when the cache holds an identical earlier evaluation.",
)
@_opt(
    "--publisher-identity",
    metavar="IDENTITY",
    help="The identity that signs data/manifest.json when the site is published "
    '(the "Verify this site" commands), e.g. https://github.com/OWNER/REPO/'
    ".github/workflows/pages.yml@refs/heads/main.",
)
@_opt(
    "--publisher-issuer",
    metavar="URL",
    default="https://token.actions.githubusercontent.com",
    show_default=True,
    help="The OIDC issuer of --publisher-identity.",
)
@_opt(
    "--sign-with-test-authority",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    metavar="SCENARIO",
    help="Sign data/manifest.json with this demo scenario's test authority (local, "
    "offline checks of verify-site; never for a published site).",
)
@_format_option
def build(fmt: str, **kwargs: Any) -> None:
    """Verify every pointer and build the site into --out.

    Flat unsigned pending pointers are always listed as pending, never counted.
    """
    from generator.build import BuildOptions, run_build

    try:
        options = BuildOptions.from_cli(kwargs)
        summary = run_build(options)
    except EvidenceDashError as error:
        _fail(error, fmt)
    except Exception as error:  # pragma: no cover - last-resort mapping to exit 3
        from generator.errors import InternalError

        wrapped = InternalError(
            f"internal error: {type(error).__name__}: {error}",
            hint="this is a bug; the previous output was left in place",
        )
        _fail(wrapped, fmt)
    if fmt == "json":
        click.echo(json.dumps(summary.as_dict(), indent=2, sort_keys=True))
    elif not kwargs.get("quiet"):
        click.echo(summary.describe(), err=True)
    else:
        for warning in summary.warnings:  # size warnings are never quiet
            click.echo(f"warning: {warning}", err=True)


@main.command("serve", epilog=_epilog("serve"))
@_engine_options
@_opt(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Build into this folder (the rules of `build --out`) and keep it; default: "
    "a fresh temporary folder, removed on exit.",
)
@_opt(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. The preview has no access control: keep it local.",
)
@_opt(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
def serve_cmd(host: str, port: int, **kwargs: Any) -> None:
    """Build the site, serve it with live reload, and rebuild when the tree or templates change.

    Watches <recipes>/evidence (pointers, allowlist), <recipes>/overlays, the site templates and
    --config; a failed rebuild is reported and the last good site stays on display.
    """
    from generator.serve import serve_from_cli

    try:
        serve_from_cli(kwargs, host=host, port=port)
    except EvidenceDashError as error:
        _fail(error, "text")
    except Exception as error:  # pragma: no cover - last-resort mapping to exit 3
        from generator.errors import InternalError

        _fail(
            InternalError(f"internal error: {type(error).__name__}: {error}", hint="this is a bug"),
            "text",
        )


# `serve` takes the same site options as `build` (the very same click options).
serve_cmd.params.extend(
    p
    for p in build.params
    if p.name
    in {
        "config",
        "lock_timeout",
        "preview",
        "source_url",
        "commit",
        "log_search_url",
        "max_unverified",
        "reevaluate",
    }
)


@main.command("check-tree", epilog=_epilog("check-tree"))
@_recipes_option("The recipes folder that holds evidence/.")
@_opt(
    "--allowlist",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Allowlist (default: <recipes>/evidence/allowlist.yaml).",
)
@_opt("--allow-pending", is_flag=True, help="Accept valid unsigned flat pending pointers.")
@_opt(
    "--index",
    "index_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Pointer index to check for drift (default: pkg/evidence/index/pointers.yaml if present).",
)
@_format_option
def check_tree_cmd(
    recipes: Path, allowlist: Path | None, allow_pending: bool, index_path: Path | None, fmt: str
) -> None:
    """aicr's pointer contract gate, plus file-name and duplicate-digest checks."""
    from generator.tree import check_tree, index_drift, load_allowlist
    from generator.tree.index import default_index_path

    try:
        violations = list(
            check_tree(recipes, allow_pending=allow_pending, allowlist_path=allowlist)
        )
        idx = index_path or default_index_path(recipes)
        if idx.is_file():
            allow = load_allowlist(allowlist or recipes / "evidence" / "allowlist.yaml")
            violations.extend(index_drift(recipes, idx, allow))
    except EvidenceDashError as error:
        _fail(error, fmt)
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "violations": [{"path": v.path, "message": v.message} for v in violations],
                    "exit": 1 if violations else 0,
                },
                indent=2,
            )
        )
    else:
        for violation in violations:
            click.echo(f"{violation.path}: {violation.message}")
    sys.exit(1 if violations else 0)


@main.command("index", epilog=_epilog("index"))
@_recipes_option("The recipes folder that holds evidence/.")
@_opt(
    "--index",
    "index_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where the index lives (default: pkg/evidence/index/pointers.yaml).",
)
@_opt("--write", is_flag=True, help="Regenerate the index file.")
@_format_option
def index_cmd(recipes: Path, index_path: Path | None, write: bool, fmt: str) -> None:
    """Print (or --write) the pointer index of the tree.

    With --format json the index is printed as JSON ({"index": ..., "exit": 0}).
    """
    from generator.tree import load_allowlist
    from generator.tree.index import (
        INDEX_SCHEMA_VERSION,
        index_entries,
        render_entries,
        write_index,
    )

    try:
        allowlist = load_allowlist(recipes / "evidence" / "allowlist.yaml")
        if write:
            target = write_index(recipes, allowlist, index_path)
        else:
            entries = index_entries(recipes, allowlist)
    except EvidenceDashError as error:
        _fail(error, fmt)
    if fmt == "json":
        doc: dict[str, Any] = {"exit": 0}
        if write:
            doc["wrote"] = str(target)
        else:
            doc["index"] = {"schemaVersion": INDEX_SCHEMA_VERSION, "pointers": entries}
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
    elif write:
        click.echo(f"wrote {target}", err=True)
    else:
        click.echo(render_entries(entries), nl=False)


@main.command(epilog=_epilog("verify"))
@click.argument("pointer", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@_transport_options
@_format_option
def verify(pointer: Path, fmt: str, **kwargs: Any) -> None:
    """Verify one pointer file and print aicr's result."""
    from generator.build import BuildOptions, verify_one

    try:
        options = BuildOptions.from_cli({**kwargs, "recipes": Path("recipes"), "out": Path("site")})
        result, text = verify_one(options, pointer)
    except EvidenceDashError as error:
        _fail(error, fmt)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        click.echo(text)
    sys.exit(int(result["exit"]))


@main.command("recipe-digest", epilog=_epilog("recipe-digest"))
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@_opt(
    "--predicate-type",
    default="https://aicr.run/recipe-evidence/v3",
    show_default=True,
    help="Chooses the canonicalizer: v3 strips metadata.version, others keep it.",
)
@_format_option
def recipe_digest_cmd(file: Path, predicate_type: str, fmt: str) -> None:
    """Print the bare hex canonical digest of a YAML document (no hydration)."""
    from generator.recipe import recipe_digest_for_file

    try:
        digest, warning = recipe_digest_for_file(file, predicate_type)
    except EvidenceDashError as error:
        _fail(error, fmt)
    if warning:
        click.echo(f"warning: {warning}", err=True)
    if fmt == "json":
        click.echo(
            json.dumps(
                {"digest": digest, "file": str(file), "warning": warning or None, "exit": 0},
                indent=2,
                sort_keys=True,
            )
        )
    else:
        click.echo(digest)


@main.command("report", epilog=_epilog("report"))
@_opt("--base", "base_rev", required=True, metavar="REV", help="The PR's base revision.")
@_opt("--head", "head_rev", required=True, metavar="REV", help="The PR's head revision.")
@_engine_options
@_opt(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text (the sticky PR comment, Markdown; `markdown` is the same) or the report as "
    "JSON, whose `exit` field is the machine signal.",
)
@_opt(
    "--fail-on",
    type=click.Choice(["none", "invalid", "stale", "any"]),
    default="none",
    show_default=True,
    help="Exit 1 when such warnings exist (default: warning-only).",
)
def report_cmd(base_rev: str, head_rev: str, fmt: str, fail_on: str, **kwargs: Any) -> None:
    """Report what BASE...HEAD does to recipe evidence (run inside a git checkout)."""
    from generator.build import BuildOptions
    from generator.report import FailOn, render_json, render_markdown, run_report

    try:
        options = BuildOptions.from_cli({**kwargs, "out": Path("site")})
        result = run_report(options, base_rev, head_rev)
    except EvidenceDashError as error:
        _fail(error, fmt, exit_code=2)
    code = 1 if result.fails(FailOn(fail_on)) else 0
    if fmt == "json":
        click.echo(render_json(result, fail_on=fail_on, exit_code=code), nl=False)
    else:
        click.echo(render_markdown(result), nl=False)
    sys.exit(code)


@main.command("render-report", epilog=_epilog("render-report"))
@click.argument("json_file", metavar="REPORT.json", type=click.Path(dir_okay=False, path_type=Path))
@_format_option
def render_report_cmd(json_file: Path, fmt: str) -> None:
    """Render the PR comment (Markdown) from a JSON report of `report --format json`.

    The file is validated against the report schema first; this code, not the file, decides
    every word of the comment. With --format json: {"markdown": ..., "exit": 0}.
    """
    from generator.report import render_document
    from generator.report.schema import load_report

    try:
        doc = load_report(json_file)
    except EvidenceDashError as error:
        _fail(error, fmt)
    markdown = render_document(doc)
    if fmt == "json":
        click.echo(json.dumps({"markdown": markdown, "exit": 0}, indent=2, sort_keys=True))
    else:
        click.echo(markdown, nl=False)


@main.command("completion", epilog=_epilog("completion"))
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the shell completion script for SHELL.

    Enable it with, for bash: eval "$(evidence-dashboard completion bash)". The script is the
    one `_EVIDENCE_DASHBOARD_COMPLETE=bash_source evidence-dashboard` prints.
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click.Choice already limits SHELL
        raise click.BadParameter(f"unsupported shell {shell!r}")
    script = cls(main, {}, "evidence-dashboard", f"_{ENV_PREFIX}_COMPLETE").source()
    click.echo(script)


@main.command("verify-site", epilog=_epilog("verify-site"))
@click.argument("site", type=click.Path(path_type=Path, file_okay=False))
@_opt(
    "--certificate-identity",
    required=True,
    metavar="IDENTITY",
    help="The exact identity (SAN) that must have signed data/manifest.json.",
)
@_opt(
    "--certificate-oidc-issuer",
    required=True,
    metavar="URL",
    help="The exact OIDC issuer of that identity.",
)
@_opt(
    "--rebuild",
    is_flag=True,
    help="Also rebuild --recipes (the evidence tree at the manifest's commit) with the "
    "manifest's options and compare byte for byte.",
)
@_engine_options
@_format_option
def verify_site_cmd(
    site: Path,
    certificate_identity: str,
    certificate_oidc_issuer: str,
    rebuild: bool,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Check a built site against its signed manifest (exit 0 verified, 1 mismatch, 2 usage,
    3 no verdict). SITE is a folder; fetching an https:// URL is not supported yet."""
    from generator.verifysite import run_verify_site

    if str(site).startswith(("http://", "https://")):
        _fail(
            UsageError(
                "verify-site reads a folder",
                expected="a local copy of the site",
                found=str(site),
                hint="download the site first (e.g. wget --mirror), then pass its folder",
            ),
            fmt,
        )
    try:
        verdict = run_verify_site(
            site,
            identity=certificate_identity,
            issuer=certificate_oidc_issuer,
            engine=kwargs,
            rebuild=rebuild,
        )
    except EvidenceDashError as error:
        _fail(error, fmt)
    if fmt == "json":
        click.echo(json.dumps(verdict.as_dict(), indent=2, sort_keys=True))
    else:
        click.echo(verdict.describe())
    sys.exit(verdict.exit)


def run() -> None:  # pragma: no cover - console entry alias
    """Entry point used by `python -m generator`."""
    try:
        main(prog_name="evidence-dashboard")
    except UsageError as error:
        _fail(error, "text")
