"""The cache key: from the environment, else a key file of our own with mode 0600 in the
user's config folder; a key file that is a link or that others may read is refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from generator.cacheauth import (
    CACHE_KEY_ENV,
    CacheAuth,
    CacheKeyError,
    Purpose,
    key_file_path,
    load_key,
)


@pytest.fixture()
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No key in the environment; a private config folder."""
    monkeypatch.delenv(CACHE_KEY_ENV, raising=False)
    folder = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


def test_the_key_file_is_created_with_mode_0600_and_reused(config: Path) -> None:
    first = load_key()
    path = config / "evidence-dashboard" / "cache.key"
    assert key_file_path() == path
    info = path.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert len(first) >= 32
    assert load_key() == first  # the next build reads the same key


def test_the_environment_wins_and_no_file_is_written(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_KEY_ENV, "k" * 40)
    assert load_key() == b"k" * 40
    assert not config.exists()


def test_a_short_key_in_the_environment_is_refused(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_KEY_ENV, "short")
    with pytest.raises(CacheKeyError) as caught:
        load_key()
    assert CACHE_KEY_ENV in caught.value.diagnostics() and caught.value.exit_code == 2


def test_a_symlinked_key_file_is_refused(config: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.key"
    target.write_text("x" * 64)
    target.chmod(0o600)
    path = config / "evidence-dashboard" / "cache.key"
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    with pytest.raises(CacheKeyError) as caught:
        load_key()
    text = caught.value.diagnostics()
    assert str(path) in text and "symbolic link" in text and "next step" in text


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o620])
def test_a_key_file_others_may_read_or_write_is_refused(config: Path, mode: int) -> None:
    path = config / "evidence-dashboard" / "cache.key"
    path.parent.mkdir(parents=True)
    path.write_text("x" * 64)
    path.chmod(mode)
    with pytest.raises(CacheKeyError) as caught:
        load_key()
    text = caught.value.diagnostics()
    assert str(path) in text and f"{mode:04o}" in text and "chmod 600" in text


def test_a_key_file_that_is_not_a_file_is_refused(config: Path) -> None:
    path = config / "evidence-dashboard" / "cache.key"
    path.mkdir(parents=True, mode=0o700)
    os.chmod(path, 0o700)
    with pytest.raises(CacheKeyError):
        load_key()


def test_tags_are_bound_to_the_key_the_purpose_and_the_name() -> None:
    one, two = CacheAuth(b"1" * 32), CacheAuth(b"2" * 32)
    sealed = one.seal(Purpose.PAGE, b"<p>page</p>", b"a.html")
    assert one.unseal(Purpose.PAGE, sealed, b"a.html") == b"<p>page</p>"
    assert two.unseal(Purpose.PAGE, sealed, b"a.html") is None
    assert one.unseal(Purpose.MEMO, sealed, b"a.html") is None
    assert one.unseal(Purpose.PAGE, sealed, b"b.html") is None
    assert one.unseal(Purpose.PAGE, sealed + b"<script>", b"a.html") is None
    assert one.unseal(Purpose.PAGE, b"<p>page</p>", b"a.html") is None


def test_builds_creating_the_key_at_once_agree_on_it(config: Path) -> None:
    """The key file appears whole or not at all: concurrent first builds share one key."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8) as pool:
        keys = set(pool.map(lambda _: load_key(), range(16)))
    assert len(keys) == 1
    assert [p.name for p in (config / "evidence-dashboard").iterdir()] == ["cache.key"]


def test_no_test_uses_the_users_cache() -> None:
    """A build a test runs without `--cache` writes under a folder of that test's, never in the
    user's cache, where entries sealed with the test key would each be an authentication
    failure for the user's next build."""
    from generator.bundle.cache import default_cache_dir

    user_cache = Path.home() / ".cache" / "evidence-dashboard"
    assert default_cache_dir() != user_cache
    assert "cache-home" in default_cache_dir().parent.name
