"""Read a JSON report (`report --format json`) as data the comment may be rendered from.

The comment workflow runs the default branch's code on a JSON file a PR run produced, so the
file is untrusted: it is read with a size bound, parsed strictly (no duplicate keys, no
non-finite numbers) and validated against `generator/data/schema/pr-report.schema.json`, where
every object is closed. A field the schema does not know (a PR's injected Markdown, say) is a
clear error, never text in the comment.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from generator.errors import InputError, Location

__all__ = ["REPORT_LIMIT", "load_report", "report_schema", "validate_report"]

REPORT_LIMIT = 16 << 20
"""A JSON report larger than this is refused (the comment itself stops at 65,000 characters)."""


@functools.cache
def report_schema() -> Mapping[str, Any]:
    """The JSON schema of the report document."""
    text = (resources.files("generator.data") / "schema" / "pr-report.schema.json").read_text(
        encoding="utf-8"
    )
    schema: Mapping[str, Any] = json.loads(text)
    return schema


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def validate_report(doc: Any, *, display: str) -> Mapping[str, Any]:
    """`doc` when it is a valid report document, else an `InputError` naming the first
    problem (where in the document, what the schema expects, what was found)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(report_schema())
    errors = sorted(
        validator.iter_errors(doc),
        key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))),
    )
    if errors:
        first = _leaf(errors[0])
        where = "/".join(str(p) for p in first.absolute_path) or "(document)"
        raise InputError(
            "the JSON report does not match the report schema",
            location=Location(display, where),
            expected=f"a document of pr-report.schema.json ({first.validator}: "
            f"{_short(first.validator_value)})",
            found=_short(first.message),
            hint="produce the file with `evidence-dashboard report --format json` of the same "
            "version; a report with extra or changed fields is not rendered",
        )
    assert isinstance(doc, Mapping)
    return doc


def _leaf(error: Any) -> Any:
    """The error to show: inside a `oneOf` (a row's `kind`, a cell's `state`), the error of
    the one branch whose discriminator matched, not a complaint about the discriminator."""
    import jsonschema

    if not error.context:
        return error
    branches: dict[Any, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    matched = [
        subs
        for subs in branches.values()
        if not any(
            s.validator == "const" and list(s.relative_path)[-1:] in (["kind"], ["state"])
            for s in subs
        )
    ]
    if len(matched) != 1:
        return jsonschema.exceptions.best_match([error]) or error
    return _leaf(sorted(matched[0], key=lambda e: not e.context)[0])


def load_report(path: Path) -> Mapping[str, Any]:
    """Read, strictly parse and validate a JSON report file."""
    from generator.tree.safeio import read_bounded

    display = path.name
    data = read_bounded(path, REPORT_LIMIT, display=display)
    try:
        doc = json.loads(
            data.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_not_a_number
        )
    except (UnicodeDecodeError, ValueError) as error:
        raise InputError(
            "the JSON report cannot be read",
            location=Location(display),
            expected="one UTF-8 JSON object without duplicate keys",
            found=_short(str(error)),
            hint="produce the file with `evidence-dashboard report --format json`",
        ) from error
    return validate_report(doc, display=display)


def _short(value: object, limit: int = 200) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
