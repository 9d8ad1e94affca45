"""The shell every command shares: the group, option helpers, errors to exit codes.

Every option can also come from `EVIDENCE_DASHBOARD_<OPTION>`; `--format json` turns every
error, click's own usage errors included, into a JSON document with `exit`.
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

__all__ = [
    "ENV_PREFIX",
    "EXIT_CODES",
    "engine_options",
    "epilog",
    "fail",
    "format_option",
    "main",
    "opt",
    "recipes_option",
    "site_fetch_options",
    "transport_options",
]

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


def epilog(name: str) -> str:
    return "\b\nExit codes: " + EXIT_CODES[name]


def fail(error: EvidenceDashError, fmt: str, exit_code: int | None = None) -> NoReturn:
    """End a command with `error`: diagnostics on stderr, or JSON (with `exit`) on stdout."""
    code = error.exit_code if exit_code is None else exit_code
    if fmt == "json":
        click.echo(json.dumps({**error.as_dict(), "exit": code}, indent=2, sort_keys=True))
    else:
        click.echo(error.diagnostics(), err=True)
    sys.exit(code)


def opt(*decls: str, **kwargs: Any) -> Callable[[F], F]:
    """A click option that can also come from `EVIDENCE_DASHBOARD_<OPTION>` (shown in --help)."""
    long_name = next(d for d in decls if d.startswith("--"))
    envvar = f"{ENV_PREFIX}_{long_name[2:].replace('-', '_').upper()}"
    return click.option(*decls, envvar=envvar, show_envvar=True, **kwargs)


def format_option(func: F) -> F:
    return opt(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="Output format; with json the `exit` field is the machine signal.",
    )(func)


def apply_options(func: F, options: list[Callable[[F], F]]) -> F:
    for option in reversed(options):
        func = option(func)
    return func


def recipes_option(help_text: str) -> Callable[[F], F]:
    return opt(
        "--recipes",
        type=click.Path(path_type=Path, file_okay=False),
        default=Path("recipes"),
        show_default=True,
        help=help_text,
    )


def transport_options(func: F) -> F:
    """Trust, transport and cache: what fetching and verifying one bundle needs."""
    return apply_options(func, [*_trust_options(), *_source_options(), *_fetch_options()])


def _trust_options() -> list[Callable[[F], F]]:
    """Which Sigstore trust root verifies bundles."""
    return [
        opt(
            "--trust",
            "trust_mode",
            type=click.Choice(["production", "staging"]),
            default="production",
            show_default=True,
            help="Sigstore trust root.",
        ),
        opt(
            "--trust-root",
            type=click.Path(path_type=Path, dir_okay=False, exists=True),
            help="A trusted_root.json or ClientTrustConfig JSON (overrides --trust).",
        ),
    ]


def _source_options() -> list[Callable[[F], F]]:
    """Where bundles come from: local layouts, mirrors, the registries allowed and their auth."""
    return [
        opt(
            "--oci-layout",
            "oci_layouts",
            multiple=True,
            type=click.Path(path_type=Path, file_okay=False, exists=True),
            help="Read bundles from this local OCI image layout (repeatable).",
        ),
        opt(
            "--registry-mirror",
            "registry_mirrors",
            multiple=True,
            metavar="HOST=URL",
            help="Fetch what a pointer names on HOST from URL instead (repeatable).",
        ),
        opt(
            "--trusted-registry",
            "trusted_registries",
            multiple=True,
            metavar="PREFIX",
            help="Only fetch bundles under this registry/repo prefix (repeatable).",
        ),
        opt(
            "--registry-auth",
            type=click.Path(path_type=Path, dir_okay=False, exists=True),
            help="Read-only registry credentials (container auth file); without it "
            "no credentials are read or sent.",
        ),
        opt(
            "--allow-private-registry",
            "allow_private_registries",
            multiple=True,
            metavar="HOST[:PORT]",
            help="Let pointers name this registry host although it resolves to a "
            "loopback, private or other non-public address (repeatable).",
        ),
    ]


def _fetch_options() -> list[Callable[[F], F]]:
    """How a fetch is bounded, whether the network is used, and where results are cached."""
    return [
        opt(
            "--fetch-timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=120.0,
            show_default=True,
            metavar="SECONDS",
            help="Total deadline of one bundle fetch from a registry (connect, headers "
            "and every body).",
        ),
        opt("--offline", is_flag=True, help="Never use the network (layouts and cache only)."),
        opt(
            "--cache",
            type=click.Path(path_type=Path, file_okay=False),
            help="Content-addressed bundle and verdict cache (default: user cache dir).",
        ),
    ]


def site_fetch_options(func: F) -> F:
    """How a site given as an https:// URL is fetched (verify-site SITE, build --previous)."""
    return apply_options(
        func,
        [
            opt(
                "--site-ca-bundle",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="PEM certificate authorities to trust for a site given as a URL "
                "(instead of the system's).",
            ),
            opt(
                "--allow-private-site",
                "allow_private_sites",
                multiple=True,
                metavar="HOST[:PORT]",
                help="Let a site given as a URL resolve to a loopback, private or other "
                "non-public address (repeatable).",
            ),
        ],
    )


def tree_options(func: F) -> F:
    """What evaluating a whole tree adds: parallelism, progress, freshness, extra bundles."""
    return apply_options(
        func,
        [
            opt(
                "--jobs",
                type=click.IntRange(min=1),
                default=None,
                help="Parallel verification jobs (default: CPU count).",
            ),
            opt("--quiet", is_flag=True, help="No progress bars."),
            opt(
                "--aicr",
                type=click.Path(path_type=Path, dir_okay=False),
                help="An aicr binary for `aicr evidence digest` (freshness).",
            ),
            opt(
                "--digests",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="Precomputed current recipe digests (YAML or JSON).",
            ),
            opt(
                "--bundle-refs",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="Also verify these digest-pinned bundles (YAML or JSON list of ref, "
                "issuer, identityPattern, optional recipe), e.g. aicr's own CI runs.",
            ),
        ],
    )


def engine_options(func: F) -> F:
    """Options shared by `build` and `report` (a whole tree through trust and transport)."""
    func = tree_options(func)
    func = transport_options(func)
    return recipes_option("The recipes folder that holds evidence/ (aicr layout).")(func)


def wants_json(args: Sequence[str]) -> bool:
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
        if not wants_json(argv):
            return super().main(args, *pos, **kwargs)
        try:
            return super().main(argv, *pos, **{**kwargs, "standalone_mode": False})
        except click.UsageError as error:
            fail(
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


@main.command("completion", epilog=epilog("completion"))
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the shell completion script for SHELL.

    Enable it with, for bash: eval "$(evidence-dashboard completion bash)". The script is the
    one `_EVIDENCE_DASHBOARD_COMPLETE=bash_source evidence-dashboard` prints.
    """
    # imported when the command runs: --help and completion stay fast
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click.Choice already limits SHELL
        raise click.BadParameter(f"unsupported shell {shell!r}")
    script = cls(main, {}, "evidence-dashboard", f"_{ENV_PREFIX}_COMPLETE").source()
    click.echo(script)
