"""Which recipes a change touches (aicr-dashboard 4.2, 4.3), as pure functions over data.

Paths are relative to the recipes root (`overlays/x.yaml`, `evidence/<dir>/<src>/<file>.yaml`).
An overlay is a leaf when its criteria name a concrete service and accelerator. A leaf is
affected when its file, a `spec.base` ancestor, a mixin or a `valuesFile` of any of them, or one
of its pointers changed; a change to `overlays/base.yaml` affects every leaf. Allowlist changes
affect the recipes whose evidence a changed entry classifies (the caller passes those in).
What hydration also merges but this walk never follows is returned as "not covered".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.model import PointerFile

OVERLAYS = "overlays/"
MIXINS = "mixins/"
EVIDENCE = "evidence/"
BASE_OVERLAY = "overlays/base.yaml"
ALLOWLIST = "evidence/allowlist.yaml"
_WILDCARDS = ("", "any", "*")


@dataclass(frozen=True)
class Overlay:
    """What the affected walk needs from one `overlays/<name>.yaml`."""

    name: str
    base: str | None
    """`spec.base`, or None (implicitly `base`)."""
    mixins: tuple[str, ...]
    values_files: tuple[str, ...]
    service: str
    accelerator: str

    @property
    def path(self) -> str:
        return f"{OVERLAYS}{self.name}.yaml"

    @property
    def leaf(self) -> bool:
        """aicr iterates overlays whose service and accelerator are both concrete."""
        return self.service not in _WILDCARDS and self.accelerator not in _WILDCARDS


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def overlay_from_doc(name: str, doc: Any) -> Overlay:
    """An `Overlay` from a parsed RecipeMetadata (`spec.*`) or hydrated RecipeResult (top level)."""
    body: Mapping[str, Any] = {}
    if isinstance(doc, dict):
        spec = doc.get("spec")
        body = spec if isinstance(spec, dict) else doc
    criteria = body.get("criteria")
    criteria = criteria if isinstance(criteria, dict) else {}
    mixins = body.get("mixins")
    refs = body.get("componentRefs")
    values = [
        _text(ref.get("valuesFile")).removeprefix("./")
        for ref in (refs if isinstance(refs, list) else [])
        if isinstance(ref, dict) and _text(ref.get("valuesFile"))
    ]
    base = _text(body.get("base")) or None
    return Overlay(
        name=name,
        base=base,
        mixins=tuple(_text(m) for m in (mixins if isinstance(mixins, list) else []) if _text(m)),
        values_files=tuple(values),
        service=_text(criteria.get("service")).lower(),
        accelerator=_text(criteria.get("accelerator")).lower(),
    )


def ancestors(name: str, overlays: Mapping[str, Overlay]) -> tuple[str, ...]:
    """The `spec.base` chain above `name` (nearest first), with a cycle guard."""
    chain: list[str] = []
    seen = {name}
    current = overlays.get(name)
    while current is not None and current.base and current.base not in seen:
        seen.add(current.base)
        chain.append(current.base)
        current = overlays.get(current.base)
    return tuple(chain)


def referenced_paths(name: str, overlays: Mapping[str, Overlay]) -> dict[str, str]:
    """Every file a leaf's walk covers, mapped to why: itself, ancestors, mixins, values files."""
    found: dict[str, str] = {}
    for index, member in enumerate((name, *ancestors(name, overlays))):
        overlay = overlays.get(member)
        if overlay is None:
            continue
        found.setdefault(
            overlay.path, "overlay changed" if index == 0 else f"ancestor {member} changed"
        )
        for mixin in overlay.mixins:
            found.setdefault(f"{MIXINS}{mixin}.yaml", f"mixin {mixin} changed")
        for values in overlay.values_files:
            found.setdefault(values, f"values file {values} changed")
    return found


def pointer_dir(location_path: str) -> str:
    """The pointer's directory slug: `<dir>` of a nested pointer, the stem of a flat one."""
    rest = location_path.removeprefix(EVIDENCE)
    head, sep, _tail = rest.partition("/")
    return head if sep else rest.removesuffix(".yaml")


def pointer_overlay(
    location_path: str, profile: str | None, overlay_names: Iterable[str]
) -> tuple[str, bool]:
    """(overlay slug, exists) a pointer maps back to; profiled dirs strip `-<name>-<value>`."""
    names = set(overlay_names)
    folder = pointer_dir(location_path)
    if folder in names:
        return folder, True
    if profile and "=" in profile:
        key, _, value = profile.partition("=")
        suffix = f"-{key.strip().lower()}-{value.strip().lower()}"
        if folder.endswith(suffix) and len(folder) > len(suffix):
            stripped = folder[: -len(suffix)]
            return stripped, stripped in names
    return folder, False


