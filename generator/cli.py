"""The thin click shell: parse options, wire the seams together, map errors to exit codes.

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
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from generator import __version__
from generator.errors import EvidenceDashError, UsageError

F = TypeVar("F", bound=Callable[..., Any])


def _fail(error: EvidenceDashError, fmt: str) -> NoReturn:
    if fmt == "json":
        click.echo(json.dumps(error.as_dict(), indent=2, sort_keys=True))
    else:
        click.echo(error.diagnostics(), err=True)
    sys.exit(error.exit_code)


def _format_option(func: F) -> F:
    return click.option(
        "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
        show_default=True, help="Output format; with json the `exit` field is the machine signal.",
    )(func)


def _engine_options(func: F) -> F:
    """Options shared by `build`, `verify` and `report` (trust, transport, cache)."""
    options = [
        click.option("--recipes", type=click.Path(path_type=Path, file_okay=False), default=Path("recipes"),
                     show_default=True, help="The recipes folder that holds evidence/ (aicr layout)."),
        click.option("--trust", "trust_mode", type=click.Choice(["production", "staging"]),
                     default="production", show_default=True, help="Sigstore trust root."),
        click.option("--trust-root", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                     help="A trusted_root.json or ClientTrustConfig JSON (overrides --trust)."),
        click.option("--oci-layout", "oci_layouts", multiple=True,
                     type=click.Path(path_type=Path, file_okay=False, exists=True),
                     help="Read bundles from this local OCI image layout (repeatable)."),
        click.option("--registry-mirror", "registry_mirrors", multiple=True, metavar="HOST=URL",
                     help="Fetch what a pointer names on HOST from URL instead (repeatable)."),
        click.option("--trusted-registry", "trusted_registries", multiple=True, metavar="PREFIX",
                     help="Only fetch bundles under this registry/repo prefix (repeatable)."),
        click.option("--registry-auth", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                     help="Read-only registry credentials (container auth file); without it "
                          "no credentials are read or sent."),
        click.option("--allow-private-registry", "allow_private_registries", multiple=True,
                     metavar="HOST[:PORT]",
                     help="Let pointers name this registry host although it resolves to a "
                          "loopback, private or other non-public address (repeatable)."),
        click.option("--fetch-timeout", type=click.FloatRange(min=0, min_open=True),
                     default=120.0, show_default=True, metavar="SECONDS",
                     help="Total deadline of one bundle fetch from a registry (connect, headers "
                          "and every body)."),
        click.option("--offline", is_flag=True, help="Never use the network (layouts and cache only)."),
        click.option("--cache", type=click.Path(path_type=Path, file_okay=False),
                     help="Content-addressed bundle and verdict cache (default: user cache dir)."),
        click.option("--jobs", type=click.IntRange(min=1), default=None,
                     help="Parallel verification jobs (default: CPU count)."),
        click.option("--quiet", is_flag=True, help="No progress bars."),
        click.option("--allow-pending", is_flag=True,
                     help="Accept flat unsigned pending pointers as valid (check-tree, report); "
                          "a build always lists them as pending."),
        click.option("--aicr", type=click.Path(path_type=Path, dir_okay=False),
                     help="An aicr binary for `aicr evidence digest` (freshness)."),
        click.option("--digests", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                     help="Precomputed current recipe digests (YAML or JSON)."),
        click.option("--bundle-refs", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                     help="Also verify these digest-pinned bundles (YAML or JSON list of ref, "
                          "issuer, identityPattern, optional recipe), e.g. aicr's own CI runs."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evidence-dashboard")
def main() -> None:
    """Verify signed aicr recipe evidence and build a static corroboration dashboard."""


@main.command()
@_engine_options
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("site"),
              show_default=True, help="The site root; the data lands in <out>/data/. Must be "
              "absent, empty or a folder this tool built (it holds .evidence-dashboard-site).")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False),
              help="Site configuration (default: the packaged one; ./mkdocs.yml is never read "
                   "implicitly). No hooks, no plugins beyond search and tags, no !!python tags.")
@click.option("--lock-timeout", type=click.FloatRange(min=0), default=600.0, show_default=True,
              metavar="SECONDS",
              help="Wait at most this long for another build into the same --out (then exit 2).")
@click.option("--preview", is_flag=True, help="Mark every page as a preview and noindex.")
@click.option("--source-url", metavar="TEMPLATE",
              help="Link template for pointer files, e.g. https://github.com/o/r/blob/{commit}/{path}.")
@click.option("--commit", metavar="SHA", help="The evidence tree's commit (footer, links).")
@click.option("--max-unverified", type=click.FloatRange(0, 100), default=None, metavar="PCT",
              help="Fail (keeping the last good site) when more pointers end without a verdict.")
@click.option("--data-only", is_flag=True, help="Write only <out>/data/ (no MkDocs site).")
@click.option("--reevaluate", is_flag=True,
              help="Evaluate the tree even when the cache holds an identical earlier evaluation.")
@click.option("--publisher-identity", metavar="IDENTITY",
              help="The identity that signs data/manifest.json when the site is published "
                   "(the \"Verify this site\" commands), e.g. https://github.com/OWNER/REPO/"
                   ".github/workflows/pages.yml@refs/heads/main.")
@click.option("--publisher-issuer", metavar="URL",
              default="https://token.actions.githubusercontent.com", show_default=True,
              help="The OIDC issuer of --publisher-identity.")
@click.option("--sign-with-test-authority", type=click.Path(path_type=Path, dir_okay=False,
              exists=True), metavar="SCENARIO",
              help="Sign data/manifest.json with this demo scenario's test authority (local, "
                   "offline checks of verify-site; never for a published site).")
@_format_option
def build(fmt: str, **kwargs: Any) -> None:
    """Verify every pointer and build the site into --out."""
    from generator.build import BuildOptions, run_build

    try:
        options = BuildOptions.from_cli(kwargs)
        summary = run_build(options)
    except EvidenceDashError as error:
        _fail(error, fmt)
    except Exception as error:  # pragma: no cover - last-resort mapping to exit 3
        from generator.errors import InternalError

        wrapped = InternalError(f"internal error: {type(error).__name__}: {error}",
                                hint="this is a bug; the previous output was left in place")
        _fail(wrapped, fmt)
    if fmt == "json":
        click.echo(json.dumps(summary.as_dict(), indent=2, sort_keys=True))
    elif not kwargs.get("quiet"):
        click.echo(summary.describe(), err=True)
    else:
        for warning in summary.warnings:  # size warnings are never quiet
            click.echo(f"warning: {warning}", err=True)


@main.command("serve")
@_engine_options
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Build into this folder (the rules of `build --out`) and keep it; default: "
                   "a fresh temporary folder, removed on exit.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The preview has no access control: keep it local.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0 picks a free one).")
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

        _fail(InternalError(f"internal error: {type(error).__name__}: {error}",
                            hint="this is a bug"), "text")


# `serve` takes the same site options as `build` (the very same click options).
serve_cmd.params.extend(p for p in build.params if p.name in {
    "config", "lock_timeout", "preview", "source_url", "commit", "max_unverified", "reevaluate"})


@main.command("check-tree")
@click.option("--recipes", type=click.Path(path_type=Path, file_okay=False), default=Path("recipes"),
              show_default=True, help="The recipes folder that holds evidence/.")
@click.option("--allowlist", type=click.Path(path_type=Path, dir_okay=False),
              help="Allowlist (default: <recipes>/evidence/allowlist.yaml).")
@click.option("--allow-pending", is_flag=True, help="Accept valid unsigned flat pending pointers.")
@click.option("--index", "index_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Pointer index to check for drift (default: pkg/evidence/index/pointers.yaml if present).")
@_format_option
def check_tree_cmd(recipes: Path, allowlist: Path | None, allow_pending: bool,
                   index_path: Path | None, fmt: str) -> None:
    """aicr's pointer contract gate, plus file-name and duplicate-digest checks."""
    from generator.tree import check_tree, index_drift, load_allowlist
    from generator.tree.index import default_index_path

    try:
        violations = list(check_tree(recipes, allow_pending=allow_pending, allowlist_path=allowlist))
        idx = index_path or default_index_path(recipes)
        if idx.is_file():
            allow = load_allowlist(allowlist or recipes / "evidence" / "allowlist.yaml")
            violations.extend(index_drift(recipes, idx, allow))
    except EvidenceDashError as error:
        _fail(error, fmt)
    if fmt == "json":
        click.echo(json.dumps({"violations": [{"path": v.path, "message": v.message}
                                              for v in violations],
                               "exit": 1 if violations else 0}, indent=2))
    else:
        for violation in violations:
            click.echo(f"{violation.path}: {violation.message}")
    sys.exit(1 if violations else 0)


