"""Freshness answers remembered across builds (`ContentMemo`) and asked once per build."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import generator.freshness.explain as explain
import generator.freshness.history as history
import generator.freshness.providers as providers
from generator.cacheauth import CacheAuth, Purpose
from generator.freshness import (
    ContentMemo,
    NativeProvider,
    OverlayListing,
    StaleExplainer,
    listed_overlay,
)
from generator.model import Canonicalizer
from generator.recipe.canonical import recipe_digest
from tests.freshness.test_explain import CURRENT, NAME, SIGNED, _repo, needs_git


def _read(memo_file: Path) -> Any:
    """The memo document of a saved memo file (its tag line checked, then dropped)."""
    data = CacheAuth.from_environment().unseal(Purpose.FRESHNESS, memo_file.read_bytes())
    assert data is not None
    return json.loads(data)


def test_an_edited_memo_is_a_counted_miss(tmp_path: Path) -> None:
    """The memo is sealed: edited answers are not believed, and the failure is counted."""
    from generator.cacheauth import failures, reset_failures

    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    NativeProvider(overlays, memo=memo).current(NAME, None, Canonicalizer.V3)
    memo.save()
    tag, body = memo_file.read_bytes().split(b"\n", 1)
    doc = json.loads(body)
    doc["entries"] = dict.fromkeys(doc["entries"], "f" * 64)
    memo_file.write_bytes(tag + b"\n" + json.dumps(doc).encode())
    reset_failures()
    answer = NativeProvider(overlays, memo=ContentMemo(memo_file)).current(
        NAME, None, Canonicalizer.V3
    )
    assert answer == str(recipe_digest(CURRENT, Canonicalizer.V3))
    assert failures() == {"freshness memo memo.json"}


def _overlays(tmp_path: Path, data: bytes = CURRENT) -> Path:
    overlays = tmp_path / "overlays"
    overlays.mkdir(exist_ok=True)
    (overlays / f"{NAME}.yaml").write_bytes(data)
    return overlays


def _no_canonicalising(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("canonicalised although the memo knew the answer")

    providers._current_canonical.cache_clear()
    monkeypatch.setattr("generator.recipe.canonical.recipe_digest", refuse)
    monkeypatch.setattr("generator.recipe.canonical.canonicalize", refuse)
    monkeypatch.setattr(explain, "canonical_diff", refuse)


def test_a_later_build_reuses_digests_and_diffs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "cache" / "memo.json"
    memo = ContentMemo(memo_file)
    digest = NativeProvider(overlays, memo=memo).current(NAME, None, Canonicalizer.V3)
    assert digest == str(recipe_digest(CURRENT, Canonicalizer.V3))
    why = StaleExplainer(overlays, memo=memo).explain(NAME, None, SIGNED, Canonicalizer.V3, None)
    assert why.diff
    memo.save()

    _no_canonicalising(monkeypatch)
    later = ContentMemo(memo_file)
    assert NativeProvider(overlays, memo=later).current(NAME, None, Canonicalizer.V3) == digest
    again = StaleExplainer(overlays, memo=later).explain(NAME, None, SIGNED, Canonicalizer.V3, None)
    assert again == why


def test_changed_overlay_is_computed_again(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    NativeProvider(overlays, memo=memo).current(NAME, None, Canonicalizer.V3)
    memo.save()
    (overlays / f"{NAME}.yaml").write_bytes(SIGNED)
    answer = NativeProvider(overlays, memo=ContentMemo(memo_file)).current(
        NAME, None, Canonicalizer.V3
    )
    assert answer == str(recipe_digest(SIGNED, Canonicalizer.V3))


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"format": "other"}'])
def test_unusable_memo_files_are_ignored(tmp_path: Path, content: bytes) -> None:
    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "memo.json"
    memo_file.write_bytes(content)
    answer = NativeProvider(overlays, memo=ContentMemo(memo_file)).current(
        NAME, None, Canonicalizer.V3
    )
    assert answer == str(recipe_digest(CURRENT, Canonicalizer.V3))


def test_a_memo_from_other_code_is_ignored(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    NativeProvider(overlays, memo=memo).current(NAME, None, Canonicalizer.V3)
    memo.save()
    doc = _read(memo_file)
    doc["entries"] = dict.fromkeys(doc["entries"], "f" * 64)  # wrong answers ...
    doc["fingerprint"] = "0" * 64  # ... from other code
    memo_file.write_bytes(
        CacheAuth.from_environment().seal(Purpose.FRESHNESS, json.dumps(doc).encode())
    )  # sealed: only the fingerprint is off
    answer = NativeProvider(overlays, memo=ContentMemo(memo_file)).current(
        NAME, None, Canonicalizer.V3
    )
    assert answer == str(recipe_digest(CURRENT, Canonicalizer.V3))


def test_not_a_recipe_result_is_remembered_as_no_answer(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path, b"kind: RecipeMetadata\n")
    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    assert NativeProvider(overlays, memo=memo).current(NAME, None, Canonicalizer.V3) is None
    memo.save()
    assert (
        NativeProvider(overlays, memo=ContentMemo(memo_file)).current(NAME, None, Canonicalizer.V3)
        is None
    )


@pytest.mark.parametrize("name", [f"{NAME}.yaml", "other.yaml", "link.yaml", "sub.yaml"])
def test_listing_answers_like_listed_overlay(tmp_path: Path, name: str) -> None:
    overlays = _overlays(tmp_path)
    (overlays / "other.yaml").write_text("x: 1\n")
    (overlays / "link.yaml").symlink_to(overlays / "other.yaml")
    (overlays / "sub.yaml").mkdir()
    stem = name[: -len(".yaml")]
    assert OverlayListing(overlays).get(stem) == listed_overlay(overlays, stem)
    assert OverlayListing(tmp_path / "missing").get(stem) is None


@needs_git
def test_history_is_asked_once_per_commit_and_overlay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipes, first = _repo(tmp_path)
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(args: list[str], **kwargs: Any) -> Any:
        calls.append(list(args))
        return real(args, **kwargs)

    explainer = StaleExplainer.for_recipes(recipes)
    monkeypatch.setattr(history.subprocess, "run", counting)
    answers = [explainer.explain(NAME, None, SIGNED, Canonicalizer.V3, first) for _ in range(3)]
    assert all(a == answers[0] for a in answers)
    assert answers[0].commits is not None and len(answers[0].commits) == 1
    assert len(calls) == 2  # `git cat-file -e` once, `git log` once
    for _ in range(3):
        assert explainer.explain(NAME, None, SIGNED, Canonicalizer.V3, "0" * 40).commits is None
    assert len(calls) == 3  # an unknown commit: one `git cat-file`, no `git log`


def test_answers_a_worker_copy_used_are_saved_by_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked verification worker asks its own copy of the memo; `drain` sends back what it
    used or added and `adopt` takes it in, so the build's `save` keeps every answer."""
    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "memo.json"
    first = ContentMemo(memo_file)
    NativeProvider(overlays, memo=first).current(NAME, None, Canonicalizer.V3)
    first.save()
    remembered = _read(memo_file)["entries"]

    build = ContentMemo(memo_file)  # the build's memo ...
    worker = ContentMemo(memo_file)  # ... and a worker's copy of it
    assert worker.drain() == {}
    NativeProvider(overlays, memo=worker).current(NAME, None, Canonicalizer.V3)  # a used answer
    StaleExplainer(overlays, memo=worker).explain(NAME, None, SIGNED, Canonicalizer.V3, None)
    sent = worker.drain()
    assert set(remembered) < set(sent) and worker.drain() == {}
    build.adopt(sent)
    build.save()
    saved = _read(memo_file)["entries"]
    assert saved == sent

    _no_canonicalising(monkeypatch)  # the diff is remembered now
    StaleExplainer(overlays, memo=ContentMemo(memo_file)).explain(
        NAME, None, SIGNED, Canonicalizer.V3, None
    )


