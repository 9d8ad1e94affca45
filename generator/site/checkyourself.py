"""Check it yourself, by digest: the reference, the transparency-log entry and the commands a
card prints, from a checkout of the evidence tree as `recipes/` (`evidence-dashboard verify` is
run as printed by the tests; the aicr and cosign lines follow those tools' documented forms).

The reference is pinned by digest (never a tag: the site verified a digest); the trust options
are those the build recorded in `build-info.json` (`verifyWith`, generator.verifyhint).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RootNote", "artifact_url", "by_digest_commands", "digest_ref", "log_entry"]


@dataclass(frozen=True)
class RootNote:
    """The trust root a non-production build verified with, and where a reader gets it."""

    name: str
    path: str
    outside: bool


_DIGEST = "@sha256:"


def _repository(ref: str) -> str:
    """`registry/repo` of a reference with a tag or digest (`ghcr.io/a/b:t` -> `ghcr.io/a/b`)."""
    ref = ref.split("@")[0]
    head, sep, tail = ref.rpartition(":")
    return head if sep and "/" not in tail and "/" in head else ref


def digest_ref(p: Mapping[str, Any]) -> str:
    """The artifact's reference pinned by digest: the verified `evidenceRef`, else the
    pointer's OCI reference if it names a digest, else its repository with the bundle digest
    ("" when the pointer names no OCI artifact)."""
    ev = p.get("evidence") or {}
    bundle = p.get("bundle") or {}
    for ref in (ev.get("evidenceRef"), bundle.get("oci")):
        if isinstance(ref, str) and _DIGEST in ref:
            return ref
    oci, digest = bundle.get("oci"), bundle.get("digest")
    if isinstance(oci, str) and oci and isinstance(digest, str) and digest.startswith("sha256:"):
        return f"{_repository(oci)}@{digest}"
    return oci if isinstance(oci, str) else ""


def artifact_url(ref: str) -> str | None:
    """A web address of the artifact by digest (ghcr.io serves one), else None."""
    return "https://" + ref if ref.startswith("ghcr.io/") and _DIGEST in ref else None


def log_entry(ev: Mapping[str, Any] | None, bi: Mapping[str, Any]) -> tuple[str, str | None]:
    """The transparency-log index and a search link for it: the verifier's own link (the
    production log's search), else the build's `--log-search-url` template."""
    index = (ev or {}).get("rekorLogIndex")
    if index is None or isinstance(index, bool):
        return "", None
    if (ev or {}).get("logUrl"):
        return str(index), str(ev["logUrl"])  # type: ignore[index]
    template = bi.get("logSearchUrl")
    if isinstance(template, str) and "{logIndex}" in template:
        return str(index), template.replace("{logIndex}", str(index))
    return str(index), None


def _trust_options(bi: Mapping[str, Any]) -> tuple[list[str], RootNote | None]:
    """The `evidence-dashboard verify` trust and bundle options the build used."""
    w = bi.get("verifyWith") or {}
    out: list[str] = []
    note = None
    root = w.get("trustRoot")
    if isinstance(root, Mapping) and root.get("path"):
        out += ["--trust-root", str(root["path"])]
        name = str(root["path"]).rsplit("/", 1)[-1]
        note = RootNote(name, str(root["path"]), bool(root.get("outside")))
    elif w.get("trust") and w.get("trust") != "production":
        out += ["--trust", str(w["trust"])]
    for layout in w.get("ociLayouts") or ():
        if isinstance(layout, Mapping) and layout.get("path"):
            out += ["--oci-layout", str(layout["path"])]
    if w.get("offline"):
        out.append("--offline")
    return out, note


def by_digest_commands(
    p: Mapping[str, Any], ref: str, verified: Any, first_party: bool, bi: Any
) -> tuple[tuple[str, ...], RootNote | None]:
    """The commands that check this attestation by digest, as a reader types them."""
    if not ref:
        return (), None
    options, note = _trust_options(bi)
    lines = [f"aicr evidence verify {shlex.quote(ref)}"]
    if verified is not None:
        # The Sigstore bundle is an OCI 1.1 referrer of the artifact: cosign 2.x looks there
        # only with --new-bundle-format (3.x by default, and still takes the flag).
        cosign = ["cosign", "verify-attestation", "--new-bundle-format"]
        ptype = (p.get("bundle") or {}).get("predicateType")
        if ptype:
            cosign += ["--type", str(ptype)]
        cosign += [
            "--certificate-identity",
            verified.identity,
            "--certificate-oidc-issuer",
            verified.issuer,
        ]
        if note is not None:
            cosign += ["--trusted-root", note.path]
        lines.append(shlex.join([*cosign, ref]))
    if not first_party:
        path = f"recipes/{p.get('path')}"
        lines.append(shlex.join(["evidence-dashboard", "verify", path, *options]))
    return tuple(lines), note
