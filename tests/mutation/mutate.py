"""A small AST mutation tester for the trust core (`make mutation`).

Each mutant is one small, plausible bug (a flipped comparison, `and` for `or`, a dropped `not`,
an off-by-one constant, a case-insensitive compare, a deleted `raise`/`return`, ...) spliced into
one module of a throw-away copy of the repository; the module's own tests (see `targets.py`) then
run with `-x`. A mutant no test notices *survived*: either a test is missing, or the mutant is
equivalent (no behaviour can tell it apart) and is listed, with why, in `equivalents.txt`.

Usage:
    python -m tests.mutation.mutate                       # every target module, every mutant
    python -m tests.mutation.mutate --module generator/verify/policy.py
    python -m tests.mutation.mutate --changed origin/main # modules a change touches
    python -m tests.mutation.mutate --sample 40 --seed 7  # a fixed-seed sample per module
    python -m tests.mutation.mutate --changed origin/main --budget 120   # what CI runs
    python -m tests.mutation.mutate --list                # print the mutants, run nothing

The score is killed / (mutants - listed equivalents); the run fails under `--min-score`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tests.mutation.targets import TARGETS, Target

REPO = Path(__file__).resolve().parents[2]
EQUIVALENTS = Path(__file__).with_name("equivalents.txt")
_ROOT_ONLY = frozenset({".git", ".venv", "build", "site"})
"""Ignored at the repository root only (`generator/site` and `tests/site` are code)."""
_ANYWHERE = shutil.ignore_patterns(
    "__pycache__", "*.pyc", ".mypy_cache", ".ruff_cache", ".pytest_cache", "artifacts", "*.egg-info"
)


def _copy_ignore(folder: str, names: list[str]) -> set[str]:
    ignored = set(_ANYWHERE(folder, names))
    if Path(folder).resolve() == REPO:
        ignored |= _ROOT_ONLY & set(names)
    return ignored


_COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}
_CALL_SWAPS = {"any": "all", "all": "any", "min": "max", "max": "min"}


@dataclass(frozen=True)
class Mutant:
    """One spliced change: the source span [start, end) of `path` replaced by `text`."""

    path: str
    line: int
    operator: str
    original: str
    replacement: str
    start: int
    end: int
    text: str
    scope: str
    occurrence: int = 1
    """1 for the first mutant with this description in its scope, 2 for the next, ..."""
    end_line: int = 0
    """The last line the mutated node spans (0: `line`)."""

    @property
    def key(self) -> str:
        """A line-number-free name, stable across unrelated edits (for equivalents.txt)."""
        suffix = "" if self.occurrence == 1 else f" #{self.occurrence}"
        return (
            f"{self.path}::{self.scope}::{self.operator}::{self.original} => "
            f"{self.replacement}{suffix}"
        )


def _offsets(source: str) -> list[int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


class _Finder(ast.NodeVisitor):
    """Collects mutants; skips docstrings, annotations, f-strings and `__all__`-style tables."""

    def __init__(
        self,
        path: str,
        source: str,
        strings: bool = True,
        scopes: tuple[str, ...] | None = None,
    ) -> None:
        self.path = path
        self.strings = strings
        self.source = source
        self.starts = _offsets(source)
        self.scopes = scopes
        self.scope: list[str] = []
        self.found: list[Mutant] = []

    # -- helpers
    def _span(self, node: ast.AST) -> tuple[int, int]:
        start = self.starts[node.lineno - 1] + _char_col(
            self.source, self.starts, node.lineno, node.col_offset
        )
        end = self.starts[node.end_lineno - 1] + _char_col(  # type: ignore[operator]
            self.source, self.starts, node.end_lineno, node.end_col_offset
        )  # type: ignore[arg-type]
        return start, end

    def _add(
        self,
        node: ast.AST,
        operator: str,
        new: str,
        *,
        paren: bool = True,
        label: str | None = None,
    ) -> None:
        if self.scopes is not None and not in_scopes(".".join(self.scope), self.scopes):
            return
        start, end = self._span(node)
        original = self.source[start:end]
        text = f"({new})" if paren else new
        self.found.append(
            Mutant(
                path=self.path,
                line=node.lineno,
                end_line=getattr(node, "end_lineno", None) or node.lineno,
                operator=operator,
                original=_short(original),
                replacement=_short(label or new),
                start=start,
                end=end,
                text=text,
                scope=".".join(self.scope) or "<module>",
            )
        )

    # -- scopes and skipped regions
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scoped(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._scoped(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(node)

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for stmt in body:
            self.visit(stmt)
        if not isinstance(node, ast.ClassDef):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    self.visit(default)
        self.scope.pop()

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # message text: positions inside f-strings are unreliable before 3.12

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # attribute docstrings
        self.generic_visit(node)

    # -- operators
    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            swap = _COMPARE_SWAPS.get(type(op))
            if swap is not None:
                ops = list(node.ops)
                ops[i] = swap()
                new = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
                self._add(node, "compare", ast.unparse(new))
        if (
            len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq | ast.NotEq)
            and not any(_numeric(e) for e in (node.left, node.comparators[0]))
        ):
            left, right = (_folded(e) for e in (node.left, node.comparators[0]))
            op = "==" if isinstance(node.ops[0], ast.Eq) else "!="
            self._add(node, "casefold", f"{left} {op} {right}")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        joiner = " or " if isinstance(node.op, ast.And) else " and "
        self._add(node, "boolop", joiner.join(f"({ast.unparse(v)})" for v in node.values))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, "not", ast.unparse(node.operand))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = _BINOP_SWAPS.get(type(node.op))
        if swap is not None:
            self._add(node, "binop", ast.unparse(ast.BinOp(node.left, swap(), node.right)))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in _CALL_SWAPS:
            self._add(node.func, "call", _CALL_SWAPS[node.func.id], paren=False)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add(node, "constant", repr(not value), paren=False)
        elif isinstance(value, int):
            self._add(node, "constant", repr(value + 1), paren=False)
            if value != 0:
                self._add(node, "constant", repr(value - 1), paren=False)
        elif isinstance(value, str) and len(value) <= 8 and self.strings:
            self._add(node, "constant", '"XX"' if value == "" else '""', paren=False)
        elif isinstance(value, bytes) and len(value) <= 8:
            self._add(node, "constant", 'b"XX"' if value == b"" else 'b""', paren=False)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in ("Literal", "Final"):
            return  # typing only
        if isinstance(node.slice, ast.Slice):
            for part in ("lower", "upper"):
                bound = getattr(node.slice, part)
                if bound is not None:
                    copy = ast.Slice(node.slice.lower, node.slice.upper, node.slice.step)
                    setattr(copy, part, None)
                    new = ast.Subscript(node.value, copy, node.ctx)
                    self._add(node, "slice", ast.unparse(new))
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            self._add(node, "return", "return None", paren=False)
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        self._add(node, "raise", "pass", paren=False, label="pass (raise deleted)")
        # the exception's own construction is message text: not mutated

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        covered = (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)) or (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and type(test.ops[0]) in _COMPARE_SWAPS
            and not isinstance(test.ops[0], ast.Lt | ast.LtE | ast.Gt | ast.GtE)
        )
        if not covered:  # a single ==, in, is or `not` is already flipped by its own operator
            self._add(test, "if", f"not ({ast.unparse(test)})")
        self.generic_visit(node)

    def visit_Continue(self, node: ast.Continue) -> None:
        self._add(node, "loop", "pass", paren=False)

    def visit_Break(self, node: ast.Break) -> None:
        self._add(node, "loop", "pass", paren=False)


_INT_NAMES = (
    "count",
    "size",
    "len",
    "total",
    "limit",
    "index",
    "errno",
    "status",
    "code",
    "number",
    "offset",
    "length",
    "port",
    "bytes",
    "seconds",
    "step",
)


def _numeric(expr: ast.expr) -> bool:
    """An operand that is surely not a string (a casefold of it cannot change anything)."""
    if isinstance(expr, ast.Constant):
        return expr.value is None or isinstance(expr.value, int | float | bytes)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
        return expr.func.id in ("len", "int", "type", "id")
    name = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
    return isinstance(name, str) and any(part in name.lower() for part in _INT_NAMES)


def _folded(expr: ast.expr) -> str:
    text = ast.unparse(expr)
    if isinstance(expr, ast.Constant) and not isinstance(expr.value, str):
        return text
    return f"(({text}).casefold() if isinstance({text}, str) else ({text}))"


def _char_col(source: str, starts: list[int], lineno: int, byte_col: int) -> int:
    """ast columns count UTF-8 bytes; the splice needs characters."""
    line = source[starts[lineno - 1] : starts[lineno]]
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= 90 else one[:87] + "..."


def in_scopes(scope: str, scopes: tuple[str, ...]) -> bool:
    """Whether a dotted scope (`Class.method`, `f.inner`, `""` for module level) lies in one of
    `scopes` (a name covers everything nested in it; `<module>` is the module-level code)."""
    if not scope:
        return "<module>" in scopes
    return any(scope == s or scope.startswith(s + ".") for s in scopes)


def defined_scopes(source: str) -> set[str]:
    """Every dotted function/class name a module defines (what `Target.scopes` may name)."""
    names: set[str] = {"<module>"}

    def walk(body: Sequence[ast.stmt], prefix: str) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{stmt.name}"
                names.add(name)
                walk(stmt.body, name + ".")

    walk(ast.parse(source).body, "")
    return names


def mutants_of(
    path: str,
    source: str,
    strings: bool = True,
    scopes: tuple[str, ...] | None = None,
) -> list[Mutant]:
    """Every mutant of one module whose spliced source still parses (`strings`: also short
    string constants; `scopes`: only inside these functions/classes, see `in_scopes`)."""
    finder = _Finder(path, source, strings, scopes)
    finder.visit(ast.parse(source))
    valid = []
    seen: dict[str, int] = {}
    for mutant in finder.found:
        try:
            ast.parse(apply(source, mutant))
        except SyntaxError:
            continue
        n = seen.get(mutant.key, 0)
        seen[mutant.key] = n + 1
        valid.append(mutant if n == 0 else replace(mutant, occurrence=n + 1))
    return valid


def apply(source: str, mutant: Mutant) -> str:
    """The source with the mutant spliced in."""
    return source[: mutant.start] + mutant.text + source[mutant.end :]


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, str]:
    """key -> why, from `equivalents.txt` (`key` line, then indented `why:` lines)."""
    found: dict[str, str] = {}
    key: str | None = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        if raw.startswith((" ", "\t")):
            if key is not None:
                found[key] = (found[key] + " " + raw.strip()).strip()
            continue
        key = raw.strip()
        found[key] = ""
    return found


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str  # killed | survived | timeout | equivalent
    seconds: float


class Sandbox:
    """A throw-away copy of the repository (with `../shared` linked beside it) to mutate in."""

    def __init__(self, fork: bool = False) -> None:
        self.fork = fork
        """Run pytest in forked children of this process (see `_forked`)."""
        self.tmp = Path(tempfile.mkdtemp(prefix="evidence-dashboard-mutants-"))
        self.root = self.tmp / "repo"
        shutil.copytree(REPO, self.root, ignore=_copy_ignore, symlinks=True)
        shared = REPO.parent / "shared"
        if shared.exists():
            (self.tmp / "shared").symlink_to(shared)

    def coverage_map(self, target: Target) -> dict[int, set[str]] | None:
        """Line -> the tests (node ids without parameters) that run it, from one unmutated run
        of the target's tests under coverage with per-test contexts; None if that fails."""
        data_file = self.tmp / ".coverage"
        module = self.root / target.path
        status = self._pytest(
            [
                f"--cov={module.parent}",
                "--cov-context=test",
                "--cov-report=",
                "--cov-fail-under=0",
                *target.pytest_args(self.root),
            ],
            timeout=1800,
            extra_env={"COVERAGE_FILE": str(data_file)},
        )
        if status != "survived" or not data_file.exists():
            return None
        from coverage import CoverageData  # noqa: PLC0415 (only the runner needs it)

        data = CoverageData(basename=str(data_file))
        data.read()
        found: dict[int, set[str]] = {}
        for path in data.measured_files():
            if Path(path).resolve() != module.resolve():
                continue
            for line, contexts in data.contexts_by_lineno(path).items():
                tests = {_test_of(c) for c in contexts if c}
                found[line] = {t for t in tests if t}
        return found

    def run(
        self,
        target: Target,
        mutant: Mutant | None,
        source: str,
        timeout: float,
        tests: Sequence[str] | None = None,
    ) -> str:
        """Run the target's tests (or only `tests`, node ids) with `mutant` spliced in."""
        module = self.root / target.path
        try:
            if mutant is not None:
                module.write_text(apply(source, mutant), encoding="utf-8")
            full = target.pytest_args(self.root)
            if not tests:
                return self._pytest(["-x", *full], timeout=timeout)
            status = self._pytest(["-x", *tests, *target.extra], timeout=timeout)
            if status.startswith("error"):  # a test module the mutant broke at import time
                status = self._pytest(["-x", *full], timeout=timeout)  # reads "not found"
            return status
        finally:
            module.write_text(source, encoding="utf-8")

    def _pytest(
        self, args: Sequence[str], timeout: float, extra_env: dict[str, str] | None = None
    ) -> str:
        env = {
            **os.environ,
            "PYTHONPATH": str(self.root),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            **(extra_env or {}),
        }
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--no-header",
            "-p",
            "no:randomly",
            *args,
        ]
        if self.fork and extra_env is None:
            code = self._forked(cmd[3:], env, timeout)
        else:
            try:
                code = subprocess.run(
                    cmd,
                    cwd=self.root,
                    env=env,
                    timeout=timeout,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                ).returncode
            except subprocess.TimeoutExpired:
                code = None
        if code is None:
            return "timeout"
        if code == 0:
            return "survived"
        if code in (1, 2, 3):  # failed, collection or import error
            return "killed"
        return f"error({code})"

    def _forked(self, args: list[str], env: dict[str, str], timeout: float) -> int | None:
        """`pytest.main(args)` in a forked child of this process, which has the third-party
        dependencies imported already (`_preload`) but none of the project's modules; the child
        imports those from the sandbox, mutant included. The exit code, or None on timeout."""
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 3
            try:
                os.setpgid(0, 0)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                os.chdir(self.root)
                os.environ.clear()
                os.environ.update(env)
                for name in [m for m in sys.modules if m.split(".")[0] in _PROJECT]:
                    del sys.modules[name]
                sys.path[:] = [str(self.root)] + [
                    p for p in sys.path if p and Path(p).resolve() != REPO
                ]
                import pytest  # noqa: PLC0415

                code = int(pytest.main(args))
            finally:
                os._exit(code)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            time.sleep(0.05)

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


