"""aicr's canonical recipe digest: a gopkg.in/yaml.v3 v3.0.1 `Marshal` emulation (spec 3.5).

The recipe digest in a predicate is the sha256 of the recipe YAML after canonicalization: parse to
a node tree, drop comments, sort every mapping by the key's scalar text (byte order), for V3
remove the top-level `metadata.version`, and re-emit with yaml.v3's defaults. Python has no
yaml.v3, so this module carries its own node tree and emitter. The emitter follows the layout
rules of yaml.v3's libyaml-derived emitter (4-space indent, sequences indented under their key,
mapping keys inside a sequence item two columns past the dash, unlimited width, scalar styles kept
from the parse unless the emitter must fall back to quoting) so that the output is byte-identical.

Scalars are handled as text only: nothing is retyped (no YAML 1.1 booleans, no numbers), which is
what yaml.v3 does when it round-trips a node tree. Parsing uses PyYAML's event stream (libyaml when
available), so anchors, aliases, explicit tags and scalar styles are seen exactly as written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, NamedTuple

import yaml

from generator.errors import CanonicalizationError, Location
from generator.model import Canonicalizer, PredicateType, Sha256Hex

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "canonicalize",
    "digest_for_predicate_type",
    "document_kind",
    "recipe_digest",
]

DEFAULT_MAX_BYTES: Final = 1 << 20
"""Largest recipe document accepted (1 MiB, like aicr's bounded reads)."""

DEFAULT_MAX_DEPTH: Final = 100
"""Deepest collection nesting accepted; real recipes stay far below it."""

_BEST_INDENT: Final = 4
_SIMPLE_KEY_MAX_BYTES: Final = 128
_CORE_PREFIX: Final = "tag:yaml.org,2002:"
_BREAKS: Final = frozenset("\r\n\x85\u2028\u2029")
_BLANKS: Final = frozenset(" \t")
_FIRST_INDICATORS: Final = frozenset("#,[]{}&*!|>'\"%@`")
_FLOW_INDICATORS: Final = frozenset(",?[]{}")
_TAG_SAFE: Final = frozenset(";/?:@&=+$,_.~*'()[]")
_ANCHOR_SAFE: Final = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-")
_ESCAPES: Final = {
    "\0": "0",
    "\a": "a",
    "\b": "b",
    "\t": "t",
    "\n": "n",
    "\v": "v",
    "\f": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}

ScalarStyle = Literal["plain", "single", "double", "literal", "folded"]

_STYLE_OF_EVENT: Final[dict[str | None, ScalarStyle]] = {
    None: "plain",
    "": "plain",
    "'": "single",
    '"': "double",
    "|": "literal",
    ">": "folded",
}


# --------------------------------------------------------------------------- node tree


class _Scalar(NamedTuple):
    """A scalar node (a named tuple: the most numerous node, and cheap to build)."""

    value: str
    style: ScalarStyle
    tag: str | None
    """The tag yaml.v3 would print (short form such as `!!merge`), None when it prints none."""
    anchor: str | None = None


class _Alias(NamedTuple):
    """An alias node."""

    name: str


@dataclass(frozen=True)
class _Sequence:
    items: tuple[_Node, ...]
    flow: bool
    tag: str | None
    anchor: str | None = None


@dataclass(frozen=True)
class _Mapping:
    pairs: tuple[tuple[_Node, _Node], ...]
    flow: bool
    tag: str | None
    anchor: str | None = None


_Node = _Scalar | _Alias | _Sequence | _Mapping


def _key_text(node: _Node) -> str:
    """What yaml.v3's `Node.Value` holds for a key: scalar text, alias name, else empty."""
    if isinstance(node, _Scalar):
        return node.value
    if isinstance(node, _Alias):
        return node.name
    return ""


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE_PREFIX) :] if tag.startswith(_CORE_PREFIX) else tag


def _explicit_tag(tag: str | None) -> str | None:
    """An explicitly written tag (yaml.v3 `TaggedStyle`), which yaml.v3 always prints back."""
    return None if tag is None or tag == "!" else _short_tag(tag)


