"""The package looks like its peers: SPDX license and LICENSE file, classifiers and URLs, one
source of the version, runtime dependencies that match what the product imports (the test
authority's in an extra), the user cache folder from platformdirs, and a wheel that, installed
outside the checkout, builds the demo."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import generator

REPO = Path(__file__).resolve().parents[2]
PYPROJECT: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT: dict[str, Any] = PYPROJECT["project"]
#: Declared at run time although never imported: MkDocs loads the theme by name.
USED_BY_NAME = {"mkdocs-material"}


def test_license_is_an_spdx_string_with_the_apache_text() -> None:
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n")
    for words in (
        "Version 2.0, January 2004",
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION",
        "9. Accepting Warranty or Additional Liability",
        "END OF TERMS AND CONDITIONS",
        "APPENDIX: How to apply the Apache License to your work.",
    ):
        assert words in text
    assert not any(c.startswith("License ::") for c in PROJECT["classifiers"])  # PEP 639


def test_classifiers_and_urls() -> None:
    classifiers = PROJECT["classifiers"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert {"Homepage", "Source", "Issues"} <= set(PROJECT["urls"])
    assert all(url.startswith("https://") for url in PROJECT["urls"].values())


def test_the_version_has_one_source() -> None:
    assert "version" not in PROJECT and PROJECT["dynamic"] == ["version"]
    dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "generator.__version__"}
    Version(generator.__version__)  # a valid version


def _top_level_imports(folder: Path, skip: Path | None = None) -> set[str]:
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        if skip is not None and skip in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def _distributions(modules: set[str]) -> set[str]:
    """Third-party distributions that provide `modules` (standard library and ours left out)."""
    providers = metadata.packages_distributions()
    found: set[str] = set()
    for module in modules - set(sys.stdlib_module_names) - {"generator", "__future__"}:
        dists = providers.get(module)
        assert dists, f"no installed distribution provides {module!r}"
        found.update(canonicalize_name(d) for d in dists)
    return found


def _declared(*groups: str) -> set[str]:
    texts = list(PROJECT["dependencies"]) if "" in groups else []
    for group in groups:
        if group:
            texts += PROJECT["optional-dependencies"][group]
    return {canonicalize_name(Requirement(t).name) for t in texts}


def test_runtime_dependencies_are_what_the_product_imports() -> None:
    product = _distributions(
        _top_level_imports(REPO / "generator", skip=REPO / "generator" / "testing")
    )
    runtime = _declared("")
    assert product - runtime == set(), "imported at run time but not declared"
    assert runtime - product - USED_BY_NAME == set(), "declared but never imported"


#: The one function of the product that may import the test authority (lazily, for
#: `build --sign-with-test-authority`, turning a missing `authority` extra into a usage error).
AUTHORITY_GATE = ("publish.py", "demo_authority")


def test_the_product_never_imports_the_test_authority() -> None:
    """Else a plain install (without the `authority` extra) could fail at run time."""
    for path in (REPO / "generator").rglob("*.py"):
        if (REPO / "generator" / "testing") in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        gated: set[int] = set()
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef) and (path.name, func.name) == AUTHORITY_GATE:
                body = ast.unparse(func)
                assert "except ImportError" in body and "UsageError" in body, path
                gated.update(id(n) for n in ast.walk(func))
        for node in ast.walk(tree):
            if id(node) in gated:
                continue
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("generator.testing"), path
                assert not (
                    node.module == "generator" and any(a.name == "testing" for a in node.names)
                ), path
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("generator.testing") for a in node.names), path


def test_the_test_authority_needs_only_runtime_and_authority_dependencies() -> None:
    authority = _distributions(_top_level_imports(REPO / "generator" / "testing"))
    assert authority - _declared("", "authority") == set()
    assert _declared("authority") - _declared("") <= authority  # no stray extra


def test_the_cache_folder_comes_from_platformdirs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import platformdirs

    from generator.bundle.cache import default_cache_dir

    seen: list[str] = []

    def user_cache_dir(appname: str, *args: Any, **kwargs: Any) -> str:
        seen.append(appname)
        return str(tmp_path / "platform-cache" / appname)

    monkeypatch.setattr(platformdirs, "user_cache_dir", user_cache_dir)
    assert default_cache_dir({}) == tmp_path / "platform-cache" / "evidence-dashboard"
    assert seen == ["evidence-dashboard"]


def _copy_sources(target: Path) -> Path:
    """The files a wheel is built from (no .git, venv, site or build folders)."""
    import shutil

    src = target / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "generator", src / "generator", ignore=ignore)
    shutil.copytree(REPO / "site_templates", src / "site_templates", ignore=ignore)
    return src


@pytest.mark.slow
def test_a_wheel_installed_outside_the_checkout_builds_the_demo(tmp_path: Path) -> None:
    # Read from metadata: importing setuptools would put its vendored distributions on sys.path.
    have = metadata.version("setuptools")
    backend = Requirement(PYPROJECT["build-system"]["requires"][0])
    if not backend.specifier.contains(have):
        pytest.skip(
            f"this venv's setuptools {have} is not {backend} "
            "(`make venv` installs the build backend)"
        )
    src = _copy_sources(tmp_path)
    wheels = tmp_path / "wheels"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-w",
            str(wheels),
            str(src),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("evidence_dashboard-*.whl")
    assert wheel.name.startswith(f"evidence_dashboard-{generator.__version__}-")

    # A fresh venv that sees this venv's third-party packages (a plain .pth path line, so the
    # checkout's editable install is not picked up) and holds nothing but the wheel itself.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig;print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.strip()
    (Path(purelib) / "_project_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    where = tmp_path / "elsewhere"
    where.mkdir()
    located = subprocess.run(
        [str(python), "-c", "import generator;print(generator.__file__)"],
        cwd=where,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert Path(located.stdout.strip()).is_relative_to(venv), located.stdout

    demo = REPO / "recipes"
    env["SOURCE_DATE_EPOCH"] = "1767225600"
    site = where / "site"
    done = subprocess.run(
        [
            str(venv / "bin" / "evidence-dashboard"),
            "build",
            "--recipes",
            str(demo),
            "--out",
            str(site),
            "--offline",
            "--oci-layout",
            str(demo / "bundles"),
            "--trust-root",
            str(demo / "trust" / "trusted_root.json"),
            "--cache",
            str(tmp_path / "cache"),
            "--quiet",
            "--format",
            "json",
        ],
        cwd=where,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"exit": 0' in done.stdout
    assert (site / "index.html").is_file() and (site / "data" / "pointers.json").is_file()
    assert (site / "data" / "schema" / "index.schema.json").is_file()


def test_every_package_of_the_generator_is_in_the_wheel_list() -> None:
    """`[tool.setuptools] packages` is a hand list: a new package missing from it builds and
    tests fine from the checkout but is absent from the wheel (fast check; the wheel test above
    proves the same end to end)."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    listed = set(
        tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(root).parts)
        for init in (root / "generator").rglob("__init__.py")
    }
    assert found - listed == set(), "packages missing from pyproject.toml"
