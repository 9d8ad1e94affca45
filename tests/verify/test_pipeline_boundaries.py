"""Steps 3 and 4 at their edges, through `verify_pointer` on unsigned bundles: every part of the
bundle at exactly its size limit and one byte over, and each malformed statement, manifest,
phase or recipe refused at the step and with the detail that names it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from generator.model import FailureClass, Pending, StepStatus
from generator.verify.pipeline import (
    MAX_CTRF_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_RECIPE_BYTES,
    MAX_STATEMENT_BYTES,
)
from tests.verify.conftest import PROFILE_RECIPE_YAML, EvidenceCase
from tests.verify.test_pipeline import assert_failed_at, reseal_statement, rewrite_manifest, run

_BUILT = ("manifest.json", "statement.intoto.json")


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _relist(case: EvidenceCase, size: Callable[[str, bytes], Any] = lambda p, d: len(d)) -> None:
    """Rewrite manifest.json over the bundle's current files (its digest in the predicate too)."""
    files = {p: d for p, d in case.files.items() if p not in _BUILT}
    manifest = {
        "schemaVersion": "1.0.0",
        "files": [
            {"path": p, "size": size(p, d), "sha256": _sha(d)} for p, d in sorted(files.items())
        ],
    }
    rewrite_manifest(case, manifest)


def _padded_json(doc: dict[str, Any], total: int) -> bytes:
    data = json.dumps(doc).encode()
    assert len(data) <= total
    return data + b" " * (total - len(data))


# ------------------------------------------------------------------ sizes: at the limit, one over


@pytest.mark.parametrize(("extra", "passes"), [(0, True), (1, False)], ids=["at-limit", "one-over"])
def test_an_unsigned_statement_is_read_up_to_its_limit(extra: int, passes: bool) -> None:
    case = EvidenceCase().seal()
    case.files["statement.intoto.json"] = _padded_json(case.statement, MAX_STATEMENT_BYTES + extra)
    verdict = run(case)
    if passes:
        assert isinstance(verdict, Pending), verdict
    else:
        assert_failed_at(verdict, 3, FailureClass.SCHEMA)
        assert "statement.intoto.json exceeds" in verdict.cause.detail


@pytest.mark.parametrize(("extra", "passes"), [(0, True), (1, False)], ids=["at-limit", "one-over"])
def test_the_manifest_is_read_up_to_its_limit(extra: int, passes: bool) -> None:
    case = EvidenceCase().seal()
    doc = json.loads(case.files["manifest.json"])
    data = _padded_json(doc, MAX_MANIFEST_BYTES + extra)
    case.files["manifest.json"] = data
    case.predicate["manifest"]["digest"] = _sha(data)
    reseal_statement(case)
    verdict = run(case)
    if passes:
        assert isinstance(verdict, Pending), verdict
    else:
        assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
        assert "manifest.json exceeds" in verdict.cause.detail


@pytest.mark.parametrize(("extra", "passes"), [(0, True), (1, False)], ids=["at-limit", "one-over"])
def test_a_ctrf_report_is_read_up_to_its_limit(extra: int, passes: bool) -> None:
    case = EvidenceCase().seal()
    doc = json.loads(case.ctrf["conformance"])
    data = _padded_json(doc, MAX_CTRF_BYTES + extra)
    case.files["ctrf/conformance.json"] = data
    case.predicate["phases"]["conformance"]["ctrfDigest"] = _sha(data)
    _relist(case)
    verdict = run(case)
    if passes:
        assert isinstance(verdict, Pending), verdict
    else:
        assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
        assert "ctrf/conformance.json exceeds" in verdict.cause.detail


