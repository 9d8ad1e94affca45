"""The pages' Content-Security-Policy: scripts only from the site itself or hashed inline ones.

The policy is a `<meta http-equiv>` in the theme override (so it holds on any static host,
GitHub Pages included), placed first in `<head>`, before any script. Material inlines a few
small scripts (its page-scope helpers, the saved colour palette, linked content tabs); the
override renders those partials once more into a string and `policy` allows exactly their
sha256 digests, so any other inline script, including one smuggled into a page, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import re

__all__ = ["DIRECTIVES", "inline_script_hashes", "policy"]

DIRECTIVES = (
    "default-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "style-src 'self' 'unsafe-inline'",  # Plotly and Material set inline styles
    "connect-src 'self'",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
)
"""Everything but `script-src`, which `policy` builds."""

_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
_SRC = re.compile(r"\ssrc\s*=", re.IGNORECASE)
_TYPE = re.compile(r"""\stype\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_JS_TYPES = frozenset({"text/javascript", "application/javascript", "module"})


def inline_script_hashes(html: str) -> list[str]:
    """CSP source expressions (`'sha256-…'`) for each inline script the browser would run,
    in order, without repeats; scripts with `src` and data blocks (`application/json`) skip."""
    out: dict[str, None] = {}
    for match in _SCRIPT.finditer(html):
        attrs, body = match.group(1), match.group(2)
        if _SRC.search(attrs):
            continue
        kind = _TYPE.search(attrs)
        if kind and kind.group(1).lower() not in _JS_TYPES:
            continue
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        out[f"'sha256-{digest}'"] = None
    return list(out)


def policy(rendered: str) -> str:
    """The whole policy: `script-src 'self'` plus the hashes of the inline scripts in
    `rendered` (the theme's inline-script partials as this page renders them)."""
    scripts = " ".join(["'self'", *inline_script_hashes(str(rendered))])
    return "; ".join([DIRECTIVES[0], f"script-src {scripts}", *DIRECTIVES[1:]])


_META = re.compile(
    rb'(<meta http-equiv="Content-Security-Policy" content="[^"]*?script-src &#39;self&#39;)'
)


def allow_added_scripts(before: bytes, after: bytes) -> bytes:
    """`after` (the page `before` with inline scripts added by a trusted server, such as the
    live-preview reload script) with those added scripts' hashes in its CSP meta; scripts
    that were already in `before` gain nothing."""
    old = set(inline_script_hashes(before.decode("utf-8", "replace")))
    added = [h for h in inline_script_hashes(after.decode("utf-8", "replace")) if h not in old]
    if not added:
        return after
    extra = "".join(" " + h.replace("'", "&#39;") for h in added).encode("ascii")
    return _META.sub(lambda m: m.group(1) + extra, after, count=1)
