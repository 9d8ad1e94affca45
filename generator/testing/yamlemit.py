"""A small yaml.v3-style block emitter for the simple documents the bundle factory writes.

This is a stand-in, not the faithful canonical emitter (that lives in `generator.recipe`): it
handles mappings, sequences and plain JSON-like scalars with yaml.v3's layout rules (evidence-format
3.5): mapping keys sorted, block sequences indented under their key, keys of a mapping inside a
sequence item aligned 2 past the dash, every other nesting jumping to the next multiple of
`indent`. Strings that would read back as another type are double-quoted; strings that cannot be
plain are single-quoted. The pointer YAML uses it with indent 2 (aicr `MarshalYAMLDeterministic`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_NON_STRING = re.compile(
    r"""^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE
    |y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF
    |[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
    |[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?
    |0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?
    |<<|=)$""",
    re.VERBOSE,
)
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_./()+=@$^~\\][^\n\r\t#]*$")


class Plain(str):
    """A string emitted verbatim (plain), e.g. a Go `time.Time` such as `2026-09-22T21:02:12Z`."""

    __slots__ = ()


def scalar(value: Any) -> str:
    """One scalar in yaml.v3's style for the value's type."""
    if isinstance(value, Plain):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot emit {type(value).__name__} as a YAML scalar")
    if value == "" or _NON_STRING.match(value):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if (
        _PLAIN_SAFE.match(value)
        and ": " not in value
        and " #" not in value
        and not value.endswith((":", " "))
    ):
        return value
    if "\n" in value or any(ord(c) < 0x20 for c in value):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return '"' + escaped.replace("\t", "\\t") + '"'
    return "'" + value.replace("'", "''") + "'"


def _next(col: int, indent: int) -> int:
    return indent * ((col + indent) // indent)


def _emit_mapping(
    doc: Mapping[str, Any], col: int, indent: int, out: list[str], first: str | None
) -> None:
    """Emit a block mapping whose keys sit at `col`; `first` prefixes the first line (a dash)."""
    for n, key in enumerate(sorted(doc, key=lambda k: str(k).encode())):
        prefix = first if (n == 0 and first is not None) else " " * col
        value = doc[key]
        head = f"{prefix}{scalar(str(key))}:"
        if isinstance(value, Mapping) and value:
            out.append(head)
            _emit_mapping(value, _next(col, indent), indent, out, None)
        elif isinstance(value, Sequence) and not isinstance(value, str) and value:
            out.append(head)
            _emit_sequence(value, _next(col, indent), indent, out)
        else:
            out.append(f"{head} {_leaf(value)}")


def _emit_sequence(items: Sequence[Any], col: int, indent: int, out: list[str]) -> None:
    for item in items:
        dash = " " * col + "- "
        if isinstance(item, Mapping) and item:
            _emit_mapping(item, col + 2, indent, out, dash)
        elif isinstance(item, Sequence) and not isinstance(item, str) and item:
            raise TypeError("nested sequences are not supported by the stand-in emitter")
        else:
            out.append(dash + _leaf(item))


def _leaf(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[]"
    return scalar(value)


def emit(doc: Mapping[str, Any], *, indent: int = 4) -> bytes:
    """Emit `doc` as block YAML with sorted keys; ends with a newline, no `---`."""
    if not doc:
        return b"{}\n"
    out: list[str] = []
    _emit_mapping(doc, 0, indent, out, None)
    return ("\n".join(out) + "\n").encode()
