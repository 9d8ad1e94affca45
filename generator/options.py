"""Build options: everything a build depends on, parsed and checked, in frozen groups.

The groups an evaluation depends on (`EvaluationOptions`: tree, engine, freshness, policy,
stamp, clock) are what the evaluation memo's key is made of: every field says, in its
metadata, how it reaches the key (`MemoRole`), and `generator.buildmemo.fingerprint` reads that
rather than a hand-kept list (a field that says nothing is an error). What only shapes where
and how the result is published is `OutputOptions`. Paths are as given.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from generator.errors import UsageError
from generator.treecommit import tree_commit

__all__ = [
    "BuildOptions",
    "ClockOptions",
    "EngineOptions",
    "EvaluationOptions",
    "FreshnessOptions",
    "MemoRole",
    "OutputOptions",
    "PolicyOptions",
    "StampOptions",
    "TreeOptions",
    "TrustMode",
    "engine_from_cli",
    "epoch_from_environment",
    "evaluation_from_cli",
    "memo_role",
    "output_from_cli",
]

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"


class TrustMode(StrEnum):
    """`--trust`: which Sigstore public-good trust root (a `--trust-root` file overrides it)."""

    PRODUCTION = "production"
    STAGING = "staging"


class MemoRole(Enum):
    """How an option reaches the evaluation memo's key (generator.buildmemo.fingerprint)."""

    VALUE = "value"
    """The value itself."""
    FILE = "file"
    """The path of the file it names and its digest (pages print the path, e.g. the trust
    root a reader verifies with)."""
    TREE = "tree"
    """The evidence tree: its absolute path, the digest of every file, its git commit."""
    LAYOUTS = "layouts"
    """OCI layouts: each path with the digest of its index.json (blobs are by digest)."""
    PROGRAM = "program"
    """The program freshness runs (path, size, modification time)."""
    SITE = "site"
    """The value itself, but only in the whole build's key: it reaches build-info.json and the
    pages, never a recipe's product (a pointer's entry, a board entry), so a new value (the next
    commit of a PR) does not make every recipe be evaluated again."""
    NONE = "none"
    """Does not change what an evaluation produces (speed, progress, a deadline, a place)."""