@dataclass
class _Frame:
    """A collection under construction while the event stream is read."""

    start: yaml.MappingStartEvent | yaml.SequenceStartEvent
    parent: _Frame | None
    index: int
    """How many children `parent` held when this collection started (its place there)."""
    children: list[_Node]

    @property
    def path(self) -> str:
        """Where this collection sits (`a.b[2]`); computed only when an error names it."""
        return _path_at(self.parent, self.index)


def _path_at(frame: _Frame | None, count: int) -> str:
    """The path of the child that follows `count` children of `frame`."""
    if frame is None:
        return ""
    if isinstance(frame.start, yaml.SequenceStartEvent):
        return f"{frame.path}[{count}]"
    if count % 2 == 0:
        return frame.path
    key = _key_text(frame.children[count - 1])
    path = frame.path
    return f"{path}.{key}" if path else key


def _child_path(frame: _Frame | None) -> str:
    return _path_at(frame, len(frame.children)) if frame is not None else ""


def _events(data: bytes, source: str) -> Iterator[yaml.Event]:
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(data)
    try:
        while loader.check_event():
            yield loader.get_event()
    except yaml.YAMLError as exc:
        raise CanonicalizationError(
            "the recipe is not valid YAML",
            location=Location(source),
            expected="a YAML document yaml.v3 can parse",
            found=str(exc).splitlines()[0],
            hint="fix the YAML syntax; `aicr evidence digest` rejects it as well",
        ) from exc
    finally:
        loader.dispose()


def _finish_mapping(frame: _Frame, source: str) -> _Mapping:
    children = frame.children
    pairs = [(children[i], children[i + 1]) for i in range(0, len(children), 2)]
    seen: set[str] = set()
    for key, _ in pairs:
        if isinstance(key, _Scalar):
            if key.value in seen:
                where = f"{frame.path}.{key.value}" if frame.path else key.value
                raise CanonicalizationError(
                    f"duplicate mapping key {key.value!r}",
                    location=Location(source, where),
                    expected="each key at most once per mapping",
                    found="the key twice",
                    hint="remove or merge the repeated key; the digest of such a file is undefined",
                )
            seen.add(key.value)
    pairs.sort(key=lambda pair: _key_text(pair[0]))
    start = frame.start
    return _Mapping(tuple(pairs), bool(start.flow_style), _explicit_tag(start.tag), start.anchor)


def _finish_sequence(frame: _Frame) -> _Sequence:
    """The sequence node a closed frame holds (items in document order)."""
    start = frame.start
    return _Sequence(
        tuple(frame.children), bool(start.flow_style), _explicit_tag(start.tag), start.anchor
    )


def _parse(
    data: bytes, source: str, max_depth: int, parsed: Sequence[yaml.Event] | None = None
) -> _Node:
    """The first document of `data` as a sorted, comment-free node tree (yaml.v3 `Unmarshal`).

    `parsed` is the event stream of `data` when it was already read (see `canonicalize`).
    """
    stack: list[_Frame] = []
    anchors: set[str] = set()
    root: _Node | None = None
    node: _Node
    styles = _STYLE_OF_EVENT
    # dispatched on the exact event class below
    events: Iterable[Any] = _events(data, source) if parsed is None else parsed
    for event in events:
        kind = type(event)
        if kind is yaml.ScalarEvent:
            style = styles.get(event.style, "plain")
            tag = None if event.tag is None else _explicit_tag(event.tag)
            value = event.value
            if tag is None and style == "plain" and value == "<<":
                tag = "!!merge"
            anchor = event.anchor
            if anchor is not None:
                anchors.add(anchor)
            node = _Scalar(value, style, tag, anchor)
        elif kind is yaml.DocumentEndEvent:
            break
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            parent = stack[-1] if stack else None
            if len(stack) >= max_depth:
                raise _too_deep(source, parent, max_depth)
            if event.anchor is not None:
                anchors.add(event.anchor)
            stack.append(_Frame(event, parent, len(parent.children) if parent else 0, []))
            continue
        elif kind is yaml.MappingEndEvent:
            node = _finish_mapping(stack.pop(), source)
        elif kind is yaml.SequenceEndEvent:
            node = _finish_sequence(stack.pop())
        elif kind is yaml.AliasEvent:
            if event.anchor not in anchors:
                raise _unknown_anchor(source, stack[-1] if stack else None, event.anchor)
            node = _Alias(event.anchor)
        else:
            continue
        if stack:
            stack[-1].children.append(node)
        else:
            root = node
    if root is None:
        raise CanonicalizationError(
            "the recipe holds no YAML document",
            location=Location(source),
            expected="a YAML document",
            found="only whitespace or comments",
            hint="pass the recipe.yaml file itself",
        )
    return root