@pytest.mark.parametrize(("extra", "passes"), [(0, True), (1, False)], ids=["at-limit", "one-over"])
def test_the_recipe_is_read_up_to_its_limit(extra: int, passes: bool) -> None:
    """Padded with a YAML comment to exactly the limit (which changes no digest); one byte more
    is appended after sealing (the canonicaliser would refuse to digest it)."""
    base = EvidenceCase().recipe_yaml
    padding = MAX_RECIPE_BYTES - len(base) - 2
    case = EvidenceCase(recipe_yaml=base + b"#" + b"x" * padding + b"\n").seal()
    case.files["recipe.yaml"] += b"\n" * extra
    _relist(case)
    assert len(case.files["recipe.yaml"]) == MAX_RECIPE_BYTES + extra
    verdict = run(case)
    if passes:
        assert isinstance(verdict, Pending), verdict
    else:
        assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
        assert "recipe.yaml exceeds" in verdict.cause.detail


# ------------------------------------------------------------------ step 3: the unsigned statement


def _statement(case: EvidenceCase, data: bytes | None) -> None:
    if data is None:
        del case.files["statement.intoto.json"]
    else:
        case.files["statement.intoto.json"] = data


def _statement_edit(edit: Callable[[dict[str, Any]], None]) -> Callable[[EvidenceCase], None]:
    def apply(case: EvidenceCase) -> None:
        edit(case.statement)
        reseal_statement(case)

    return apply


STEP3: list[tuple[str, Callable[[EvidenceCase], None], str]] = [
    ("missing", lambda c: _statement(c, None), "missing from the unsigned bundle"),
    ("a-list", lambda c: _statement(c, b"[1]"), "is not a JSON object"),
    (
        "unknown-type",
        _statement_edit(lambda s: s.update(predicateType="https://example.com/x")),
        "unexpected predicateType",
    ),
    (
        "predicate-a-list",
        _statement_edit(lambda s: s.update(predicate=[1])),
        "statement has no predicate object",
    ),
    (
        "profile-a-string",
        _statement_edit(lambda s: s["predicate"].update(profile="gpuStack=x")),
        "predicate profile is not an object",
    ),
]


@pytest.mark.parametrize(("name", "tamper", "detail"), STEP3, ids=[r[0] for r in STEP3])
def test_a_malformed_unsigned_statement_fails_step_three(
    name: str, tamper: Callable[[EvidenceCase], None], detail: str
) -> None:
    case = EvidenceCase().seal()
    tamper(case)
    verdict = run(case)
    assert_failed_at(verdict, 3, FailureClass.SCHEMA)
    assert detail in verdict.cause.detail


# ------------------------------------------------------------------ step 4: inventory and phases


def _predicate_edit(edit: Callable[[dict[str, Any]], None]) -> Callable[[EvidenceCase], None]:
    def apply(case: EvidenceCase) -> None:
        edit(case.predicate)
        reseal_statement(case)

    return apply


def _manifest_bytes(data: bytes) -> Callable[[EvidenceCase], None]:
    def apply(case: EvidenceCase) -> None:
        case.files["manifest.json"] = data
        case.predicate["manifest"]["digest"] = _sha(data)
        reseal_statement(case)

    return apply


def _manifest_doc(doc: dict[str, Any]) -> Callable[[EvidenceCase], None]:
    return lambda case: rewrite_manifest(case, doc)


def _dropped(path: str) -> Callable[[EvidenceCase], None]:
    """`path` gone from the bundle and from manifest.json (the inventory itself stays whole)."""

    def apply(case: EvidenceCase) -> None:
        del case.files[path]
        _relist(case)

    return apply


def _sized(path: str, size: object) -> Callable[[EvidenceCase], None]:
    return lambda case: _relist(case, lambda p, d: size if p == path else len(d))


def _directory_entry(case: EvidenceCase) -> None:
    manifest = json.loads(case.files["manifest.json"])
    manifest["files"].append({"path": "ctrf", "size": 1, "sha256": _sha(b"x")})
    rewrite_manifest(case, manifest)


def _recipe(data: bytes) -> Callable[[EvidenceCase], None]:
    def apply(case: EvidenceCase) -> None:
        case.files["recipe.yaml"] = data
        _relist(case)

    return apply


