"""The page templates' compiled code is kept between builds under a digest of the page code
(`keep_compiled`): code compiled by another version of the environment is pruned, never loaded,
and the theme's entries beside it are left alone."""

from __future__ import annotations

from pathlib import Path

import jinja2

from generator.cacheauth import CacheAuth
from generator.site.bytecode import SealedBytecodeCache

AUTH = CacheAuth(b"t" * 32)


def compile_into(folder: Path, prefix: str, source: str = "<p>{{ x }}</p>") -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.DictLoader({"t.j2": source}),
        bytecode_cache=SealedBytecodeCache(folder, AUTH, prefix=prefix),
    )
    env.get_template("t.j2")
    return env


def test_entries_carry_the_prefix_and_prune_keeps_only_the_current_ones(tmp_path: Path) -> None:
    theme = tmp_path / "sealed-0123.cache"  # the theme's entry (no stem)
    theme.write_bytes(b"theme")
    compile_into(tmp_path, "pages-old-")
    compile_into(tmp_path, "pages-new-")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert [n for n in names if n.startswith("sealed-pages-old-")]
    assert [n for n in names if n.startswith("sealed-pages-new-")]
    SealedBytecodeCache(tmp_path, AUTH, prefix="pages-new-").prune("pages-")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert not [n for n in left if n.startswith("sealed-pages-old-")]
    assert [n for n in left if n.startswith("sealed-pages-new-")]
    assert theme.exists()


def test_a_kept_entry_is_loaded_only_under_its_own_prefix(tmp_path: Path) -> None:
    compile_into(tmp_path, "pages-a-")
    loaded: list[str] = []

    class Spy(SealedBytecodeCache):
        def load_bytecode(self, bucket: object) -> None:
            super().load_bytecode(bucket)
            loaded.append("hit" if getattr(bucket, "code", None) is not None else "miss")

    for prefix in ("pages-a-", "pages-b-"):
        env = jinja2.Environment(
            loader=jinja2.DictLoader({"t.j2": "<p>{{ x }}</p>"}),
            bytecode_cache=Spy(tmp_path, AUTH, prefix=prefix),
        )
        assert env.get_template("t.j2").render(x=1) == "<p>1</p>"
    assert loaded == ["hit", "miss"]
