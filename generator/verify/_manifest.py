"""Step 4, `manifest-hash-check`: the manifest inventory, the phase digests, then recipe identity
and the checks beyond aicr, which yield the `Evidence` the engine reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from generator import strictjson
from generator.model import Evidence, Phase, Pointer, PointerLocation, PredicateType, SubRow
from generator.verify._beyond import _beyond_aicr
from generator.verify._fields import _get, _posix_parts, _schema_version_ok, _sha
from generator.verify._recipe_match import _recipe_identity
from generator.verify._run import MAX_CTRF_BYTES, MAX_MANIFEST_BYTES, _Run

UNLISTED_OK = frozenset({"manifest.json", "statement.intoto.json", "attestation.intoto.jsonl"})


def _local_path(path: object) -> str | None:
    """A manifest path if it is local (relative, no `..`, no backslash or NUL), else None."""
    if not isinstance(path, str) or not path or path.startswith("/"):
        return None
    if "\\" in path or "\x00" in path:
        return None
    parts = _posix_parts(path)
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _step4(
    run: _Run,
    pointer: Pointer,
    location: PointerLocation,
    files: Mapping[str, bytes],
    ptype: PredicateType,
    predicate: Mapping[str, Any],
) -> Evidence | None:
    """4.1 inventory, 4.2 phase digests, 4.3 recipe identity, then the checks beyond aicr."""
    manifest = _manifest_entries(run, files, predicate)
    if manifest is None:
        return None
    manifest_claim, entries = manifest
    inventory = _inventory(run, files, entries)
    if inventory is None:
        return None
    listed, recipe_bytes = inventory
    phases = _phase_digests(run, files, predicate)
    if phases is None:
        return None
    identity = _recipe_identity(run, pointer, ptype, predicate, recipe_bytes)
    if identity is None:
        return None
    recipe, want_sel = identity
    aicr_rows = [
        SubRow("manifest.json", manifest_claim),
        SubRow("files", f"{len(listed)} listed, all present and matching"),
        SubRow("phases", ", ".join(sorted(phases)) or "(none)"),
        SubRow("recipe.digest", str(_get(predicate, "recipe", "digest"))),
        SubRow("profile", want_sel or "(none)"),
        SubRow(
            "profile.policyDescriptorIdentity",
            "format checked (64 hex); not recomputed" if want_sel else "n/a",
        ),
    ]
    beyond, evidence = _beyond_aicr(
        pointer, location, files, ptype, predicate, recipe, recipe_bytes or b"", entries
    )
    failures = [row for row, failed in beyond if failed]
    rows = aicr_rows + [row for row, _ in beyond]
    if failures or evidence is None:
        run.fail(
            4,
            f"{len(failures)} check(s) beyond aicr failed: "
            + "; ".join(f"{r.key}: {r.value}" for r in failures),
            rows=rows,
        )
        return None
    run.passed(
        4,
        "manifest digest matches predicate; bundle files, phase digests, and recipe "
        "identity (name/profile/digest) verified",
        rows,
    )
    return evidence


def _manifest_entries(
    run: _Run, files: Mapping[str, bytes], predicate: Mapping[str, Any]
) -> tuple[str, list[Any]] | None:
    """manifest.json hashes to the predicate's claim and lists files: (claim, entries)."""
    manifest_claim = _get(predicate, "manifest", "digest")
    if not isinstance(manifest_claim, str) or not manifest_claim:
        run.fail(4, "predicate.manifest.digest is empty")
        return None
    raw_manifest = files.get("manifest.json")
    if raw_manifest is None:
        run.fail(
            4,
            "manifest inventory check failed for 1 file(s)",
            rows=[SubRow("manifest.json", "file missing from bundle: manifest.json")],
        )
        return None
    if len(raw_manifest) > MAX_MANIFEST_BYTES:
        run.fail(4, f"manifest.json exceeds {MAX_MANIFEST_BYTES} bytes")
        return None
    got = _sha(raw_manifest)
    if got != manifest_claim:
        run.fail(
            4,
            "manifest inventory check failed for 1 file(s)",
            rows=[
                SubRow(
                    "manifest.json",
                    f"manifest.json: sha256 mismatch (got {got}, want {manifest_claim})",
                )
            ],
        )
        return None
    try:
        manifest = strictjson.loads(raw_manifest)
    except (ValueError, UnicodeDecodeError) as exc:
        run.fail(4, f"manifest.json {strictjson.problem(exc)}")
        return None
    entries = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(manifest, dict) or not _schema_version_ok(manifest.get("schemaVersion")):
        version = manifest.get("schemaVersion") if isinstance(manifest, dict) else None
        run.fail(4, f"manifest.json schemaVersion {version!r} is not 1.0.x")
        return None
    if not isinstance(entries, list) or not entries:
        run.fail(4, "manifest.json lists no files")
        return None
    return manifest_claim, entries


