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
    site_fetch_options,
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
@click.argument("site")
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
@site_fetch_options
@engine_options
@format_option
def verify_site_cmd(
    site: str,
    certificate_identity: str,
    certificate_oidc_issuer: str,
    rebuild: bool,
    fmt: str,
    site_ca_bundle: Path | None,
    allow_private_sites: tuple[str, ...],
    **kwargs: Any,
) -> None:
    """Check a built site against its signed manifest (exit 0 verified, 1 mismatch, 2 usage,
    3 no verdict). SITE is a folder or the https:// address the site is served at."""
    # imported when the command runs: --help and completion stay fast
    from generator.siteurl import is_site_url
    from generator.verifysite import run_verify_site

    try:
        if is_site_url(site):
            from generator.remotesite import run_verify_site_url

            if rebuild:
                raise UsageError(
                    "--rebuild reads a folder",
                    expected="a local copy of the site with --rebuild",
                    found=site,
                    hint="check the URL without --rebuild, or download the site first",
                )
            verdict = run_verify_site_url(
                site,
                identity=certificate_identity,
                issuer=certificate_oidc_issuer,
                engine=kwargs,
                ca_bundle=site_ca_bundle,
                allow_private=allow_private_sites,
            )
        else:
            verdict = run_verify_site(
                Path(site),
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
