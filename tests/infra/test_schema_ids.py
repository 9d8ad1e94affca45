"""The JSON Schemas' `$id` is where they are published: `<site>/data/schema/<file>`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.data import SCHEMA_FILES, schema_text
from generator.data.schemaid import DEFAULT_SITE_URL, schema_id, with_schema_id

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "recipes"
SCHEMA_DIR = REPO / "generator" / "data" / "schema"


@pytest.mark.parametrize("path", sorted(SCHEMA_DIR.glob("*.json")), ids=lambda p: p.name)
def test_packaged_ids_are_urls_on_the_default_site(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["$id"] == f"{DEFAULT_SITE_URL}data/schema/{path.name}"


def test_the_default_site_is_mkdocs_default_site_url() -> None:
    config = REPO / "generator" / "resources" / "mkdocs.yml"  # the packaged site configuration
    assert f'site_url: !ENV [SITE_URL, "{DEFAULT_SITE_URL}"]' in config.read_text()


def test_a_site_url_moves_the_id_and_is_json_escaped() -> None:
    name = "index.schema.json"
    moved = json.loads(with_schema_id(schema_text(name), name, 'https://x.example/a"b/'))
    assert moved["$id"] == 'https://x.example/a"b/data/schema/index.schema.json'
    assert schema_id(name, "https://x.example") == "https://x.example/data/schema/" + name
    assert with_schema_id(schema_text(name), name, None) == schema_text(name)


def _build(out: Path, cache: Path, site_url: str | None) -> dict[str, str]:
    env = {"SOURCE_DATE_EPOCH": "1767225600", "SITE_URL": site_url or ""}
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--recipes",
            str(DEMO),
            "--out",
            str(out),
            "--offline",
            "--oci-layout",
            str(DEMO / "bundles"),
            "--trust-root",
            str(DEMO / "trust" / "trusted_root.json"),
            "--cache",
            str(cache),
            "--data-only",
            "--quiet",
        ],
        env=env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    return {
        name: json.loads((out / "data" / "schema" / name).read_text())["$id"]
        for name in SCHEMA_FILES
    }


def test_a_build_publishes_the_schemas_under_its_site_url(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _build(tmp_path / "a", cache, "https://evidence.example.org/")
    assert first == {n: f"https://evidence.example.org/data/schema/{n}" for n in SCHEMA_FILES}
    # The second build reuses the first one's evaluation memo (data/ included): the $id must
    # still follow this build's site, and the default site's without SITE_URL.
    second = _build(tmp_path / "b", cache, "https://other.example/dash")
    assert second == {n: f"https://other.example/dash/data/schema/{n}" for n in SCHEMA_FILES}
    third = _build(tmp_path / "c", cache, None)
    assert third == {n: schema_id(n) for n in SCHEMA_FILES}