_PROJECT = frozenset({"generator", "tests"})
"""Top-level packages a forked child must import afresh from the sandbox."""
_PRELOAD = (
    "pytest",
    "_hypothesis_pytestplugin",
    "pytest_cov.plugin",
    "platformdirs",
    "yaml",
    "re2",
    "jinja2",
    "cryptography.x509",
    "sigstore.models",
    "sigstore.verify",
    "sigstore.sign",
    "sigstore.oidc",
    "rfc8785",
    "pydantic",
    "requests",
    "plotly",
)


def _preload() -> None:
    """Import the slow third-party dependencies once, before forking a child per mutant."""
    for name in _PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def _test_of(context: str) -> str:
    """The test a coverage context names (`path::name[param]|run` -> `path::name`)."""
    node = context.split("|", 1)[0]
    return node.split("[", 1)[0]


def tests_for(mutant: Mutant, lines: dict[int, set[str]] | None) -> list[str] | None:
    """The tests that run the mutated lines (sorted), or None: run the whole selection (no map,
    or the lines run only at import time, where every test depends on them)."""
    if lines is None:
        return None
    span = [n for n in range(mutant.line, max(mutant.line, mutant.end_line) + 1) if n in lines]
    if not span:  # inside a multi-line statement coverage files under its first line
        span = [max((n for n in lines if n < mutant.line), default=mutant.line)]
    found: set[str] = set()
    for line in span:
        found |= lines.get(line, set())
    return sorted(found) or None


