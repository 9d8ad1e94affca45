"""Where the JSON Schemas are published: `$id` is `<site>/data/schema/<file>`.

The packaged schemas carry the default site's URL (`DEFAULT_SITE_URL`, mkdocs.yml's default
`site_url`); a build for another site (`SITE_URL`) writes its copies under `<out>/data/schema/`
with that site's `$id`, so a published schema names the address it is served from.
"""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

DEFAULT_SITE_URL = "https://nvidia.github.io/aicr-evidence/"
"""The site a build without `SITE_URL` describes (also mkdocs.yml's default `site_url`)."""

__all__ = [
    "DEFAULT_SITE_URL",
    "SCHEMA_FILES",
    "schema_id",
    "schema_text",
    "stamp_schema_ids",
    "with_schema_id",
]


def schema_id(name: str, site_url: str | None = None) -> str:
    """The `$id` of schema file `name` published on `site_url` (default: `DEFAULT_SITE_URL`)."""
    base = (site_url or DEFAULT_SITE_URL).rstrip("/")
    return f"{base}/data/schema/{name}"


SCHEMA_FILES: tuple[str, ...] = (
    "index.schema.json",
    "series.schema.json",
    "pointers.schema.json",
    "build-info.schema.json",
    "manifest.schema.json",
    "badge-endpoint.schema.json",
    "changes.schema.json",
)
"""The JSON Schemas shipped with the data files (`generator/data/schema/`)."""


def schema_text(name: str) -> str:
    """One shipped JSON Schema, read from the package."""
    if name not in SCHEMA_FILES:
        raise KeyError(name)
    return importlib.resources.files("generator.data").joinpath("schema", name).read_text("utf-8")


def with_schema_id(text: str, name: str, site_url: str | None) -> str:
    """The packaged schema `text` with its `$id` moved to `site_url` (JSON-escaped)."""
    if not site_url:
        return text
    packaged = f'"$id": {json.dumps(schema_id(name))}'
    if packaged not in text:  # the packaged file and DEFAULT_SITE_URL disagree: a bug
        raise ValueError(f"{name}: packaged $id is not {schema_id(name)}")
    return text.replace(packaged, f'"$id": {json.dumps(schema_id(name, site_url))}', 1)


def stamp_schema_ids(data_dir: Path, names: tuple[str, ...], site_url: str | None) -> None:
    """Rewrite the schemas under `<data_dir>/schema/` with `site_url`'s `$id`: a memo's copy
    may come from a build for another site."""
    for name in names:
        path = data_dir / "schema" / name
        path.write_text(
            with_schema_id(schema_text(name), name, site_url), encoding="utf-8", newline="\n"
        )