def pointer_profile(item: PointerFile) -> str | None:
    """The recorded `profile:` of a parsed pointer (None for rejected files)."""
    pointer = getattr(item, "pointer", None)
    return getattr(pointer, "profile", None)


def is_pointer_path(path: str) -> bool:
    return path.startswith(EVIDENCE) and path.endswith(".yaml") and path != ALLOWLIST


@dataclass(frozen=True)
class Affected:
    """The affected-recipe walk: reasons per leaf, broad impact and what it did not walk."""

    reasons: Mapping[str, tuple[str, ...]]
    broad: bool
    not_covered: tuple[tuple[str, str], ...]

    @property
    def recipes(self) -> tuple[str, ...]:
        return tuple(sorted(self.reasons))


def affected_recipes(
    changed: Sequence[str],
    head_overlays: Mapping[str, Overlay],
    base_overlays: Mapping[str, Overlay],
    pointer_recipes: Mapping[str, str],
    allowlist_recipes: Mapping[str, Sequence[str]] | None = None,
) -> Affected:
    """Walk the changed paths.

    `pointer_recipes` maps each changed pointer path to the overlay slug it belongs to (see
    `pointer_overlay`); `allowlist_recipes` maps a recipe to the allowlist changes that
    reclassify its evidence. Leaves come from HEAD, plus leaves whose overlay HEAD deleted.
    """
    changed_set = set(changed)
    leaves = _leaves(changed_set, head_overlays, base_overlays)
    reasons: dict[str, list[str]] = {}

    def add(recipe: str, why: str) -> None:
        bucket = reasons.setdefault(recipe, [])
        if why not in bucket:
            bucket.append(why)

    broad = BASE_OVERLAY in changed_set
    covered: set[str] = set()
    for leaf in sorted(leaves):
        walk = referenced_paths(leaf, head_overlays)
        for path, why in referenced_paths(leaf, base_overlays).items():
            walk.setdefault(path, why)
        for path, why in sorted(walk.items()):
            if path in changed_set:
                add(
                    leaf,
                    why
                    if leaf in head_overlays or path != f"{OVERLAYS}{leaf}.yaml"
                    else "overlay removed",
                )
                covered.add(path)
        if broad:
            add(leaf, "base.yaml changed (broad impact)")
    if broad:
        covered.add(BASE_OVERLAY)
    for path, recipe in sorted(pointer_recipes.items()):
        if recipe in leaves:
            add(recipe, "evidence pointer changed")
        covered.add(path)
    for recipe, changes in sorted((allowlist_recipes or {}).items()):
        for change in changes:
            add(recipe, f"allowlist: {change}")
    return Affected(
        reasons={k: tuple(v) for k, v in reasons.items()},
        broad=broad,
        not_covered=_not_covered(changed_set - covered, head_overlays, base_overlays),
    )


def _leaves(
    changed: set[str], head: Mapping[str, Overlay], base: Mapping[str, Overlay]
) -> set[str]:
    """HEAD's leaf overlays, plus the base's leaves whose overlay HEAD deleted."""
    leaves = {n for n, o in head.items() if o.leaf}
    leaves |= {n for n, o in base.items() if o.leaf and o.path in changed and n not in head}
    return leaves


def _not_covered(
    rest: set[str], head: Mapping[str, Overlay], base: Mapping[str, Overlay]
) -> tuple[tuple[str, str], ...]:
    """Changed paths no leaf walk covered (the allowlist and pointers aside), with why."""
    return tuple(
        (path, _why_not(path, head, base))
        for path in sorted(rest)
        if not (path == ALLOWLIST or is_pointer_path(path))
    )


def _why_not(path: str, head: Mapping[str, Overlay], base: Mapping[str, Overlay]) -> str:
    if path.startswith(OVERLAYS) and path.endswith(".yaml"):
        name = path.removeprefix(OVERLAYS).removesuffix(".yaml")
        if name in head or name in base:
            return (
                "overlay matched by criteria during hydration, not walked "
                "(not in any leaf's spec.base chain)"
            )
        return "overlay file not walked"
    leaf_name = path.rsplit("/", 1)[-1]
    if leaf_name.startswith("registry") and leaf_name.endswith((".yaml", ".yml")):
        return "component registry entries are merged by hydration, not walked"
    if path.startswith(MIXINS):
        return "mixin not referenced by any leaf overlay"
    return "not referenced by any leaf overlay"
