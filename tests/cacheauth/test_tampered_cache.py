"""The cache is not a trust anchor: whatever a build reads back from `--cache` and tampered
with is a miss, counted, and the published site is byte for byte the honest build's.

Each test builds the embedded demo tree once (the honest site, and the cache), tampers with
one kind of cache entry the way an attacker with write access to a shared cache would (turning
a failing check into a passing one, a FAILING board row into CONFIRMED, adding a `<script>`),
builds again from that cache and compares the two sites file by file. Only
`data/build-info.json`'s cache report may differ (it counts the entries that failed), and with
it that file's digest in `data/manifest.json`.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from generator.build import BuildSummary, run_build
from generator.cacheauth import CACHE_KEY_ENV
from generator.data.writers import schema_text
from tests.cacheauth.conftest import options


def site_files(root: Path) -> dict[str, bytes]:
    """Every file of a built site; build-info.json without its cache report, and the manifest
    without its entry for build-info.json (the one file whose digest the report changes)."""
    files = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    info = json.loads(files["data/build-info.json"])
    info.pop("cache", None)
    files["data/build-info.json"] = json.dumps(info, sort_keys=True).encode()
    if "data/manifest.json" in files:
        manifest = json.loads(files["data/manifest.json"])
        manifest["files"] = [f for f in manifest["files"] if f["path"] != "data/build-info.json"]
        files["data/manifest.json"] = json.dumps(manifest, sort_keys=True).encode()
    return files


def reported_failures(site: Path) -> int:
    return int(
        json.loads((site / "data" / "build-info.json").read_bytes())["cache"][
            "authenticationFailures"
        ]
    )


def assert_honest(site: Path, honest: Path, summary: BuildSummary) -> None:
    """`site` equals the honest one, and the build reported the entries that failed."""
    assert site_files(site) == site_files(honest)
    assert reported_failures(site) == summary.auth_failures >= 1
    # build-info.json was rewritten with the report after it was written: its manifest entry
    # is of the bytes published
    listed = {
        f["path"]: f["sha256"]
        for f in json.loads((site / "data" / "manifest.json").read_bytes())["files"]
    }
    info = (site / "data" / "build-info.json").read_bytes()
    assert listed["data/build-info.json"] == hashlib.sha256(info).hexdigest()
    assert f"{summary.auth_failures} cache entries failed authentication" in summary.describe()
    assert summary.as_dict()["cache"] == {"authenticationFailures": summary.auth_failures}


def _only(paths: list[Path]) -> list[Path]:
    assert paths, "nothing to tamper with: the cache layout changed"
    return paths


def _rewrite(path: Path, edit: Callable[[bytes], bytes]) -> None:
    data = path.read_bytes()
    changed = edit(data)
    assert changed != data, f"the tamper did not change {path.name}"
    path.write_bytes(changed)


# --------------------------------------------------------------------------- tampers


def pass_failed_checks(cache: Path) -> None:
    """Verdict packs: every failed check of the cached evidence now says it passed."""
    for pack in _only(sorted((cache / "verify" / "packs").glob("*.jsonl"))):
        if b'"status":"failed"' in pack.read_bytes():
            _rewrite(
                pack,
                lambda d: d.replace(
                    b'"result":"fail","status":"failed"', b'"result":"pass","status":"passed"'
                ),
            )


def confirm_failing_rows(cache: Path) -> None:
    """The memo's documents: every FAILING board state reads CONFIRMED."""
    for index in _only(sorted((cache / "evaluation").glob("*/data/index.json"))):
        _rewrite(index, lambda d: d.replace(b'"FAILING"', b'"CONFIRMED"'))


def edit_memo_data_copy(cache: Path) -> None:
    """The memo's data/ copy: a published file no document is read from is edited."""
    for schema in _only(sorted((cache / "evaluation").glob("*/data/schema/index.schema.json"))):
        _rewrite(schema, lambda d: d.replace(b'"title"', b'"title-hacked"', 1))


