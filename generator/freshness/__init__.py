"""Digest freshness: is the recipe an attestation signed still the current recipe?

For each verified attestation the signed `predicate.recipe.digest` is compared with the recipe's
current digest, computed with the canonicalizer of the attestation's predicate type (legacy for
v1/v2, v3 for v3). Where the current digest comes from, first that applies:

1. `--digests FILE`: a precomputed map `{<recipe>: {legacy: <hex>, v3: <hex>}}` (provider
   `digests-file`);
2. `aicr evidence digest -r recipes/overlays/<overlay>.yaml [--profile name=value]` with an aicr
   binary, for `RecipeMetadata` overlays that need aicr's recipe builder (provider `aicr`);
3. `recipes/overlays/<recipe>.yaml` when it is a hydrated `RecipeResult` (profile baked in),
   computed natively (provider `native`);
4. otherwise `unknown`, never shown as fresh.

Providers are small objects behind one `DigestProvider` protocol so the pure comparison stays
testable with fakes; only `AicrProvider` runs a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from generator.errors import InputError, Location
from generator.model import Canonicalizer, Freshness, PredicateType

HEX64 = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class FreshnessResult:
    """`data/pointers.json` `freshness`: state, the signed and current digests, the provider."""

    state: Freshness
    signed: str | None
    current: str | None
    provider: str | None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"state": str(self.state), "signed": self.signed, "current": self.current,
                "provider": self.provider}

    def describe(self) -> str:
        """aicr's wording: fresh, `stale (<12 hex>… vs current <12 hex>…)`, or unknown."""
        if self.state is Freshness.STALE and self.signed and self.current:
            return f"stale ({self.signed[:12]}… vs current {self.current[:12]}…)"
        return str(self.state)


UNKNOWN = FreshnessResult(Freshness.UNKNOWN, None, None, None)


class DigestProvider(Protocol):
    """Gives the current digest of a recipe for one canonicalizer, or None when it cannot."""

    @property
    def name(self) -> str: ...

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer
                ) -> str | None: ...


def compare(signed: str, predicate_type: PredicateType, recipe: str, profile: str | None,
            providers: Sequence[DigestProvider]) -> FreshnessResult:
    """Pure comparison over the providers in order of precedence; the first answer wins."""
    for provider in providers:
        current = provider.current(recipe, profile, predicate_type.canonicalizer)
        if current is None:
            continue
        state = Freshness.FRESH if current == signed else Freshness.STALE
        return FreshnessResult(state, signed, current, provider.name)
    return FreshnessResult(Freshness.UNKNOWN, signed or None, None, None)


def _is_hex64(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= HEX64


@dataclass(frozen=True)
class DigestsFileProvider:
    """Provider `digests-file`: a precomputed `{recipe: {legacy: hex, v3: hex}}` map."""

    table: Mapping[str, Mapping[str, str]]
    name: str = "digests-file"

    @classmethod
    def load(cls, path: Path) -> DigestsFileProvider:
        """Read a YAML or JSON digest map; raises `InputError` naming the file and key."""
        from generator.tree import load_yaml, read_bounded

        data = read_bounded(path, 16 << 20, display=str(path))
        doc = json.loads(data) if path.suffix == ".json" else load_yaml(data, file=str(path))
        if not isinstance(doc, dict):
            raise InputError("digest map is not a mapping", location=Location(str(path)),
                             expected="{<recipe>: {legacy: <hex>, v3: <hex>}}",
                             found=type(doc).__name__, hint="regenerate the digest map")
        table: dict[str, dict[str, str]] = {}
        for recipe, entry in doc.items():
            if not isinstance(entry, dict):
                raise InputError("digest map entry is not a mapping",
                                 location=Location(str(path), str(recipe)),
                                 expected="{legacy: <hex>, v3: <hex>}", found=repr(entry)[:80],
                                 hint="give each recipe a legacy and/or v3 digest")
            for kind, value in entry.items():
                if kind not in ("legacy", "v3") or not _is_hex64(value):
                    raise InputError("digest map value is not a 64-hex digest",
                                     location=Location(str(path), f"{recipe}.{kind}"),
                                     expected="legacy|v3: 64 lowercase hex",
                                     found=repr(value)[:80], hint="fix or drop the entry")
            table[str(recipe)] = {str(k): str(v) for k, v in entry.items()}
        return cls(table)

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer
                ) -> str | None:
        return self.table.get(recipe, {}).get(str(canonicalizer))