@main.command("index")
@click.option("--recipes", type=click.Path(path_type=Path, file_okay=False), default=Path("recipes"),
              show_default=True)
@click.option("--index", "index_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Where the index lives (default: pkg/evidence/index/pointers.yaml).")
@click.option("--write", is_flag=True, help="Regenerate the index file.")
@_format_option
def index_cmd(recipes: Path, index_path: Path | None, write: bool, fmt: str) -> None:
    """Print (or --write) the pointer index of the tree."""
    from generator.tree import load_allowlist, render_index
    from generator.tree.index import write_index

    try:
        allowlist = load_allowlist(recipes / "evidence" / "allowlist.yaml")
        if write:
            target = write_index(recipes, allowlist, index_path)
        else:
            text = render_index(recipes, allowlist)
    except EvidenceDashError as error:
        _fail(error, fmt)
    if write:
        click.echo(f"wrote {target}", err=True)
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("pointer", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@_engine_options
@_format_option
def verify(pointer: Path, fmt: str, **kwargs: Any) -> None:
    """Verify one pointer file and print aicr's result (exit 0/1/2/3)."""
    from generator.build import BuildOptions, verify_one

    try:
        options = BuildOptions.from_cli({**kwargs, "out": Path("site")})
        result, text = verify_one(options, pointer)
    except EvidenceDashError as error:
        _fail(error, fmt)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        click.echo(text)
    sys.exit(int(result["exit"]))


@main.command("recipe-digest")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--predicate-type", default="https://aicr.run/recipe-evidence/v3", show_default=True,
              help="Chooses the canonicalizer: v3 strips metadata.version, others keep it.")
