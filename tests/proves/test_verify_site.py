"""`verify-site`: a byte changed, a file added or removed, a wrong signer or a foreign
authority each make it exit 1 and name the file; the untouched signed site exits 0."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from generator.manifest import MANIFEST_PATH, SIGNATURE_PATH, write_manifest
from generator.model import SignerIdentity
from generator.publish import TEST_SIGNER_IDENTITY, TEST_SIGNER_ISSUER, demo_authority
from generator.testing.authority import TestAuthority
from generator.verifysite import sign_manifest_dsse
from tests.proves.conftest import (
    EPOCH,
    PUBLISHER_ARGS,
    RECIPES,
    SCENARIO,
    VerifySite,
    build_site,
    identity_args,
)

PAGE = "about/index.html"


def test_the_signed_site_verifies_and_names_its_signer(
    signed_site: Path, verify_site: VerifySite
) -> None:
    result = verify_site(signed_site, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["exit"] == 0 and doc["problems"] == []
    assert doc["signedBy"] == {
        "identity": TEST_SIGNER_IDENTITY,
        "issuer": TEST_SIGNER_ISSUER,
        "loggedAt": "2027-01-15T00:00:01Z",
    }
    text = verify_site(signed_site)
    assert text.exit_code == 0 and f"signed by {TEST_SIGNER_IDENTITY}" in text.stdout


def _flip_one_byte(site: Path) -> str:
    page = site / PAGE
    data = bytearray(page.read_bytes())
    data[len(data) // 2] ^= 0x01
    page.write_bytes(bytes(data))
    return PAGE


def _add_file(site: Path) -> str:
    (site / "assets" / "extra.js").write_text("alert(1)\n", encoding="utf-8")
    return "assets/extra.js"


def _remove_file(site: Path) -> str:
    (site / "badges" / "board.svg").unlink()
    return "badges/board.svg"


def _symlink_instead(site: Path) -> str:
    page = site / PAGE
    copy = site / "copy.html"
    shutil.copyfile(page, copy)
    page.unlink()
    page.symlink_to(copy)
    return PAGE


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        (_flip_one_byte, "changed"),
        (_add_file, "unlisted"),
        (_remove_file, "missing"),
        (_symlink_instead, "changed"),
    ],
)
def test_any_change_to_the_files_exits_1_naming_the_file(
    site_copy: Path, verify_site: VerifySite, change: object, kind: str
) -> None:
    name = change(site_copy)  # type: ignore[operator]
    result = verify_site(site_copy, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["exit"] == 1
    assert {"kind": kind, "path": name} in [
        {k: p[k] for k in ("kind", "path")} for p in doc["problems"]
    ]
    text = verify_site(site_copy)
    assert text.exit_code == 1 and name in text.stdout and "NOT VERIFIED" in text.stdout


def test_a_manifest_rewritten_to_match_a_change_fails_its_signature(
    site_copy: Path, verify_site: VerifySite
) -> None:
    from generator.manifest import parse_manifest

    old = parse_manifest((site_copy / MANIFEST_PATH).read_bytes(), file="m")
    _flip_one_byte(site_copy)
    write_manifest(site_copy, commit=old.commit, options=old.options, version=old.generator_version)
    result = verify_site(site_copy, "--format", "json")
    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    assert [p["path"] for p in problems] == [SIGNATURE_PATH]
    assert "does not name this manifest" in problems[0]["detail"]


@pytest.mark.parametrize(
    ("identity", "issuer"),
    [
        ("https://evidence-dashboard.test/someone-else", TEST_SIGNER_ISSUER),
        (TEST_SIGNER_IDENTITY, "https://token.actions.githubusercontent.com"),
    ],
)
def test_a_wrong_identity_or_issuer_is_rejected(
    signed_site: Path, verify_site: VerifySite, identity: str, issuer: str
) -> None:
    result = verify_site(signed_site, "--format", "json", identity=identity, issuer=issuer)
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["signedBy"] is None
    assert [p["path"] for p in doc["problems"]] == [SIGNATURE_PATH]


def test_a_manifest_signed_by_another_authority_is_rejected(
    site_copy: Path, verify_site: VerifySite
) -> None:
    foreign = TestAuthority("not-the-demo-authority", name="someone else")
    sign_manifest_dsse(
        site_copy,
        foreign,
        SignerIdentity(issuer=TEST_SIGNER_ISSUER, identity=TEST_SIGNER_IDENTITY),
        datetime.fromtimestamp(EPOCH, UTC),
    )
    result = verify_site(site_copy, "--format", "json")
    assert result.exit_code == 1, result.output
    assert [p["path"] for p in json.loads(result.stdout)["problems"]] == [SIGNATURE_PATH]


def test_an_unsigned_site_is_not_verified(site_copy: Path, verify_site: VerifySite) -> None:
    (site_copy / SIGNATURE_PATH).unlink()
    result = verify_site(site_copy)
    assert result.exit_code == 1 and SIGNATURE_PATH in result.stdout


def test_the_same_authority_signing_again_still_verifies(
    site_copy: Path, verify_site: VerifySite
) -> None:
    """The check is the identity and the root, not the exact bundle bytes."""
    sign_manifest_dsse(
        site_copy,
        demo_authority(SCENARIO),
        SignerIdentity(issuer=TEST_SIGNER_ISSUER, identity=TEST_SIGNER_IDENTITY),
        datetime.fromtimestamp(EPOCH + 3600, UTC),
    )
    assert verify_site(site_copy).exit_code == 0


def test_a_folder_without_a_manifest_exits_1_and_a_missing_folder_2(
    tmp_path: Path, verify_site: VerifySite
) -> None:
    (tmp_path / "index.html").write_text("hi", encoding="utf-8")
    result = verify_site(tmp_path, "--format", "json")
    assert result.exit_code == 1 and MANIFEST_PATH in result.stdout
    assert verify_site(tmp_path / "absent").exit_code == 2


def test_rebuild_of_the_demo_is_identical(
    signed_site: Path, verify_site: VerifySite, tmp_path: Path
) -> None:
    result = verify_site(
        signed_site,
        "--rebuild",
        "--recipes",
        str(RECIPES),
        "--oci-layout",
        str(RECIPES / "bundles"),
        "--cache",
        str(tmp_path / "cache"),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["rebuilt"] is True and doc["exit"] == 0


def test_rebuild_after_one_pointer_changed_exits_1(
    signed_site: Path, verify_site: VerifySite, tmp_path: Path
) -> None:
    recipes = Path(
        shutil.copytree(RECIPES, tmp_path / "recipes", ignore=shutil.ignore_patterns("bundles"))
    )
    pointer = sorted((recipes / "evidence").rglob("sha256-*.yaml"))[0]
    pointer.unlink()
    result = verify_site(
        signed_site,
        "--rebuild",
        "--recipes",
        str(recipes),
        "--oci-layout",
        str(RECIPES / "bundles"),
        "--cache",
        str(tmp_path / "cache"),
        "--format",
        "json",
    )
    assert result.exit_code == 1, result.output
    problems = json.loads(result.stdout)["problems"]
    assert problems and {p["kind"] for p in problems} == {"differs-on-rebuild"}
    assert "data/pointers.json" in {p["path"] for p in problems}


def test_rebuild_with_another_trust_root_is_refused(signed_site: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from generator.cli import main

    other = tmp_path / "root.json"
    other.write_bytes(TestAuthority("other").trusted_root_json())
    args = identity_args()
    args[args.index("--trust-root") + 1] = str(other)
    result = CliRunner().invoke(
        main,
        [
            "verify-site",
            str(signed_site),
            *args,
            "--rebuild",
            "--recipes",
            str(RECIPES),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 1
    assert any("trust root" in p["detail"] for p in json.loads(result.stdout)["problems"])


def test_a_second_build_gives_the_same_manifest(signed_site: Path, tmp_path: Path) -> None:
    again = build_site(tmp_path / "site", cache=tmp_path / "cache", extra=PUBLISHER_ARGS)
    assert (again / MANIFEST_PATH).read_bytes() == (signed_site / MANIFEST_PATH).read_bytes()


def test_a_manifest_naming_a_path_outside_the_site_is_refused(
    site_copy: Path, verify_site: VerifySite
) -> None:
    target = site_copy / MANIFEST_PATH
    doc = json.loads(target.read_text(encoding="utf-8"))
    doc["files"].insert(0, {"path": "../outside", "sha256": "0" * 64, "size": 0})
    target.write_text(json.dumps(doc), encoding="utf-8")
    result = verify_site(site_copy, "--format", "json")
    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    assert [(p["kind"], p["path"]) for p in problems] == [("manifest", MANIFEST_PATH)]
    assert "plain relative path" in problems[0]["detail"]
