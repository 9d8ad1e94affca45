"""`verify` and `verify-site`: one pointer file, or a published site against its manifest."""

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
    transport_options,
)
from generator.errors import EvidenceDashError, UsageError


@main.command(epilog=epilog("verify"))
@click.argument("pointer", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@transport_options
@format_option
def verify(pointer: Path, fmt: str, **kwargs: Any) -> None:
    """Verify one pointer file and print aicr's result."""
    # imported when the command runs: --help and completion stay fast
    from generator.build import verify_one
    from generator.options import ClockOptions, engine_from_cli, epoch_from_environment

    try:
        clock = ClockOptions(source_date_epoch=epoch_from_environment())
        result, text = verify_one(engine_from_cli(kwargs), clock, pointer)
    except EvidenceDashError as error:
        fail(error, fmt)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        click.echo(text)
    sys.exit(int(result["exit"]))


@main.command("verify-site", epilog=epilog("verify-site"))
@click.argument("site", type=click.Path(path_type=Path, file_okay=False))
@opt(
    "--certificate-identity",
    required=True,
    metavar="IDENTITY",
    help="The exact identity (SAN) that must have signed data/manifest.json.",
)
@opt(
    "--certificate-oidc-issuer",
    required=True,
    metavar="URL",
    help="The exact OIDC issuer of that identity.",
)
@opt(
    "--rebuild",
    is_flag=True,
    help="Also rebuild --recipes (the evidence tree at the manifest's commit) with the "
    "manifest's options and compare byte for byte.",
)
@engine_options
@format_option
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
    # imported when the command runs: --help and completion stay fast
    from generator.verifysite import run_verify_site

    if str(site).startswith(("http://", "https://")):
        fail(
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
        fail(error, fmt)
    if fmt == "json":
        click.echo(json.dumps(verdict.as_dict(), indent=2, sort_keys=True))
    else:
        click.echo(verdict.describe())
    sys.exit(verdict.exit)
