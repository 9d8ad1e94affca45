"""The one error tree of evidence-dashboard.

Every error the tool raises on purpose derives from `EvidenceDashError`. Each carries where the
problem is (a file and optionally a key), what was expected, what was found and a next step, and
renders them with `diagnostics()`. The CLI catches only the root, prints `diagnostics()` (or
`as_dict()` with `--format json`) and maps the subclass to the documented exit code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Location:
    """Where a problem is: a file (relative where possible) and optionally a key inside it."""

    file: str
    key: str | None = None

    def __str__(self) -> str:
        return f"{self.file}: {self.key}" if self.key else self.file


class EvidenceDashError(Exception):
    """Root of every error evidence-dashboard raises on purpose.

    `message` says what is wrong in one line; `location`, `expected`, `found` and `hint` make it
    actionable. `exit_code` is what the CLI exits with when this error ends a command.
    """

    exit_code: int = 3

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        expected: str | None = None,
        found: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.expected = expected
        self.found = found
        self.hint = hint

    def diagnostics(self) -> str:
        """Human-friendly, multi-line explanation: where, got versus expected, and what to do."""
        head = f"{self.location}: {self.message}" if self.location else self.message
        lines = [head]
        if self.expected is not None:
            lines.append(f"  expected: {self.expected}")
        if self.found is not None:
            lines.append(f"  found:    {self.found}")
        if self.hint:
            lines.append(f"  next step: {self.hint}")
        if self.__cause__ is not None and not isinstance(self.__cause__, EvidenceDashError):
            lines.append(f"  cause: {type(self.__cause__).__name__}: {self.__cause__}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The same information as JSON-ready data (for `--format json`)."""
        return {
            "error": type(self).__name__,
            "message": self.message,
            "file": self.location.file if self.location else None,
            "key": self.location.key if self.location else None,
            "expected": self.expected,
            "found": self.found,
            "hint": self.hint,
        }

    def __str__(self) -> str:
        return self.diagnostics()


class UsageError(EvidenceDashError):
    """The command line or a configuration value cannot be used as given."""

    exit_code = 2


class InputError(EvidenceDashError):
    """An input file (tree, allowlist, YAML document, option file) cannot be used at all."""

    exit_code = 2


class YamlError(InputError):
    """A YAML document could not be parsed (syntax, duplicate keys, size, encoding)."""


class PointerError(InputError):
    """A pointer file breaks the pointer schema (spec 2.1-2.3). `rule` names the rule."""

    def __init__(self, message: str, *, rule: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.rule = rule


class AllowlistError(InputError):
    """The allowlist breaks its strict schema or validation rules (spec 7)."""


class CanonicalizationError(InputError):
    """A recipe document cannot be canonicalized (empty input, duplicate keys, bad YAML)."""


class BundleError(EvidenceDashError):
    """Getting a bundle failed (registry, layout, cache, extraction). Carries an HTTP status."""

    def __init__(
        self,
        message: str,
        *,
        http_status: int | None = None,
        transient: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.http_status = http_status
        self.transient = transient


class BuildError(EvidenceDashError):
    """The site build failed; the previous output was left in place."""

    exit_code = 3


class InternalError(EvidenceDashError):
    """A bug: something that should be impossible happened."""

    exit_code = 3
