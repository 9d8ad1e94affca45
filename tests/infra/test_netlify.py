"""netlify.toml builds what `make site` builds, with a pinned Python and preview marking."""

from __future__ import annotations

import shlex
import tomllib
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet

from tests.infra._make import MAKE, REPO, run_make


@pytest.fixture(scope="module")
def netlify() -> dict[str, Any]:
    return tomllib.loads((REPO / "netlify.toml").read_text(encoding="utf-8"))


def _steps(command: str) -> list[list[str]]:
    """A `a && b` shell command as word lists (env assignments kept as words)."""
    return [shlex.split(part) for part in command.split("&&")]


def _make_site_args() -> list[str]:
    """The words of the build command `make site` runs (dry run, so nothing is built)."""
    if MAKE is None:
        pytest.skip("needs GNU make")
    dry = run_make(REPO, "-n", "site")
    assert dry.returncode == 0, dry.stderr
    line = next(
        text
        for text in dry.stdout.replace("\\\n", " ").splitlines()
        if "evidence-dashboard build" in text
    )
    words = shlex.split(line)
    return words[words.index("build") + 1 :]


def test_publishes_site(netlify: dict[str, Any]) -> None:
    assert netlify["build"]["publish"] == "site"


def test_python_is_pinned_to_a_version_the_project_supports(netlify: dict[str, Any]) -> None:
    version = netlify["build"]["environment"]["PYTHON_VERSION"]
    assert version == "3.11"  # CI's minor version
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert SpecifierSet(requires["project"]["requires-python"]).contains(version + ".0")
    assert not (REPO / "runtime.txt").exists()  # the legacy mechanism would compete


def test_build_environment(netlify: dict[str, Any]) -> None:
    env = netlify["build"]["environment"]
    assert env["NO_MKDOCS_2_WARNING"] == "1"
    assert env["PIP_DISABLE_PIP_VERSION_CHECK"] == "1"


@pytest.mark.parametrize("context", ["build", "context.deploy-preview", "context.branch-deploy"])
def test_installs_from_the_lock_then_builds_like_make_site(
    netlify: dict[str, Any], context: str
) -> None:
    table: dict[str, Any] = netlify
    for key in context.split("."):
        table = table[key]
    install, build = _steps(table["command"])
    assert install == ["pip", "install", "-c", "constraints.txt", "."]
    words = [w for w in build if not w.startswith("SITE_URL=")]
    assert words[:2] == ["evidence-dashboard", "build"]
    args = words[2:]
    if context != "build":
        assert args[-1] == "--preview"
        args = args[:-1]
    assert args == _make_site_args()


def test_preview_follows_its_own_origin_and_production_has_a_url(netlify: dict[str, Any]) -> None:
    _, build = _steps(netlify["context"]["deploy-preview"]["command"])
    assert "SITE_URL=$DEPLOY_PRIME_URL" in build
    assert "--preview" not in netlify["build"]["command"]
    assert netlify["context"]["production"]["environment"]["SITE_URL"].startswith("https://")


def test_branch_deploys_are_marked_previews_on_their_own_origin(netlify: dict[str, Any]) -> None:
    _, build = _steps(netlify["context"]["branch-deploy"]["command"])
    assert "SITE_URL=$DEPLOY_PRIME_URL" in build and build[-1] == "--preview"


def test_every_page_has_the_security_headers(netlify: dict[str, Any]) -> None:
    (rule,) = [h for h in netlify["headers"] if h["for"] == "/*"]
    values = rule["values"]
    assert values["X-Content-Type-Options"] == "nosniff"
    assert values["Referrer-Policy"] in {
        "strict-origin-when-cross-origin",
        "no-referrer",
        "same-origin",
        "strict-origin",
    }
    features = dict(item.strip().split("=", 1) for item in values["Permissions-Policy"].split(","))
    assert {"camera", "microphone", "geolocation"} <= set(features)
    assert all(allow == "()" for allow in features.values())
