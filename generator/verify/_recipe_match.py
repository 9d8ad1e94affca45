"""Step 4.3, recipe identity: recipe.yaml decodes, and its name, profile and canonical digest match
the predicate and the pointer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.errors import EvidenceDashError
from generator.model import Pointer, PredicateType
from generator.recipe import digest_for_predicate_type, profile_selection_for, recipe_name_for
from generator.tree.yamlio import load_yaml_with_events
from generator.verify._fields import _HEX64, _get
from generator.verify._run import MAX_RECIPE_BYTES, _Run
from generator.verify.recipememo import RECIPES


def _recipe_identity(
    run: _Run,
    pointer: Pointer,
    ptype: PredicateType,
    predicate: Mapping[str, Any],
    recipe_bytes: bytes | None,
) -> tuple[Mapping[str, Any], str] | None:
    """recipe.yaml matches the predicate and the pointer: (recipe, profile selection), or None."""
    if recipe_bytes is None:
        run.fail(4, "manifest.json has no recipe.yaml entry")
        return None
    if len(recipe_bytes) > MAX_RECIPE_BYTES:
        run.fail(4, f"recipe.yaml exceeds {MAX_RECIPE_BYTES} bytes")
        return None
    memo_key = RECIPES.key(recipe_bytes, ptype)
    remembered = RECIPES.get(memo_key)
    recipe_events = None
    if remembered is not None:
        recipe = remembered[0]
    else:
        try:
            recipe, recipe_events = load_yaml_with_events(recipe_bytes, file="recipe.yaml")
        except EvidenceDashError as exc:
            run.fail(4, f"recipe.yaml cannot be decoded: {exc.message}")
            return None
    if not isinstance(recipe, dict):
        run.fail(4, "recipe.yaml is not a mapping")
        return None
    want_name = recipe_name_for(recipe)
    want_sel = profile_selection_for(recipe)
    problem = (
        _digest_problem(
            predicate,
            ptype,
            recipe_bytes,
            recipe_events,
            want_name,
            recipe,
            None if remembered is None else remembered[1],
        )
        or _profile_problem(recipe, predicate, want_sel)
        or _pointer_problem(pointer, want_name, want_sel)
    )
    if problem:
        run.fail(4, problem)
        return None
    return recipe, want_sel


def _digest_problem(
    predicate: Mapping[str, Any],
    ptype: PredicateType,
    recipe_bytes: bytes,
    recipe_events: Any,
    want_name: str,
    recipe: Mapping[str, Any],
    known_digest: str | None,
) -> str | None:
    """The predicate's recipe.name and recipe.digest against the recipe's name and digest
    (`known_digest` when the memo has these bytes, else canonicalized and remembered)."""
    got_name = _get(predicate, "recipe", "name")
    if want_name and got_name != want_name:
        return f"predicate recipe.name {got_name!r} does not match the recipe's name {want_name!r}"
    # Canonicalized once per distinct document (generator.verify.recipememo); the comparison
    # with this bundle's predicate below runs for every bundle.
    want_digest = known_digest
    if want_digest is None:
        try:
            want_digest = digest_for_predicate_type(recipe_bytes, ptype, events=recipe_events)
        except EvidenceDashError as exc:
            return f"recipe.yaml cannot be canonicalized: {exc.message}"
        RECIPES.put(RECIPES.key(recipe_bytes, ptype), recipe, want_digest, len(recipe_bytes))
    got_digest = _get(predicate, "recipe", "digest")
    if got_digest != want_digest:
        return f"recipe digest mismatch (predicate {got_digest}, recipe.yaml {want_digest})"
    return None


def _profile_problem(
    recipe: Mapping[str, Any], predicate: Mapping[str, Any], want_sel: str
) -> str | None:
    """The predicate's profile against the recipe's `metadata.selectedProfile`."""
    metadata = recipe.get("metadata")
    selected = metadata.get("selectedProfile") if isinstance(metadata, dict) else None
    profile = predicate.get("profile")
    if (selected is None) != (profile is None):
        return (
            "recipe metadata.selectedProfile and predicate.profile must be present "
            "together or absent together"
        )
    if not isinstance(profile, dict):
        return None
    selected_map = selected if isinstance(selected, dict) else {}
    if profile.get("selection") != want_sel:
        return (
            f"predicate profile.selection {profile.get('selection')!r} does not "
            f"match the recipe's {want_sel!r}"
        )
    if (profile.get("advertiser") or "") != (selected_map.get("advertiser") or ""):
        return (
            f"predicate profile.advertiser {profile.get('advertiser')!r} does not "
            f"match the recipe's {selected_map.get('advertiser')!r}"
        )
    pdi = profile.get("policyDescriptorIdentity")
    if not isinstance(pdi, str) or not _HEX64.match(pdi):
        return (
            "predicate profile.policyDescriptorIdentity is not 64 lowercase hex "
            "(historical-only; regenerate and re-sign)"
        )
    return None


def _pointer_problem(pointer: Pointer, want_name: str, want_sel: str) -> str | None:
    """The pointer's recipe and profile against the recipe's name and selection."""
    if want_name and pointer.recipe != want_name:
        return f"pointer recipe {pointer.recipe!r} does not match the recipe's name {want_name!r}"
    if (pointer.profile or "") != want_sel:
        return (
            f"pointer profile {pointer.profile or ''!r} does not match the recipe's "
            f"selection {want_sel!r}"
        )
    return None
