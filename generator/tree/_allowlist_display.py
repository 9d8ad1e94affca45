"""Public, non-PII names for signers: the label a page shows and the organisation a signer counts as."""

from __future__ import annotations

from urllib.parse import urlsplit

from generator.model import (
    Classification,
    SignerIdentity,
)

_FORGE_HOSTS = ("github.com", "gitlab.com")


def _forge_repo(identity: str) -> tuple[str, str] | None:
    """(org, repo) of a github.com / gitlab.com workflow identity URL, else None."""
    if _has_line_break(identity) or not identity.startswith("https://"):
        return None
    parts = urlsplit(identity)
    if (parts.hostname or "").lower() not in _FORGE_HOSTS:
        return None
    segments = [s for s in parts.path.split("@", 1)[0].split("/") if s]
    if len(segments) < 2:
        return None
    return segments[0], segments[1]


def display_label(signer: SignerIdentity, classification: Classification) -> str:
    """A public, non-PII label for a signer.

    First that applies: the allowlist entry's `label`; `<org>/<repo>` of a github.com or
    gitlab.com workflow identity; the handle of a GitHub noreply address
    (`123+handle@users.noreply.github.com` -> `handle`); the local part of any other email; the
    host of any other URL identity; else the signer's 32-hex source slug. The raw email is never
    returned.
    """
    entry = classification.entry
    if entry is not None and entry.label:
        return entry.label
    identity = signer.identity
    repo = _forge_repo(identity)
    if repo is not None:
        return f"{repo[0]}/{repo[1]}"
    if "@" in identity and "://" not in identity and not _has_line_break(identity):
        local, _, domain = identity.rpartition("@")
        if domain.lower() == "users.noreply.github.com" and "+" in local:
            local = local.split("+", 1)[1]
        if local:
            return local
    if "://" in identity and not _has_line_break(identity):
        host = urlsplit(identity).hostname
        if host:
            return host
    try:
        return str(signer.slug)
    except ValueError:
        return "unknown signer"


def organisation_of(signer: SignerIdentity, classification: Classification) -> str:
    """What counts as one organisation for the distinct-organisations check.

    - a github.com / gitlab.com workflow identity: its org (first path segment), lowercased,
      because forge org names are case-insensitive (GitHub and GitLab orgs of the same name count
      as one: merging can only make corroboration harder, never easier);
    - any other allowlisted identity: its allowlist entry (the label, else the source slug, else
      the pattern), so one reviewed entry is one organisation;
    - anything else: the identity itself.
    """
    repo = _forge_repo(signer.identity)
    if repo is not None:
        return repo[0].lower()
    entry = classification.entry
    if classification.allowlisted and entry is not None:
        return entry.label or entry.source or entry.identity_pattern or signer.identity
    return signer.identity


def _has_line_break(text: str) -> bool:
    return "\n" in text or "\r" in text