def _opt(memo: MemoRole, default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """A dataclass field that says how it reaches the memo key."""
    return field(default=default, metadata=MappingProxyType({"memo": memo}), **kwargs)


def memo_role(item: dataclasses.Field[Any]) -> MemoRole:
    """How the option field `item` reaches the memo key; raises TypeError when it does not
    say (every option of an evaluation group must)."""
    role = item.metadata.get("memo")
    if not isinstance(role, MemoRole):
        raise TypeError(
            f"option {item.name!r} does not say how it reaches the evaluation memo key "
            "(give it metadata {'memo': MemoRole.<role>}, MemoRole.NONE when it does not)"
        )
    return role


@dataclass(frozen=True)
class TreeOptions:
    """The evidence tree and what else is read with it."""

    recipes: Path = _opt(MemoRole.TREE)
    """`--recipes`: the recipes folder that holds evidence/ (aicr layout)."""
    bundle_refs: Path | None = _opt(MemoRole.FILE, None)
    """`--bundle-refs FILE`: digest-pinned bundles no pointer names (issue 3)."""
    commit: str | None = _opt(MemoRole.SITE, None)
    """`--commit`: the evidence tree's commit (footer, links, build-info.json)."""
    source_url: str | None = _opt(MemoRole.SITE, None)
    """`--source-url`: where the evidence tree lives (links to pointer files)."""


@dataclass(frozen=True)
class EngineOptions:
    """Trust, transport, caches and workers: what fetching and verifying a bundle needs."""

    trust_mode: TrustMode = _opt(MemoRole.VALUE, TrustMode.PRODUCTION)
    """`--trust`: the Sigstore public-good trust root."""
    trust_root: Path | None = _opt(MemoRole.FILE, None)
    """`--trust-root`: a trusted_root.json or ClientTrustConfig JSON (overrides --trust)."""
    oci_layouts: tuple[Path, ...] = _opt(MemoRole.LAYOUTS, ())
    """`--oci-layout`: local OCI image layouts bundles are read from first."""
    registry_mirrors: Mapping[str, str] = _opt(MemoRole.VALUE, default_factory=dict)
    """`--registry-mirror HOST=URL`: fetch what a pointer names on HOST from URL instead."""
    trusted_registries: tuple[str, ...] | None = _opt(MemoRole.VALUE, None)
    """`--trusted-registry`: only fetch bundles under these registry/repo prefixes."""
    registry_auth: Path | None = _opt(MemoRole.FILE, None)
    """`--registry-auth`: read-only registry credentials (container auth file)."""
    allow_private_registries: tuple[str, ...] = _opt(MemoRole.VALUE, ())
    """`--allow-private-registry HOST`: registry hosts that may resolve to non-public addresses."""
    fetch_timeout: float = _opt(MemoRole.NONE, 120.0)
    """`--fetch-timeout SECONDS`: the total deadline of one bundle fetch from a registry (an
    answer that misses it is no verdict, which is never memoized)."""
    offline: bool = _opt(MemoRole.VALUE, False)
    """`--offline`: never use the network (layouts and cache only)."""
    cache: Path | None = _opt(MemoRole.NONE, None)
    """`--cache`: the bundle, verdict, freshness, page and memo cache (default: user cache)."""
    jobs: int = _opt(MemoRole.NONE, 1)
    """`--jobs`: verification worker processes (results do not depend on it)."""
    quiet: bool = _opt(MemoRole.NONE, False)
    """`--quiet` (or stderr not a terminal): no progress bars."""


@dataclass(frozen=True)
class FreshnessOptions:
    """What the signed recipe digests are compared against."""

    aicr: Path | None = _opt(MemoRole.PROGRAM, None)
    """`--aicr`: an aicr binary for `aicr evidence digest` (else `aicr` on PATH)."""
    digests: Path | None = _opt(MemoRole.FILE, None)
    """`--digests`: precomputed current recipe digests (YAML or JSON)."""


@dataclass(frozen=True)
class PolicyOptions:
    """What the tree accepts."""

    allow_pending: bool = _opt(MemoRole.VALUE, True)
    """Flat unsigned pointers are shown as pending (never counted). A build always allows
    them; the `check-tree` and `report` flag only changes what they treat as a violation."""


@dataclass(frozen=True)
class StampOptions:
    """What data/build-info.json says about the site besides the evaluation."""

    preview: bool = _opt(MemoRole.VALUE, False)
    """`--preview`: mark every page as a preview and noindex."""
    publisher_identity: str | None = _opt(MemoRole.VALUE, None)
    """`--publisher-identity`: who signs data/manifest.json (the "Verify this site" commands)."""
    publisher_issuer: str = _opt(MemoRole.VALUE, GITHUB_ISSUER)
    """`--publisher-issuer`: the OIDC issuer of that identity."""
    log_search_url: str | None = _opt(MemoRole.VALUE, None)
    """`--log-search-url TEMPLATE`: a transparency-log search page for `{logIndex}` (pages link
    each entry there; the production log's search is the default under the production root)."""


@dataclass(frozen=True)
class ClockOptions:
    """The build's clock (never the wall clock)."""

    source_date_epoch: int | None = _opt(MemoRole.VALUE, None)
    """`SOURCE_DATE_EPOCH`: the build time, else the newest verified transparency-log time."""


@dataclass(frozen=True)
class OutputOptions:
    """Where and how a build publishes its result."""

    out: Path = Path("site")
    """`--out`: the output folder (replaced atomically)."""
    config: Path | None = None
    """`--config`: an mkdocs.yml to build with (None: the packaged one, never ./mkdocs.yml)."""
    data_only: bool = False
    """`--data-only`: write only <out>/data/ (no MkDocs site)."""
    site_url: str | None = None
    """`SITE_URL`: the published address (canonical links, schema $id)."""
    lock_timeout: float = 600.0
    """`--lock-timeout`: seconds to wait for another build into the same --out."""
    max_unverified: float | None = None
    """`--max-unverified PERCENT`: keep the previous site when more pointers got no verdict."""
    reevaluate: bool = False
    """`--reevaluate`: do not answer from the evaluation memo (generator.buildmemo)."""
    sign_with_test_authority: Path | None = None
    """`--sign-with-test-authority SCENARIO`: sign data/manifest.json with that demo
    scenario's test authority (local and offline checks of `verify-site`)."""
    previous: str | None = None
    """`--previous SITE`: the previous site (folder or https:// URL) the change feed compares
    with. Not an evaluation input: data/changes.json, the feeds and the Changes page are
    written when the site is finished (generator.publish), after the memo keeps data/."""
    site_ca_bundle: Path | None = None
    """`--site-ca-bundle`: PEM certificate authorities trusted for a --previous URL."""
    allow_private_sites: tuple[str, ...] = ()
    """`--allow-private-site HOST[:PORT]`: site hosts that may resolve to non-public addresses."""
    previous_site: Any = None
    """A previous site already read (`generator.changes.PreviousSite`; verify-site --rebuild
    replays the one the site recorded)."""


_EVALUATION_GROUPS: dict[str, type[Any]] = {
    "tree": TreeOptions,
    "engine": EngineOptions,
    "freshness": FreshnessOptions,
    "policy": PolicyOptions,
    "stamp": StampOptions,
    "clock": ClockOptions,
}
_GROUP_CLASSES: dict[str, type[Any]] = {**_EVALUATION_GROUPS, "output": OutputOptions}
_GROUP_OF = {f.name: g for g, kind in _GROUP_CLASSES.items() for f in dataclasses.fields(kind)}


def _regrouped(groups: dict[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """`groups` (by name) with the options `values` (by field name) changed in theirs."""
    out = dict(groups)
    for name, value in values.items():
        group = _GROUP_OF.get(name)
        if group is None or group not in out:
            raise TypeError(f"no option {name!r} here")
        out[group] = dataclasses.replace(out[group], **{name: value})
    return out


@dataclass(frozen=True)
class EvaluationOptions:
    """Everything an evaluation depends on (and so the evaluation memo's key)."""

    tree: TreeOptions
    """The evidence tree and what else is read with it."""
    engine: EngineOptions = EngineOptions()
    """Trust, transport, caches and workers."""
    freshness: FreshnessOptions = FreshnessOptions()
    """What the signed recipe digests are compared against."""
    policy: PolicyOptions = PolicyOptions()
    """What the tree accepts."""
    stamp: StampOptions = StampOptions()
    """What build-info.json says about the site."""
    clock: ClockOptions = ClockOptions()
    """The build's clock."""

    @classmethod
    def flat(cls, recipes: Path, **values: Any) -> EvaluationOptions:
        """Options from field names alone (`recipes=..., offline=True`), each in its group."""
        return cls(TreeOptions(recipes)).replace(**values)

    def replace(self, **values: Any) -> EvaluationOptions:
        """A copy with some options (by field name) changed."""
        groups = {name: getattr(self, name) for name in _EVALUATION_GROUPS}
        return EvaluationOptions(**_regrouped(groups, values))


@dataclass(frozen=True)
class BuildOptions:
    """A build's options: what its evaluation depends on, and where and how it publishes."""

    evaluation: EvaluationOptions
    """What the evaluation depends on (the memo key's inputs)."""
    output: OutputOptions = OutputOptions()
    """Where and how the build publishes."""

    @property
    def tree(self) -> TreeOptions:
        return self.evaluation.tree

    @property
    def engine(self) -> EngineOptions:
        return self.evaluation.engine

    @property
    def freshness(self) -> FreshnessOptions:
        return self.evaluation.freshness

    @property
    def policy(self) -> PolicyOptions:
        return self.evaluation.policy

    @property
    def stamp(self) -> StampOptions:
        return self.evaluation.stamp

    @property
    def clock(self) -> ClockOptions:
        return self.evaluation.clock

    @classmethod
    def flat(cls, recipes: Path, **values: Any) -> BuildOptions:
        """Options from field names alone (`recipes=..., out=..., offline=True`)."""
        return cls(EvaluationOptions(TreeOptions(recipes))).replace(**values)

    def replace(self, **values: Any) -> BuildOptions:
        """A copy with some options (by field name) changed."""
        groups = {name: getattr(self, name) for name in _GROUP_CLASSES}
        changed = _regrouped(groups, values)
        output = changed.pop("output")
        return BuildOptions(EvaluationOptions(**changed), output)

    @classmethod
    def from_cli(cls, values: Mapping[str, Any]) -> BuildOptions:
        """Build options from click's keyword arguments plus the environment (clock, SITE_URL)."""
        return cls(evaluation_from_cli(values), output_from_cli(values))


def epoch_from_environment() -> int | None:
    """`SOURCE_DATE_EPOCH`, checked (None when unset)."""
    text = os.environ.get("SOURCE_DATE_EPOCH")
    if not text:
        return None
    try:
        return int(text)
    except ValueError as exc:
        raise UsageError(
            "SOURCE_DATE_EPOCH is not an integer",
            expected="seconds since 1970",
            found=text,
            hint="unset it or set it to `date +%s`",
        ) from exc


def _mirrors(items: Any) -> dict[str, str]:
    """`--registry-mirror HOST=URL` values, checked."""
    mirrors: dict[str, str] = {}
    for item in items or ():
        host, sep, url = str(item).partition("=")
        if not sep or not host or not url.startswith(("http://", "https://")):
            raise UsageError(
                "--registry-mirror needs HOST=URL",
                expected="HOST=http(s)://...",
                found=str(item),
                hint="for example --registry-mirror ghcr.io=http://127.0.0.1:5000",
            )
        mirrors[host] = url.rstrip("/")
    return mirrors


def engine_from_cli(values: Mapping[str, Any]) -> EngineOptions:
    """The engine group from click's keyword arguments (trust, transport, cache, workers)."""
    return EngineOptions(
        trust_mode=TrustMode(str(values.get("trust_mode") or TrustMode.PRODUCTION)),
        trust_root=values.get("trust_root"),
        oci_layouts=tuple(values.get("oci_layouts") or ()),
        registry_mirrors=_mirrors(values.get("registry_mirrors")),
        trusted_registries=tuple(values.get("trusted_registries") or ()) or None,
        registry_auth=values.get("registry_auth"),
        allow_private_registries=tuple(values.get("allow_private_registries") or ()),
        fetch_timeout=float(values.get("fetch_timeout") or 120.0),
        offline=bool(values.get("offline")),
        cache=values.get("cache"),
        jobs=int(values.get("jobs") or (os.cpu_count() or 1)),
        quiet=bool(values.get("quiet")) or not sys.stderr.isatty(),
    )


def evaluation_from_cli(values: Mapping[str, Any]) -> EvaluationOptions:
    """What an evaluation depends on, from click's keyword arguments and SOURCE_DATE_EPOCH."""
    return EvaluationOptions(
        tree=TreeOptions(
            recipes=Path(values["recipes"]),
            bundle_refs=values.get("bundle_refs"),
            # the tree's own commit when it is a clean git checkout (generator.treecommit)
            commit=values.get("commit") or tree_commit(Path(values["recipes"])),
            source_url=values.get("source_url"),
        ),
        engine=engine_from_cli(values),
        freshness=FreshnessOptions(aicr=values.get("aicr"), digests=values.get("digests")),
        # A build always shows flat unsigned pointers as pending (never counted); the flag
        # only changes what `check-tree` and `report` treat as a violation.
        policy=PolicyOptions(allow_pending=True),
        stamp=StampOptions(
            preview=bool(values.get("preview")),
            publisher_identity=values.get("publisher_identity") or None,
            publisher_issuer=str(values.get("publisher_issuer") or GITHUB_ISSUER),
            log_search_url=values.get("log_search_url") or None,
        ),
        clock=ClockOptions(source_date_epoch=epoch_from_environment()),
    )


def output_from_cli(values: Mapping[str, Any]) -> OutputOptions:
    """Where and how to publish, from click's keyword arguments and SITE_URL."""
    lock = values.get("lock_timeout")
    return OutputOptions(
        out=Path(values.get("out") or "site"),
        config=values.get("config"),
        data_only=bool(values.get("data_only")),
        site_url=os.environ.get("SITE_URL") or None,
        lock_timeout=600.0 if lock is None else float(lock),
        max_unverified=values.get("max_unverified"),
        reevaluate=bool(values.get("reevaluate")),
        sign_with_test_authority=values.get("sign_with_test_authority"),
        previous=values.get("previous") or None,
        site_ca_bundle=values.get("site_ca_bundle"),
        allow_private_sites=tuple(values.get("allow_private_sites") or ()),
    )