def listed_overlay(overlays: Path, stem: str) -> Path | None:
    """The regular file `<stem>.yaml` as listed in `overlays`, else None.

    The recipe name comes from a pointer, so it is looked up in the folder listing instead of
    being turned into a path: a hostile name (too long, `..`, a slash) simply is not listed.
    """
    wanted = f"{stem}.yaml"
    try:
        with os.scandir(overlays) as entries:
            for entry in entries:
                if entry.name == wanted and entry.is_file(follow_symlinks=False):
                    return Path(entry.path)
    except OSError:
        return None
    return None


@dataclass(frozen=True)
class NativeProvider:
    """Provider `native`: `overlays/<recipe>.yaml` when it is a hydrated `RecipeResult`."""

    overlays: Path
    name: str = "native"
    _memo: dict[tuple[str, Canonicalizer], str | None] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    """Answers already computed: one build asks once per pointer, but an overlay is read and
    canonicalised once per recipe and canonicalizer (the folder does not change mid-build)."""

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer
                ) -> str | None:
        key = (recipe, canonicalizer)
        if key not in self._memo:
            self._memo[key] = self._current(recipe, canonicalizer)
        return self._memo[key]

    def _current(self, recipe: str, canonicalizer: Canonicalizer) -> str | None:
        from generator.recipe.canonical import recipe_digest
        from generator.tree import load_yaml, read_bounded

        path = listed_overlay(self.overlays, recipe)
        if path is None:
            return None
        try:
            data = read_bounded(path, 1 << 20, display=str(path))
            doc = load_yaml(data, file=str(path))
        except InputError:
            return None
        if not isinstance(doc, dict) or doc.get("kind") != "RecipeResult":
            return None
        return str(recipe_digest(data, canonicalizer))


@dataclass(frozen=True)
class AicrProvider:
    """Provider `aicr`: `aicr evidence digest -r overlays/<overlay>.yaml [--profile n=v]`.

    For a profiled pointer the overlay is the recipe name without exactly its
    `-lower(name)-lower(value)` suffix, and the profile is passed. aicr prints the digest of the
    V3 digest (newest aicr); a legacy (v1/v2) comparison would always read stale, so for the
    legacy canonicalizer this provider gives no answer and later providers (or `unknown`) decide.
    """

    binary: Path
    overlays: Path
    timeout: float = 30.0
    name: str = "aicr"

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer
                ) -> str | None:
        if canonicalizer is Canonicalizer.LEGACY:
            return None
        overlay = recipe
        if profile:
            name, _, value = profile.partition("=")
            suffix = f"-{name.lower()}-{value.lower()}"
            if not recipe.endswith(suffix):
                return None
            overlay = recipe[: -len(suffix)]
        path = listed_overlay(self.overlays, overlay)
        if path is None:
            return None
        args = [str(self.binary), "evidence", "digest", "-r", str(path)]
        if profile:
            args += ["--profile", profile]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=self.timeout,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        out = done.stdout.strip().split()
        if done.returncode != 0 or not out or not _is_hex64(out[-1]):
            return None
        return out[-1]


def providers_for(recipes: Path, *, digests: Path | None, aicr: Path | None
                  ) -> list[DigestProvider]:
    """The providers for a build, explicit ones first."""
    overlays = recipes / "overlays"
    chosen: list[DigestProvider] = []
    if digests is not None:
        chosen.append(DigestsFileProvider.load(digests))
    if aicr is not None:
        chosen.append(AicrProvider(aicr, overlays))
    chosen.append(NativeProvider(overlays))
    return chosen


def canonical_diff(signed_yaml: bytes, current_yaml: bytes, canonicalizer: Canonicalizer,
                   *, context: int = 3, limit: int = 400) -> list[str]:
    """A unified diff of the signed canonical recipe against the current one (stale evidence)."""
    return list(_canonical_diff(signed_yaml, current_yaml, canonicalizer, context, limit))


