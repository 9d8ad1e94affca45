"""tests/conftest.py's policy: the offline guard, `--run-online`, and CI's no-silent-skip rule.

The guard is checked in this process (it guards these very tests); the hooks are checked by
running a small suite with pytester in a subprocess, under the repo's real conftest, _support
module and pytest settings from pyproject.toml.
"""

from __future__ import annotations

import socket
import tomllib
from pathlib import Path

import pytest

from tests.conftest import LookupBlockedError, NetworkBlockedError, is_local_address

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
BLACKHOLE = ("192.0.2.1", 9)  # TEST-NET-1: the guard must refuse before any packet is sent


# --------------------------------------------------------------------------- offline guard


@pytest.mark.parametrize(
    ("address", "local"),
    [
        (("127.0.0.1", 80), True),
        (("127.8.9.10", 80), True),
        (("::1", 80, 0, 0), True),
        (("localhost", 80), True),
        (("", 80), True),
        (("0.0.0.0", 80), True),
        ("/run/some.sock", True),
        (b"\0abstract", True),
        (("192.0.2.1", 80), False),
        (("10.0.0.1", 80), False),
        (("2001:db8::1", 80, 0, 0), False),
        (("example.com", 443), False),
        (("localhost.example.com", 443), False),
        ((), False),
    ],
)
def test_what_counts_as_local(address: object, local: bool) -> None:
    assert is_local_address(address) is local


def test_tcp_to_a_remote_address_is_refused() -> None:
    with pytest.raises(NetworkBlockedError, match="192.0.2.1"):
        socket.create_connection(BLACKHOLE, timeout=1)
    with socket.socket() as sock, pytest.raises(NetworkBlockedError):
        sock.connect_ex(BLACKHOLE)


def test_udp_to_a_remote_address_is_refused() -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock,
        pytest.raises(NetworkBlockedError),
    ):
        sock.sendto(b"x", ("192.0.2.1", 53))


def test_name_lookups_are_refused_but_look_like_resolver_errors() -> None:
    with pytest.raises(LookupBlockedError) as caught:
        socket.getaddrinfo("example.com", 443)
    assert isinstance(caught.value, socket.gaierror)  # callers' usual handling still applies


def test_loopback_still_works() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        (family, kind, proto, _, address), *_ = socket.getaddrinfo(
            "localhost", port, socket.AF_INET
        )
        with socket.socket(family, kind, proto) as client:
            client.connect(address)
            peer, _ = server.accept()
            with peer:
                client.sendall(b"ping")
                assert peer.recv(4) == b"ping"


# --------------------------------------------------------------------------- hooks, via pytester

INNER_TESTS = """
import _socket
import socket

import pytest


@pytest.mark.registry
def test_registry_missing():
    pytest.skip("docker-registry binary is not installed")


@pytest.mark.fixtures
def test_needs_shared_fixtures(shared_fixtures):
    pass


def test_plain_skip():
    pytest.skip("unrelated reason")


@pytest.mark.browser
@pytest.mark.xfail(reason="known bug", strict=True)
def test_browser_xfail():
    assert False


@pytest.mark.browser
def test_browser_runs():
    pass


@pytest.mark.online
@pytest.mark.registry
def test_online_is_not_guarded():
    assert socket.socket.connect is _socket.socket.connect
    assert socket.getaddrinfo.__module__ == "socket"
"""


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with the repo's conftest, _support and pytest settings, plus INNER_TESTS."""
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    ini = dict(options["tool"]["pytest"]["ini_options"])
    ini.pop("testpaths", None)
    lines = ["[tool.pytest.ini_options]"]
    for key, value in ini.items():
        if isinstance(value, bool):
            rendered = "true" if value else "false"
        elif isinstance(value, list):
            rendered = f"[{', '.join(repr(v) for v in value)}]"
        else:
            rendered = repr(value)
        lines.append(f"{key} = {rendered}")
    pytester.makepyprojecttoml("\n".join(lines) + "\n")
    package = pytester.mkpydir("tests")
    for name in ("conftest.py", "_support.py"):
        (package / name).write_text((TESTS / name).read_text(encoding="utf-8"), encoding="utf-8")
    (package / "test_inner.py").write_text(INNER_TESTS, encoding="utf-8")
    return pytester


def _run(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None, *args: str
) -> pytest.RunResult:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    return inner.runpytest_subprocess("-p", "no:cov", *args)


