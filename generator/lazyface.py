"""A package face that imports a name's defining submodule only when the name is first used.

`generator.verify` and `generator.bundle` list every public name with the submodule that defines
it, so importing one light module (say `generator.verify.times`) never loads sigstore-python or
requests through the package's `__init__`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(
    package: str, home: Mapping[str, str], names: Sequence[str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`: a name in `home` is imported from
    `package.<home[name]>` on first use and kept in `namespace` (the package's globals)."""

    def getattr_(name: str) -> Any:
        submodule = home.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{submodule}"), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *names})

    return getattr_, dir_