@lru_cache(maxsize=4096)
def _canonical_diff(signed_yaml: bytes, current_yaml: bytes, canonicalizer: Canonicalizer,
                    context: int, limit: int) -> tuple[str, ...]:
    """`canonical_diff`, memoised: a stale recipe's runs mostly share one signed recipe.yaml,
    and canonicalising both sides again for each of them dominated big builds."""
    import difflib

    from generator.recipe.canonical import canonicalize

    left = canonicalize(signed_yaml, canonicalizer).decode("utf-8").splitlines()
    right = canonicalize(current_yaml, canonicalizer).decode("utf-8").splitlines()
    lines = list(difflib.unified_diff(left, right, "signed", "current", n=context, lineterm=""))
    return tuple(lines[:limit])


def git_commits_since(repo: Path, commit: str, paths: Sequence[str]) -> list[str] | None:
    """Commits since `commit` touching `paths` (`<short sha> <subject>`), None outside history."""
    if not commit or not all(c in "0123456789abcdef" for c in commit.lower()):
        return None
    try:
        known = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
                               capture_output=True, timeout=10, check=False)
        if known.returncode != 0:
            return None
        log = subprocess.run(["git", "-C", str(repo), "log", "--format=%h %s",
                              f"{commit}..HEAD", "--", *paths],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if log.returncode != 0:
        return None
    return [line for line in log.stdout.splitlines() if line.strip()]


# --------------------------------------------------------------------------- why is it stale?

DIFF_LINE_LIMIT = 200


@dataclass(frozen=True)
class StaleExplanation:
    """Why an attestation reads stale: the canonical diff and the commits since its aicrCommit.

    `diff` is a unified diff of the signed canonical recipe against the current overlay (empty
    when the current overlay cannot be canonicalised with the attestation's canonicalizer);
    `commits` lists `<short sha> <subject>` lines that touched the overlay since the attested
    commit, or is None when that commit is not in the repository's history.
    """

    diff: tuple[str, ...]
    commits: tuple[str, ...] | None
    truncated: bool = False


def git_toplevel(path: Path) -> Path | None:
    """The work tree of the git repository containing `path`, or None outside one."""
    try:
        done = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


def overlay_file(overlays: Path, recipe: str, profile: str | None) -> Path | None:
    """The current overlay of a recipe: `<recipe>.yaml`, else the overlay without the profile."""
    stems = [recipe]
    if profile:
        name, _, value = profile.partition("=")
        suffix = f"-{name.lower()}-{value.lower()}"
        if recipe.endswith(suffix):
            stems.append(recipe[: -len(suffix)])
    for stem in stems:
        path = listed_overlay(overlays, stem)
        if path is not None:
            return path
    return None


@dataclass(frozen=True)
class StaleExplainer:
    """Explains stale evidence against the overlays folder and (optionally) its git history."""

    overlays: Path
    repo: Path | None = None
    limit: int = DIFF_LINE_LIMIT
    _commits: dict[tuple[str, str], tuple[str, ...] | None] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    """git answers already asked by this explainer (one build): each costs two git processes,
    and the runs of one recipe mostly share an overlay and an aicr commit."""

    @classmethod
    def for_recipes(cls, recipes: Path) -> StaleExplainer:
        """An explainer for `<recipes>/overlays`, with the git repository holding `recipes`."""
        return cls(recipes / "overlays", git_toplevel(recipes))

    def explain(self, recipe: str, profile: str | None, signed_yaml: bytes,
                canonicalizer: Canonicalizer, aicr_commit: str | None) -> StaleExplanation:
        """Diff and commits for one stale attestation; never raises for unusable inputs."""
        from generator.errors import EvidenceDashError

        path = overlay_file(self.overlays, recipe, profile)
        diff: list[str] = []
        truncated = False
        if path is not None:
            try:
                current = path.read_bytes()
                full = canonical_diff(signed_yaml, current, canonicalizer,
                                      limit=self.limit + 1)
            except (OSError, EvidenceDashError):
                full = []
            truncated = len(full) > self.limit
            diff = full[: self.limit]
        commits: list[str] | None = None
        if self.repo is not None and path is not None and aicr_commit:
            try:
                relative = path.resolve().relative_to(self.repo.resolve()).as_posix()
            except ValueError:
                relative = None
            if relative is not None:
                key = (aicr_commit, relative)
                if key not in self._commits:
                    found = git_commits_since(self.repo, aicr_commit, [relative])
                    self._commits[key] = None if found is None else tuple(found)
                known = self._commits[key]
                commits = None if known is None else list(known)
        return StaleExplanation(tuple(diff), None if commits is None else tuple(commits),
                                truncated)