def recipe_digest_cmd(file: Path, predicate_type: str) -> None:
    """Print the bare hex canonical digest of a YAML document (no hydration)."""
    from generator.recipe import recipe_digest_for_file

    try:
        digest, warning = recipe_digest_for_file(file, predicate_type)
    except EvidenceDashError as error:
        _fail(error, "text")
    if warning:
        click.echo(f"warning: {warning}", err=True)
    click.echo(digest)


@main.command("report")
@click.option("--base", "base_rev", required=True, metavar="REV", help="The PR's base revision.")
@click.option("--head", "head_rev", required=True, metavar="REV", help="The PR's head revision.")
@_engine_options
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True, help="The sticky PR comment, or the same report as JSON.")
@click.option("--fail-on", type=click.Choice(["none", "invalid", "stale", "any"]), default="none",
              show_default=True, help="Exit 1 when such warnings exist (default: warning-only).")
def report_cmd(base_rev: str, head_rev: str, fmt: str, fail_on: str, **kwargs: Any) -> None:
    """Report what BASE...HEAD does to recipe evidence (run inside a git checkout).

    Exit 0 (report printed), 1 (--fail-on triggered), 2 (usage or operational error).
    """
    from generator.build import BuildOptions
    from generator.report import FailOn, render_json, render_markdown, run_report

    try:
        options = BuildOptions.from_cli({**kwargs, "out": Path("site")})
        result = run_report(options, base_rev, head_rev)
    except EvidenceDashError as error:
        click.echo(json.dumps({**error.as_dict(), "exit": 2}, indent=2, sort_keys=True)
                   if fmt == "json" else error.diagnostics(), err=fmt != "json")
        sys.exit(2)
    code = 1 if result.fails(FailOn(fail_on)) else 0
    if fmt == "json":
        click.echo(render_json(result, fail_on=fail_on, exit_code=code), nl=False)
    else:
        click.echo(render_markdown(result), nl=False)
    sys.exit(code)


@main.command("render-report")
@click.argument("json_file", metavar="REPORT.json",
                type=click.Path(dir_okay=False, path_type=Path))
def render_report_cmd(json_file: Path) -> None:
    """Render the PR comment (Markdown) from a JSON report of `report --format json`.

    The file is validated against the report schema first; this code, not the file, decides
    every word of the comment. Exit 0 (printed) or 2 (unreadable or invalid JSON report).
    """
    from generator.report import render_document
    from generator.report.schema import load_report

    try:
        doc = load_report(json_file)
    except EvidenceDashError as error:
        _fail(error, "text")
    click.echo(render_document(doc), nl=False)


@main.command("verify-site")
@click.argument("site", type=click.Path(path_type=Path, file_okay=False))
@click.option("--certificate-identity", required=True, metavar="IDENTITY",
              help="The exact identity (SAN) that must have signed data/manifest.json.")
@click.option("--certificate-oidc-issuer", required=True, metavar="URL",
              help="The exact OIDC issuer of that identity.")
@click.option("--rebuild", is_flag=True,
              help="Also rebuild --recipes (the evidence tree at the manifest's commit) with the "
                   "manifest's options and compare byte for byte.")
@_engine_options
@_format_option
def verify_site_cmd(site: Path, certificate_identity: str, certificate_oidc_issuer: str,
                    rebuild: bool, fmt: str, **kwargs: Any) -> None:
    """Check a built site against its signed manifest (exit 0 verified, 1 mismatch, 2 usage,
    3 no verdict). SITE is a folder; fetching an https:// URL is not supported yet."""
    from generator.verifysite import run_verify_site

    if str(site).startswith(("http://", "https://")):
        _fail(UsageError("verify-site reads a folder", expected="a local copy of the site",
                         found=str(site), hint="download the site first (e.g. wget --mirror), "
                                               "then pass its folder"), fmt)
    try:
        verdict = run_verify_site(site, identity=certificate_identity,
                                  issuer=certificate_oidc_issuer, engine=kwargs, rebuild=rebuild)
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
        main()
    except UsageError as error:
        _fail(error, "text")
