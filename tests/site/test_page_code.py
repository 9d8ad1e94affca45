"""The page cache key covers the code that renders pages, computed from the package (no hand
list), and the templates that write values unescaped-by-default escape every one of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2
from jinja2 import nodes

from generator.site import recipepages
from generator.site.recipepages import templates_digest
from generator.site.resources import locate
from generator.site.rowcache import CachedRows

TEMPLATES = locate().pages


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    code = tmp_path / "site"
    shutil.copytree(
        Path(recipepages.__file__).parent, code, ignore=shutil.ignore_patterns("__pycache__")
    )
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    return code, templates


def test_a_new_module_of_the_page_code_changes_the_page_key(tmp_path: Path) -> None:
    code, templates = _copy(tmp_path)
    before = templates_digest(templates, code)
    (code / "badges2.py").write_text('"""A module the cards start to use."""\n', encoding="utf-8")
    assert templates_digest(templates, code) != before


def test_every_page_module_and_template_counts(tmp_path: Path) -> None:
    code, templates = _copy(tmp_path)
    before = templates_digest(templates, code)
    for path in [*sorted(code.glob("*.py")), *sorted(templates.glob("*.j2"))]:
        original = path.read_bytes()
        path.write_bytes(original + b"\n# changed\n")
        assert templates_digest(templates, code) != before, path.name
        path.write_bytes(original)
    assert templates_digest(templates, code) == before


def test_the_default_key_covers_this_package() -> None:
    assert recipepages.SITE_CODE == Path(recipepages.__file__).resolve().parent
    assert templates_digest(TEMPLATES) == templates_digest(TEMPLATES, recipepages.SITE_CODE)


# Inside `{% autoescape false %}` (the cards, grids and tables, where escaping every value
# through Markup would double the page time) nothing escapes by default, so every output must
# be escaped text (`|t`), a number or word the page itself chose, or finished HTML from a
# macro, a badge or `link`.
_SAFE_CALLS = {
    "link",
    "state_badge",
    "result_badge",
    "row_cells",
    "history_cells",
    "fresh_badge",
    "stale_block",
    "signer_head",
    "omitted_line",
    "format",
}
_SAFE_FILTERS = {"t", "length"}
_SAFE_NAMES = {
    # values the view models compute from the page's own vocabulary or numbers
    "verdict",
    "anchor",
    "flake",
    "verdict_icon",
    "verdict_words",
    "icon",
    "days",
    "direction",
    "skew",
    "duplicate_judged",
    "span",
    "rank",
    "reported",
    "total",
    "cls",
    "n",
    "th",
    "unlisted_signers",
    "unlisted_runs",
    "versions",
    "history_runs",
    "history_rows",
}


def _safe(node: nodes.Node) -> bool:
    if isinstance(node, nodes.TemplateData | nodes.Const):
        return True
    if isinstance(node, nodes.Filter):
        return node.name in _SAFE_FILTERS
    if isinstance(node, nodes.CondExpr):
        return _safe(node.expr1) and (node.expr2 is None or _safe(node.expr2))
    if isinstance(node, nodes.Call):
        target = node.node
        name = target.attr if isinstance(target, nodes.Getattr) else getattr(target, "name", "")
        return name in _SAFE_CALLS
    if isinstance(node, nodes.Getattr):
        return node.attr in _SAFE_NAMES
    if isinstance(node, nodes.Getitem):
        return isinstance(node.arg, nodes.Const) and node.arg.value in ("pass", "fail", "notRun")
    if isinstance(node, nodes.Name):
        return node.name in _SAFE_NAMES
    return False


def _unescaped_outputs(source: str) -> list[str]:
    tree = jinja2.Environment(extensions=[CachedRows]).parse(source)
    found: list[str] = []
    for block in tree.find_all(nodes.ScopedEvalContextModifier):
        if any(
            k.key == "autoescape" and isinstance(k.value, nodes.Const) and not k.value.value
            for k in block.options
        ):
            for out in block.find_all(nodes.Output):
                found.extend(repr(n) for n in out.nodes if not _safe(n))
    return found


def test_templates_without_autoescape_escape_every_value() -> None:
    checked = 0
    for path in sorted(TEMPLATES.glob("*.j2")):
        source = path.read_text(encoding="utf-8")
        if "autoescape false" in source:
            checked += 1
            assert _unescaped_outputs(source) == [], path.name
    assert checked >= 4


def test_the_check_catches_a_value_written_raw() -> None:
    raw = "{% autoescape false %}<p>{{ c.who }}</p>{% endautoescape %}"
    assert _unescaped_outputs(raw)
    assert not _unescaped_outputs(raw.replace("c.who", "c.who|t"))