def test_adopting_only_remembered_answers_writes_nothing(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    NativeProvider(overlays, memo=memo).current(NAME, None, Canonicalizer.V3)
    memo.save()
    before = memo_file.stat().st_mtime_ns
    worker = ContentMemo(memo_file)
    NativeProvider(overlays, memo=worker).current(NAME, None, Canonicalizer.V3)
    build = ContentMemo(memo_file)
    build.adopt(worker.drain())
    memo_file.unlink()
    build.save()
    assert not memo_file.exists(), "nothing new: no write"
    assert before


def test_an_overlay_the_canonicalizer_refuses_has_no_current_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """YAML the loader takes but the canonicalizer refuses reads `unknown`, not a crash."""
    from generator.recipe.canonical import CanonicalizationError

    def refuse(*args: Any, **kwargs: Any) -> bytes:
        raise CanonicalizationError("refused", hint="test")

    providers._current_canonical.cache_clear()
    monkeypatch.setattr("generator.recipe.canonical.canonicalize", refuse)
    overlays = _overlays(tmp_path)
    assert NativeProvider(overlays).current(NAME, None, Canonicalizer.V3) is None
    providers._current_canonical.cache_clear()


def test_the_current_overlay_is_canonicalised_once_for_digest_and_diffs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import generator.recipe.canonical as canonical

    providers._current_canonical.cache_clear()
    explain._canonical_diff.cache_clear()
    seen: list[bytes] = []
    real = canonical.canonicalize

    def counting(data: bytes, *args: Any, **kwargs: Any) -> bytes:
        seen.append(data)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(canonical, "canonicalize", counting)
    overlays = _overlays(tmp_path)
    digest = NativeProvider(overlays).current(NAME, None, Canonicalizer.V3)
    assert digest == str(recipe_digest(CURRENT, Canonicalizer.V3))
    seen.clear()
    explainer = StaleExplainer(overlays)
    explainer.explain(NAME, None, SIGNED, Canonicalizer.V3, None)
    explainer.explain(NAME, None, SIGNED + b"\n# another signed recipe\n", Canonicalizer.V3, None)
    assert seen.count(CURRENT) == 0  # the overlay's canonical form was remembered
    assert len(seen) == 2  # each signed recipe was canonicalised
    providers._current_canonical.cache_clear()


def _resealed(memo_file: Path, **changes: Any) -> None:
    doc = _read(memo_file)
    doc.update(changes)
    memo_file.write_bytes(
        CacheAuth.from_environment().seal(Purpose.FRESHNESS, json.dumps(doc).encode())
    )


@pytest.mark.parametrize("field", ["format", "fingerprint"])
def test_a_memo_whose_format_or_fingerprint_differs_only_by_letter_case_is_ignored(
    tmp_path: Path, field: str
) -> None:
    """Both are compared exactly: a sealed memo that says `EVIDENCE-DASHBOARD/...` or an
    upper-case fingerprint is another format or other code, and its answers are not used."""
    overlays = _overlays(tmp_path)
    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    NativeProvider(overlays, memo=memo).current(NAME, None, Canonicalizer.V3)
    memo.save()
    doc = _read(memo_file)
    wrong = dict.fromkeys(doc["entries"], "f" * 64)
    shouted = doc[field].upper()
    assert shouted != doc[field]
    _resealed(memo_file, entries=wrong, **{field: shouted})
    answer = NativeProvider(overlays, memo=ContentMemo(memo_file)).current(
        NAME, None, Canonicalizer.V3
    )
    assert answer == str(recipe_digest(CURRENT, Canonicalizer.V3))


def test_a_worker_answer_that_differs_only_by_letter_case_is_new_and_saved(
    tmp_path: Path,
) -> None:
    """`adopt` keeps a remembered answer only when it is the same answer, exactly."""
    memo_file = tmp_path / "memo.json"
    first = ContentMemo(memo_file)
    first.put("key", "abc")
    first.save()
    build = ContentMemo(memo_file)
    build.adopt({"key": "ABC"})
    memo_file.unlink()
    build.save()
    assert _read(memo_file)["entries"] == {"key": "ABC"}


def test_a_saved_memo_is_not_written_again_until_something_new_is_added(tmp_path: Path) -> None:
    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    memo.put("key", "abc")
    memo.save()
    memo_file.unlink()
    memo.save()
    assert not memo_file.exists(), "nothing new since the last save: no write"
    memo.put("other", "def")
    memo.save()
    assert _read(memo_file)["entries"] == {"key": "abc", "other": "def"}


def test_a_memo_of_another_generator_version_is_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fingerprint follows the code: after an upgrade, remembered answers are not used."""
    import generator
    from generator.freshness import memo as memo_module

    memo_file = tmp_path / "memo.json"
    memo = ContentMemo(memo_file)
    memo.put("key", "abc")
    memo.save()
    memo_module._code_fingerprint.cache_clear()
    monkeypatch.setattr(generator, "__version__", generator.__version__ + ".post1")
    try:
        assert ContentMemo(memo_file).get("key") == (False, None)
    finally:
        memo_module._code_fingerprint.cache_clear()
