"""Read a site configuration (mkdocs.yml) without letting it run code.

MkDocs can run code named by its configuration: `hooks:` are Python files it imports, plugins
and Markdown extensions are modules it imports by name, `INHERIT:` pulls in a second file, and
MkDocs' own YAML loader constructs `!!python/...` tags. The build therefore reads only the
packaged configuration or the file given by `--config` (never `./mkdocs.yml` implicitly), and
`load_site_config` checks that file's YAML *nodes* before anything is constructed:

- no `hooks` and no `INHERIT` key,
- plugins only from `ALLOWED_PLUGINS` (those the packaged configuration uses),
- Markdown extensions only from Python-Markdown itself, pymdown-extensions and Material,
- no YAML tag besides the standard ones and MkDocs' `!ENV`.

A refusal is a `UsageError` (exit 2) naming the file and the key. The checked text is then
loaded with a safe loader (plus `!ENV`), from the same bytes that were checked.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from generator.errors import Location, UsageError

__all__ = ["ALLOWED_PLUGINS", "CONFIG_LIMIT", "load_site_config"]

ALLOWED_PLUGINS = frozenset({"search", "tags", "material/search", "material/tags"})
"""Plugins a configuration may enable: those of the packaged mkdocs.yml."""
_MARKDOWN_BUILTINS = frozenset(
    {
        "abbr",
        "admonition",
        "attr_list",
        "codehilite",
        "def_list",
        "extra",
        "fenced_code",
        "footnotes",
        "legacy_attrs",
        "legacy_em",
        "md_in_html",
        "meta",
        "nl2br",
        "sane_lists",
        "smarty",
        "tables",
        "toc",
        "wikilinks",
    }
)
_MARKDOWN_PACKAGES = ("markdown.extensions.", "pymdownx.", "material.")
_FORBIDDEN_KEYS = {"hooks": "hooks run Python files", "INHERIT": "INHERIT reads another file"}
_STANDARD_TAG = "tag:yaml.org,2002:"
_SAFE_TAGS = frozenset(
    f"{_STANDARD_TAG}{name}"
    for name in (
        "str",
        "int",
        "float",
        "bool",
        "null",
        "map",
        "seq",
        "timestamp",
        "binary",
        "merge",
        "omap",
        "pairs",
        "set",
        "value",
    )
)
_ALLOWED_TAGS = _SAFE_TAGS | {"!ENV"}
CONFIG_LIMIT = 1024 * 1024


def _refuse(
    config: Path, key: str, message: str, *, expected: str, found: str, hint: str
) -> UsageError:
    return UsageError(
        message,
        location=Location(str(config), key or None),
        expected=expected,
        found=found,
        hint=hint,
    )


def _nodes(node: yaml.Node, path: str, seen: set[int]) -> Iterator[tuple[str, yaml.Node]]:
    """Every node under `node` once (aliases are visited once), with a readable key path."""
    if id(node) in seen:
        return
    seen.add(id(node))
    yield path, node
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            yield from _nodes(key, path, seen)
            yield from _nodes(value, f"{path}.{name}" if path else name, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _nodes(item, f"{path}[{index}]", seen)


def _names(node: yaml.Node | None) -> Iterator[tuple[int, str]]:
    """The names listed by a `plugins:` or `markdown_extensions:` node (a list of names or
    one-key mappings, or a mapping of name to options)."""
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            if isinstance(item, yaml.ScalarNode):
                yield index, str(item.value)
            elif isinstance(item, yaml.MappingNode):
                for key, _value in item.value:
                    yield index, str(getattr(key, "value", "?"))
            else:
                yield index, "?"
    elif isinstance(node, yaml.MappingNode):
        for index, (key, _value) in enumerate(node.value):
            yield index, str(getattr(key, "value", "?"))
    elif node is not None and not (
        isinstance(node, yaml.ScalarNode) and node.tag == f"{_STANDARD_TAG}null"
    ):
        yield 0, "?"


def _markdown_allowed(name: str) -> bool:
    return name in _MARKDOWN_BUILTINS or name.startswith(_MARKDOWN_PACKAGES)


def check_nodes(config: Path, root: yaml.Node | None) -> None:
    """Refuse what would run code; `root` is the composed (not constructed) document."""
    if root is None:
        return
    for path, node in _nodes(root, "", set()):
        if node.tag not in _ALLOWED_TAGS:
            raise _refuse(
                config,
                path,
                f"the YAML tag {node.tag} is not allowed",
                expected="plain YAML values (and !ENV)",
                found=node.tag,
                hint="remove the tag; the site configuration cannot name Python objects",
            )
    if not isinstance(root, yaml.MappingNode):
        return
    top = {str(getattr(k, "value", "")): v for k, v in root.value}
    for key, why in _FORBIDDEN_KEYS.items():
        if key in top:
            raise _refuse(
                config,
                key,
                f"`{key}` is not allowed in the site configuration",
                expected=f"no `{key}` key ({why})",
                found=f"a `{key}` key",
                hint=f"remove `{key}`; the site build runs no code from its configuration",
            )
    for index, name in _names(top.get("plugins")):
        if name not in ALLOWED_PLUGINS:
            raise _refuse(
                config,
                f"plugins[{index}]",
                f"the plugin {name!r} is not allowed",
                expected="one of " + ", ".join(sorted(ALLOWED_PLUGINS)),
                found=name,
                hint="remove the plugin from the site configuration",
            )
    for index, name in _names(top.get("markdown_extensions")):
        if not _markdown_allowed(name):
            raise _refuse(
                config,
                f"markdown_extensions[{index}]",
                f"the Markdown extension {name!r} is not allowed",
                expected="a Python-Markdown, pymdownx.* or material.* extension",
                found=name,
                hint="remove the extension from the site configuration",
            )


def _safe_loader() -> Any:
    from mkdocs.utils.yaml import get_yaml_loader

    return get_yaml_loader(loader=yaml.SafeLoader)


def load_site_config(config: Path) -> dict[str, Any]:
    """The checked configuration as data; `UsageError` (exit 2) for what would run code or
    cannot be read."""
    try:
        with config.open("rb") as handle:
            raw = handle.read(CONFIG_LIMIT + 1)
    except OSError as exc:
        raise _refuse(
            config,
            "",
            "the site configuration cannot be read",
            expected="a readable mkdocs.yml",
            found=exc.strerror or str(exc),
            hint="check the --config path",
        ) from exc
    if len(raw) > CONFIG_LIMIT:
        raise _refuse(
            config,
            "",
            "the site configuration is too large",
            expected=f"at most {CONFIG_LIMIT} bytes",
            found="more",
            hint="check the --config path",
        )
    # what the YAML becomes depends on its bytes, its place and the environment (`!ENV`,
    # `!relative`); a build asks three times, and is given its own copy each time
    key = (str(config.absolute()), raw, os.getcwd(), tuple(sorted(os.environ.items())))
    for known, loaded in _LOADED:
        if known == key:
            return copy.deepcopy(loaded)
    loaded = _parse(config, raw)
    _LOADED[:] = [(key, loaded)]
    return copy.deepcopy(loaded)


_LOADED: list[tuple[tuple[str, bytes, str, tuple[tuple[str, str], ...]], dict[str, Any]]] = []
"""The configuration loaded last, under what it was loaded from."""


def _parse(config: Path, raw: bytes) -> dict[str, Any]:
    """The checked configuration of `raw` (the bytes of `config`); `UsageError` otherwise."""
    try:
        text = raw.decode("utf-8")
        check_nodes(config, yaml.compose(text, Loader=yaml.SafeLoader))
        loaded = yaml.load(text, Loader=_safe_loader())  # noqa: S506 - safe loader + !ENV
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _refuse(
            config,
            "",
            "the site configuration is not valid YAML",
            expected="a mkdocs.yml",
            found=f"{type(exc).__name__}: {exc}",
            hint="fix the YAML, or leave out --config to use the packaged one",
        ) from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise _refuse(
            config,
            "",
            "the site configuration is not a mapping",
            expected="keys such as site_name, theme, nav",
            found=type(loaded).__name__,
            hint="fix the file",
        )
    return loaded