def _sha_of(path: str, digest: Callable[[bytes], str]) -> Callable[[EvidenceCase], None]:
    """manifest.json rewritten with `path`'s sha256 given by `digest` (the file unchanged)."""

    def apply(case: EvidenceCase) -> None:
        manifest = json.loads(case.files["manifest.json"])
        for entry in manifest["files"]:
            if entry["path"] == path:
                entry["sha256"] = digest(case.files[path])
        rewrite_manifest(case, manifest)

    return apply


def _listed_missing(path: str) -> Callable[[EvidenceCase], None]:
    def apply(case: EvidenceCase) -> None:
        manifest = json.loads(case.files["manifest.json"])
        manifest["files"].append({"path": path, "size": 1, "sha256": _sha(b"x")})
        rewrite_manifest(case, manifest)

    return apply


def _recipe_renamed(name: str) -> Callable[[EvidenceCase], None]:
    def apply(case: EvidenceCase) -> None:
        case.files[name] = case.files.pop("recipe.yaml")
        _relist(case)

    return apply


STEP4: list[tuple[str, Callable[[EvidenceCase], None], str]] = [
    (
        "manifest-digest-empty",
        _predicate_edit(lambda p: p["manifest"].update(digest="")),
        "predicate.manifest.digest is empty",
    ),
    ("manifest-missing", lambda c: c.files.pop("manifest.json"), "file missing from bundle"),
    ("manifest-not-json", _manifest_bytes(b'{"files": ['), "manifest.json"),
    (
        "manifest-no-files",
        _manifest_doc({"schemaVersion": "1.0.0", "files": []}),
        "manifest.json lists no files",
    ),
    ("directory-entry", _directory_entry, "ctrf is a directory, not a file"),
    ("size-a-string", _sized("recipe.yaml", "12"), "is not a byte count"),
    ("size-a-bool", _sized("recipe.yaml", True), "is not a byte count"),
    ("size-negative", _sized("recipe.yaml", -1), "is not a byte count"),
    ("size-one-more", _sized("snapshot.yaml", 25), "snapshot.yaml: size mismatch"),
    (
        "phases-a-list",
        _predicate_edit(lambda p: p.update(phases=["deployment"])),
        "predicate.phases is not an object",
    ),
    (
        "ctrf-digest-empty",
        _predicate_edit(lambda p: p["phases"]["deployment"].update(ctrfDigest="")),
        "phases.deployment.ctrfDigest is empty",
    ),
    ("ctrf-missing", _dropped("ctrf/deployment.json"), "ctrf/deployment.json missing from bundle"),
    ("recipe-missing", _dropped("recipe.yaml"), "manifest.json has no recipe.yaml entry"),
    ("recipe-not-yaml", _recipe(b"kind: [\n"), "recipe.yaml cannot be decoded"),
    ("recipe-a-list", _recipe(b"- kind\n"), "recipe.yaml is not a mapping"),
    ("size-one", _sized("snapshot.yaml", 1), "snapshot.yaml: size mismatch (got "),
    ("sha-another-file-s", _sha_of("snapshot.yaml", lambda d: _sha(d + b"x")), "sha256 mismatch"),
    (
        "sha-in-capitals",
        _sha_of("snapshot.yaml", lambda d: "sha256:" + hashlib.sha256(d).hexdigest().upper()),
        "snapshot.yaml: sha256 mismatch",
    ),
    ("missing-beside-a-longer-name", _listed_missing("snap"), "file missing from bundle: snap"),
    (
        "ctrf-digest-in-capitals",
        _predicate_edit(
            lambda p: p["phases"]["deployment"].update(
                ctrfDigest="sha256:" + p["phases"]["deployment"]["ctrfDigest"][7:].upper()
            )
        ),
        "ctrf/deployment.json",
    ),
    (
        "recipe-in-capitals",
        _recipe_renamed("Recipe.yaml"),
        "manifest.json has no recipe.yaml entry",
    ),
]