def changed_modules(base: str) -> set[str] | None:
    """Target modules a change since `base` touches (or whose mapped tests it touches); None
    when git cannot tell (no such base, not a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "diff", "--name-only", f"{base}...HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    touched = set(out)
    picked = set()
    for target in TARGETS:
        if target.path in touched or any(t.split("::")[0] in touched for t in target.tests):
            picked.add(target.path)
    return picked


def _select(args: argparse.Namespace) -> list[Target]:
    targets = list(TARGETS)
    if args.module:
        wanted = set(args.module)
        targets = [t for t in targets if t.path in wanted]
        unknown = wanted - {t.path for t in targets}
        if unknown:
            sys.exit(f"not a mutation target: {', '.join(sorted(unknown))} (see targets.py)")
    if args.changed:
        picked = changed_modules(args.changed)
        if picked is None:
            print(f"mutation: cannot diff against {args.changed!r}; sampling every module")
        elif picked:
            print(f"mutation: modules changed since {args.changed}: {', '.join(sorted(picked))}")
            targets = [t for t in targets if t.path in picked]
        else:
            print(
                f"mutation: no trust-core module changed since {args.changed}; "
                "sampling every module"
            )
    if args.budget is not None and targets:
        share = max(1, args.budget // len(targets))
        args.sample = share if args.sample is None else min(args.sample, share)
    return targets


def _iter_mutants(
    targets: Sequence[Target], sample: int | None, seed: int, keys: set[str] | None = None
) -> Iterator[tuple[Target, str, list[Mutant]]]:
    for target in targets:
        source = (REPO / target.path).read_text(encoding="utf-8")
        found = mutants_of(target.path, source, strings=target.strings, scopes=target.scopes)
        if keys is not None:
            found = [m for m in found if m.key in keys]
            if not found:
                continue
        if sample is not None and len(found) > sample:
            found = sorted(
                random.Random(f"{seed}:{target.path}").sample(found, sample),
                key=lambda m: (m.line, m.start),
            )
        yield target, source, found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="a target module path (repeatable)")
    parser.add_argument("--changed", metavar="BASE", help="only modules changed since BASE")
    parser.add_argument("--sample", type=int, help="at most N mutants per module (fixed seed)")
    parser.add_argument(
        "--budget",
        type=int,
        metavar="N",
        help="at most about N mutants in all, shared evenly by the modules",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--keys",
        type=Path,
        metavar="FILE",
        help="only the mutants whose keys FILE lists, one a line (for example "
        "the survivors of an earlier run, after adding tests)",
    )
    parser.add_argument(
        "--no-select",
        dest="select",
        action="store_false",
        help="run every mapped test on every mutant (default: only the tests that run the "
        "mutated lines, from one per-test coverage run of the unmutated module)",
    )
    parser.add_argument(
        "--no-fork",
        dest="fork",
        action="store_false",
        help="start a new interpreter per mutant (default: fork one that has the third-party "
        "dependencies imported already)",
    )
    parser.add_argument("--min-score", type=float, default=90.0)
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    parser.add_argument("--report", type=Path, help="write a JSON report here")
    args = parser.parse_args(argv)

    targets = _select(args)
    equivalents = load_equivalents()
    keys = None
    if args.keys is not None:
        keys = {
            line.strip()
            for line in args.keys.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        }
    if args.list:
        for _target, _source, found in _iter_mutants(targets, args.sample, args.seed, keys):
            for m in found:
                mark = "  [equivalent]" if m.key in equivalents else ""
                print(f"{m.path}:{m.line}: {m.operator}: {m.original} => {m.replacement}{mark}")
        return 0
    if not targets:
        print("mutation: no target module selected; nothing to do")
        return 0

    if args.fork:
        if os.environ.get("PYTHONHASHSEED") != "0":  # the children inherit this process's seed
            os.environ["PYTHONHASHSEED"] = "0"
            os.execv(sys.executable, [sys.executable, "-m", "tests.mutation.mutate", *sys.argv[1:]])
        _preload()
    signal.signal(signal.SIGTERM, _terminate)
    sandbox = Sandbox()
    outcomes: list[Outcome] = []
    per_module: dict[str, list[Outcome]] = {}
    interrupted = False
    try:
        for target, source, found in _iter_mutants(targets, args.sample, args.seed, keys):
            started = time.monotonic()
            sandbox.fork = False
            baseline = sandbox.run(target, None, source, timeout=600)
            took = time.monotonic() - started
            if args.fork and baseline == "survived":
                sandbox.fork = True
                if sandbox.run(target, None, source, timeout=600) != "survived":
                    sandbox.fork = False
                    print(f"{target.path}: the tests fail in a forked child; not forking")
            if baseline != "survived":
                print(
                    f"{target.path}: the unmutated tests do not pass ({baseline}); fix that first"
                )
                return 2
            timeout = max(30.0, 5 * took)
            lines = sandbox.coverage_map(target) if args.select else None
            if args.select and lines is None:
                print(f"{target.path}: no per-test coverage; every mutant runs every test")
            print(f"{target.path}: {len(found)} mutants, tests take {took:.1f} s", flush=True)
            for number, mutant in enumerate(found, 1):
                if number % 10 == 0:
                    print(f"  ... {number}/{len(found)}", flush=True)
                if mutant.key in equivalents:
                    outcome = Outcome(mutant, "equivalent", 0.0)
                else:
                    t0 = time.monotonic()
                    status = sandbox.run(target, mutant, source, timeout, tests_for(mutant, lines))
                    outcome = Outcome(mutant, status, time.monotonic() - t0)
                    if status not in ("killed", "timeout"):
                        print(
                            f"  SURVIVED {mutant.path}:{mutant.line} [{status}]\n    {mutant.key}",
                            flush=True,
                        )
                outcomes.append(outcome)
                per_module.setdefault(target.path, []).append(outcome)
    except SystemExit:
        interrupted = True  # SIGTERM: report what ran so far, then fail
    finally:
        sandbox.close()

    print("\nmutation score (killed / non-equivalent mutants):")
    for path, results in per_module.items():
        print(f"  {_score_line(path, results)}")
    total = _score_line("TOTAL", outcomes)
    print(f"  {total}")
    score = _score(outcomes)
    if args.report is not None:
        args.report.write_text(
            json.dumps(
                {
                    "score": score,
                    "outcomes": [
                        {
                            "key": o.mutant.key,
                            "line": o.mutant.line,
                            "status": o.status,
                            "seconds": round(o.seconds, 1),
                        }
                        for o in outcomes
                    ],
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    if interrupted:
        print("mutation: interrupted; the scores above cover only the mutants that ran")
        return 1
    if score < args.min_score:
        print(
            f"mutation: score {score:.1f}% is under the {args.min_score:.0f}% floor; "
            "add a test of the behaviour each survivor breaks, or list it in "
            "tests/mutation/equivalents.txt with why it is equivalent"
        )
        return 1
    return 0


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(f"mutation: stopped by signal {signum}")


def _score(outcomes: Sequence[Outcome]) -> float:
    live = [o for o in outcomes if o.status != "equivalent"]
    killed = sum(o.status in ("killed", "timeout") for o in live)
    return 100.0 if not live else 100.0 * killed / len(live)


def _score_line(name: str, outcomes: Sequence[Outcome]) -> str:
    live = [o for o in outcomes if o.status != "equivalent"]
    killed = sum(o.status in ("killed", "timeout") for o in live)
    equivalent = len(outcomes) - len(live)
    return (
        f"{name}: {killed}/{len(live)} killed = {_score(outcomes):.1f}% "
        f"({equivalent} listed equivalent)"
    )


if __name__ == "__main__":
    sys.exit(main())
