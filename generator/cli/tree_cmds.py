"""`check-tree`, `index` and `recipe-digest`: the evidence tree's own checks and tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from generator.cli.shell import (
    epilog,
    fail,
    format_option,
    main,
    opt,
    recipes_option,
)
from generator.errors import EvidenceDashError


@main.command("check-tree", epilog=epilog("check-tree"))
@recipes_option("The recipes folder that holds evidence/.")
@opt(
    "--allowlist",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Allowlist (default: <recipes>/evidence/allowlist.yaml).",
)
@opt("--allow-pending", is_flag=True, help="Accept valid unsigned flat pending pointers.")
@opt(
    "--index",
    "index_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Pointer index to check for drift (default: pkg/evidence/index/pointers.yaml if present).",
)
@format_option
def check_tree_cmd(
    recipes: Path, allowlist: Path | None, allow_pending: bool, index_path: Path | None, fmt: str
) -> None:
    """aicr's pointer contract gate, plus file-name and duplicate-digest checks."""
    # imported when the command runs: --help and completion stay fast
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
        fail(error, fmt)
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


@main.command("index", epilog=epilog("index"))
@recipes_option("The recipes folder that holds evidence/.")
@opt(
    "--index",
    "index_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where the index lives (default: pkg/evidence/index/pointers.yaml).",
)
@opt("--write", is_flag=True, help="Regenerate the index file.")
@format_option
def index_cmd(recipes: Path, index_path: Path | None, write: bool, fmt: str) -> None:
    """Print (or --write) the pointer index of the tree.

    With --format json the index is printed as JSON ({"index": ..., "exit": 0}).
    """
    # imported when the command runs: --help and completion stay fast
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
        fail(error, fmt)
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


@main.command("recipe-digest", epilog=epilog("recipe-digest"))
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@opt(
    "--predicate-type",
    default="https://aicr.run/recipe-evidence/v3",
    show_default=True,
    help="Chooses the canonicalizer: v3 strips metadata.version, others keep it.",
)
@format_option
def recipe_digest_cmd(file: Path, predicate_type: str, fmt: str) -> None:
    """Print the bare hex canonical digest of a YAML document (no hydration)."""
    # imported when the command runs: --help and completion stay fast
    from generator.recipefile import recipe_digest_for_file

    try:
        digest, warning = recipe_digest_for_file(file, predicate_type)
    except EvidenceDashError as error:
        fail(error, fmt)
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
