"""Freshness providers and the content memo at their edges: an overlay at exactly the read limit
and one byte over, a digest map that is not a map, an aicr that cannot run or exits non-zero,
profile values that differ only by case, and memo files that are sealed but not usable."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from generator.cacheauth import CacheAuth, Purpose
from generator.errors import InputError
from generator.freshness import (
    MEMO_FORMAT,
    AicrProvider,
    ContentMemo,
    DigestsFileProvider,
    FreshnessResult,
    NativeProvider,
    listed_overlay,
)
from generator.model import Canonicalizer, Freshness
from generator.recipe.canonical import recipe_digest
from tests.freshness.test_freshness import NAME, RECIPE

OVERLAY_LIMIT = 1 << 20
ALL_HEX = "0123456789abcdef" * 4


def _overlays(tmp_path: Path, text: bytes = RECIPE, name: str = NAME) -> Path:
    overlays = tmp_path / "overlays"
    overlays.mkdir(exist_ok=True)
    (overlays / f"{name}.yaml").write_bytes(text)
    return overlays


def _aicr(tmp_path: Path, body: str) -> tuple[Path, Path]:
    """A fake aicr binary running `body` (sh), recording each call in the returned log."""
    log = tmp_path / "calls.txt"
    script = tmp_path / "bin" / "aicr"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f'#!/bin/sh\necho "$@" >> {log}\n{body}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, log


def test_the_pointers_json_form_of_a_result() -> None:
    result = FreshnessResult(Freshness.STALE, "a" * 64, "b" * 64, "native", note="n")
    assert result.as_dict() == {
        "state": "stale",
        "signed": "a" * 64,
        "current": "b" * 64,
        "provider": "native",
    }


@pytest.mark.parametrize(
    ("state", "signed", "current"),
    [
        (Freshness.STALE, "", "b" * 64),
        (Freshness.STALE, "a" * 64, None),
        (Freshness.UNKNOWN, "a" * 64, "b" * 64),
    ],
)
def test_describe_says_stale_with_digests_only_when_both_are_known(
    state: Freshness, signed: str, current: str | None
) -> None:
    assert FreshnessResult(state, signed, current, "p").describe() == str(state)


def test_a_digest_using_every_hex_digit_is_accepted(tmp_path: Path) -> None:
    table = tmp_path / "digests.json"
    table.write_text(json.dumps({"r": {"legacy": ALL_HEX, "v3": ALL_HEX[::-1]}}))
    provider = DigestsFileProvider.load(table)
    assert provider.current("r", None, Canonicalizer.LEGACY) == ALL_HEX
    assert provider.current("r", None, Canonicalizer.V3) == ALL_HEX[::-1]


@pytest.mark.parametrize(
    ("content", "message", "key"),
    [
        (b'{"r": {"v3": "' + b"a" * 64 + b'"}', "digest map", None),
        (b'["r"]', "not a mapping", None),
        (b'{"r": ["' + b"a" * 64 + b'"]}', "entry is not a mapping", "r"),
    ],
    ids=["truncated-json", "a-list", "entry-a-list"],
)
def test_a_digest_map_that_is_not_a_map_is_refused_naming_the_file(
    tmp_path: Path, content: bytes, message: str, key: str | None
) -> None:
    table = tmp_path / "digests.json"
    table.write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        DigestsFileProvider.load(table)
    assert caught.value.location is not None
    assert (caught.value.location.file, caught.value.location.key) == (str(table), key)


def test_only_a_lowercase_json_suffix_selects_strict_json(tmp_path: Path) -> None:
    """`.json` is read as strict JSON; every other name as YAML (which also reads JSON)."""
    yaml_text = f"r: {{v3: {'a' * 64}}}\n"
    as_yaml = tmp_path / "digests.JSON"
    as_yaml.write_text(yaml_text)
    assert DigestsFileProvider.load(as_yaml).current("r", None, Canonicalizer.V3) == "a" * 64
    as_json = tmp_path / "digests.json"
    as_json.write_text(yaml_text)
    with pytest.raises(InputError):
        DigestsFileProvider.load(as_json)


def test_a_missing_overlays_folder_lists_nothing(tmp_path: Path) -> None:
    assert listed_overlay(tmp_path / "absent", NAME) is None
    assert NativeProvider(tmp_path / "absent").current(NAME, None, Canonicalizer.V3) is None


@pytest.mark.parametrize(("extra", "known"), [(0, True), (1, False)], ids=["at-limit", "one-over"])
def test_an_overlay_is_read_up_to_exactly_one_mebibyte(
    tmp_path: Path, extra: int, known: bool
) -> None:
    """Padded with a YAML comment to exactly the limit it is canonicalised (the comment does not
    change the digest); one byte more and the provider declines."""
    padding = OVERLAY_LIMIT - len(RECIPE) - 2 + extra
    text = RECIPE + b"#" + b"x" * padding + b"\n"
    assert len(text) == OVERLAY_LIMIT + extra
    overlays = _overlays(tmp_path, text)
    answer = NativeProvider(overlays).current(NAME, None, Canonicalizer.V3)
    expected = str(recipe_digest(RECIPE, Canonicalizer.V3)) if known else None
    assert answer == expected


@pytest.mark.parametrize("kind", ["recipeResult", "reciperesult", "RECIPERESULT", "RecipeResults"])
def test_an_overlay_whose_kind_is_not_exactly_recipe_result_has_no_current_digest(
    tmp_path: Path, kind: str
) -> None:
    """Only a hydrated `RecipeResult` is digested: a kind in another letter case is another
    document (a recipe source, a typo) and gives no answer, so later providers decide."""
    text = RECIPE.replace(b"kind: RecipeResult", f"kind: {kind}".encode())
    assert text != RECIPE
    overlays = _overlays(tmp_path, text)
    assert NativeProvider(overlays).current(NAME, None, Canonicalizer.V3) is None
    (tmp_path / "exact").mkdir()
    exact = _overlays(tmp_path / "exact")
    assert NativeProvider(exact).current(NAME, None, Canonicalizer.V3) is not None


def test_an_overlay_that_is_not_yaml_has_no_current_digest(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path, b"kind: RecipeResult\n  bad: [\n")
    assert NativeProvider(overlays).current(NAME, None, Canonicalizer.V3) is None


def test_a_remembered_digest_is_used_and_a_malformed_one_is_not(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    key = ContentMemo.key("native-digest", str(Canonicalizer.V3), RECIPE)
    remembered = ContentMemo(None)
    remembered.put(key, "e" * 64)
    assert NativeProvider(overlays, memo=remembered).current(NAME, None, Canonicalizer.V3) == (
        "e" * 64
    )
    malformed = ContentMemo(None)
    malformed.put(key, "not-a-digest")
    real = str(recipe_digest(RECIPE, Canonicalizer.V3))
    assert NativeProvider(overlays, memo=malformed).current(NAME, None, Canonicalizer.V3) == real
    assert malformed.get(key) == (True, real)


def test_a_memo_answer_is_found_again_once_used(tmp_path: Path) -> None:
    memo = ContentMemo(None)
    memo.put("k", "v")
    assert memo.get("k") == (True, "v")
    assert memo.get("k") == (True, "v")
    assert memo.get("other") == (False, None)


def _sealed(path: Path, data: bytes) -> None:
    path.write_bytes(CacheAuth.from_environment().seal(Purpose.FRESHNESS, data))


@pytest.mark.parametrize(
    "doc",
    [
        b"not json",
        b"[1]",
        json.dumps({"format": "other", "fingerprint": None, "entries": {"k": 1}}).encode(),
        json.dumps({"format": MEMO_FORMAT, "fingerprint": "f", "entries": {"k": 1}}).encode(),
        None,
    ],
    ids=["not-json", "a-list", "other-format", "other-code", "entries-a-list"],
)
def test_a_sealed_memo_that_is_not_this_codes_memo_is_ignored(
    tmp_path: Path, doc: bytes | None
) -> None:
    path = tmp_path / "memo.json"
    if doc is None:  # right format and code, but entries not a map
        fingerprint = ContentMemo(None)._fingerprint
        doc = json.dumps({"format": MEMO_FORMAT, "fingerprint": fingerprint, "entries": [1]})
        doc = doc.encode()
    _sealed(path, doc)
    assert ContentMemo(path).get("k") == (False, None)


def test_a_sealed_memo_of_this_code_is_read(tmp_path: Path) -> None:
    """The counterpart of the test above: the same file with the right fields is believed."""
    path = tmp_path / "memo.json"
    fingerprint = ContentMemo(None)._fingerprint
    doc = {"format": MEMO_FORMAT, "fingerprint": fingerprint, "entries": {"k": 1}}
    _sealed(path, json.dumps(doc).encode())
    assert ContentMemo(path).get("k") == (True, 1)


def test_a_memo_that_cannot_be_written_is_written_by_the_next_save(tmp_path: Path) -> None:
    """A failed save keeps the new answers pending and leaves no temporary file behind."""
    path = tmp_path / "memo.json"
    path.mkdir()  # os.replace onto a directory fails
    memo = ContentMemo(path)
    memo.put("k", "v")
    memo.save()
    assert path.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["memo.json"]
    path.rmdir()
    memo.save()
    assert ContentMemo(path).get("k") == (True, "v")


def test_aicr_is_not_run_for_a_recipe_without_an_overlay(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    aicr, log = _aicr(tmp_path, f"echo {'e' * 64}")
    assert AicrProvider(aicr, overlays).current("other-recipe", None, Canonicalizer.V3) is None
    assert not log.exists()


def test_an_aicr_that_cannot_start_gives_no_answer(tmp_path: Path) -> None:
    overlays = _overlays(tmp_path)
    provider = AicrProvider(tmp_path / "no-such-aicr", overlays)
    assert provider.current(NAME, None, Canonicalizer.V3) is None


@pytest.mark.parametrize(
    ("body", "answer"),
    [
        (f"echo {'e' * 64}; exit 1", None),
        ("true", None),
        (f"echo digest: {'e' * 64}", "e" * 64),
        (f"echo {'e' * 64} trailing", None),
    ],
    ids=["non-zero-exit", "no-output", "labelled", "not-last"],
)
def test_aicr_answers_only_with_a_digest_as_its_last_word_and_exit_zero(
    tmp_path: Path, body: str, answer: str | None
) -> None:
    overlays = _overlays(tmp_path)
    aicr, log = _aicr(tmp_path, body)
    assert AicrProvider(aicr, overlays).current(NAME, None, Canonicalizer.V3) == answer
    assert log.exists()


def test_a_profile_suffix_is_matched_after_lowercasing_the_profile(tmp_path: Path) -> None:
    """aicr names a profiled recipe `<overlay>-lower(name)-lower(value)`."""
    overlays = _overlays(tmp_path, name="gb200-gke")
    aicr, log = _aicr(tmp_path, f"echo {'e' * 64}")
    provider = AicrProvider(aicr, overlays)
    assert provider.current("gb200-gke-gpustack-bundle", "gpuStack=Bundle", Canonicalizer.V3) == (
        "e" * 64
    )
    assert "--profile gpuStack=Bundle" in log.read_text()
    assert provider.current("gb200-gke-gpuStack-Bundle", "gpuStack=Bundle", Canonicalizer.V3) is (
        None
    )


def test_a_memo_is_written_again_only_when_an_answer_is_new_or_changed(tmp_path: Path) -> None:
    path = tmp_path / "memo.json"
    first = ContentMemo(path)
    first.put("k", "v")
    first.save()
    assert path.exists()
    again = ContentMemo(path)
    assert again.get("k") == (True, "v")
    again.put("k", "v")  # the same answer: nothing new
    path.unlink()
    again.save()
    assert not path.exists()
    again.put("k", "w")  # a changed answer
    again.save()
    assert ContentMemo(path).get("k") == (True, "w")


def test_a_memo_without_a_file_never_writes(tmp_path: Path) -> None:
    memo = ContentMemo(None)
    memo.put("k", "v")
    memo.save()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("extra", "ok"), [(0, True), (1, False)], ids=["at-limit", "one-over"])
def test_a_digest_map_is_read_up_to_exactly_sixteen_mebibytes(
    tmp_path: Path, extra: int, ok: bool
) -> None:
    doc = json.dumps({"r": {"v3": "a" * 64}}).encode()
    table = tmp_path / "digests.json"
    table.write_bytes(doc + b" " * ((16 << 20) - len(doc) + extra))
    if ok:
        assert DigestsFileProvider.load(table).current("r", None, Canonicalizer.V3) == "a" * 64
    else:
        with pytest.raises(InputError) as caught:
            DigestsFileProvider.load(table)
        assert str(table) in str(caught.value.location)
        # refused by the read cap, before the file is read whole or parsed, naming both sizes
        assert caught.value.expected == f"at most {16 << 20} bytes"
        assert caught.value.found == f"{(16 << 20) + 1} bytes"


def test_an_answer_changed_only_in_letter_case_is_written(tmp_path: Path) -> None:
    path = tmp_path / "memo.json"
    first = ContentMemo(path)
    first.put("k", "abc")
    first.save()
    again = ContentMemo(path)
    assert again.get("k") == (True, "abc")
    again.put("k", "ABC")
    again.save()
    assert ContentMemo(path).get("k") == (True, "ABC")


def test_a_memo_in_a_folder_not_yet_made_is_written_there(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "freshness" / "memo.json"
    memo = ContentMemo(path)
    memo.put("k", "v")
    memo.save()
    assert ContentMemo(path).get("k") == (True, "v")


def test_a_native_provider_keeps_value_semantics_whatever_it_has_answered(tmp_path: Path) -> None:
    """Answers remembered within a build are no part of the provider's value: two providers
    over one folder stay equal, hashable and alike in print after one of them answered."""
    overlays = _overlays(tmp_path)
    asked, fresh = NativeProvider(overlays), NativeProvider(overlays)
    assert asked.current(NAME, None, Canonicalizer.V3) is not None
    assert asked == fresh and hash(asked) == hash(fresh)
    assert repr(asked) == repr(fresh)


def test_a_native_provider_is_its_folder_and_name_not_its_caches(tmp_path: Path) -> None:
    """Two providers over one overlay folder are the same provider whatever their memos hold,
    and a caller cannot hand one a table of precomputed answers (`_memo` is not an argument)."""
    from generator.freshness.memo import ContentMemo
    from generator.freshness.providers import NativeProvider

    plain = NativeProvider(tmp_path)
    assert plain == NativeProvider(tmp_path, memo=ContentMemo(None))
    assert plain != NativeProvider(tmp_path, name="other")
    with pytest.raises(TypeError):
        NativeProvider(tmp_path, _memo={})  # type: ignore[call-arg]
