"""Digest providers: where the current digest of a recipe comes from (see the package)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import generator.recipe.canonical as canonical  # by module: tests replace its functions
from generator import strictjson
from generator.errors import EvidenceDashError, InputError, Location
from generator.freshness.compare import DigestProvider, _is_hex64
from generator.freshness.memo import ContentMemo
from generator.model import Canonicalizer
from generator.tree import load_yaml, read_bounded


@dataclass(frozen=True)
class DigestsFileProvider:
    """Provider `digests-file`: a precomputed `{recipe: {legacy: hex, v3: hex}}` map."""

    table: Mapping[str, Mapping[str, str]]
    name: str = "digests-file"

    @classmethod
    def load(cls, path: Path) -> DigestsFileProvider:
        """Read a YAML or JSON digest map; raises `InputError` naming the file and key."""

        data = read_bounded(path, 16 << 20, display=str(path))
        try:
            doc = (
                strictjson.loads(data)
                if path.suffix == ".json"
                else load_yaml(data, file=str(path))
            )
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(
                f"digest map {strictjson.problem(exc)}",
                location=Location(str(path)),
                expected="{<recipe>: {legacy: <hex>, v3: <hex>}} as JSON",
                found=f"{type(exc).__name__}: {exc}",
                hint="regenerate the digest map",
            ) from exc
        if not isinstance(doc, dict):
            raise InputError(
                "digest map is not a mapping",
                location=Location(str(path)),
                expected="{<recipe>: {legacy: <hex>, v3: <hex>}}",
                found=type(doc).__name__,
                hint="regenerate the digest map",
            )
        table: dict[str, dict[str, str]] = {}
        for recipe, entry in doc.items():
            if not isinstance(entry, dict):
                raise InputError(
                    "digest map entry is not a mapping",
                    location=Location(str(path), str(recipe)),
                    expected="{legacy: <hex>, v3: <hex>}",
                    found=repr(entry)[:80],
                    hint="give each recipe a legacy and/or v3 digest",
                )
            for kind, value in entry.items():
                if kind not in ("legacy", "v3") or not _is_hex64(value):
                    raise InputError(
                        "digest map value is not a 64-hex digest",
                        location=Location(str(path), f"{recipe}.{kind}"),
                        expected="legacy|v3: 64 lowercase hex",
                        found=repr(value)[:80],
                        hint="fix or drop the entry",
                    )
            table[str(recipe)] = {str(k): str(v) for k, v in entry.items()}
        return cls(table)

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer) -> str | None:
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


class OverlayListing:
    """`listed_overlay` for many names: the overlays folder is listed once, when first asked.

    One build asks per pointer; listing a folder of a thousand overlays per question made that
    quadratic. The folder does not change during a build.
    """

    def __init__(self, overlays: Path) -> None:
        self.overlays = overlays
        self._files: dict[str, Path] | None = None

    def get(self, stem: str) -> Path | None:
        """The regular file `<stem>.yaml` as listed, else None (like `listed_overlay`)."""
        if self._files is None:
            files: dict[str, Path] = {}
            try:
                with os.scandir(self.overlays) as entries:
                    for entry in entries:
                        if entry.is_file(follow_symlinks=False):
                            files[entry.name] = Path(entry.path)
            except OSError:
                files = {}
            self._files = files
        return self._files.get(f"{stem}.yaml")


@dataclass(frozen=True)
class NativeProvider:
    """Provider `native`: `overlays/<recipe>.yaml` when it is a hydrated `RecipeResult`."""

    overlays: Path
    name: str = "native"
    memo: ContentMemo | None = field(default=None, repr=False, compare=False)
    """Digests remembered across builds by overlay content (see `ContentMemo`)."""
    _memo: dict[tuple[str, Canonicalizer], str | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Answers already computed: one build asks once per pointer, but an overlay is read and
    canonicalised once per recipe and canonicalizer (the folder does not change mid-build)."""
    _listing: OverlayListing = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_listing", OverlayListing(self.overlays))

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer) -> str | None:
        key = (recipe, canonicalizer)
        if key not in self._memo:
            self._memo[key] = self._current(recipe, canonicalizer)
        return self._memo[key]

    def _current(self, recipe: str, canonicalizer: Canonicalizer) -> str | None:

        path = self._listing.get(recipe)
        if path is None:
            return None
        try:
            data = read_bounded(path, 1 << 20, display=str(path))
        except InputError:
            return None
        key = None
        if self.memo is not None:
            key = self.memo.key("native-digest", str(canonicalizer), data)
            found, known = self.memo.get(key)
            if found and (known is None or _is_hex64(known)):
                return None if known is None else str(known)
        try:
            doc = load_yaml(data, file=str(path))
        except InputError:
            doc = None
        answer = None
        if isinstance(doc, dict) and doc.get("kind") == "RecipeResult":
            try:
                answer = str(canonical.canonical_digest(_current_canonical(data, canonicalizer)))
            except EvidenceDashError:
                answer = None  # YAML the canonicalizer refuses: no current digest
        if key is not None and self.memo is not None:
            self.memo.put(key, answer)
        return answer


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

    def current(self, recipe: str, profile: str | None, canonicalizer: Canonicalizer) -> str | None:
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
            done = subprocess.run(
                args, capture_output=True, text=True, timeout=self.timeout, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        out = done.stdout.strip().split()
        if done.returncode != 0 or not out or not _is_hex64(out[-1]):
            return None
        return out[-1]


def providers_for(
    recipes: Path, *, digests: Path | None, aicr: Path | None, memo: ContentMemo | None = None
) -> list[DigestProvider]:
    """The providers for a build, explicit ones first (`memo` speeds up the native one)."""
    overlays = recipes / "overlays"
    chosen: list[DigestProvider] = []
    if digests is not None:
        chosen.append(DigestsFileProvider.load(digests))
    if aicr is not None:
        chosen.append(AicrProvider(aicr, overlays))
    chosen.append(NativeProvider(overlays, memo=memo))
    return chosen


@lru_cache(maxsize=64)
def _current_canonical(current_yaml: bytes, canonicalizer: Canonicalizer) -> bytes:
    """The canonical bytes of a current overlay, remembered: its digest and the diff of every
    stale run of that recipe start from them, and the runs of a recipe come one after another.
    (Signed recipes are canonicalised for each bundle; this is the tree's own overlay.)"""

    return canonical.canonicalize(current_yaml, canonicalizer)
