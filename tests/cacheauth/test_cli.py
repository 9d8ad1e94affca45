"""The command line reports cache authentication failures (the `--format json` summary and the
summary line) and refuses an unsafe key file with a clear error (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cacheauth import CACHE_KEY_ENV
from generator.cli import main
from tests.cacheauth.conftest import EPOCH


def _build(tree: Path, out: Path, cache: Path, *extra: str) -> tuple[int, str, str]:
    args = [
        "build",
        "--recipes",
        str(tree),
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--offline",
        "--oci-layout",
        str(tree / "bundles"),
        "--trust-root",
        str(tree / "trust" / "trusted_root.json"),
        *extra,
    ]
    result = CliRunner().invoke(
        main, args, catch_exceptions=False, env={"SOURCE_DATE_EPOCH": str(EPOCH)}
    )
    return result.exit_code, result.stdout, result.stderr


def test_failures_are_in_the_json_summary_and_the_summary_line(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    code, out, _ = _build(tree, tmp_path / "a", cache, "--format", "json")
    assert code == 0 and json.loads(out)["cache"] == {"authenticationFailures": 0}
    for page in (cache / "pages").glob("*.html"):
        page.write_bytes(page.read_bytes().replace(b"</body>", b"<script>x()</script></body>"))
    code, out, _ = _build(tree, tmp_path / "b", cache, "--format", "json")
    failed = json.loads(out)["cache"]["authenticationFailures"]
    assert code == 0 and failed >= 1
    for page in (cache / "pages").glob("*.html"):
        page.write_bytes(page.read_bytes().replace(b"</body>", b"<script>x()</script></body>"))
    code, _, err = _build(tree, tmp_path / "c", cache)
    assert code == 0 and f"; {failed} cache entries failed authentication" in err


def test_an_unsafe_key_file_stops_the_build_with_a_clear_error(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_KEY_ENV)
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    key = config / "evidence-dashboard" / "cache.key"
    key.parent.mkdir(parents=True)
    key.write_text("k" * 64)
    key.chmod(0o644)
    code, _, err = _build(tree, tmp_path / "site", tmp_path / "cache")
    assert code == 2
    assert str(key) in err and "0644" in err and "chmod 600" in err
    assert not (tmp_path / "site").exists()
