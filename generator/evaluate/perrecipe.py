"""Incremental evaluation: a recipe whose inputs did not change is not evaluated again.

The usable pointer files of a tree are grouped by recipe (the folder they sit in under
`evidence/`, or a flat file's own path). What evaluating one group makes (`products`) depends on:

- the bytes of each of its pointer files and where they sit (the verdict cache's claims);
- the overlays freshness reads for each pointer (`overlays/<recipe>.yaml` and, for a profiled
  pointer, the overlay without its profile suffix): their bytes, or that there is none;
- how the allowlist classifies the signers its verdicts name (checked against the product when
  it is read: another allowlist that classifies them alike reuses it);
- for every group alike: the trust root digest, the verifier and the policy options that reach
  a verdict, the code and libraries that evaluate (`generator.buildmemo.code_digest`), the
  evaluation's options (`evaluation_inputs(per_recipe=True)`: SOURCE_DATE_EPOCH, the digest map,
  the aicr binary, ...).

The git commit of the tree reaches only the products explaining stale evidence (the explanation
names the commits since the attested one): such a product is stored with the commit it was made
at, and is reused only at that commit, so a new commit re-evaluates those recipes alone.

The key of a group is a sha256 over all of these. A group whose product is stored under its key,
and whose signers the allowlist still classifies alike, is reused: none of its pointers is read
from the verdict cache, verified or assessed. The other groups are evaluated, and each whose every
verdict is definite (no "no verdict", no older verdict standing in) is stored for the next build.
The board, the documents and the build information are made from all records every time, so the
result is the one a cold build of the same tree makes.

`--reevaluate`, `--bundle-refs` (whose entries join pointers across recipes) and the PR report
evaluate everything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from generator.buildmemo import code_digest, evaluation_inputs, git_head
from generator.cacheauth import CacheAuth
from generator.corroborate import BoardEntry
from generator.data import PointerRecord
from generator.evaluate.assess import aicr_program
from generator.evaluate.products import (
    PRODUCT_VERSION,
    PointerProduct,
    RecipeProduct,
    StoredOutcome,
    classification_mark,
)
from generator.evaluate.productstore import ProductStore
from generator.evaluate.productwrites import finish_writing, store_products
from generator.model import (
    Classification,
    ParsedPointer,
    Pending,
    Rejected,
    SignerIdentity,
    Verified,
)
from generator.options import EvaluationOptions
from generator.tree import Allowlist
from generator.verify.cache import verifier_version

__all__ = ["Made", "RecipePlan", "recipe_of"]

Made = tuple[PointerRecord, Mapping[str, Any], BoardEntry | None]
"""What the evaluation made of one pointer: its record, its pointers.json entry, its board
entry (before each bundle is counted once)."""


def recipe_of(item: ParsedPointer) -> str:
    """The group a pointer file belongs to: its recipe folder, else (flat) its own path."""
    location = item.location
    return location.folder_recipe if location.folder_recipe is not None else location.path


def _file_state(path: Path, limit: int) -> str | None:
    """sha256 of a regular file's bytes; None when absent; a marker for anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable:{type(exc).__name__}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"not-a-file:{stat.S_IFMT(info.st_mode):o}"
        if info.st_size > limit:
            return f"oversize:{info.st_size}"
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return hashlib.sha256(fh.read(limit + 1)).hexdigest()
    except OSError as exc:
        return f"unreadable:{type(exc).__name__}"
    finally:
        os.close(fd)


def _overlay_stems(item: ParsedPointer) -> list[str]:
    """The overlays freshness reads for a pointer (`generator.freshness`): the recipe's own,
    and for a profiled pointer the one without the profile suffix."""
    recipe, profile = item.pointer.recipe, item.pointer.profile
    stems = [str(recipe)]
    if profile:
        name, _, value = str(profile).partition("=")
        suffix = f"-{name.lower()}-{value.lower()}"
        if str(recipe).endswith(suffix):
            stems.append(str(recipe)[: -len(suffix)])
    return stems


class _Overlays:
    """The state of each overlay of the tree, asked by name: the folder is listed once and a
    name that is not listed (a hostile recipe name: too long, `..`, a slash) is absent. A file
    this build already hashed (`hashed`, by its path as the memo key's `tree_digest` walked
    it) is not read again: its state is that sha256, as `_file_state` gives it."""

    def __init__(self, folder: Path, hashed: Mapping[str, str] | None = None) -> None:
        self.folder = folder
        self.hashed = hashed or {}
        self._names: set[str] | None = None
        self._states: dict[str, str | None] = {}

    def state(self, stem: str) -> str | None:
        if self._names is None:
            try:
                with os.scandir(self.folder) as entries:
                    self._names = {e.name for e in entries}
            except OSError:
                self._names = set()
        name = f"{stem}.yaml"
        if name not in self._names:
            return None
        if name not in self._states:
            path = self.folder / name
            known = self.hashed.get(str(path))
            self._states[name] = known if known is not None else _file_state(path, 16 << 20)
        return self._states[name]