def _too_deep(source: str, parent: _Frame | None, max_depth: int) -> CanonicalizationError:
    """A collection nested past `max_depth`, located at the parent's child path."""
    return CanonicalizationError(
        "the recipe nests collections too deeply",
        location=Location(source, _child_path(parent) or None),
        expected=f"at most {max_depth} nested mappings or sequences",
        found=f"more than {max_depth}",
        hint="flatten the document",
    )


def _unknown_anchor(source: str, frame: _Frame | None, anchor: str) -> CanonicalizationError:
    """An alias to an anchor not defined before it."""
    return CanonicalizationError(
        f"unknown anchor {anchor!r} referenced",
        location=Location(source, _child_path(frame) or None),
        expected="an alias to an anchor defined earlier",
        found=f"*{anchor}",
        hint="define the anchor (&name) before the alias",
    )


def _strip_metadata_version(root: _Node) -> _Node:
    """V3 only: drop top-level `metadata.version`, and `metadata` if that emptied it."""
    if not isinstance(root, _Mapping):
        return root
    pairs: list[tuple[_Node, _Node]] = []
    for key, value in root.pairs:
        if _is_key(key, "metadata") and isinstance(value, _Mapping):
            kept = tuple(pair for pair in value.pairs if not _is_key(pair[0], "version"))
            if len(kept) != len(value.pairs):
                if not kept:
                    continue
                value = replace(value, pairs=kept)
        pairs.append((key, value))
    return replace(root, pairs=tuple(pairs))


def _is_key(node: _Node, text: str) -> bool:
    return isinstance(node, _Scalar) and node.value == text


# --------------------------------------------------------------------------- scalar analysis


def _printable(ch: str) -> bool:
    """libyaml's printable set: LF, ASCII graphics, BMP without surrogates, FEFF, FFFE/FFFF."""
    cp = ord(ch)
    return (
        cp == 0x0A
        or 0x20 <= cp <= 0x7E
        or 0xA0 <= cp <= 0xD7FF
        or (0xE000 <= cp <= 0xFFFD and cp != 0xFEFF)
    )


@dataclass(frozen=True)
class _Analysis:
    """Which presentations a scalar value allows (yaml.v3 `analyze_scalar`)."""

    multiline: bool
    flow_plain: bool
    block_plain: bool
    single_quoted: bool
    block: bool


_ONE_LINE_PLAIN: Final = _Analysis(
    multiline=False, flow_plain=True, block_plain=True, single_quoted=True, block=True
)


def _analyze(value: str) -> _Analysis:
    """yaml.v3's analysis; printable ASCII text (no breaks, tabs or specials) takes a shortcut."""
    if value and value.isascii() and value.isprintable():
        return _analyze_ascii(value)
    return _analyze_chars(value)


_SAFE_PLAIN: Final = re.compile(r"[A-Za-z0-9_/](?:[A-Za-z0-9_./ -]*[A-Za-z0-9_./-])?")
"""Text whose analysis is `_ONE_LINE_PLAIN` on sight: no indicator, quote, colon, hash, tab or
break anywhere, and no space at either end (most recipe names, versions and paths)."""


