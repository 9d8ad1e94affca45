"""A signed demo site, built once per session through the real CLI, for the manifest,
verify-site and badge tests; each test that changes it works on its own copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli import main
from generator.publish import TEST_SIGNER_IDENTITY, TEST_SIGNER_ISSUER

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "recipes"
TRUST_ROOT = RECIPES / "trust" / "trusted_root.json"
SCENARIO = RECIPES / "demo" / "scenario.yaml"
#: A fixed build time (2027-01-15T00:00:00Z), later than every attestation of the demo tree.
EPOCH = 1800000000 - 1800000000 % 86400


PUBLISHER_ARGS = (
    "--publisher-identity",
    TEST_SIGNER_IDENTITY,
    "--publisher-issuer",
    TEST_SIGNER_ISSUER,
)


def build_args(out: Path, *, recipes: Path, cache: Path, scenario: Path = SCENARIO) -> list[str]:
    """`evidence-dashboard build` options for an offline build of `recipes` (a tree the demo
    seam wrote: its trust root and OCI layout inside) into `out`, the manifest signed by
    `scenario`'s test authority."""
    return [
        "build",
        *("--recipes", str(recipes), "--out", str(out), "--offline", "--quiet"),
        *("--trust-root", str(recipes / "trust" / "trusted_root.json")),
        *("--oci-layout", str(recipes / "bundles"), "--cache", str(cache)),
        *("--sign-with-test-authority", str(scenario)),
    ]


def build_site(
    out: Path,
    *,
    recipes: Path = RECIPES,
    cache: Path,
    extra: Sequence[str] = (),
    scenario: Path = SCENARIO,
) -> Path:
    """One offline build of `recipes` (a tree the demo seam wrote: its trust root and OCI
    layout inside) into `out` in its own process, the manifest signed by `scenario`'s test
    authority."""
    env = {k: v for k, v in os.environ.items() if k not in {"SOURCE_DATE_EPOCH", "SITE_URL"}}
    env.update(
        SOURCE_DATE_EPOCH=str(EPOCH),
        PYTHONPATH=str(REPO),
        NO_MKDOCS_2_WARNING="1",
        DISABLE_MKDOCS_2_WARNING="true",
    )
    argv = [
        sys.executable,
        "-c",
        "from generator.cli import main; main()",
        *build_args(out, recipes=recipes, cache=cache, scenario=scenario),
        *extra,
    ]
    done = subprocess.run(
        argv, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, f"build failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return out


@pytest.fixture(scope="session")
def signed_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site, signed with the demo scenario's test authority (read-only: copy it)."""
    if not (RECIPES / "evidence").is_dir() or not (RECIPES / "bundles").is_dir():
        pytest.skip("the demo tree (recipes/) is absent")
    root = tmp_path_factory.mktemp("proves")
    return build_site(root / "site", cache=root / "cache", extra=PUBLISHER_ARGS)


@pytest.fixture
def site_copy(signed_site: Path, tmp_path: Path) -> Path:
    """A private copy of the signed demo site."""
    return Path(shutil.copytree(signed_site, tmp_path / "site", symlinks=True))


VerifySite = Callable[..., Result]


def identity_args(
    identity: str = TEST_SIGNER_IDENTITY, issuer: str = TEST_SIGNER_ISSUER
) -> list[str]:
    return [
        "--certificate-identity",
        identity,
        "--certificate-oidc-issuer",
        issuer,
        "--trust-root",
        str(TRUST_ROOT),
        "--offline",
    ]


@pytest.fixture
def verify_site() -> VerifySite:
    """Run `evidence-dashboard verify-site SITE ...` in process; returns click's result."""

    def run(
        site: Path,
        *args: str,
        identity: str = TEST_SIGNER_IDENTITY,
        issuer: str = TEST_SIGNER_ISSUER,
    ) -> Result:
        return CliRunner().invoke(
            main,
            ["verify-site", str(site), *identity_args(identity, issuer), *args],
            catch_exceptions=False,
        )

    return run