@pytest.mark.parametrize(("name", "tamper", "detail"), STEP4, ids=[r[0] for r in STEP4])
def test_a_malformed_bundle_fails_step_four(
    name: str, tamper: Callable[[EvidenceCase], None], detail: str
) -> None:
    case = EvidenceCase().seal()
    tamper(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    details = [verdict.cause.detail, *(r.value for r in verdict.steps[3].sub_rows)]
    assert any(detail in d for d in details), details


def test_a_size_of_zero_means_unknown_and_is_not_compared() -> None:
    case = EvidenceCase().seal()
    _sized("snapshot.yaml", 0)(case)
    assert isinstance(run(case), Pending)


def test_an_empty_phases_object_checks_no_report() -> None:
    case = EvidenceCase().seal()
    _predicate_edit(lambda p: p.update(phases={}))(case)
    assert isinstance(run(case), Pending)


# ------------------------------------------------------------------ step 4: the profile binding


def _profiled() -> EvidenceCase:
    return EvidenceCase(recipe_yaml=PROFILE_RECIPE_YAML).seal()


PROFILE: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "advertiser-added",
        lambda p: p["profile"].update(advertiser="acme"),
        "predicate profile.advertiser",
    ),
    (
        "identity-uppercase",
        lambda p: p["profile"].update(policyDescriptorIdentity="E" * 64),
        "policyDescriptorIdentity is not 64 lowercase hex",
    ),
    (
        "identity-63",
        lambda p: p["profile"].update(policyDescriptorIdentity="e" * 63),
        "policyDescriptorIdentity is not 64 lowercase hex",
    ),
]


@pytest.mark.parametrize(("name", "edit", "detail"), PROFILE, ids=[r[0] for r in PROFILE])
def test_a_profile_that_does_not_bind_fails_step_four(
    name: str, edit: Callable[[dict[str, Any]], None], detail: str
) -> None:
    case = _profiled()
    assert isinstance(run(case), Pending)
    _predicate_edit(edit)(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert detail in verdict.cause.detail


# ------------------------------------------------------------------ step 1: fetching


def _fetched(case: EvidenceCase, result: object) -> Any:
    from generator.verify.pipeline import verify_pointer
    from generator.verify.trust import load_trust
    from tests.verify.conftest import FakeSource

    pointer, location = case.pointer()
    return verify_pointer(pointer, location, FakeSource(result), load_trust(offline=True))


def test_a_bundle_that_cannot_be_read_is_a_transient_failure_without_verdict() -> None:
    from generator.model import NoVerdict

    verdict = _fetched(EvidenceCase().seal(), OSError("layout vanished"))
    assert isinstance(verdict, NoVerdict)
    assert_failed_at(verdict, 1, FailureClass.TRANSIENT)
    assert "bundle could not be read: layout vanished" in verdict.cause.detail


@pytest.mark.parametrize(
    ("message", "found", "detail"),
    [
        ("connection reset", "after 12 bytes", "connection reset (after 12 bytes)"),
        ("connection reset after 12 bytes", "after 12 bytes", "connection reset after 12 bytes"),
        ("connection reset", None, "connection reset"),
    ],
    ids=["found-added", "found-already-said", "nothing-found"],
)
def test_a_fetch_failure_detail_says_what_was_found_once(
    message: str, found: str | None, detail: str
) -> None:
    from generator.bundle.types import transient_error

    error = transient_error(message, url="https://ghcr.io/v2/x", found=found)
    verdict = _fetched(EvidenceCase().seal(), error)
    assert_failed_at(verdict, 1, FailureClass.TRANSIENT)
    assert verdict.cause.detail == detail


@pytest.mark.parametrize("needed", [True, False])
def test_a_bundle_that_needed_credentials_says_so_beyond_aicr(needed: bool) -> None:
    from dataclasses import replace

    case = EvidenceCase().seal()
    verdict = _fetched(case, replace(case.materialized(), needed_credentials=needed))
    assert isinstance(verdict, Pending)
    rows = {r.key: r for r in verdict.steps[0].sub_rows}
    assert ("registry access" in rows) is needed
    if needed:
        assert rows["registry access"].beyond_aicr


# ------------------------------------------------------------------ step 4: paths and versions


def _renamed(old: str, new: str) -> Callable[[EvidenceCase], None]:
    """The manifest entry of `old` written as `new` (the file itself unchanged)."""

    def apply(case: EvidenceCase) -> None:
        manifest = json.loads(case.files["manifest.json"])
        for entry in manifest["files"]:
            if entry["path"] == old:
                entry["path"] = new
        rewrite_manifest(case, manifest)

    return apply


@pytest.mark.parametrize(
    "path",
    ["./snapshot.yaml", ".//snapshot.yaml", "./././snapshot.yaml"],
    ids=["dot", "dot-slashes", "dots"],
)
def test_a_manifest_path_with_current_folder_parts_names_the_same_file(path: str) -> None:
    case = EvidenceCase().seal()
    _renamed("snapshot.yaml", path)(case)
    assert isinstance(run(case), Pending)


@pytest.mark.parametrize(
    "path",
    [
        "ctrf/../snapshot.yaml",
        "/snapshot.yaml",
        "snapshot.yaml\x00",
        "ctrf\\..\\snapshot.yaml",
        "",
        ".",
        "./",
    ],
    ids=["dot-dot", "absolute", "nul", "backslash", "empty", "dot", "dot-slash"],
)
def test_a_manifest_path_that_is_not_local_is_refused(path: str) -> None:
    case = EvidenceCase().seal()
    _renamed("snapshot.yaml", path)(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert any("is not a local path" in r.value for r in verdict.steps[3].sub_rows)


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        ("1.0", True),
        ("1.0.0", True),
        ("1.0.17", True),
        ("1.01", False),
        ("1.1.0", False),
        ("", False),
        (1.0, False),
    ],
)
def test_the_manifest_schema_version_is_one_dot_zero(version: object, ok: bool) -> None:
    case = EvidenceCase().seal()
    manifest = json.loads(case.files["manifest.json"])
    manifest["schemaVersion"] = version
    rewrite_manifest(case, manifest)
    verdict = run(case)
    if ok:
        assert isinstance(verdict, Pending), verdict
    else:
        assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
        assert "is not 1.0.x" in verdict.cause.detail