def _analyze_ascii(value: str) -> _Analysis:
    """`_analyze_chars` for non-empty printable ASCII, from substring tests instead of a loop.

    Only spaces can be whitespace here, so the flags reduce to: leading/trailing space, the
    indicator first character, flow indicators and `:` after it, `: ` or a final `:` (block
    indicator), and ` #` (a comment start). Property tests compare it with the loop.
    """
    if _SAFE_PLAIN.fullmatch(value):
        return _ONE_LINE_PLAIN
    first = value[0]
    leading_space = first == " "
    trailing_space = value[-1] == " "
    block_ind = flow_ind = value.startswith(("---", "..."))
    followed_ws = len(value) == 1 or value[1] == " "
    if first in _FIRST_INDICATORS:
        flow_ind = block_ind = True
    elif first in "?:":
        flow_ind = True
        block_ind = block_ind or followed_ws
    elif first == "-" and followed_ws:
        flow_ind = block_ind = True
    rest = value[1:]
    if rest:
        if ":" in rest:
            flow_ind = True
            if ": " in rest or rest[-1] == ":":
                block_ind = True
        if not flow_ind and not _FLOW_INDICATORS.isdisjoint(rest):
            flow_ind = True
        if " #" in value:
            flow_ind = block_ind = True
    if not (leading_space or trailing_space or flow_ind or block_ind):
        return _ONE_LINE_PLAIN
    plain = not (leading_space or trailing_space)
    return _Analysis(
        multiline=False,
        flow_plain=plain and not flow_ind,
        block_plain=plain and not block_ind,
        single_quoted=True,
        block=not trailing_space,
    )


def _analyze_chars(value: str) -> _Analysis:
    """yaml.v3 `analyze_scalar`, character by character."""
    if not value:
        return _Analysis(
            multiline=False, flow_plain=False, block_plain=True, single_quoted=True, block=False
        )
    block_ind = flow_ind = value.startswith(("---", "..."))
    line_breaks = special = tabs = False
    leading_space = leading_break = trailing_space = trailing_break = False
    break_space = space_break = previous_space = previous_break = False
    preceded_ws = True
    last = len(value) - 1
    for i, ch in enumerate(value):
        followed_ws = i == last or value[i + 1] in _BLANKS
        if i == 0:
            if ch in _FIRST_INDICATORS:
                flow_ind = block_ind = True
            elif ch in "?:":
                flow_ind = True
                block_ind = block_ind or followed_ws
            elif ch == "-" and followed_ws:
                flow_ind = block_ind = True
        elif ch in _FLOW_INDICATORS:
            flow_ind = True
        elif ch == ":":
            flow_ind = True
            block_ind = block_ind or followed_ws
        elif ch == "#" and preceded_ws:
            flow_ind = block_ind = True
        if ch == "\t":
            tabs = True
        elif not _printable(ch):
            special = True
        if ch == " ":
            leading_space = leading_space or i == 0
            trailing_space = trailing_space or i == last
            break_space = break_space or previous_break
            previous_space, previous_break = True, False
        elif ch in _BREAKS:
            line_breaks = True
            leading_break = leading_break or i == 0
            trailing_break = trailing_break or i == last
            space_break = space_break or previous_space
            previous_space, previous_break = False, True
        else:
            previous_space = previous_break = False
        preceded_ws = ch in _BLANKS or ch in _BREAKS or ch == "\0"

    plain = not (
        leading_space
        or leading_break
        or trailing_space
        or trailing_break
        or break_space
        or space_break
        or tabs
        or special
        or line_breaks
    )
    return _Analysis(
        multiline=line_breaks,
        flow_plain=plain and not flow_ind,
        block_plain=plain and not block_ind,
        single_quoted=not (break_space or space_break or tabs or special),
        block=not (trailing_space or space_break or special),
    )


def _split_tag(short: str) -> tuple[str, str]:
    """(handle, suffix) as the emitter prints a tag with its two default directives."""
    if short.startswith("!!"):
        return "!!", short[2:]
    if short.startswith("!"):
        return "!", short[1:]
    if short.startswith(_CORE_PREFIX):
        return "!!", short[len(_CORE_PREFIX) :]
    return "", short


# --------------------------------------------------------------------------- emitter


