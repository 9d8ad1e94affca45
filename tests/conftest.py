"""Suite-wide test policy: offline by default, no silent skips in CI, the shared fixtures folder.

- Offline guard: every test runs with non-loopback socket connections, datagrams and name lookups
  refused (`NetworkBlockedError`, `LookupBlockedError`), unless it is marked `online`.
- `online` tests are skipped unless `--run-online` is given.
- A test that uses the `browser`, `docker_registry`, `node` or a shared-fixtures fixture (directly or
  through another fixture) gets the matching marker automatically (`FIXTURE_MARKERS`).
- Under `CI=true` a skipped test marked `browser`, `registry`, `fixtures`, `node` or `go` is reported as a
  failure carrying the skip reason, so a missing install can never pass as a skip. (A test also
  marked `online` is exempt: CI has no network.) Likewise a module that skips itself while it is
  imported fails collection when its source asks for one of those markers or fixtures.
- Cache key isolation: every test runs with `EVIDENCE_DASHBOARD_CACHE_KEY` set to a test key,
  `XDG_CONFIG_HOME` pointing at a folder of its own, so no test reads or writes the real
  cache key file in the user's config folder (tests of the key file unset the variable), and
  `XDG_CACHE_HOME` at another, so a build a test runs without `--cache` never leaves entries
  sealed with the test key in the user's cache (where the user's next build would count each
  one it reads as an authentication failure).
- `shared_fixtures`: the repo root's sibling `shared/fixtures` folder, or a skip. Test modules
  that want the path without the fixture call `tests._support.fixtures_dir()`.

`tests/` and each seam folder are packages, so under `--import-mode=importlib` a test module
imports helpers by their full name: `from tests._support import fixtures_dir`, or
`from tests.<seam>.conftest import NAME` (never a bare `from conftest import`, which would pick
whichever seam's conftest happened to load first). Markers are registered in pyproject.toml.
"""

from __future__ import annotations

import ast
import ipaddress
import os
import shutil
import socket
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Any

import pytest

from tests._support import fixtures_dir

#: Markers whose skip means "something is not installed": under CI=true that is a failure.
CI_STRICT_MARKERS = ("browser", "registry", "fixtures", "node", "go")

#: Fixtures that need something installed, and the marker a test using one gets automatically
#: (directly or through another fixture), so a forgotten marker cannot hide a skip from CI.
FIXTURE_MARKERS: dict[str, str] = {
    "browser": "browser",
    "docker_registry": "registry",
    "shared_fixtures": "fixtures",
    "aicr_tree": "fixtures",
    "sigstore_real": "fixtures",
    "node": "node",
    "go": "go",
}


def markers_for_fixtures(fixturenames: Iterable[str]) -> list[str]:
    """The CI-strict markers implied by the fixtures a test uses, in CI_STRICT_MARKERS order."""
    wanted = {FIXTURE_MARKERS[name] for name in fixturenames if name in FIXTURE_MARKERS}
    return [name for name in CI_STRICT_MARKERS if name in wanted]


# --------------------------------------------------------------------------- options


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-online",
        action="store_true",
        default=False,
        help="run tests marked `online` (they need the network)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark tests from the fixtures they use; skip `online` tests unless `--run-online`."""
    for item in items:
        for marker in markers_for_fixtures(getattr(item, "fixturenames", ())):
            if item.get_closest_marker(marker) is None:
                item.add_marker(marker)
    if config.getoption("--run-online"):
        return
    skip = pytest.mark.skip(reason="needs the network; run with --run-online")
    for item in items:
        if item.get_closest_marker("online") is not None:
            item.add_marker(skip)


# --------------------------------------------------------------------------- offline guard


class NetworkBlockedError(OSError):
    """A test tried to reach a non-loopback address; mark it `online` if it really must."""


class LookupBlockedError(socket.gaierror):
    """A test tried to resolve a non-local host name (a DNS query would leave the machine)."""