def test_the_step_four_rows_of_an_unprofiled_and_a_profiled_bundle() -> None:
    plain = run(EvidenceCase().seal())
    rows = {r.key: r.value for r in plain.steps[3].sub_rows}
    assert rows["phases"] == "conformance, deployment"
    assert rows["profile"] == "(none)"
    assert rows["profile.policyDescriptorIdentity"] == "n/a"
    assert rows["files"] == "5 listed, all present and matching"
    profiled = run(EvidenceCase(recipe_yaml=PROFILE_RECIPE_YAML).seal())
    rows = {r.key: r.value for r in profiled.steps[3].sub_rows}
    assert rows["profile"] == "gpuStack=operator-managed"
    assert rows["profile.policyDescriptorIdentity"] == "format checked (64 hex); not recomputed"
    case = EvidenceCase().seal()
    _predicate_edit(lambda p: p.update(phases={}))(case)
    rows = {r.key: r.value for r in run(case).steps[3].sub_rows}
    assert rows["phases"] == "(none)"


def test_a_predicate_naming_another_recipe_than_its_recipe_yaml_fails_step_four() -> None:
    """The pointer and the predicate agree (step 3 passes), but recipe.yaml names another."""
    case = EvidenceCase().seal()
    other = case.recipe_name + "-x"
    case.predicate["recipe"]["name"] = other
    reseal_statement(case)
    verdict = run(case, None, recipe=other)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert "does not match the recipe's name" in verdict.cause.detail


@pytest.mark.parametrize(
    "profile", [None, "gpuStack=bundle-installer", "gpustack=operator-managed"]
)
def test_a_pointer_profile_other_than_the_recipes_selection_fails_step_four(
    profile: str | None,
) -> None:
    case = EvidenceCase(recipe_yaml=PROFILE_RECIPE_YAML).seal()
    assert isinstance(run(case), Pending)
    verdict = run(case, None, profile=profile)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)


