"""Whether a SITE argument (`verify-site`, `build --previous`) names a web address, fetched by
`generator.sitefetch`, or a folder: a check that needs none of the HTTP libraries the fetch
imports, so a build reading a previous site from a folder never loads them."""

from __future__ import annotations

__all__ = ["is_site_url"]


def is_site_url(value: object) -> bool:
    """Whether a SITE argument names a web address rather than a folder."""
    return str(value).startswith(("https://", "http://"))