class _Emitter:
    """Writes a node tree the way yaml.v3's emitter does with `Marshal` defaults."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.indent = -1
        self.indents: list[int] = []
        self.flow_level = 0

    # ---- low-level writes

    def _put(self, text: str) -> None:
        self.out.append(text)
        self.column += len(text)

    def _put_break(self) -> None:
        self.out.append("\n")
        self.column = 0
        self.indention = True

    def _write_break(self, ch: str) -> None:
        if ch == "\n":
            self._put_break()
        else:
            self.out.append(ch)
            self.column = 0
            self.indention = True

    def _write_indent(self) -> None:
        indent = max(self.indent, 0)
        if (
            not self.indention
            or self.column > indent
            or (self.column == indent and not self.whitespace)
        ):
            self._put_break()
        if self.column < indent:
            self._put(" " * (indent - self.column))
        self.whitespace = True

    def _write_indicator(
        self, text: str, need_whitespace: bool, is_whitespace: bool, is_indention: bool
    ) -> None:
        if need_whitespace and not self.whitespace:
            self._put(" ")
        self._put(text)
        self.whitespace = is_whitespace
        self.indention = self.indention and is_indention

    def _increase_indent(self, flow: bool, in_block_sequence: bool) -> None:
        self.indents.append(self.indent)
        if self.indent < 0:
            self.indent = _BEST_INDENT if flow else 0
        elif in_block_sequence:
            self.indent += 2
        else:
            self.indent = _BEST_INDENT * ((self.indent + _BEST_INDENT) // _BEST_INDENT)

    def _pop_indent(self) -> None:
        self.indent = self.indents.pop()

    # ---- properties

    def _anchor(self, indicator: str, name: str | None) -> None:
        if name is None:
            return
        if not name or any(ch not in _ANCHOR_SAFE for ch in name):
            raise CanonicalizationError(
                f"anchor {name!r} cannot be emitted",
                expected="letters, digits, '_' or '-'",
                found=name,
                hint="rename the anchor",
            )
        self._write_indicator(indicator, True, False, False)
        self._put(name)
        self.whitespace = False
        self.indention = False

    def _tag(self, short: str | None) -> None:
        if short is None:
            return
        handle, suffix = _split_tag(short)
        if handle:
            if not self.whitespace:
                self._put(" ")
            self._put(handle)
            self.whitespace = False
            self.indention = False
            if suffix:
                self._tag_content(suffix)
        else:
            self._write_indicator("!<", True, False, False)
            self._tag_content(suffix)
            self._write_indicator(">", False, False, False)

    def _tag_content(self, suffix: str) -> None:
        for ch in suffix:
            if ch in _ANCHOR_SAFE or ch in _TAG_SAFE:
                self._put(ch)
            else:
                self._put("".join(f"%{octet:02X}" for octet in ch.encode("utf-8")))
        self.whitespace = False
        self.indention = False

    # ---- nodes

    def emit_document(self, root: _Node) -> str:
        self._node(root)
        self._write_indent()
        return "".join(self.out)

    def _node(
        self, node: _Node, *, simple_key: bool = False, in_block_sequence: bool = False
    ) -> None:
        if isinstance(node, _Scalar):
            self._scalar(node, simple_key, in_block_sequence)
        elif isinstance(node, _Alias):
            self._anchor("*", node.name)
        elif isinstance(node, _Sequence):
            self._anchor("&", node.anchor)
            self._tag(node.tag)
            if self.flow_level or node.flow or not node.items:
                self._flow_sequence(node, in_block_sequence)
            else:
                self._block_sequence(node, in_block_sequence)
        else:
            self._anchor("&", node.anchor)
            self._tag(node.tag)
            if self.flow_level or node.flow or not node.pairs:
                self._flow_mapping(node, in_block_sequence)
            else:
                self._block_mapping(node, in_block_sequence)

    def _simple_key(self, node: _Node) -> bool:
        """Whether a key fits on one line as `key: value` (otherwise `? key`)."""
        size = 0
        if isinstance(node, _Alias):
            size = len(node.name.encode())
        elif isinstance(node, _Scalar):
            if node.anchor is None and node.tag is None and _SAFE_PLAIN.fullmatch(node.value):
                return len(node.value) <= _SIMPLE_KEY_MAX_BYTES  # one line, ASCII: 1 byte each
            if not _BREAKS.isdisjoint(node.value):  # `_analyze(...).multiline`
                return False
            size = len((node.anchor or "").encode()) + len(node.value.encode())
            size += sum(len(part.encode()) for part in _split_tag(node.tag)) if node.tag else 0
        else:
            if node.items if isinstance(node, _Sequence) else node.pairs:
                return False
            size = len((node.anchor or "").encode())
            size += sum(len(part.encode()) for part in _split_tag(node.tag)) if node.tag else 0
        return size <= _SIMPLE_KEY_MAX_BYTES

    def _block_sequence(self, node: _Sequence, in_block_sequence: bool) -> None:
        self._increase_indent(False, in_block_sequence)
        for item in node.items:
            self._write_indent()
            self._write_indicator("-", True, False, True)
            self._node(item, in_block_sequence=True)
        self._pop_indent()

    def _block_mapping(self, node: _Mapping, in_block_sequence: bool) -> None:
        self._increase_indent(False, in_block_sequence)
        for key, value in node.pairs:
            self._write_indent()
            if self._simple_key(key):
                self._node(key, simple_key=True)
                self._write_indicator(":", False, False, False)
            else:
                self._write_indicator("?", True, False, True)
                self._node(key)
                self._write_indent()
                self._write_indicator(":", True, False, True)
            self._node(value)
        self._pop_indent()

    def _flow_sequence(self, node: _Sequence, in_block_sequence: bool) -> None:
        self._write_indicator("[", True, True, False)
        self._increase_indent(True, in_block_sequence)
        self.flow_level += 1
        for index, item in enumerate(node.items):
            if index:
                self._write_indicator(",", False, False, False)
            if self.column == 0:
                self._write_indent()
            self._node(item)
        self.flow_level -= 1
        self._pop_indent()
        if self.column == 0:
            self._write_indent()
        self._write_indicator("]", False, False, False)

    def _flow_mapping(self, node: _Mapping, in_block_sequence: bool) -> None:
        self._write_indicator("{", True, True, False)
        self._increase_indent(True, in_block_sequence)
        self.flow_level += 1
        for index, (key, value) in enumerate(node.pairs):
            if index:
                self._write_indicator(",", False, False, False)
            if self.column == 0:
                self._write_indent()
            if self._simple_key(key):
                self._node(key, simple_key=True)
                self._write_indicator(":", False, False, False)
            else:
                self._write_indicator("?", True, False, False)
                self._node(key)
                self._write_indicator(":", True, False, False)
            self._node(value)
        self.flow_level -= 1
        self._pop_indent()
        self._write_indicator("}", False, False, False)

    # ---- scalars

    def _select_style(self, node: _Scalar, analysis: _Analysis, simple_key: bool) -> ScalarStyle:
        style = node.style
        if style == "plain" and "\n" in node.value:
            style = "literal"  # the encoder: a plain multi-line string becomes a literal block
        if simple_key and analysis.multiline:
            style = "double"
        if style == "plain":
            allowed = analysis.flow_plain if self.flow_level else analysis.block_plain
            if not allowed or (not node.value and (self.flow_level or simple_key)):
                style = "single"
        if style == "single" and not analysis.single_quoted:
            style = "double"
        if style in ("literal", "folded") and (not analysis.block or self.flow_level or simple_key):
            style = "double"
        return style

    def _scalar(self, node: _Scalar, simple_key: bool, in_block_sequence: bool) -> None:
        value = node.value
        if (
            node.style == "plain"
            and node.anchor is None
            and node.tag is None
            and value
            and value.isascii()
            and value.isprintable()
        ):
            analysis = _analyze_ascii(value)
            if analysis.flow_plain if self.flow_level else analysis.block_plain:
                # what `_select_style` keeps (plain) and `_plain` writes for one line
                if not self.whitespace:
                    self._put(" ")
                self._put(value)
                self.whitespace = False
                self.indention = False
                return
        style = self._select_style(node, _analyze(value), simple_key)
        self._anchor("&", node.anchor)
        self._tag(node.tag)
        if style != "literal" and style != "folded" and _BREAKS.isdisjoint(value):
            # One line: nothing below reads the indent, so it need not be pushed and popped.
            if style == "plain":
                self._plain(value)
            elif style == "single":
                self._single_quoted(value)
            else:
                self._double_quoted(value)
            return
        self._increase_indent(True, in_block_sequence)
        if style == "plain":
            self._plain(node.value)
        elif style == "single":
            self._single_quoted(node.value)
        elif style == "double":
            self._double_quoted(node.value)
        elif style == "literal":
            self._literal(node.value)
        else:
            self._folded(node.value)
        self._pop_indent()

    def _plain(self, value: str) -> None:
        if value and not self.whitespace:
            self._put(" ")
        if _BREAKS.isdisjoint(value):  # one line: the loop below would write it char by char
            self._put(value)
            if value:
                self.whitespace = False
            self.indention = False
            return
        breaks = False
        for ch in value:
            if ch in _BREAKS:
                if not breaks and ch == "\n":
                    self._put_break()
                self._write_break(ch)
                breaks = True
            else:
                if breaks and ch != " ":
                    self._write_indent()
                self._put(ch)
                if ch != " ":
                    self.indention = False
                    breaks = False
        if value:
            self.whitespace = False
        self.indention = False

    def _single_quoted(self, value: str) -> None:
        self._write_indicator("'", True, False, False)
        if _BREAKS.isdisjoint(value):  # one line: the same text the loop below writes
            self._put(value.replace("'", "''"))
            self._write_indicator("'", False, False, False)
            self.whitespace = False
            self.indention = False
            return
        breaks = False
        for ch in value:
            if ch == " ":
                self._put(ch)
            elif ch in _BREAKS:
                if not breaks and ch == "\n":
                    self._put_break()
                self._write_break(ch)
                breaks = True
            else:
                if breaks:
                    self._write_indent()
                self._put("''" if ch == "'" else ch)
                self.indention = False
                breaks = False
        self._write_indicator("'", False, False, False)
        self.whitespace = False
        self.indention = False

    def _double_quoted(self, value: str) -> None:
        self._write_indicator('"', True, False, False)
        self._put(
            "".join(
                "\\" + _escape(ch) if not _printable(ch) or ch in _BREAKS or ch in '"\\' else ch
                for ch in value
            )
        )
        self._write_indicator('"', False, False, False)
        self.whitespace = False
        self.indention = False

    def _block_hints(self, value: str) -> None:
        if value[0] == " " or value[0] in _BREAKS:
            self._write_indicator(str(_BEST_INDENT), False, False, False)
        if value[-1] not in _BREAKS:
            chomp = "-"
        elif len(value) == 1 or value[-2] in _BREAKS:
            chomp = "+"
        else:
            chomp = ""
        if chomp:
            self._write_indicator(chomp, False, False, False)

    def _literal(self, value: str) -> None:
        self._write_indicator("|", True, False, False)
        self._block_hints(value)
        self.whitespace = True
        breaks = True
        for ch in value:
            if ch in _BREAKS:
                self._write_break(ch)
                breaks = True
            else:
                if breaks:
                    self._write_indent()
                self._put(ch)
                self.indention = False
                breaks = False

    def _folded(self, value: str) -> None:
        self._write_indicator(">", True, False, False)
        self._block_hints(value)
        self.whitespace = True
        breaks = True
        leading_spaces = True
        # yaml.v3 v3.0.1 looks for the first non-break character from the start of the value
        # (not from the current position) to decide on the extra line break; kept as is.
        first = next((ch for ch in value if ch not in _BREAKS), "")
        extra_break = first not in _BLANKS and first not in ("", "\0")
        for ch in value:
            if ch in _BREAKS:
                if not breaks and not leading_spaces and ch == "\n" and extra_break:
                    self._put_break()
                self._write_break(ch)
                breaks = True
            else:
                if breaks:
                    self._write_indent()
                    leading_spaces = ch in _BLANKS
                self._put(ch)
                self.indention = False
                breaks = False


def _escape(ch: str) -> str:
    """The text after the backslash for one escaped character of a double-quoted scalar."""
    short = _ESCAPES.get(ch)
    if short is not None:
        return short
    cp = ord(ch)
    if cp <= 0xFF:
        return f"x{cp:02X}"
    if cp <= 0xFFFF:
        return f"u{cp:04X}"
    return f"U{cp:08X}"


# --------------------------------------------------------------------------- public API


def canonicalize(
    data: bytes,
    canonicalizer: Canonicalizer | str,
    *,
    source: str = "recipe.yaml",
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    events: Sequence[yaml.Event] | None = None,
) -> bytes:
    """The canonical bytes of a recipe document (legacy keeps `metadata.version`, V3 drops it).

    Raises `CanonicalizationError` for empty or oversized input, invalid YAML, duplicate keys,
    unknown aliases and nesting deeper than `max_depth`. `source` only names the file in errors.
    `events`, when given, must be the complete PyYAML event stream of `data` (as
    `tree.yamlio.load_yaml_with_events` returns it); it saves parsing the bytes a second time.
    """
    mode = Canonicalizer(str(canonicalizer))
    if not data:
        raise CanonicalizationError(
            "the recipe is empty",
            location=Location(source),
            expected="a YAML document",
            found="0 bytes",
            hint="pass the recipe.yaml file itself",
        )
    if len(data) > max_bytes:
        raise CanonicalizationError(
            "the recipe is too large to canonicalize",
            location=Location(source),
            expected=f"at most {max_bytes} bytes",
            found=f"{len(data)} bytes",
            hint="recipes are small; check that this is the right file",
        )
    root = _parse(data, source, max_depth, events)
    if mode is Canonicalizer.V3:
        root = _strip_metadata_version(root)
    text = _Emitter().emit_document(root)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalizationError(
            "the recipe holds a character that has no UTF-8 form",
            location=Location(source),
            expected="valid Unicode text",
            found=f"code point U+{ord(text[exc.start]):04X}",
            hint="remove the surrogate escape from the document",
        ) from exc


def document_kind(
    data: bytes, *, source: str = "recipe.yaml", max_bytes: int = DEFAULT_MAX_BYTES
) -> str | None:
    """The top-level `kind:` scalar of a document (e.g. `RecipeResult`), None when it has none."""
    if not data or len(data) > max_bytes:
        return None
    root = _parse(data, source, DEFAULT_MAX_DEPTH)
    if isinstance(root, _Mapping):
        for key, value in root.pairs:
            if _is_key(key, "kind") and isinstance(value, _Scalar):
                return value.value
    return None


def recipe_digest(
    data: bytes,
    canonicalizer: Canonicalizer | str,
    *,
    source: str = "recipe.yaml",
    max_bytes: int = DEFAULT_MAX_BYTES,
    events: Sequence[yaml.Event] | None = None,
) -> Sha256Hex:
    """Bare lowercase hex sha256 of the canonical bytes (`predicate.recipe.digest`)."""
    return canonical_digest(
        canonicalize(data, canonicalizer, source=source, max_bytes=max_bytes, events=events)
    )


def canonical_digest(canonical: bytes) -> Sha256Hex:
    """The recipe digest of bytes already canonical (what `recipe_digest` hashes)."""
    return Sha256Hex(hashlib.sha256(canonical).hexdigest())


def digest_for_predicate_type(
    data: bytes,
    predicate_type: PredicateType | str,
    *,
    source: str = "recipe.yaml",
    events: Sequence[yaml.Event] | None = None,
) -> Sha256Hex:
    """aicr's `SubjectDigestForType`: V3 for the v3 URI, legacy for every other string."""
    is_v3 = str(predicate_type) == PredicateType.V3.value
    return recipe_digest(
        data, Canonicalizer.V3 if is_v3 else Canonicalizer.LEGACY, source=source, events=events
    )