def add_memo_data_file(cache: Path) -> None:
    """The memo's data/ copy: an extra file is slipped in."""
    for data in _only(sorted((cache / "evaluation").glob("*/data"))):
        (data / "series" / "injected.json").write_text('{"hacked": true}', encoding="utf-8")


def script_into_pages(cache: Path) -> None:
    """The page cache: a `<script>` is added to every cached recipe page."""
    for page in _only(sorted((cache / "pages").glob("*.html"))):
        _rewrite(page, lambda d: d.replace(b"</body>", b"<script>alert(1)</script></body>"))


def script_into_markdown(cache: Path) -> None:
    """The page cache: the cached Markdown pages get a raw `<script>`."""
    for page in _only(sorted((cache / "pages").glob("markdown-*.json"))):
        _rewrite(page, lambda d: d.replace(b'":"', b'":"<script>alert(1)</script>', 1))


def script_into_rows(cache: Path) -> None:
    """The page cache: every kept row of the Markdown pages gets a raw `<script>` (the
    Markdown pages themselves dropped, so the rows are read)."""
    for page in _only(sorted((cache / "pages").glob("markdown-*.json"))):
        page.unlink()
    _rewrite(
        cache / "pages" / "rows.json",
        lambda d: d.replace(b'":"', b'":"<script>alert(1)</script>'),
    )


def stale_freshness_memo(cache: Path) -> None:
    """The freshness memo: every remembered digest answer (not the keys) is changed, and
    the remembered diffs of stale evidence get a line of their own."""
    path = cache / "freshness" / "memo.json"
    _rewrite(
        path,
        lambda d: re.sub(rb':"[0-9a-f]{64}"', b':"' + b"0" * 64 + b'"', d).replace(
            b'["--- signed",', b'["--- signed","+  injected: true",'
        ),
    )


def forge_templates(cache: Path) -> None:
    """The compiled templates: each cached template's code is replaced by code that writes a
    `<script>`, under the checksum of the template's real source (which is all Jinja's own
    bytecode cache checks before it runs the code)."""
    import io
    import marshal
    import pickle

    from jinja2 import Environment
    from jinja2.bccache import bc_magic

    code = Environment().compile("<script>alert(1)</script>", "forged", "forged")

    def forge(data: bytes) -> bytes:
        tagged = re.match(rb"[0-9a-f]{64}\n", data)
        prefix, body = (data[:65], data[65:]) if tagged else (b"", data)
        assert body.startswith(bc_magic)
        checksum = pickle.load(io.BytesIO(body[len(bc_magic) :]))
        return prefix + bc_magic + pickle.dumps(checksum, 2) + marshal.dumps(code)

    for path in _only(sorted(p for p in (cache / "templates").iterdir() if p.is_file())):
        _rewrite(path, forge)


def drop_memo(cache: Path) -> None:
    """Drop the evaluation memo and the recipe products: the next build evaluates every recipe
    from the verdict cache and the freshness memo."""
    shutil.rmtree(cache / "evaluation")
    shutil.rmtree(cache / "recipes")


def flip_recipe_product(cache: Path) -> None:
    """One byte of every recipe product flipped (the memo dropped, so they are read)."""
    shutil.rmtree(cache / "evaluation")
    products = sorted((cache / "recipes").iterdir())
    assert products
    for product in products:
        _rewrite(product, lambda data: data[:-2] + bytes([data[-2] ^ 1]) + data[-1:])


def flip_pointer_docs(cache: Path) -> None:
    """One byte of the parsed pointer documents flipped (the memo dropped, so the tree is
    read again through them)."""
    shutil.rmtree(cache / "evaluation")
    _rewrite(cache / "tree" / "pointer-docs.json", lambda d: d[:-2] + bytes([d[-2] ^ 1]) + d[-1:])