def test_outside_ci_skips_are_skips(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(inner, monkeypatch, None)
    result.assert_outcomes(passed=1, skipped=4, xfailed=1)


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_a_skipped_install_marker_fails_with_its_reason(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    result = _run(inner, monkeypatch, ci)
    # the registry skip (in the call) fails, the fixtures skip (in setup) errors; the plain skip
    # and the online test stay skipped; the xfail stays an xfail
    assert result.ret != 0
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=2, xfailed=1)
    output = result.stdout.str()
    assert "marked registry and must run in CI" in output
    assert "docker-registry binary is not installed" in output
    assert "marked fixtures and must run in CI" in output
    assert "shared/fixtures is absent" in output
    assert "FAILED tests/test_inner.py::test_plain_skip" not in output


def test_ci_false_is_not_ci(inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _run(inner, monkeypatch, "false").assert_outcomes(passed=1, skipped=4, xfailed=1)


def test_run_online_runs_online_tests_unguarded(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(inner, monkeypatch, None, "--run-online")
    result.assert_outcomes(passed=2, skipped=3, xfailed=1)


def test_online_skip_says_how_to_run_it(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(inner, monkeypatch, None, "-rs")
    assert "run with --run-online" in result.stdout.str()


# --------------------------------------------------------------------------- the rule's gaps
# Each generated module below is a way a missing install could pass as a skip; under CI=true
# every one of them must fail the run.

UNMARKED_REGISTRY = """
import pytest


@pytest.fixture
def docker_registry():
    pytest.skip("docker-registry binary is not installed")


@pytest.fixture
def pushed(docker_registry):
    return docker_registry


def test_direct_use_without_a_marker(docker_registry):
    pass


def test_indirect_use_without_a_marker(pushed):
    pass
"""

MODULE_SKIP_MARKED = """
import pytest

pytest.skip("chromium is missing", allow_module_level=True)

pytestmark = pytest.mark.browser


def test_page():
    pass
"""

MODULE_IMPORTORSKIP_FIXTURE = """
import pytest

pytest.importorskip("no_such_module_for_this_test")


def test_page(browser):
    pass
"""

MODULE_SKIP_UNRELATED = """
import pytest

pytest.skip("only on another platform", allow_module_level=True)


def test_other():
    pass
"""


def _only(inner: pytest.Pytester, name: str, source: str) -> pytest.Pytester:
    (inner.path / "tests" / "test_inner.py").unlink()
    (inner.path / "tests" / f"{name}.py").write_text(source, encoding="utf-8")
    return inner


def test_a_fixture_marks_its_tests_so_an_unmarked_registry_skip_fails_in_ci(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _only(inner, "test_unmarked", UNMARKED_REGISTRY)
    _run(inner, monkeypatch, None).assert_outcomes(skipped=2)
    result = _run(inner, monkeypatch, "true")
    assert result.ret != 0
    result.assert_outcomes(errors=2)
    assert "marked registry and must run in CI" in result.stdout.str()


def test_fixture_markers_are_real_markers_and_real_fixtures() -> None:
    from tests.conftest import CI_STRICT_MARKERS, FIXTURE_MARKERS, markers_for_fixtures

    assert set(FIXTURE_MARKERS.values()) == set(CI_STRICT_MARKERS)
    assert markers_for_fixtures(["tmp_path", "sigstore_real", "browser"]) == ["browser", "fixtures"]
    sources = "".join(p.read_text(encoding="utf-8") for p in TESTS.rglob("conftest.py"))
    for fixture in FIXTURE_MARKERS:
        assert f"def {fixture}(" in sources, f"no fixture named {fixture} in tests/**/conftest.py"


@pytest.mark.parametrize(
    ("name", "source", "needs"),
    [
        ("test_module_skip", MODULE_SKIP_MARKED, "browser"),
        ("test_module_importorskip", MODULE_IMPORTORSKIP_FIXTURE, "browser"),
    ],
)
def test_in_ci_a_module_level_skip_of_a_marked_module_fails(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, source: str, needs: str
) -> None:
    _only(inner, name, source)
    outside = _run(inner, monkeypatch, None)
    assert outside.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    outside.assert_outcomes(skipped=1)
    result = _run(inner, monkeypatch, "true")
    assert result.ret not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    result.assert_outcomes(errors=1)
    assert f"{name}.py needs {needs} but skipped the whole module" in result.stdout.str()


def test_in_ci_an_unrelated_module_level_skip_stays_a_skip(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _only(inner, "test_platform", MODULE_SKIP_UNRELATED)
    _run(inner, monkeypatch, "true").assert_outcomes(skipped=1)


def test_xfail_is_strict(inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert options["tool"]["pytest"]["ini_options"]["xfail_strict"] is True
    _only(
        inner,
        "test_fixed",
        "import pytest\n\n\n@pytest.mark.xfail(reason='was a bug')\n"
        "def test_now_passes():\n    pass\n",
    )
    result = _run(inner, monkeypatch, None)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
