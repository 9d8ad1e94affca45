"""Why evidence is stale: the canonical diff of the signed recipe against the current overlay,
and the commits since the attested aicr commit."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import generator.recipe.canonical as canonical  # by module: tests replace its functions
from generator.errors import EvidenceDashError, InputError, Location
from generator.freshness.history import _git_log_since, git_commit_known, git_toplevel
from generator.freshness.memo import ContentMemo
from generator.freshness.providers import OverlayListing, _current_canonical, listed_overlay
from generator.model import Canonicalizer
from generator.tree import FileRefusedError, read_bounded

OVERLAY_LIMIT = 1 << 20
"""Cap for reading an overlay to explain it: the same 1 MiB the native provider reads."""


def canonical_diff(
    signed_yaml: bytes,
    current_yaml: bytes,
    canonicalizer: Canonicalizer,
    *,
    context: int = 3,
    limit: int = 400,
) -> list[str]:
    """A unified diff of the signed canonical recipe against the current one (stale evidence)."""
    return list(_canonical_diff(signed_yaml, current_yaml, canonicalizer, context, limit))


@lru_cache(maxsize=4096)
def _canonical_diff(
    signed_yaml: bytes, current_yaml: bytes, canonicalizer: Canonicalizer, context: int, limit: int
) -> tuple[str, ...]:
    """`canonical_diff`, memoised: a stale recipe's runs mostly share one signed recipe.yaml,
    and canonicalising both sides again for each of them dominated big builds."""

    left = canonical.canonicalize(signed_yaml, canonicalizer).decode("utf-8").splitlines()
    right = _current_canonical(current_yaml, canonicalizer).decode("utf-8").splitlines()
    lines = list(difflib.unified_diff(left, right, "signed", "current", n=context, lineterm=""))
    return tuple(lines[:limit])


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
    refused: str | None = None
    """Why the current overlay was not read (a link, a special file, over `OVERLAY_LIMIT`),
    naming the file; None when it was read or there is none."""


def overlay_file(
    overlays: Path, recipe: str, profile: str | None, listing: OverlayListing | None = None
) -> Path | None:
    """The current overlay of a recipe: `<recipe>.yaml`, else the overlay without the profile.

    `listing` (of `overlays`) answers from one folder listing instead of a listing per call."""
    stems = [recipe]
    if profile:
        name, _, value = profile.partition("=")
        suffix = f"-{name.lower()}-{value.lower()}"
        if recipe.endswith(suffix):
            stems.append(recipe[: -len(suffix)])
    for stem in stems:
        path = listed_overlay(overlays, stem) if listing is None else listing.get(stem)
        if path is not None:
            return path
    return None


@dataclass(frozen=True)
class StaleExplainer:
    """Explains stale evidence against the overlays folder and (optionally) its git history."""

    overlays: Path
    repo: Path | None = None
    limit: int = DIFF_LINE_LIMIT
    memo: ContentMemo | None = field(default=None, repr=False, compare=False)
    """Canonical diffs remembered across builds by the content of both sides."""
    _commits: dict[tuple[str, str], tuple[str, ...] | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """git answers already asked by this explainer (one build): each costs a git process, and
    the runs of one recipe mostly share an overlay and an aicr commit."""
    _known: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Whether each aicr commit is in the history, asked once per commit."""
    _relative: dict[Path, str | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _listing: OverlayListing = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_listing", OverlayListing(self.overlays))

    @classmethod
    def for_recipes(cls, recipes: Path, memo: ContentMemo | None = None) -> StaleExplainer:
        """An explainer for `<recipes>/overlays`, with the git repository holding `recipes`."""
        return cls(recipes / "overlays", git_toplevel(recipes), memo=memo)

    def explain(
        self,
        recipe: str,
        profile: str | None,
        signed_yaml: bytes,
        canonicalizer: Canonicalizer,
        aicr_commit: str | None,
    ) -> StaleExplanation:
        """Diff and commits for one stale attestation; never raises for unusable inputs."""
        path = overlay_file(self.overlays, recipe, profile, self._listing)
        diff: list[str] = []
        truncated = False
        refused = None
        if path is not None:
            current = self._read(path)
            if isinstance(current, str):
                refused = current
            else:
                full = self._diff(current, signed_yaml, canonicalizer)
                truncated = len(full) > self.limit
                diff = full[: self.limit]
        commits: list[str] | None = None
        if self.repo is not None and path is not None and aicr_commit:
            relative = self._relative_path(path, self.repo)
            if relative is not None:
                key = (aicr_commit, relative)
                if key not in self._commits:
                    if aicr_commit not in self._known:
                        self._known[aicr_commit] = git_commit_known(self.repo, aicr_commit)
                    found = (
                        _git_log_since(self.repo, aicr_commit, [relative])
                        if self._known[aicr_commit]
                        else None
                    )
                    self._commits[key] = None if found is None else tuple(found)
                known = self._commits[key]
                commits = None if known is None else list(known)
        return StaleExplanation(
            tuple(diff), None if commits is None else tuple(commits), truncated, refused
        )

    def _read(self, path: Path) -> bytes | str:
        """The overlay through the tree's bounded, no-follow reader, or why it was refused
        (said of the tree's path only: the machine's path of the OS error is left out)."""
        shown = f"{self.overlays.name}/{path.name}"
        try:
            return read_bounded(path, OVERLAY_LIMIT, display=shown)
        except FileRefusedError as refused:
            oversize = refused.reason == "oversize"
            return InputError(
                f"the current overlay was not read to explain stale evidence: {refused.message}",
                location=Location(shown),
                expected=refused.expected,
                found=refused.found,
                hint="an overlay is a small recipe; check that this is the right file"
                if oversize
                else refused.hint,
            ).diagnostics()

    def _diff(self, current: bytes, signed_yaml: bytes, canonicalizer: Canonicalizer) -> list[str]:
        """The canonical diff (limit + 1 lines, to tell truncation), remembered by content."""
        key = None
        if self.memo is not None:
            key = self.memo.key(
                f"canonical-diff/{self.limit + 1}", str(canonicalizer), signed_yaml, current
            )
            found, known = self.memo.get(key)
            if found and isinstance(known, list) and all(isinstance(x, str) for x in known):
                return list(known)
        try:
            full = canonical_diff(signed_yaml, current, canonicalizer, limit=self.limit + 1)
        except EvidenceDashError:
            full = []
        if key is not None and self.memo is not None:
            self.memo.put(key, full)
        return full

    def _relative_path(self, path: Path, repo: Path) -> str | None:
        if path not in self._relative:
            try:
                relative: str | None = path.resolve().relative_to(repo.resolve()).as_posix()
            except ValueError:
                relative = None
            self._relative[path] = relative
        return self._relative[path]
