"""A remembered verdict is bound to what it was judged against: the trust root (its digest),
the verifier and the policy options (not the allowlist: no step of verification reads it). Under another trust root there is no
remembered verdict, even when the bundle cannot be read (offline, no layout, nothing in the
bundle cache): the pointer reads "no verdict" (exit 3), never verified. Under the same root
the earlier verdict stands, and when it stands in for a verification that could not be made
this time, the data and the card say which verification it rests on and when.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from generator.build import BuildOptions, run_build
from generator.data import pointer_document
from generator.data.writers import schema_text
from generator.evaluate.assess import Assessor
from generator.evaluate.engine import build_engine
from generator.evaluate.verification import verify_miss
from generator.model import NoVerdict, ParsedPointer, Verified
from generator.testing.authority import TestAuthority
from generator.tree import load_allowlist, scan_tree
from generator.verify.cache import VerdictCache
from tests.cacheauth.conftest import EPOCH, options


def _pointers(site: Path) -> dict[str, Any]:
    doc = json.loads((site / "data" / "pointers.json").read_bytes())
    return {p["path"]: p for p in doc["pointers"]}


def _other_root(tmp_path: Path) -> Path:
    path = tmp_path / "other-root" / "trusted_root.json"
    path.parent.mkdir()
    path.write_bytes(TestAuthority("another signing authority").trusted_root_json())
    return path


def test_a_verdict_judged_under_another_root_is_not_reused(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run_build(options(tree, tmp_path / "a", cache))
    assert first.verified > 0
    verified = {
        path
        for path, p in _pointers(tmp_path / "a").items()
        if p["verify"]["exit"] < 2 and not p["verify"]["pending"]
    }
    shutil.rmtree(cache / "bundles", ignore_errors=True)  # nothing to read the bundles from
    # under root B, offline, without the layout: the bundles cannot be read this time
    later = run_build(
        options(tree, tmp_path / "b", cache, oci_layouts=(), trust_root=_other_root(tmp_path))
    )
    assert later.verified == 0 and later.no_verdict >= len(verified)
    pointers = _pointers(tmp_path / "b")
    for path in verified:
        verify = pointers[path]["verify"]
        assert verify["exit"] == 3, path
        assert verify["failureCause"]["class"] == "transient"
        assert verify["verifiedAt"] is None and verify["reusedFrom"] is None
        assert pointers[path]["evidence"] is None
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "b").rglob("*.html")]
    assert pages and not any('class="fact-cached"' in page for page in pages)


def test_under_the_same_root_the_remembered_verdict_stands(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run_build(options(tree, tmp_path / "a", cache))
    shutil.rmtree(cache / "bundles", ignore_errors=True)
    later = run_build(options(tree, tmp_path / "b", cache, oci_layouts=(), reevaluate=True))
    assert (later.verified, later.rejected, later.no_verdict) == (
        first.verified,
        first.rejected,
        first.no_verdict,
    )
    assert _pointers(tmp_path / "b") == _pointers(tmp_path / "a")


@pytest.fixture()
def scanned(tree: Path) -> tuple[Any, list[ParsedPointer]]:
    allowlist = load_allowlist(tree / "evidence" / "allowlist.yaml")
    scan = scan_tree(tree, allowlist=allowlist, allow_pending=True)
    return allowlist, [f for f in scan.files if isinstance(f, ParsedPointer)]


def _fallback(
    tree: Path, tmp_path: Path, scanned: tuple[Any, list[ParsedPointer]], trust_root: Path
) -> tuple[list[tuple[ParsedPointer, Any, str | None]], Any]:
    """Verify every pointer offline without a layout, with a verdict cache whose index was
    read before an earlier build (under the demo root) recorded its verdicts: the lookup
    missed, so what the cache remembers can only come in as the fallback."""
    allowlist, items = scanned
    build = options(tree, tmp_path / "a", tmp_path / "first-cache")
    run_build(build)
    opts = options(tree, tmp_path / "b", tmp_path / "cache", oci_layouts=(), trust_root=trust_root)
    engine = build_engine(opts.engine)
    trust = engine.trust
    cache = VerdictCache(tmp_path / "cache" / "verify")
    keys = [cache.key(i.pointer, i.location, trust, _policy(opts)) for i in items]
    assert all(cache.get(k) is None for k in keys)  # the index is read: nothing yet
    shutil.copytree(
        tmp_path / "first-cache" / "verify", tmp_path / "cache" / "verify", dirs_exist_ok=True
    )
    out = []
    for item, key in zip(items, keys, strict=True):
        _, verdict, when, _ = verify_miss(item, key, replace(engine, verdicts=cache), EPOCH)
        out.append((item, verdict, when))
    return out, trust


def _policy(opts: BuildOptions) -> str:
    from generator.verify.cache import verdict_policy

    return verdict_policy(opts.engine.trusted_registries)


def test_the_fallback_says_which_verification_it_rests_on(
    tree: Path, tmp_path: Path, scanned: tuple[Any, list[ParsedPointer]]
) -> None:
    results, trust = _fallback(tree, tmp_path, scanned, tree / "trust" / "trusted_root.json")
    reused = [(item, verdict, when) for item, verdict, when in results if when is not None]
    assert any(isinstance(v, Verified) for _, v, _ in reused)
    allowlist = scanned[0]
    assessor = Assessor(allowlist, [], None)
    assessor.trust_root = trust.digest
    validator = jsonschema.Draft202012Validator(json.loads(schema_text("pointers.schema.json")))
    for item, verdict, when in reused:
        record, _ = assessor.assess(item, verdict, verified_at=when)
        doc = pointer_document(record)
        assert doc["verify"]["verifiedAt"] == when
        assert doc["verify"]["reusedFrom"] == {"verifiedAt": when, "trustRoot": trust.digest}
        validator.validate({"pointers": [doc]})


def test_the_fallback_never_crosses_trust_roots(
    tree: Path, tmp_path: Path, scanned: tuple[Any, list[ParsedPointer]]
) -> None:
    results, _ = _fallback(tree, tmp_path, scanned, _other_root(tmp_path))
    assert all(when is None for _, _, when in results)
    signed = [v for item, v, _ in results if item.pointer.signer is not None]
    assert signed and all(isinstance(v, NoVerdict) for v in signed)
