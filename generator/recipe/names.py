"""Recipe identity: profile selections, recipe names, board coordinates and registry order.

Pure functions over recipe data (spec evidence-format 2.1 and 3.6, aicr-dashboard 2.3 and 3):

- a profile selection is `name=value`; its lossy, lowercase segment suffixes recipe names and tabs;
- `recipe_name_for` is aicr's `RecipeNameFor` (accelerator-first slug plus the profile segment);
- `coordinate_for` is aicr's `CoordinateFor` (service-first `group/dashboard/tab`), and
  `criteria_from_coordinate` its checked inverse;
- the `*_ORDER` tuples are the criteria registry's static lists, which order the board.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from generator.errors import InputError, InternalError, Location

__all__ = [
    "ACCELERATOR_ORDER",
    "AXES",
    "INTENT_ORDER",
    "OS_ORDER",
    "PLATFORM_ORDER",
    "SERVICE_ORDER",
    "Coordinate",
    "CoordinateError",
    "ProfileError",
    "coordinate_for",
    "criteria_from_coordinate",
    "parse_profile",
    "profile_segment",
    "profile_selection_for",
    "recipe_name_for",
    "sort_key",
]


class ProfileError(InputError):
    """A profile selection breaks the `name=value` grammar (spec 2.1)."""


class CoordinateError(InputError):
    """Criteria that have no board cell, or a coordinate that does not map back to criteria."""


# --------------------------------------------------------------------------- registry order

SERVICE_ORDER: Final[tuple[str, ...]] = (
    "aks",
    "bcm",
    "eks",
    "generic",
    "gke",
    "k0s",
    "kind",
    "lke",
    "metal3",
    "ocp",
    "oke",
    "rke2",
)
ACCELERATOR_ORDER: Final[tuple[str, ...]] = (
    "a100",
    "b200",
    "gb200",
    "gb300",
    "h100",
    "h200",
    "l40",
    "l40s",
    "rtx-pro-6000",
    "vr200",
)
OS_ORDER: Final[tuple[str, ...]] = (
    "amazonlinux",
    "cos",
    "ol",
    "oraclelinux",
    "rhel",
    "talos",
    "ubuntu",
)
INTENT_ORDER: Final[tuple[str, ...]] = ("inference", "training")
PLATFORM_ORDER: Final[tuple[str, ...]] = (
    "dynamo",
    "kubeflow",
    "kueue",
    "nim",
    "runai",
    "slurm",
)

AXES: Final[tuple[str, ...]] = ("service", "accelerator", "os", "intent", "platform")
"""The five criteria axes in the order the board's `criteria` map lists them."""

_ORDERS: Final[dict[str, tuple[str, ...]]] = {
    "service": SERVICE_ORDER,
    "accelerator": ACCELERATOR_ORDER,
    "os": OS_ORDER,
    "intent": INTENT_ORDER,
    "platform": PLATFORM_ORDER,
}


def sort_key(axis: str, value: str) -> tuple[int, str]:
    """Registry position of `value` on `axis`; values the registry does not know sort after, A-Z."""
    order = _ORDERS.get(axis)
    if order is None:
        raise InternalError(f"unknown criteria axis {axis!r}", expected=", ".join(AXES), found=axis)
    if value in order:
        return (order.index(value), "")
    return (len(order), value)


# --------------------------------------------------------------------------- profiles

_PROFILE: Final = re.compile(r"([A-Za-z0-9._-]+)=([A-Za-z0-9._-]+)")


def parse_profile(selection: str) -> tuple[str, str]:
    """(name, value) of a `name=value` selection; raises `ProfileError` when malformed."""
    match = _PROFILE.fullmatch(selection)
    if match is None:
        raise ProfileError(
            "invalid profile selection",
            location=Location("profile"),
            expected="exactly one '=', no spaces, each side of [A-Za-z0-9._-]+",
            found=repr(selection),
            hint="write the selection as name=value, e.g. gpuStack=operator",
        )
    return match.group(1), match.group(2)


def profile_segment(selection: str) -> str:
    """`lower(name) + "-" + lower(value)`: the lossy suffix of recipe names and tabs."""
    name, value = parse_profile(selection)
    return f"{name.lower()}-{value.lower()}"


def _selected_profile(recipe: Mapping[str, Any]) -> Mapping[str, Any] | None:
    metadata = recipe.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    selected = metadata.get("selectedProfile")
    if selected is None:
        return None
    return selected if isinstance(selected, Mapping) else {}


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def profile_selection_for(recipe: Mapping[str, Any]) -> str:
    """The exact-case `name=value` of `metadata.selectedProfile`; "" when the recipe has none."""
    selected = _selected_profile(recipe)
    if selected is None:
        return ""
    return f"{_text(selected.get('name'))}={_text(selected.get('value'))}"


