"""`build` and `serve`: the site from the evidence tree (serve: with live reload)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from generator.cli.shell import (
    engine_options,
    epilog,
    fail,
    format_option,
    main,
    opt,
    site_fetch_options,
)
from generator.errors import EvidenceDashError, InternalError

if TYPE_CHECKING:
    from generator.evaluate.summary import BuildSummary


@main.command(epilog=epilog("build"))
@engine_options
@opt(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("site"),
    show_default=True,
    help="The site root; the data lands in <out>/data/. Must be "
    "absent, empty or a folder this tool built (it holds .evidence-dashboard-site).",
)
@opt(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Site configuration (default: the packaged one; ./mkdocs.yml is never read "
    "implicitly). No hooks, no plugins beyond search and tags, no !!python tags.",
)
@opt(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="Wait at most this long for another build into the same --out (then exit 2).",
)
@opt("--preview", is_flag=True, help="Mark every page as a preview and noindex.")
@opt(
    "--source-url",
    metavar="TEMPLATE",
    help="Link template for pointer files, e.g. https://github.com/o/r/blob/{commit}/{path}.",
)
@opt("--commit", metavar="SHA", help="The evidence tree's commit (footer, links).")
@opt(
    "--log-search-url",
    metavar="TEMPLATE",
    help="A transparency-log search page for each entry, with {logIndex} where the index "
    "goes (default: the public-good log's search, under the production trust root).",
)
@opt(
    "--max-unverified",
    type=click.FloatRange(0, 100),
    default=None,
    metavar="PCT",
    help="Fail (keeping the last good site) when more pointers end without a verdict.",
)
@opt("--data-only", is_flag=True, help="Write only <out>/data/ (no MkDocs site).")
@opt(
    "--reevaluate",
    is_flag=True,
    help="Evaluate the tree even when the cache holds an identical earlier evaluation.",
)
@opt(
    "--publisher-identity",
    metavar="IDENTITY",
    help="The identity that signs data/manifest.json when the site is published "
    '(the "Verify this site" commands), e.g. https://github.com/OWNER/REPO/'
    ".github/workflows/pages.yml@refs/heads/main.",
)
@opt(
    "--publisher-issuer",
    metavar="URL",
    default="https://token.actions.githubusercontent.com",
    show_default=True,
    help="The OIDC issuer of --publisher-identity.",
)
@opt(
    "--previous",
    metavar="SITE",
    help="The previously published site (a folder or its https:// address, fetched even "
    "with --offline, which concerns bundles): write data/changes.json, feed.xml and the "
    "Changes page from the differences. Unreadable: a warning, and the history starts "
    "from this build.",
)
@site_fetch_options
@opt(
    "--sign-with-test-authority",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    metavar="SCENARIO",
    help="Sign data/manifest.json with this demo scenario's test authority (local, "
    "offline checks of verify-site; never for a published site).",
)
@format_option
def build(fmt: str, **kwargs: Any) -> None:
    """Verify every pointer and build the site into --out.

    Flat unsigned pending pointers are always listed as pending, never counted.
    """
    # the tree's digest is worked out on the other core while the build's code is imported
    from generator.treeprefetch import prefetched_tree

    with prefetched_tree(Path(kwargs["recipes"])):
        summary = _run_build(kwargs, fmt)
    if fmt == "json":
        click.echo(json.dumps(summary.as_dict(), indent=2, sort_keys=True))
    elif not kwargs.get("quiet"):
        click.echo(summary.describe(), err=True)
    else:
        for warning in summary.warnings:  # size warnings are never quiet
            click.echo(f"warning: {warning}", err=True)


def _run_build(kwargs: dict[str, Any], fmt: str) -> BuildSummary:
    """`run_build` of the command line's options; its errors end the command (`fail`)."""
    # imported when the command runs: --help and completion stay fast
    from generator.build import BuildOptions, run_build

    try:
        return run_build(BuildOptions.from_cli(kwargs))
    except EvidenceDashError as error:
        fail(error, fmt)
    except Exception as error:  # pragma: no cover - last-resort mapping to exit 3
        wrapped = InternalError(
            f"internal error: {type(error).__name__}: {error}",
            hint="this is a bug; the previous output was left in place",
        )
        fail(wrapped, fmt)


@main.command("serve", epilog=epilog("serve"))
@engine_options
@opt(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Build into this folder (the rules of `build --out`) and keep it; default: "
    "a fresh temporary folder, removed on exit.",
)
@opt(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. The preview has no access control: keep it local.",
)
@opt(
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
    # imported when the command runs: --help and completion stay fast
    from generator.serve import serve_from_cli

    try:
        serve_from_cli(kwargs, host=host, port=port)
    except EvidenceDashError as error:
        fail(error, "text")
    except Exception as error:  # pragma: no cover - last-resort mapping to exit 3
        fail(
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
