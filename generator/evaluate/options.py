"""Build options: everything a build depends on, parsed and checked (paths as given)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import UsageError

__all__ = ["BuildOptions"]


@dataclass(frozen=True)
class BuildOptions:
    """Everything a build depends on, parsed and checked. Paths are as given."""

    recipes: Path
    out: Path
    config: Path | None = None
    trust_mode: str = "production"
    trust_root: Path | None = None
    oci_layouts: tuple[Path, ...] = ()
    registry_mirrors: Mapping[str, str] = field(default_factory=dict)
    trusted_registries: tuple[str, ...] | None = None
    registry_auth: Path | None = None
    allow_private_registries: tuple[str, ...] = ()
    """`--allow-private-registry HOST`: registry hosts that may resolve to non-public addresses."""
    fetch_timeout: float = 120.0
    """`--fetch-timeout SECONDS`: the total deadline of one bundle fetch from a registry."""
    offline: bool = False
    cache: Path | None = None
    jobs: int = 1
    quiet: bool = False
    preview: bool = False
    source_url: str | None = None
    commit: str | None = None
    aicr: Path | None = None
    digests: Path | None = None
    allow_pending: bool = True
    max_unverified: float | None = None
    data_only: bool = False
    source_date_epoch: int | None = None
    site_url: str | None = None
    bundle_refs: Path | None = None
    """`--bundle-refs FILE`: digest-pinned bundles no pointer names (issue 3)."""
    reevaluate: bool = False
    """`--reevaluate`: do not answer from the evaluation memo (generator.buildmemo)."""
    lock_timeout: float = 600.0
    """`--lock-timeout`: seconds to wait for another build into the same --out (generator.outdir)."""
    sign_with_test_authority: Path | None = None
    publisher_identity: str | None = None
    """`--publisher-identity`: who signs data/manifest.json (the "Verify this site" commands)."""
    publisher_issuer: str = "https://token.actions.githubusercontent.com"
    """`--sign-with-test-authority SCENARIO`: sign data/manifest.json with that demo scenario's
    test authority (local and offline checks of `verify-site`; generator.publish)."""

    @classmethod
    def from_cli(cls, values: Mapping[str, Any]) -> BuildOptions:
        """Build options from click's keyword arguments plus the environment (clock, SITE_URL)."""
        mirrors: dict[str, str] = {}
        for item in values.get("registry_mirrors") or ():
            host, sep, url = str(item).partition("=")
            if not sep or not host or not url.startswith(("http://", "https://")):
                raise UsageError(
                    "--registry-mirror needs HOST=URL",
                    expected="HOST=http(s)://...",
                    found=str(item),
                    hint="for example --registry-mirror ghcr.io=http://127.0.0.1:5000",
                )
            mirrors[host] = url.rstrip("/")
        epoch_text = os.environ.get("SOURCE_DATE_EPOCH")
        epoch: int | None = None
        if epoch_text:
            try:
                epoch = int(epoch_text)
            except ValueError as exc:
                raise UsageError(
                    "SOURCE_DATE_EPOCH is not an integer",
                    expected="seconds since 1970",
                    found=epoch_text,
                    hint="unset it or set it to `date +%s`",
                ) from exc
        trusted = tuple(values.get("trusted_registries") or ()) or None
        jobs = values.get("jobs") or (os.cpu_count() or 1)
        return cls(
            recipes=Path(values["recipes"]),
            out=Path(values.get("out") or "site"),
            config=values.get("config"),
            trust_mode=str(values.get("trust_mode") or "production"),
            trust_root=values.get("trust_root"),
            oci_layouts=tuple(values.get("oci_layouts") or ()),
            registry_mirrors=mirrors,
            trusted_registries=trusted,
            registry_auth=values.get("registry_auth"),
            allow_private_registries=tuple(values.get("allow_private_registries") or ()),
            fetch_timeout=float(values.get("fetch_timeout") or 120.0),
            offline=bool(values.get("offline")),
            cache=values.get("cache"),
            jobs=int(jobs),
            quiet=bool(values.get("quiet")) or not sys.stderr.isatty(),
            preview=bool(values.get("preview")),
            source_url=values.get("source_url"),
            commit=values.get("commit"),
            aicr=values.get("aicr"),
            digests=values.get("digests"),
            # A build always shows flat unsigned pointers as pending (never counted); the flag
            # only changes what `check-tree` and `report` treat as a violation.
            allow_pending=True,
            max_unverified=values.get("max_unverified"),
            data_only=bool(values.get("data_only")),
            source_date_epoch=epoch,
            site_url=os.environ.get("SITE_URL") or None,
            bundle_refs=values.get("bundle_refs"),
            reevaluate=bool(values.get("reevaluate")),
            sign_with_test_authority=values.get("sign_with_test_authority"),
            publisher_identity=values.get("publisher_identity") or None,
            publisher_issuer=str(
                values.get("publisher_issuer") or "https://token.actions.githubusercontent.com"
            ),
            lock_timeout=600.0
            if values.get("lock_timeout") is None
            else float(values["lock_timeout"]),
        )