def recipe_name_for(recipe: Mapping[str, Any]) -> str:
    """aicr's `RecipeNameFor`: "" when underivable, `recipe` when every criteria part is empty."""
    criteria = recipe.get("criteria")
    if not isinstance(criteria, Mapping):
        return ""
    parts = [
        _text(criteria.get(axis)) for axis in ("accelerator", "service", "os", "intent", "platform")
    ]
    name = "-".join(part for part in parts if part not in ("", "any")) or "recipe"
    if _selected_profile(recipe) is not None:
        try:
            name += "-" + profile_segment(profile_selection_for(recipe))
        except ProfileError:
            return ""
    return name


# --------------------------------------------------------------------------- coordinates


@dataclass(frozen=True)
class Coordinate:
    """A board cell: `group` (service), `dashboard` (`accelerator-os`) and `tab`."""

    group: str
    dashboard: str
    tab: str

    @property
    def path(self) -> str:
        """`group/dashboard/tab`, an opaque identity: never split it (values contain `-`)."""
        return f"{self.group}/{self.dashboard}/{self.tab}"


def _concrete(value: str) -> bool:
    return value not in ("", "any")


def coordinate_for(criteria: Mapping[str, str], profile_segment: str | None = None) -> Coordinate:
    """aicr's `CoordinateFor` over resolved criteria; the profile segment suffixes the tab.

    Raises `CoordinateError` naming the dimension when service, accelerator or intent is empty or
    `any`, or when any value contains `/`.
    """
    values = {axis: _text(criteria.get(axis)) for axis in AXES}
    for axis in ("service", "accelerator", "intent"):
        if not _concrete(values[axis]):
            raise CoordinateError(
                f"invalid request: {axis} must be concrete for a board coordinate",
                location=Location("criteria", axis),
                expected=f"a named {axis}",
                found=repr(values[axis]),
                hint="the recipe has no board cell until it names one",
            )
    named = {**values, "profile": profile_segment or ""}
    for axis, value in named.items():
        if "/" in value:
            raise CoordinateError(
                f"invalid request: {axis} contains '/'",
                location=Location("criteria", axis),
                expected="a value without '/'",
                found=repr(value),
                hint="criteria values are single path segments",
            )
    os_name = values["os"] if _concrete(values["os"]) else "any"
    tab = values["intent"]
    if _concrete(values["platform"]):
        tab += "-" + values["platform"]
    if profile_segment:
        tab += "-" + profile_segment
    return Coordinate(values["service"], f"{values['accelerator']}-{os_name}", tab)


def _split_dashboard(dashboard: str) -> tuple[str, str]:
    for os_name in sorted(OS_ORDER, key=len, reverse=True):
        suffix = "-" + os_name
        if dashboard.endswith(suffix) and len(dashboard) > len(suffix):
            return dashboard[: -len(suffix)], os_name
    accelerator, sep, os_name = dashboard.rpartition("-")
    if not sep or not accelerator or not os_name:
        raise CoordinateError(
            "dashboard has no accelerator-os form",
            location=Location("coordinate", "dashboard"),
            expected="<accelerator>-<os>",
            found=repr(dashboard),
            hint="the run's coordinate cannot be mapped back to criteria; it is skipped",
        )
    return accelerator, os_name


def _split_tab(tab: str) -> tuple[str, str]:
    for intent in sorted(INTENT_ORDER, key=len, reverse=True):
        if tab == intent:
            return intent, ""
        if tab.startswith(intent + "-") and len(tab) > len(intent) + 1:
            return intent, tab[len(intent) + 1 :]
    intent, _, platform = tab.partition("-")
    return intent, platform


def criteria_from_coordinate(coord: Coordinate, profile_segment: str | None) -> dict[str, str]:
    """The criteria behind a coordinate (aicr `criteriaFromCoordinate`), checked by round trip.

    Strips `-<profile_segment>` from the tab, splits the dashboard on the longest known OS suffix
    (else the last hyphen) and the tab on a known intent prefix (else the first hyphen), then
    requires `coordinate_for` of the result to give the same path; raises `CoordinateError` if not.
    """
    tab = coord.tab
    if profile_segment:
        suffix = "-" + profile_segment
        if not tab.endswith(suffix) or len(tab) == len(suffix):
            raise CoordinateError(
                "tab does not carry the profile segment",
                location=Location("coordinate", "tab"),
                expected=f"a tab ending in {suffix!r}",
                found=repr(tab),
                hint="the run's profile and coordinate disagree; it is skipped",
            )
        tab = tab[: -len(suffix)]
    accelerator, os_name = _split_dashboard(coord.dashboard)
    intent, platform = _split_tab(tab)
    criteria = {
        "service": coord.group,
        "accelerator": accelerator,
        "os": os_name,
        "intent": intent,
        "platform": platform,
    }
    rebuilt = coordinate_for(criteria, profile_segment)
    if rebuilt != coord:
        raise CoordinateError(
            "coordinate does not map back to itself",
            location=Location("coordinate", coord.path),
            expected=coord.path,
            found=rebuilt.path,
            hint="the run's coordinate is ambiguous; it is skipped",
        )
    return criteria
