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

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import yaml

from generator import strictjson
from generator.errors import EvidenceDashError, InputError, Location
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
        return {
            "state": str(self.state),
            "signed": self.signed,
            "current": self.current,
            "provider": self.provider,
        }

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

    def current(
        self, recipe: str, profile: str | None, canonicalizer: Canonicalizer
    ) -> str | None: ...


def compare(
    signed: str,
    predicate_type: PredicateType,
    recipe: str,
    profile: str | None,
    providers: Sequence[DigestProvider],
) -> FreshnessResult:
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


MEMO_FORMAT = "evidence-dashboard/freshness-memo/v2"
_ABSENT = object()


class ContentMemo:
    """Answers that depend only on file contents, remembered across builds in one JSON file.

    A warm build would otherwise canonicalise every current overlay and every stale signed
    recipe again. Keys are sha256 over a kind, a parameter and the exact input bytes; the
    file also records a fingerprint of the code that computes the answers (generator and
    PyYAML versions and the canonicaliser's source), and a file with another fingerprint, or
    one that cannot be read, is ignored. The file is sealed with an HMAC tag
    (`generator.cacheauth`): one that fails the check is ignored and counted. `save` writes
    atomically (a temporary file, then `os.replace`), so concurrent builds at worst lose each
    other's additions.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fingerprint = _code_fingerprint()
        self._loaded: dict[str, Any] = self._load() if path is not None else {}
        self._used: dict[str, Any] = {}
        self._added = False
        self._touched: set[str] = set()

    @staticmethod
    def key(kind: str, parameter: str, *parts: bytes) -> str:
        """The memo key of `kind` with `parameter` over the input byte strings `parts`."""
        digest = hashlib.sha256(f"{kind}\0{parameter}\0{len(parts)}".encode())
        for part in parts:
            digest.update(hashlib.sha256(part).digest())
        return digest.hexdigest()

    def get(self, key: str) -> tuple[bool, Any]:
        """(True, answer) when remembered, else (False, None)."""
        if key in self._used:
            self._touched.add(key)
            return True, self._used[key]
        if key in self._loaded:
            self._used[key] = self._loaded[key]
            self._touched.add(key)
            return True, self._loaded[key]
        return False, None

    def put(self, key: str, value: Any) -> None:
        """Remember a JSON-ready answer."""
        if key not in self._used or self._used[key] != value:
            self._added = True
        self._used[key] = value
        self._touched.add(key)

    def drain(self) -> dict[str, Any]:
        """The answers used or added since the last drain, for `adopt` by another copy of this
        memo (a forked verification worker's, sent back to the build's)."""
        touched, self._touched = self._touched, set()
        return {key: self._used[key] for key in touched}

    def adopt(self, entries: Mapping[str, Any]) -> None:
        """Take in what another copy's `drain` returned, as if this memo had been asked."""
        for key, value in entries.items():
            if key not in self._used and self._loaded.get(key, _ABSENT) == value:
                self._used[key] = value  # a remembered answer, used: kept, nothing new
            else:
                self.put(key, value)

    def save(self) -> None:
        """Write the answers used or added by this build, when there is something new."""
        if self.path is None or not self._added:
            return
        doc = {
            "format": MEMO_FORMAT,
            "fingerprint": self._fingerprint,
            "entries": dict(sorted(self._used.items())),
        }
        data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        from generator.cacheauth import CacheAuth, Purpose

        data = CacheAuth.from_environment().seal(Purpose.FRESHNESS, data)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            return  # a memo that cannot be written only costs the next build time
        self._added = False

    def _load(self) -> dict[str, Any]:
        assert self.path is not None
        from generator.cacheauth import CacheAuth, Purpose

        try:
            stored = self.path.read_bytes()
        except OSError:
            return {}
        if stored.startswith(b"{"):
            return {}  # written before the memo was sealed: ignored
        data = CacheAuth.from_environment().open(
            Purpose.FRESHNESS, stored, b"", f"freshness memo {self.path.name}"
        )
        if data is None:  # the cache is not trusted (generator.cacheauth)
            return {}
        try:
            doc = json.loads(data)
        except ValueError:
            return {}
        if (
            not isinstance(doc, dict)
            or doc.get("format") != MEMO_FORMAT
            or doc.get("fingerprint") != self._fingerprint
            or not isinstance(doc.get("entries"), dict)
        ):
            return {}
        return dict(doc["entries"])


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """What the remembered answers were computed with; a change forgets them all."""
    import generator
    import generator.recipe.canonical as canonical

    try:
        source = Path(canonical.__file__).read_bytes()
    except OSError:
        source = b""
    version = f"{generator.__version__}\0{yaml.__version__}\0"
    return hashlib.sha256(version.encode() + source).hexdigest()


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
        from generator.recipe.canonical import canonical_digest
        from generator.tree import load_yaml, read_bounded

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
                answer = str(canonical_digest(_current_canonical(data, canonicalizer)))
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
    import difflib

    from generator.recipe.canonical import canonicalize

    left = canonicalize(signed_yaml, canonicalizer).decode("utf-8").splitlines()
    right = _current_canonical(current_yaml, canonicalizer).decode("utf-8").splitlines()
    lines = list(difflib.unified_diff(left, right, "signed", "current", n=context, lineterm=""))
    return tuple(lines[:limit])


@lru_cache(maxsize=64)
def _current_canonical(current_yaml: bytes, canonicalizer: Canonicalizer) -> bytes:
    """The canonical bytes of a current overlay, remembered: its digest and the diff of every
    stale run of that recipe start from them, and the runs of a recipe come one after another.
    (Signed recipes are canonicalised for each bundle; this is the tree's own overlay.)"""
    from generator.recipe.canonical import canonicalize

    return canonicalize(current_yaml, canonicalizer)


def _usable_commit(commit: str) -> bool:
    return bool(commit) and all(c in "0123456789abcdef" for c in commit.lower())


def git_commit_known(repo: Path, commit: str) -> bool:
    """True when `commit` is a commit in the history of `repo`."""
    if not _usable_commit(commit):
        return False
    try:
        known = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return known.returncode == 0


def git_commits_since(repo: Path, commit: str, paths: Sequence[str]) -> list[str] | None:
    """Commits since `commit` touching `paths` (`<short sha> <subject>`), None outside history."""
    if not git_commit_known(repo, commit):
        return None
    return _git_log_since(repo, commit, paths)


def _git_log_since(repo: Path, commit: str, paths: Sequence[str]) -> list[str] | None:
    """`git log` of `paths` since a commit already known to be in the history."""
    try:
        log = subprocess.run(
            ["git", "-C", str(repo), "log", "--format=%h %s", f"{commit}..HEAD", "--", *paths],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
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
        done = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


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
        if path is not None:
            full = self._diff(path, signed_yaml, canonicalizer)
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
        return StaleExplanation(tuple(diff), None if commits is None else tuple(commits), truncated)

    def _diff(self, path: Path, signed_yaml: bytes, canonicalizer: Canonicalizer) -> list[str]:
        """The canonical diff (limit + 1 lines, to tell truncation), remembered by content."""
        try:
            current = path.read_bytes()
        except OSError:
            return []
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
