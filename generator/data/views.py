"""Small readings of the written data documents, shared by the pages and the change feed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["evidence_time", "tab_checks", "verdict_of"]

_VERDICT_WORDS = {0: "verified", 1: "failures", 2: "rejected"}


def verdict_of(pointer: Mapping[str, Any]) -> str:
    """A pointers.json entry's verdict: `verified` | `failures` | `rejected` | `pending` |
    `no-verdict`."""
    verify = pointer.get("verify") or {}
    if verify.get("pending"):
        return "pending"
    code = verify.get("exit")
    return (
        _VERDICT_WORDS[code] if isinstance(code, int) and code in _VERDICT_WORDS else "no-verdict"
    )


def evidence_time(evidence: Mapping[str, Any]) -> str:
    """When evidence was signed, for ordering: the verified transparency-log time (`loggedAt`);
    the claimed attestedAt only for data written before the log time was kept."""
    return str(evidence.get("loggedAt") or evidence.get("attestedAt") or "")


def tab_checks(tab: Mapping[str, Any]) -> dict[str, str]:
    """Each check of an index.json tab's combined grid (`phase/name`) with its consensus. A
    kept tab (`generator.evaluate.tabstore`) has them worked out from its whole text when it
    was kept (`LaidOutEntry.derived`), so they are read without parsing it."""
    derived = getattr(tab, "derived", None)
    if derived:
        checks = derived.get("checks")
        if isinstance(checks, dict):
            return dict(checks)
    combined = tab.get("combined") or {}
    return {
        f"{t.get('phase')}/{t.get('name')}": str(t.get("consensus"))
        for t in combined.get("tests") or ()
        if isinstance(t, Mapping)
    }