@dataclass
class RecipePlan:
    """Which recipes of a tree are reused from their stored products and which are evaluated
    (see the module). `reused` maps each reused pointer's path to its product."""

    store: ProductStore | None
    allowlist: Allowlist
    keys: dict[str, str | None] = field(default_factory=dict)
    """Each group's key (None: it cannot be keyed, and is evaluated and not stored)."""
    paths: dict[str, list[str]] = field(default_factory=dict)
    """Each group's usable pointer paths, in path order."""
    reused: dict[str, PointerProduct] = field(default_factory=dict)
    reused_groups: set[str] = field(default_factory=set)
    stored_groups: set[str] = field(default_factory=set)
    """The groups evaluated this build whose product `keep` stored (every verdict definite)."""
    loaded: dict[str, RecipeProduct] = field(default_factory=dict)
    """The product of each reused group."""
    _classified: dict[SignerIdentity, Classification] = field(default_factory=dict)
    tree: Path | None = None
    """The evidence tree, whose git commit binds the products explaining stale evidence."""
    _commit: str | None = None

    @property
    def recipes_evaluated(self) -> int:
        return len(self.paths) - len(self.reused_groups)

    @property
    def recipes_reused(self) -> int:
        return len(self.reused_groups)

    def commit(self) -> str:
        """The tree's git commit ("" outside a repository), asked of git once."""
        if self._commit is None:
            self._commit = (git_head(self.tree) if self.tree is not None else None) or ""
        return self._commit

    def classify(self, signer: SignerIdentity) -> Classification:
        """The current allowlist's classification of `signer` (asked once per signer)."""
        known = self._classified.get(signer)
        if known is None:
            known = self._classified[signer] = self.allowlist.classify(signer)
        return known

    @classmethod
    def everything(cls, files: Sequence[Any], allowlist: Allowlist) -> RecipePlan:
        """A plan that reuses nothing and stores nothing (not incremental)."""
        plan = cls(None, allowlist)
        plan._group(files)
        return plan

    @classmethod
    def make(
        cls,
        options: EvaluationOptions,
        files: Sequence[Any],
        allowlist: Allowlist,
        *,
        trust_digest: str,
        policy: str,
        store_root: Path,
        digests: Mapping[str, str],
        auth: CacheAuth | None = None,
        hashed: Mapping[str, str] | None = None,
    ) -> RecipePlan:
        """The plan of an incremental evaluation: each group keyed, and the groups whose
        product checks reused. `digests` are the sha256 of the bytes the scan parsed, by
        path (`PointerDocs.digests`); `hashed`, of the tree's files this build hashed (the
        overlays among them are not read again)."""
        finish_writing()  # the products an earlier evaluation of this process stores
        store = ProductStore(store_root, auth or CacheAuth.from_environment())
        plan = cls(store, allowlist, tree=options.tree.recipes)
        groups = plan._group(files)
        common = _common_digest(options, trust_digest, policy)
        overlays = _Overlays(options.tree.recipes / "overlays", hashed)
        for name, items in groups.items():
            key = _group_key(common, items, overlays, digests)
            plan.keys[name] = key
            if key is None:
                continue
            product = store.load(key, plan.classify)
            if product is not None and plan._fits(product, plan.paths[name]):
                plan.reused_groups.add(name)
                plan.loaded[name] = product
                plan.reused.update((p.path, p) for p in product.pointers)
        return plan

    def _group(self, files: Sequence[Any]) -> dict[str, list[ParsedPointer]]:
        groups: dict[str, list[ParsedPointer]] = {}
        for item in files:
            if isinstance(item, ParsedPointer):
                groups.setdefault(recipe_of(item), []).append(item)
        self.paths = {name: [i.location.path for i in items] for name, items in groups.items()}
        return groups

    def _fits(self, product: RecipeProduct, paths: list[str]) -> bool:
        """Whether a product (authentic, for this key) answers for these pointer files under
        the current allowlist."""
        if [p.path for p in product.pointers] != paths:
            return False
        if product.history is not None and product.history != self.commit():
            return False  # it explains stale evidence by the commits since: made at another
        return all(
            classification_mark(self.classify(signer)) == mark for signer, mark in product.signers
        )

    def todo(self, files: Sequence[Any]) -> list[Any]:
        """The files to evaluate: those of the groups not reused."""
        return [f for f in files if f.location.path not in self.reused]

    def keep(
        self, made: Mapping[str, Made], documents: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        """Store the product of every evaluated group whose verdicts were all definite, and
        let the products of recipes this tree no longer has go. A reused product whose entries
        `documents` gave another signer label is stored again with it: an entry kept laid out
        is only written from its text while its label is the current one."""
        if self.store is None:
            return
        kept = []
        fresh = []
        for name, paths in self.paths.items():
            key = self.keys.get(name)
            if key is None:
                continue
            kept.append(key)
            if name in self.reused_groups:
                relabeled = _relabeled(self.loaded[name], documents or {})
                if relabeled is not None:
                    self.store.store(relabeled)  # here: its entries' text is read from its file
                continue
            product = self._product(key, [made.get(p) for p in paths])
            if product is not None:
                fresh.append(product)
                self.stored_groups.add(name)
        store_products(self.store, fresh, kept)  # by a helper, when there are many

    def product_keys(self) -> dict[str, str]:
        """The product key of each pointer path of a group reused or stored by `keep`: what
        its board entry depends on (`generator.evaluate.tabstore`)."""
        keys: dict[str, str] = {}
        for name, paths in self.paths.items():
            key = self.keys.get(name)
            if key is not None and (name in self.reused_groups or name in self.stored_groups):
                keys.update((path, key) for path in paths)
        return keys

    def _product(self, key: str, made: Sequence[Made | None]) -> RecipeProduct | None:
        pointers: list[PointerProduct] = []
        signers: dict[SignerIdentity, str] = {}
        for one in made:
            if one is None:
                return None
            record, document, entry = one
            verdict = record.verdict
            if not isinstance(verdict, Verified | Pending | Rejected) or record.verified_at:
                return None  # not definite: the next build asks again
            if isinstance(verdict, Verified | Rejected) and verdict.signer is not None:
                signers[verdict.signer] = classification_mark(self.classify(verdict.signer))
            if document.get("duplicateOf") is not None:
                document = {**document, "duplicateOf": None}
            outcome = StoredOutcome.of(verdict)
            pointers.append(PointerProduct(record.path, outcome, document, entry))
        ordered = tuple(sorted(signers.items(), key=lambda s: (s[0].issuer, s[0].identity)))
        history = self.commit() if any(_explains(p.document) for p in pointers) else None
        return RecipeProduct(key, ordered, tuple(pointers), history)


def _explains(document: Mapping[str, Any]) -> bool:
    """Whether a pointer's entry explains stale evidence (read from the tree's git history)."""
    freshness = document.get("freshness")
    return isinstance(freshness, Mapping) and freshness.get("explanation") is not None


def _label(document: Mapping[str, Any]) -> Any:
    signer = document.get("signer")
    return signer.get("label") if isinstance(signer, Mapping) else None


def _relabeled(
    product: RecipeProduct, documents: Mapping[str, Mapping[str, Any]]
) -> RecipeProduct | None:
    """`product` with the signer labels its entries have in `documents` (as a pointer that
    duplicates none), or None when every label is the stored one."""
    pointers = []
    for pointer in product.pointers:
        document = documents.get(pointer.path, pointer.document)
        if _label(document) == _label(pointer.document):
            pointers.append(pointer)
            continue
        if document.get("duplicateOf") is not None:
            document = {**document, "duplicateOf": None}
        pointers.append(dataclasses.replace(pointer, document=document))
    if all(new is old for new, old in zip(pointers, product.pointers, strict=True)):
        return None
    return dataclasses.replace(product, pointers=tuple(pointers))


def _common_digest(options: EvaluationOptions, trust_digest: str, policy: str) -> str:
    """What every recipe's product depends on (see the module)."""
    inputs = {
        "version": PRODUCT_VERSION,
        "code": code_digest(),
        "verifier": verifier_version(),
        "trust": trust_digest,
        "policy": policy,
        "options": evaluation_inputs(options, aicr_program(options.freshness), per_recipe=True),
    }
    text = json.dumps(inputs, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _group_key(
    common: str,
    items: Sequence[ParsedPointer],
    overlays: _Overlays,
    digests: Mapping[str, str],
) -> str | None:
    """One group's key (each pointer file by the digest of the bytes the scan parsed), or
    None when one of its files has none. Every part is text or null, so the JSON is exact."""
    parts: list[Any] = []
    for item in items:
        path = item.location.path
        state = digests.get(path)
        if state is None:
            return None
        parts.append([path, state, [[s, overlays.state(s)] for s in _overlay_stems(item)]])
    return hashlib.sha256(orjson.dumps([common, parts])).hexdigest()
