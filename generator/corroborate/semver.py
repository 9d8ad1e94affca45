"""aicr's version order (`orderVersionsNewestFirst`) over Go `x/mod/semver` semantics.

Valid versions need a `v` prefix; `vMAJOR` and `vMAJOR.MINOR` are shorthands; build metadata is
ignored; a prerelease sorts below its release; invalid tags rank below every valid one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_NUM = r"(?:0|[1-9][0-9]*)"
_IDENT = r"[0-9A-Za-z-]+"
_SEMVER = re.compile(
    rf"v({_NUM})(?:\.({_NUM})(?:\.({_NUM}))?)?"
    rf"(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+({_IDENT}(?:\.{_IDENT})*))?"
)


@dataclass(frozen=True)
class SemVer:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...]


def parse_semver(text: str) -> SemVer | None:
    """Parse a Go-semver version, or None when it is not valid."""
    match = _SEMVER.fullmatch(text)
    if not match:
        return None
    major, minor, patch, pre, _build = match.groups()
    if (minor is None or patch is None) and (pre is not None or _build is not None):
        return None  # Go only accepts prerelease/build on full vMAJOR.MINOR.PATCH
    idents = tuple(pre.split(".")) if pre else ()
    if any(i.isdigit() and len(i) > 1 and i.startswith("0") for i in idents):
        return None
    return SemVer(int(major), int(minor or 0), int(patch or 0), idents)


def _cmp_ident(a: str, b: str) -> int:
    a_num, b_num = a.isdigit(), b.isdigit()
    if a_num and b_num:
        return (int(a) > int(b)) - (int(a) < int(b))
    if a_num != b_num:
        return -1 if a_num else 1  # numeric identifiers sort below alphanumeric ones
    return (a > b) - (a < b)


def compare_semver(a: str, b: str) -> int:
    """Go `semver.Compare`: -1, 0 or 1; invalid versions are equal and below all valid ones."""
    pa, pb = parse_semver(a), parse_semver(b)
    if pa is None or pb is None:
        return (pa is not None) - (pb is not None)
    for x, y in ((pa.major, pb.major), (pa.minor, pb.minor), (pa.patch, pb.patch)):
        if x != y:
            return 1 if x > y else -1
    if pa.prerelease == pb.prerelease:
        return 0
    if not pa.prerelease or not pb.prerelease:
        return 1 if not pa.prerelease else -1  # a release beats its prerelease
    for x_id, y_id in zip(pa.prerelease, pb.prerelease, strict=False):
        c = _cmp_ident(x_id, y_id)
        if c:
            return c
    return (len(pa.prerelease) > len(pb.prerelease)) - (len(pa.prerelease) < len(pb.prerelease))


def order_versions_newest_first(versions: Sequence[str], newest_at: Mapping[str, str]) -> list[str]:
    """Semver descending, then the version's newest attestation, then string descending.

    `newest_at` maps a version to its newest attestedAt (normalised RFC 3339 `Z`, so string
    order is time order).
    """

    def cmp(a: str, b: str) -> int:
        c = compare_semver(a, b)
        if c:
            return -c
        ta, tb = newest_at.get(a, ""), newest_at.get(b, "")
        if ta != tb:
            return -1 if ta > tb else 1
        return -1 if a > b else (1 if a < b else 0)

    return sorted(set(versions), key=functools.cmp_to_key(cmp))