@pytest.mark.parametrize(
    ("status", "failure_class"),
    [
        (None, FailureClass.UNKNOWN),
        (404, FailureClass.NOT_FOUND),
        (403, FailureClass.REGISTRY_FORBIDDEN),
    ],
)
def test_a_bundle_error_without_a_class_is_classified_as_a_step_one_failure(
    status: int | None, failure_class: FailureClass
) -> None:
    """A layout or cache error carries no aicr class: it is classified as step 1's (never as
    a signature failure, which a step-2 classification would give)."""
    from generator.errors import BundleError

    verdict = _fetched(EvidenceCase().seal(), BundleError("layout unreadable", http_status=status))
    assert_failed_at(verdict, 1, failure_class)


def test_a_bundle_source_that_says_nothing_about_credentials_needed_none() -> None:
    """`needed_credentials` is optional on a materialized bundle: absent means not needed."""
    from dataclasses import dataclass

    case = EvidenceCase().seal()
    full = case.materialized()

    @dataclass
    class Plain:
        digest: Any
        files: Any
        signatures: Any

    verdict = _fetched(case, Plain(full.digest, full.files, full.signatures))
    assert isinstance(verdict, Pending)
    assert not verdict.needed_credentials
    assert "registry access" not in {r.key for r in verdict.steps[0].sub_rows}


@pytest.mark.parametrize(
    ("failed", "pending"), [(0, "true"), (1, "false (phase failures recorded)")]
)
def test_the_pending_row_says_whether_phase_failures_were_recorded(
    failed: int, pending: str
) -> None:
    verdict = run(EvidenceCase().seal(failed=failed))
    rows = {r.key: r.value for r in verdict.steps[4].sub_rows}
    assert rows["pending"] == pending


@pytest.mark.parametrize(
    ("signed", "passes"),
    [("Acme Corp", True), ("acme corp", False), ("ACME CORP", False), ("", False)],
)
def test_a_profile_advertiser_must_equal_the_recipes_exactly(signed: str, passes: bool) -> None:
    case = EvidenceCase(recipe_yaml=PROFILE_RECIPE_YAML + b"    advertiser: Acme Corp\n").seal()
    if signed:
        case.predicate["profile"]["advertiser"] = signed
    reseal_statement(case)
    verdict = run(case)
    if passes:
        assert isinstance(verdict, Pending), verdict
    else:
        assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
        assert "predicate profile.advertiser" in verdict.cause.detail


def _policy_excluded(hint: str) -> Any:
    from generator.bundle.types import RegistryPolicyError

    return RegistryPolicyError(
        "excluded by registry policy",
        failure_class=FailureClass.REGISTRY,
        policy_excluded=True,
        hint=hint,
    )


def _registry_refused(hint: str) -> Any:
    from generator.bundle.types import BundleFetchError

    return BundleFetchError("manifest unknown", failure_class=FailureClass.NOT_FOUND, hint=hint)


# (case, the fetch error, the hint the verdict must carry)
FETCH_HINTS = [
    ("excluded-with-its-own-hint", _policy_excluded("ask the owner"), "ask the owner"),
    (
        "excluded-without-a-hint",
        _policy_excluded(""),
        "add the registry prefix with --trusted-registry",
    ),
    ("refused-with-a-hint", _registry_refused("push the bundle again"), "push the bundle again"),
    ("refused-without-a-hint", _registry_refused(""), ""),
]


@pytest.mark.parametrize(
    ("case", "error", "hint"), FETCH_HINTS, ids=[row[0] for row in FETCH_HINTS]
)
def test_a_fetch_failure_is_step_one_with_the_error_s_own_next_step(
    case: str, error: Any, hint: str
) -> None:
    """The bundle's source knows the next step best; a policy exclusion without one gets the
    option that lifts it, any other failure without one gets none (never an invented step)."""
    verdict = _fetched(EvidenceCase().seal(), error)
    failure_class = FailureClass.REGISTRY if "excluded" in case else FailureClass.NOT_FOUND
    assert_failed_at(verdict, 1, failure_class)
    assert verdict.cause.hint == hint
    assert [s.step for s in verdict.steps if s.status is not StepStatus.PASSED][0] == 1