def _is_local_host(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host in ("", "localhost") or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def is_local_address(address: Any) -> bool:
    """True for AF_UNIX paths and loopback (or unspecified) IPv4/IPv6 socket addresses."""
    if isinstance(address, str | bytes):
        return True  # AF_UNIX path (or abstract name)
    if isinstance(address, tuple) and address:
        return _is_local_host(address[0])
    return False


def _lookup_allowed(host: object) -> bool:
    if host is None or _is_local_host(host):
        return True
    text = host.decode("ascii", "replace") if isinstance(host, bytes) else host
    try:  # an IP literal needs no DNS; connect() decides about it
        ipaddress.ip_address(str(text).split("%", 1)[0])
    except ValueError:
        return False
    return True


@pytest.fixture(autouse=True)
def offline_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse non-loopback connections, datagrams and DNS lookups, unless marked `online`."""
    if request.node.get_closest_marker("online") is not None:
        return
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_sendto = socket.socket.sendto
    real_getaddrinfo = socket.getaddrinfo

    def blocked(address: Any) -> NetworkBlockedError:
        return NetworkBlockedError(
            f"offline test tried to reach {address!r}; tests may only use loopback addresses "
            "(mark the test `online` and run with --run-online if it truly needs the network)"
        )

    def connect(self: socket.socket, address: Any) -> None:
        if not is_local_address(address):
            raise blocked(address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not is_local_address(address):
            raise blocked(address)
        return real_connect_ex(self, address)

    def sendto(self: socket.socket, data: Any, *args: Any) -> int:
        if args and not is_local_address(args[-1]):
            raise blocked(args[-1])
        return real_sendto(self, data, *args)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _lookup_allowed(host):
            raise LookupBlockedError(
                socket.EAI_NONAME, f"offline test tried to resolve {host!r}; use 127.0.0.1"
            )
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket.socket, "sendto", sendto)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


# --------------------------------------------------------------------------- cache key

#: The cache key of the test suite (`generator.cacheauth`); any long value will do.
TEST_CACHE_KEY = "test-suite-cache-key-" + "0" * 43


@pytest.fixture(autouse=True)
def cache_key_isolation(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test key in the environment and private config and cache folders: never the user's
    key file, never the user's cache."""
    monkeypatch.setenv("EVIDENCE_DASHBOARD_CACHE_KEY", TEST_CACHE_KEY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache-home")))


@pytest.fixture(autouse=True)
def fresh_recipe_memo() -> None:
    """Each test starts with an empty in-process recipe memo (generator.verify.recipememo), so
    a test that counts or breaks canonicalization sees its own bundles parsed."""
    from generator.verify.recipememo import RECIPES

    RECIPES.clear()


# --------------------------------------------------------------------------- CI: no silent skips


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason.removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under CI=true, turn the skip of a `browser`/`registry`/`fixtures` test into a failure."""
    report = yield
    if not (report.skipped and _in_ci()) or hasattr(report, "wasxfail"):
        return report
    if item.get_closest_marker("online") is not None:
        return report
    strict = [name for name in CI_STRICT_MARKERS if item.get_closest_marker(name) is not None]
    if strict:
        report.outcome = "failed"
        report.longrepr = (
            f"CI=true: this test is marked {', '.join(strict)} and must run in CI, but it was "
            f"skipped ({call.when}): {_skip_reason(report)}\n"
            "Install what it needs (`make test` runs scripts/install-system-deps.sh; "
            "shared/fixtures must sit beside the repo root)."
        )
    return report


def strict_needs_in_source(source: str) -> list[str]:
    """The CI-strict markers a test module's source asks for: `pytest.mark.<name>` (also as
    `pytestmark`), a test or fixture parameter named after a FIXTURE_MARKERS fixture, or
    `usefixtures("<fixture>")`. Read from the text because a module that skips while it is
    imported never gets its markers attached."""
    wanted: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in CI_STRICT_MARKERS
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "mark"
        ):
            wanted.add(node.attr)
        elif isinstance(node, ast.arg) and node.arg in FIXTURE_MARKERS:
            wanted.add(FIXTURE_MARKERS[node.arg])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "usefixtures"
        ):
            wanted.update(
                FIXTURE_MARKERS[arg.value]
                for arg in node.args
                if isinstance(arg, ast.Constant) and arg.value in FIXTURE_MARKERS
            )
    return [name for name in CI_STRICT_MARKERS if name in wanted]


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """Under CI=true, a module that skips itself while importing (`pytest.skip(...,
    allow_module_level=True)`, a module-level `importorskip`) fails collection when its source
    asks for a browser, the registry or the shared fixtures: the skip would hide every test."""
    report = yield
    if not (report.skipped and _in_ci() and isinstance(collector, pytest.Module)):
        return report
    try:
        strict = strict_needs_in_source(collector.path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        strict = list(CI_STRICT_MARKERS)  # unreadable: assume the worst
    if strict:
        report.outcome = "failed"
        report.longrepr = (
            f"CI=true: {collector.path.name} needs {', '.join(strict)} but skipped the whole "
            f"module while importing: {_skip_reason(report)}\n"
            "Install what it needs (`make test` runs scripts/install-system-deps.sh; "
            "shared/fixtures must sit beside the repo root)."
        )
    return report


# --------------------------------------------------------------------------- shared fixtures


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The repo root's sibling `shared/fixtures` folder; skips when it is absent."""
    found = fixtures_dir()
    if found is None:
        pytest.skip("../shared/fixtures is absent (it sits beside the repo root)")
    return found


# --------------------------------------------------------------------------- browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser() -> Generator[Any, None, None]:
    """One headless Debian Chromium for the whole session (Playwright's sync API allows one
    running instance per thread, so every browser test shares it)."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


# --------------------------------------------------------------------------- node


@pytest.fixture(scope="session")
def node() -> str:
    """Debian's `node` (package nodejs), which runs the workflows' github-script steps."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed (Debian package nodejs)")
    return found
