"""Find the site's templates, overrides, assets and default config at run time.

An installed wheel carries them under `generator/resources/` (`site_templates/` is shipped
there as package data); a source checkout keeps `site_templates/` at the repository root.
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from pathlib import Path

from generator.errors import BuildError, Location


@dataclass(frozen=True)
class SiteResources:
    """Folders and files the site build reads (never writes)."""

    pages: Path
    overrides: Path
    assets: Path
    default_config: Path


def _package_resources() -> Path:
    return Path(str(importlib.resources.files("generator").joinpath("resources")))


def locate(checkout: Path | None = None) -> SiteResources:
    """The packaged resources, falling back to the repository checkout for the templates."""
    res = _package_resources()
    candidates = [res / "site_templates"]
    candidates.append((checkout or Path(__file__).resolve().parents[2]) / "site_templates")
    for root in candidates:
        if (root / "pages").is_dir() and (root / "overrides").is_dir():
            return SiteResources(
                pages=root / "pages",
                overrides=root / "overrides",
                assets=res / "assets",
                default_config=res / "mkdocs.yml",
            )
    raise BuildError(
        "the site templates were not found",
        location=Location(str(candidates[0])),
        expected="site_templates/pages and site_templates/overrides",
        found="neither in the installed package nor next to the source checkout",
        hint="reinstall evidence-dashboard (the wheel ships the templates)",
    )
