"""The thin git adapter: resolve revisions, list changed paths, materialise a revision's tree.

Only plumbing commands run (`rev-parse`, `merge-base`, `diff`, `ls-tree`, `cat-file`), each with
a timeout, so nothing from the checked-out PR is executed: no hooks, no filters, no attribute
drivers (files come from `cat-file --batch`, not `archive` or `checkout`). Materialised trees hold
regular files only; symlinks and submodules are left out, and the total size is bounded.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from generator.errors import InputError, Location, UsageError

GIT_TIMEOUT = 60.0
TREE_LIMIT = 1 << 30
_REV = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,199}")
_SAFE_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


@dataclass(frozen=True)
class GitTree:
    """A git checkout and where the recipes folder sits in it (`prefix`, "" or `recipes/`)."""

    top: Path
    prefix: str

    def _run(self, *args: str, stdin: bytes | None = None) -> bytes:
        import os

        env = {**os.environ, **_SAFE_ENV}
        try:
            done = subprocess.run(
                ["git", "-C", str(self.top), *args],
                input=stdin,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
                env=env,
            )
        except FileNotFoundError as exc:
            raise InputError(
                "git is not installed",
                expected="a git executable on PATH",
                found="none",
                hint="install git",
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise InputError(
                f"git {args[0]} timed out",
                expected=f"under {GIT_TIMEOUT:.0f}s",
                found="timeout",
                hint="retry; check the repository's size",
            ) from exc
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise InputError(
                f"git {args[0]} failed",
                location=Location(str(self.top)),
                expected="exit 0",
                found=(message or ["no message"])[-1][:200],
                hint="run the report inside a git checkout that has both revisions "
                "(fetch with enough depth for the merge base)",
            )
        return done.stdout

    @classmethod
    def locate(cls, recipes: Path) -> GitTree:
        """The checkout holding the `recipes` folder (raises `InputError` outside a work tree)."""
        if not recipes.is_dir():
            raise InputError(
                "the recipes folder does not exist",
                location=Location(str(recipes)),
                expected="a folder inside a git checkout",
                found="no such folder",
                hint="run the report from the checkout root or pass --recipes",
            )
        probe = cls(recipes, "")
        top = probe._run("rev-parse", "--show-toplevel").decode().strip()
        prefix = probe._run("rev-parse", "--show-prefix").decode().strip()
        return cls(Path(top), prefix)

    def resolve(self, rev: str) -> str:
        """The full commit id of `rev` (rejects option-like or odd revision text)."""
        if not _REV.fullmatch(rev) or ".." in rev:
            raise UsageError(
                "not a revision",
                expected="a commit, branch or tag name",
                found=rev[:80],
                hint="pass --base/--head as SHAs or ref names",
            )
        out = self._run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        return out.decode().strip()

    def merge_base(self, base: str, head: str) -> str:
        return self._run("merge-base", base, head).decode().strip()

    def changed(self, base: str, head: str) -> list[str]:
        """`git diff --name-only BASE...HEAD` under the prefix, relative to it (no renames)."""
        out = self._run(
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            f"{base}...{head}",
            "--",
            self.prefix or ":/",
        )
        paths = [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
        return sorted(p[len(self.prefix) :] for p in paths if p.startswith(self.prefix))

    def has_tree(self, rev: str) -> bool:
        spec = f"{rev}:{self.prefix}" if self.prefix else f"{rev}^{{tree}}"
        try:
            self._run("cat-file", "-e", spec)
        except InputError:
            return False
        return True

    def materialise(self, rev: str, dest: Path) -> bool:
        """Write the regular files of `rev:<prefix>` under `dest`; False if it has no such tree."""
        if not self.has_tree(rev):
            return False
        spec = ("--", self.prefix) if self.prefix else ()
        listing = self._run("ls-tree", "-r", "-z", "--full-tree", rev, *spec)
        blobs: list[tuple[str, str]] = []
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, _, name = entry.partition(b"\t")
            mode, kind, obj = meta.decode().split(" ")
            if kind != "blob" or mode not in ("100644", "100755"):
                continue
            path = name.decode("utf-8", "surrogateescape")
            if path.startswith(self.prefix):
                blobs.append((obj, path[len(self.prefix) :]))
        dest.mkdir(parents=True, exist_ok=True)
        if not blobs:
            return True
        data = self._run(
            "cat-file", "--batch", stdin="".join(f"{obj}\n" for obj, _ in blobs).encode()
        )
        offset = 0
        total = 0
        for obj, rel in blobs:
            end = data.index(b"\n", offset)
            header = data[offset:end].decode().split(" ")
            if len(header) != 3 or header[0] != obj:
                raise InputError(
                    "git cat-file gave an unexpected answer",
                    expected=f"{obj} blob <size>",
                    found=" ".join(header)[:120],
                    hint="retry; the repository may be corrupt",
                )
            size = int(header[2])
            total += size
            if total > TREE_LIMIT:
                raise InputError(
                    "the recipes tree is too large to materialise",
                    expected=f"at most {TREE_LIMIT} bytes",
                    found=f"{total}+",
                    hint="point --recipes at the recipes folder only",
                )
            content = data[end + 1 : end + 1 + size]
            offset = end + 1 + size + 1
            target = _safe_target(dest, rel)
            if target is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        return True


def _safe_target(dest: Path, rel: str) -> Path | None:
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    return dest.joinpath(*parts)
