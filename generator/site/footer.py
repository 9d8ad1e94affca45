"""The values the override templates show in the banners and the footer of every page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.site.build import SiteInputs

__all__ = ["footer_values", "registry_note", "trust_fallback_reason"]


def footer_values(inputs: SiteInputs) -> dict[str, Any]:
    """`extra.evidence`: what the override templates show in banners and the footer."""
    from generator.site.escape import safe_url

    bi = inputs.build_info
    trust = bi.get("trust") or {}
    commit = str(bi.get("commit") or "")
    source = safe_url(bi.get("sourceUrl"))
    commit_url = f"{source.rstrip('/')}/tree/{commit}" if source and commit else None
    return {
        "preview": bool(inputs.preview or bi.get("preview")),
        "commit": commit,
        "commit_short": commit[:12],
        "commit_url": commit_url,
        "source_url": source,
        "verifier": str(bi.get("verifier") or ""),
        "trust_name": str(trust.get("name") or "unknown"),
        "trust_production": bool(trust.get("production", False)),
        "trust_refreshed": trust.get("refreshed"),
        "trust_fallback": trust_fallback_reason(bi),
        "build_time": str(
            bi.get("buildTime") or inputs.index.get("meta", {}).get("buildTime") or ""
        ),
        "registries": registry_note(bi.get("trustedRegistries")),
    }


def trust_fallback_reason(build_info: Any) -> str | None:
    """build-info's `trustRootFallback.reason`: why the trust root was not refreshed (or None)."""
    fallback = build_info.get("trustRootFallback") if isinstance(build_info, dict) else None
    reason = fallback.get("reason") if isinstance(fallback, dict) else None
    return str(reason) if reason else None


def registry_note(trusted: Any) -> str:
    """The footer's trusted-registry policy: `every registry allowed` when there is no list."""
    if not trusted:
        return "every registry allowed (no trusted-registry list)"
    return "registries limited to " + ", ".join(str(t) for t in trusted)