def _inventory(
    run: _Run, files: Mapping[str, bytes], entries: list[Any]
) -> tuple[set[str], bytes | None] | None:
    """Every listed file is present with its size and sha256, and every file is listed.

    Returns the listed paths and recipe.yaml's bytes (None when not listed).
    """
    problems: list[SubRow] = []
    listed: set[str] = set()
    recipe_bytes: bytes | None = None
    for entry in entries:
        raw_path = entry.get("path") if isinstance(entry, dict) else None
        path = _local_path(raw_path)
        if path is None:
            problems.append(
                SubRow(
                    str(raw_path),
                    f"{raw_path!r} is not a local path (rejecting potential traversal)",
                )
            )
            continue
        assert isinstance(entry, dict)
        listed.add(path)
        problem = _entry_problem(path, entry, files)
        if problem is not None:
            problems.append(SubRow(path, problem))
        elif path == "recipe.yaml":
            recipe_bytes = files[path]
    problems.extend(
        SubRow(name, f"{name}: file not in manifest.json (unsigned)")
        for name in sorted(files)
        if name not in listed and name not in UNLISTED_OK
    )
    if problems:
        run.fail(4, f"manifest inventory check failed for {len(problems)} file(s)", rows=problems)
        return None
    return listed, recipe_bytes


def _entry_problem(path: str, entry: Mapping[str, Any], files: Mapping[str, bytes]) -> str | None:
    """What is wrong with one manifest entry's file (missing, size, sha256), or None."""
    data = files.get(path)
    if data is None:
        if any(name.startswith(path + "/") for name in files):
            return f"{path} is a directory, not a file"
        return f"file missing from bundle: {path}"
    size = entry.get("size")
    if isinstance(size, bool) or not isinstance(size, int | float) or size < 0:
        return f"{path}: size {size!r} is not a byte count"
    if size > 0 and len(data) != size:
        return f"{path}: size mismatch (got {len(data)}, want {int(size)})"
    want = entry.get("sha256")
    want_hex = want.removeprefix("sha256:") if isinstance(want, str) else ""
    got_hex = hashlib.sha256(data).hexdigest()
    if got_hex != want_hex:
        return f"{path}: sha256 mismatch (got sha256:{got_hex}, want {want})"
    return None


def _phase_digests(
    run: _Run, files: Mapping[str, bytes], predicate: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Each phase the predicate names is known and its CTRF file hashes to `ctrfDigest`."""
    phases = predicate.get("phases") or {}
    if not isinstance(phases, dict):
        run.fail(4, "predicate.phases is not an object")
        return None
    for key, value in phases.items():
        try:
            phase = Phase(key)
        except ValueError:
            run.fail(4, f"predicate contains unknown phase {key!r}")
            return None
        claim = value.get("ctrfDigest") if isinstance(value, dict) else None
        if not isinstance(claim, str) or not claim:
            run.fail(4, f"phases.{phase}.ctrfDigest is empty")
            return None
        data = files.get(f"ctrf/{phase}.json")
        if data is None:
            run.fail(4, f"ctrf/{phase}.json missing from bundle")
            return None
        if len(data) > MAX_CTRF_BYTES:
            run.fail(4, f"ctrf/{phase}.json exceeds {MAX_CTRF_BYTES} bytes")
            return None
        if _sha(data) != claim:
            run.fail(4, f"ctrf/{phase}.json digest mismatch (got {_sha(data)}, want {claim})")
            return None
    return phases
