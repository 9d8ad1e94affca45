"""constraints.txt is a real lock: exact pins, every dependency covered, and in step with the venv.

Also checks that no pin conflicts with a constraint file pip itself is configured with (pip's
site or user config, or PIP_CONSTRAINT), since pip applies both to every install.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "constraints.txt"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s=;#]+)$")
PROJECT = "evidence-dashboard"
#: Installed by venv itself, not by us; `pip freeze` leaves them out.
BOOTSTRAP = {"pip", "setuptools", "wheel", "distribute"}


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"constraints.txt: {line!r} is not `name==version`"
        name = canonicalize_name(match["name"])
        assert name not in pins, f"constraints.txt pins {name} twice"
        pins[name] = Version(match["version"])
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = list(project["dependencies"])
    for extra in ("test", "lint", "authority"):
        texts += project["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


def test_every_line_is_an_exact_pin_and_the_project_is_not_pinned() -> None:
    pins = _pins()
    assert pins, "constraints.txt pins nothing"
    assert canonicalize_name(PROJECT) not in pins
    assert not BOOTSTRAP & set(pins)


def test_every_declared_dependency_is_pinned_inside_its_range() -> None:
    pins = _pins()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is declared in pyproject.toml but not locked"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]}, outside pyproject's {requirement}"
        )


def _installed() -> dict[str, str]:
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        found[name] = dist.version
    return found


def test_the_running_venv_is_exactly_the_lock() -> None:
    """Catches a hand-installed or upgraded package: `make lock` is the one way to change pins."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("not running inside a virtualenv")
    installed = _installed()
    pins = _pins()
    wrong = {n: (str(v), installed.get(n)) for n, v in pins.items() if installed.get(n) != str(v)}
    assert wrong == {}, "pinned version != installed version (pin, installed)"
    extra = set(installed) - set(pins) - BOOTSTRAP - {canonicalize_name(PROJECT)}
    assert extra == set(), "installed in the venv but missing from constraints.txt"


def _pip_constraint_files() -> list[Path]:
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    files: list[Path] = []
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        if key.rsplit(".", 1)[-1] == "constraint":
            files += [Path(p) for p in shlex.split(value.strip().strip("'\""))]
    return [f for f in files if f.is_file()]


def test_pins_satisfy_pips_own_configured_constraints() -> None:
    files = _pip_constraint_files()
    if not files:
        pytest.skip("pip is configured with no constraint file")
    pins = _pins()
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            text = line.split("#", 1)[0].strip()
            if not text or text.startswith("-"):
                continue
            requirement = Requirement(text)
            name = canonicalize_name(requirement.name)
            if name in pins:
                assert requirement.specifier.contains(pins[name], prereleases=True), (
                    f"pip's configured constraint {requirement} ({file}) conflicts with "
                    f"constraints.txt's {name}=={pins[name]}"
                )
