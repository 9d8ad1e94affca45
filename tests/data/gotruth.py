"""Go's own `encoding/json` as the ground truth of `generator.data.gojson`.

`tests/data/gojson/main.go` (standard library only) is built once per test session, offline,
with its own GOPATH and GOCACHE under the session's temporary folder. It answers each JSON
document it reads with `json.MarshalIndent(v, "", "  ")` plus a newline, then a NUL byte.
`GoMarshal.batch` runs it once over many documents; `GoMarshal.one` keeps one process running
and asks it one document at a time (the property test's examples).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

SOURCE = Path(__file__).resolve().parent / "gojson" / "main.go"


def go_tool() -> str | None:
    """The `go` command on PATH (Debian's golang-go), or None."""
    return shutil.which("go")


def offline_env(work: Path) -> dict[str, str]:
    """The environment of every `go` call: no modules, no proxy, no toolchain download."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GO")}
    env.update(
        GO111MODULE="off",
        GOPATH=str(work / "gopath"),
        GOCACHE=str(work / "gocache"),
        GOPROXY="off",
        GOTOOLCHAIN="local",
        GOFLAGS="",
        CGO_ENABLED="0",
        HOME=str(work),
    )
    return env


class GoMarshal:
    """The built ground-truth program."""

    def __init__(self, go: str, work: Path) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.env = offline_env(work)
        self.binary = work / "gojson"
        built = subprocess.run(
            [go, "build", "-o", str(self.binary), str(SOURCE)],
            cwd=work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        if built.returncode:
            raise RuntimeError(f"go build of {SOURCE.name} failed:\n{built.stderr}")
        version = subprocess.run(
            [go, "env", "GOVERSION"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
        found = re.match(r"go(\d+)\.(\d+)", version)
        self.version = (int(found[1]), int(found[2])) if found else (0, 0)
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def short_b_f_escapes(self) -> bool:
        """Whether this Go writes U+0008 and U+000C as `\\b` and `\\f` (Go 1.22 on, as aicr's
        toolchain does) rather than `\\u0008` and `\\u000c`."""
        return self.version >= (1, 22)

    def batch(self, documents: Iterable[bytes]) -> list[bytes]:
        """Go's bytes for each JSON text of `documents`, from one run of the program."""
        data = b"\n".join(documents) + b"\n"
        done = subprocess.run(
            [str(self.binary)],
            input=data,
            env=self.env,
            capture_output=True,
            timeout=600,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"gojson failed: {done.stderr.decode(errors='replace')}")
        answers = done.stdout.split(b"\0")
        assert answers[-1] == b"", "output does not end with a NUL"
        return answers[:-1]

    def one(self, document: bytes) -> bytes:
        """Go's bytes for one JSON text (on one line), from the session's running program."""
        if self._proc is None:
            self._proc = subprocess.Popen(
                [str(self.binary)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
            )
        proc = self._proc
        stdin: IO[bytes] = _pipe(proc.stdin)
        stdout: Any = _pipe(proc.stdout)
        assert b"\n" not in document
        stdin.write(document + b"\n")
        stdin.flush()
        answer = bytearray()
        while not answer.endswith(b"\0"):
            chunk = stdout.read1(1 << 16)
            if not chunk:
                raise RuntimeError(f"gojson stopped: {_pipe(proc.stderr).read().decode()}")
            answer += chunk
        return bytes(answer[:-1])

    def close(self) -> None:
        """Stop the running program, if any."""
        if self._proc is not None:
            _pipe(self._proc.stdin).close()
            self._proc.wait(timeout=60)
            _pipe(self._proc.stdout).close()
            _pipe(self._proc.stderr).close()
            self._proc = None


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    assert stream is not None
    return stream