def rename_recipe_in_pointer_docs(cache: Path) -> None:
    """Every remembered pointer now names another recipe (the tag no longer checks): a
    record is `[schemaVersion, recipe, ...]`."""
    shutil.rmtree(cache / "evaluation")
    _rewrite(
        cache / "tree" / "pointer-docs.json",
        lambda data: re.sub(rb'\[("1\.0[^"]*"),"([^"]+)"', rb'[\1,"\2-forged"', data),
    )


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize(
    ("tamper", "reevaluate"),
    [
        pytest.param([pass_failed_checks], True, id="verdict-pack-reevaluate"),
        pytest.param([pass_failed_checks, drop_memo], False, id="verdict-pack-no-memo"),
        pytest.param([confirm_failing_rows], False, id="memo-documents"),
        pytest.param([edit_memo_data_copy], False, id="memo-data-copy"),
        pytest.param([add_memo_data_file], False, id="memo-data-extra-file"),
        pytest.param([script_into_pages], False, id="page-cache"),
        pytest.param([script_into_pages], True, id="page-cache-reevaluate"),
        pytest.param([script_into_markdown], False, id="page-cache-markdown"),
        pytest.param([script_into_rows], False, id="page-cache-rows"),
        pytest.param([stale_freshness_memo, drop_memo], False, id="freshness-memo"),
        pytest.param([forge_templates], False, id="compiled-templates"),
        pytest.param([flip_recipe_product], False, id="recipe-products"),
        pytest.param([flip_pointer_docs], False, id="pointer-docs"),
        pytest.param([rename_recipe_in_pointer_docs], False, id="pointer-docs-recipe"),
    ],
)
def test_a_tampered_cache_entry_is_a_counted_miss(
    tree: Path, tmp_path: Path, tamper: list[Callable[[Path], None]], reevaluate: bool
) -> None:
    cache = tmp_path / "cache"
    first = run_build(options(tree, tmp_path / "honest", cache))
    assert first.auth_failures == 0 and reported_failures(tmp_path / "honest") == 0
    for step in tamper:
        step(cache)
    again = run_build(options(tree, tmp_path / "again", cache, reevaluate=reevaluate))
    assert_honest(tmp_path / "again", tmp_path / "honest", again)
    # the failed entries were replaced: the next build reads the cache cleanly
    third = run_build(options(tree, tmp_path / "third", cache, reevaluate=reevaluate))
    assert third.auth_failures == 0
    assert site_files(tmp_path / "third") == site_files(tmp_path / "honest")


@pytest.mark.parametrize("reevaluate", [False, True], ids=["memo", "reevaluate"])
def test_a_cache_written_under_another_key_is_all_misses(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reevaluate: bool
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_KEY_ENV, "K1-" + "1" * 40)
    run_build(options(tree, tmp_path / "honest", cache))
    lines = sum(
        len(p.read_bytes().splitlines()) - 1 for p in (cache / "verify" / "packs").glob("*.jsonl")
    )
    pages = len(list((cache / "pages").iterdir()))
    monkeypatch.setenv(CACHE_KEY_ENV, "K2-" + "2" * 40)
    again = run_build(options(tree, tmp_path / "again", cache, reevaluate=reevaluate))
    assert not again.from_memo
    assert_honest(tmp_path / "again", tmp_path / "honest", again)
    # every verdict line and every cached page failed (plus the memo, templates, freshness)
    assert again.auth_failures >= lines + pages + (0 if reevaluate else 1)
    # K2 wrote its own entries: the next K2 build is answered by the cache alone
    third = run_build(options(tree, tmp_path / "third", cache, reevaluate=reevaluate))
    assert third.from_memo is not reevaluate and third.auth_failures == 0


def test_an_honest_warm_build_reports_no_failure(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run_build(options(tree, tmp_path / "a", cache))
    warm = run_build(options(tree, tmp_path / "b", cache, reevaluate=True))
    assert warm.auth_failures == 0 and "authentication" not in warm.describe()
    assert (tmp_path / "b" / "data" / "build-info.json").read_bytes() == (
        tmp_path / "a" / "data" / "build-info.json"
    ).read_bytes()
    for name in ("build-info", "pointers"):  # the report and the new fields follow the schemas
        schema = json.loads(schema_text(f"{name}.schema.json"))
        document = json.loads((tmp_path / "b" / "data" / f"{name}.json").read_bytes())
        jsonschema.Draft202012Validator(schema).validate(document)