def test_a_policy_exclusion_is_reported_on_step_one_itself() -> None:
    """The exclusion's detail sits on step 1's row (the fetch), not on a later step's: the
    earlier rows are never "not run" filler before the step that explains the skip."""
    verdict = _fetched(EvidenceCase().seal(), _policy_excluded(""))
    first = verdict.steps[0]
    assert first.step == 1
    assert first.status is StepStatus.SKIPPED
    assert first.detail == verdict.cause.detail
    assert all(s.detail != verdict.cause.detail for s in verdict.steps[1:])


def test_a_pulled_digest_that_differs_only_by_letter_case_fails_step_one() -> None:
    """A source that reports the digest in capitals did not pull the pointer's bundle by its
    own word: digests are compared exactly, never case-insensitively."""
    from dataclasses import replace

    case = EvidenceCase().seal()
    full = case.materialized()
    shouted = replace(full, digest="sha256:" + full.digest.removeprefix("sha256:").upper())
    verdict = _fetched(case, shouted)
    assert_failed_at(verdict, 1, FailureClass.UNKNOWN)
    assert "does not match pulled digest" in verdict.cause.detail


def test_step_one_rows_name_the_bundle_digest_and_the_file_count() -> None:
    case = EvidenceCase().seal()
    full = case.materialized()
    verdict = _fetched(case, full)
    assert isinstance(verdict, Pending)
    rows = [(r.key, r.value) for r in verdict.steps[0].sub_rows]
    assert rows == [("bundleDigest", str(full.digest)), ("files", str(len(full.files)))]


@pytest.mark.parametrize(
    ("phases", "rows"),
    [
        (None, ["phases.deployment", "phases.conformance"]),
        ({}, []),
    ],
    ids=["two-phases", "no-phases"],
)
def test_the_summary_step_is_step_five_with_a_row_per_phase_present(
    phases: dict[str, Any] | None, rows: list[str]
) -> None:
    case = EvidenceCase().seal()
    if phases is not None:
        _predicate_edit(lambda p: p.update(phases=phases))(case)
    verdict = run(case)
    assert isinstance(verdict, Pending), verdict
    assert [s.step for s in verdict.steps] == [1, 2, 3, 4, 5]
    summary = verdict.steps[4]
    assert summary.status is StepStatus.INFORMATIONAL
    keys = [r.key for r in summary.sub_rows if r.key.startswith("phases.")]
    assert keys == rows
    if rows:
        by_key = {r.key: r.value for r in summary.sub_rows}
        assert all(by_key[k].startswith("passed ") for k in rows)


@pytest.mark.parametrize("spell", [str.upper, str.title], ids=["upper", "title"])
def test_a_pointer_recipe_that_differs_only_by_letter_case_fails_step_three(
    spell: Callable[[str], str],
) -> None:
    """Recipe names are compared exactly: `Kubeflow` is not the predicate's `kubeflow`."""
    case = EvidenceCase().seal()
    other = spell(case.recipe_name)
    assert other != case.recipe_name
    verdict = run(case, None, recipe=other)
    assert_failed_at(verdict, 3, FailureClass.SCHEMA)
    assert "does not match predicate recipe.name" in verdict.cause.detail


def _step3_rows(verdict: Any) -> list[tuple[str, str, bool]]:
    return [(r.key, r.value, r.beyond_aicr) for r in verdict.steps[2].sub_rows]


def test_step_three_rows_say_the_pointer_s_predicate_type_equals_the_statement_s() -> None:
    case = EvidenceCase().seal()
    verdict = run(case)
    assert isinstance(verdict, Pending), verdict
    assert _step3_rows(verdict) == [
        ("predicateType", case.predicate_type.value, False),
        ("recipe.name", case.recipe_name, False),
        ("pointer predicateType", "equals statement", True),
    ]


