"""scripts/install-system-deps.sh against a fake `apt-get`: idempotent, root or sudo, never prompts.

Each test runs the real script with PATH set to one folder of fakes (apt-get, id, sudo, env and,
when "installed", chromium / docker-registry / node / go), so nothing touches the machine's packages.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install-system-deps.sh"
BINARIES = {
    "chromium": "chromium",
    "docker-registry": "docker-registry",
    "nodejs": "node",
    "golang-go": "go",
}
"""Each Debian package the script installs and the binary it provides."""
PACKAGES = tuple(BINARIES)
ALL = " ".join(PACKAGES)
BASH = shutil.which("bash")
ENV = shutil.which("env")
CHMOD = shutil.which("chmod")


def _write_exe(path: Path, body: str) -> None:
    path.write_text("#!" + str(BASH) + "\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@dataclass(frozen=True)
class Run:
    """One run of the script: exit code, output, and the fake apt-get / sudo calls it made."""

    code: int
    output: str
    apt_calls: list[str]
    sudo_calls: list[str]


class FakeSystem:
    """A PATH folder of fakes; `installed` packages have a binary there."""

    def __init__(
        self, root: Path, *, uid: int, sudo: bool = True, apt_installs: bool = True
    ) -> None:
        self.bin = root / "bin"
        self.bin.mkdir()
        self.log = root / "apt.log"
        self.sudo_log = root / "sudo.log"
        assert ENV is not None
        (self.bin / "env").symlink_to(ENV)
        _write_exe(self.bin / "id", f'[ "$1" = "-u" ] && echo {uid} || echo user\n')
        # The fake apt-get records its arguments and DEBIAN_FRONTEND; `install` "installs" by
        # creating each package's binary (unless told not to).
        binary = "".join(f"{package}) b={name};; " for package, name in BINARIES.items())
        create = (
            (
                'for p in "$@"; do case "$p" in -*|install) ;; *) '
                f'case "$p" in {binary}*) b="$p";; esac; '
                f'printf "#!/bin/sh\\n" > "{self.bin}/$b"; {CHMOD} +x "{self.bin}/$b";; esac; done\n'
            )
            if apt_installs
            else ""
        )
        _write_exe(
            self.bin / "apt-get",
            f'echo "DEBIAN_FRONTEND=${{DEBIAN_FRONTEND:-}} $*" >> "{self.log}"\n'
            f'if [ "$1" = install ]; then {create or ":"}\nfi\n',
        )
        if sudo:
            _write_exe(self.bin / "sudo", f'echo "$*" >> "{self.sudo_log}"\nexec "$@"\n')

    def install(self, *packages: str) -> None:
        for package in packages:
            _write_exe(self.bin / BINARIES[package], "exit 0\n")

    def run(self, **extra_env: str) -> Run:
        env = {"PATH": str(self.bin), **extra_env}
        done = subprocess.run(
            [str(BASH), str(SCRIPT)],
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )

        def lines(path: Path) -> list[str]:
            return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

        return Run(
            done.returncode, done.stdout + done.stderr, lines(self.log), lines(self.sudo_log)
        )


pytestmark = pytest.mark.skipif(None in (BASH, ENV, CHMOD), reason="needs bash, env and chmod")


def test_script_is_executable_bash_with_strict_mode() -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert os.access(SCRIPT, os.X_OK)


def test_nothing_missing_means_no_apt_get_at_all(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path, uid=0)
    fake.install(*PACKAGES)
    for _ in range(2):
        result = fake.run()
        assert result.code == 0, result.output
        assert result.apt_calls == []
        assert result.sudo_calls == []


def test_missing_packages_are_installed_once_then_never_again(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path, uid=0)
    first = fake.run()
    assert first.code == 0, first.output
    assert first.apt_calls == [
        "DEBIAN_FRONTEND=noninteractive update",
        f"DEBIAN_FRONTEND=noninteractive install -y --no-install-recommends {ALL}",
    ]
    assert first.sudo_calls == []  # root needs no sudo
    second = fake.run()
    assert second.code == 0, second.output
    assert second.apt_calls == first.apt_calls  # no new call


@pytest.mark.parametrize("present", PACKAGES)
def test_only_the_missing_packages_are_installed(tmp_path: Path, present: str) -> None:
    fake = FakeSystem(tmp_path, uid=0)
    fake.install(present)
    result = fake.run()
    missing = " ".join(p for p in PACKAGES if p != present)
    assert result.code == 0, result.output
    assert result.apt_calls[-1] == (
        f"DEBIAN_FRONTEND=noninteractive install -y --no-install-recommends {missing}"
    )
    assert (fake.bin / "go").exists()  # golang-go provides `go`, not `golang-go`


def test_non_root_goes_through_sudo(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path, uid=1000)
    result = fake.run()
    assert result.code == 0, result.output
    assert len(result.sudo_calls) == 2
    assert all(
        call.startswith("env DEBIAN_FRONTEND=noninteractive apt-get ") for call in result.sudo_calls
    )
    assert [c.split(" ", 1)[1] for c in result.apt_calls] == [
        "update",
        f"install -y --no-install-recommends {ALL}",
    ]


def test_non_root_without_sudo_fails_with_a_hint(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path, uid=1000, sudo=False)
    result = fake.run()
    assert result.code != 0
    assert result.apt_calls == []
    assert "SKIP_SYSTEM_DEPS=1" in result.output


def test_skip_switch_installs_nothing(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path, uid=0)
    result = fake.run(SKIP_SYSTEM_DEPS="1")
    assert result.code == 0
    assert result.apt_calls == []
    assert ALL in result.output


def test_an_install_that_leaves_a_binary_missing_fails(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path, uid=0, apt_installs=False)
    result = fake.run()
    assert result.code != 0
    assert "still not on PATH" in result.output