def test_a_pointer_predicate_type_other_than_the_statement_s_fails_step_three_with_its_row() -> (
    None
):
    from dataclasses import replace

    from generator.model import PredicateType

    case = EvidenceCase().seal()
    pointer, _location = case.pointer()
    other = next(t for t in PredicateType if t is not case.predicate_type)
    verdict = run(case, None, bundle=replace(pointer.bundle, predicate_type=other))
    assert_failed_at(verdict, 3, FailureClass.SCHEMA)
    assert f"does not equal the statement's {case.predicate_type.value}" in verdict.cause.detail
    assert _step3_rows(verdict)[-1] == ("pointer predicateType", "mismatch", True)


def test_two_failed_checks_beyond_aicr_are_each_named_apart() -> None:
    case = EvidenceCase().seal()
    case.predicate["manifest"]["fileCount"] = 99
    case.predicate["schemaVersion"] = "2.0.0"
    reseal_statement(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    detail = verdict.cause.detail
    assert detail.startswith("2 check(s) beyond aicr failed: ")
    named = detail.removeprefix("2 check(s) beyond aicr failed: ").split("; ")
    assert len(named) == 2, detail
    assert all(": " in part for part in named), detail


def test_the_step_four_rows_name_the_signed_recipe_digest() -> None:
    case = EvidenceCase().seal()
    verdict = run(case)
    assert isinstance(verdict, Pending), verdict
    rows = {r.key: r.value for r in verdict.steps[3].sub_rows}
    assert rows["recipe.digest"] == case.predicate["recipe"]["digest"]


def test_a_manifest_claim_in_capitals_does_not_match_the_manifest_s_digest() -> None:
    """The predicate's manifest digest is compared exactly, never case-insensitively."""
    case = EvidenceCase().seal()
    claim = case.predicate["manifest"]["digest"]
    case.predicate["manifest"]["digest"] = "sha256:" + claim.removeprefix("sha256:").upper()
    reseal_statement(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert "manifest inventory check failed" in verdict.cause.detail


@pytest.mark.parametrize("spell", [lambda n: n + "-x", str.upper], ids=["other", "upper"])
def test_a_predicate_recipe_name_is_compared_with_the_recipe_s_own_name_exactly(
    spell: Callable[[str], str],
) -> None:
    """The predicate's recipe.name against recipe.yaml's: the failure names the predicate (not
    only the pointer), and a name that differs only by letter case is another name."""
    case = EvidenceCase().seal()
    other = spell(case.recipe_name)
    case.predicate["recipe"]["name"] = other
    reseal_statement(case)
    verdict = run(case, None, recipe=other)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert verdict.cause.detail == (
        f"predicate recipe.name {other!r} does not match the recipe's name {case.recipe_name!r}"
    )


def test_a_signed_recipe_digest_in_capitals_is_a_digest_mismatch() -> None:
    case = EvidenceCase().seal()
    digest = case.predicate["recipe"]["digest"]
    shouted = digest[:7] + digest[7:].upper()
    assert shouted != digest
    case.predicate["recipe"]["digest"] = shouted
    reseal_statement(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert verdict.cause.detail.startswith("recipe digest mismatch (predicate ")


def test_a_predicate_profile_selection_that_differs_only_by_letter_case_fails_step_four() -> None:
    case = EvidenceCase(recipe_yaml=PROFILE_RECIPE_YAML).seal()
    selection = case.predicate["profile"]["selection"]
    case.predicate["profile"]["selection"] = selection.lower()
    assert case.predicate["profile"]["selection"] != selection
    reseal_statement(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert "predicate profile.selection" in verdict.cause.detail


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ("1.0.0", "predicate 1.0.0 for recipe "),
        (None, "predicate for recipe "),
        ("", "predicate for recipe "),
    ],
    ids=["versioned", "no-version", "empty-version"],
)
def test_step_three_says_the_predicate_s_schema_version_only_when_it_has_one(
    version: str | None, said: str
) -> None:
    case = EvidenceCase().seal()
    if version is None:
        case.predicate.pop("schemaVersion", None)
    else:
        case.predicate["schemaVersion"] = version
    reseal_statement(case)
    verdict = run(case)
    assert verdict.steps[2].detail.startswith(said), verdict.steps[2].detail
