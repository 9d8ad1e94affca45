"""Trust roots the cache has seen parse: a record vouches for exact bytes under the same
libraries, nothing else, and a vouched root that does not parse still stops a build before
anything is verified (exit 2), never turning into verdicts."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.build import run_build
from generator.cacheauth import CacheAuth, Purpose, failures, reset_failures
from generator.errors import InputError
from generator.verify.trust import load_trust
from generator.verify.trustmemo import MAX_RECORD_BYTES, TrustRecords
from tests.cacheauth.conftest import REPO, options

ROOT = REPO / "recipes" / "trust" / "trusted_root.json"
DIGEST = hashlib.sha256(ROOT.read_bytes()).hexdigest()


def _records(tmp_path: Path) -> TrustRecords:
    return TrustRecords(tmp_path / "trust", CacheAuth.from_environment())


def _honest(records: TrustRecords) -> None:
    records.remember(DIGEST)


def _other_digest(records: TrustRecords) -> None:
    records.remember("0" * 64)


def _flipped_tag(records: TrustRecords) -> None:
    records.remember(DIGEST)
    path = records.root / f"{DIGEST}.parsed"
    data = bytearray(path.read_bytes())
    data[0] ^= 1
    path.write_bytes(bytes(data))


def _other_libraries(records: TrustRecords) -> None:
    records.auth.write_sealed(
        records.root / f"{DIGEST}.parsed", Purpose.TRUST, b"sigstore=0.0.1", DIGEST.encode()
    )


def _another_roots_record_renamed(records: TrustRecords) -> None:
    records.remember("1" * 64)
    os.rename(records.root / f"{'1' * 64}.parsed", records.root / f"{DIGEST}.parsed")


def _link_to_honest(records: TrustRecords) -> None:
    records.remember(DIGEST)
    real = records.root / "elsewhere"
    os.rename(records.root / f"{DIGEST}.parsed", real)
    (records.root / f"{DIGEST}.parsed").symlink_to(real)


def _oversized(records: TrustRecords) -> None:
    records.remember(DIGEST)
    path = records.root / f"{DIGEST}.parsed"
    path.write_bytes(path.read_bytes() + b" " * MAX_RECORD_BYTES)


@pytest.mark.parametrize(
    ("make", "vouches", "counted"),
    [
        (None, False, False),
        (_honest, True, False),
        (_other_digest, False, False),
        (_flipped_tag, False, True),
        (_other_libraries, False, False),
        (_another_roots_record_renamed, False, True),
        (_link_to_honest, False, False),
        (_oversized, False, False),
    ],
    ids=[
        "none",
        "honest",
        "other-digest",
        "flipped-tag",
        "other-libraries",
        "renamed",
        "link",
        "oversized",
    ],
)
def test_a_record_vouches_only_for_the_bytes_and_libraries_it_was_made_for(
    tmp_path: Path,
    make: Callable[[TrustRecords], None] | None,
    vouches: bool,
    counted: bool,
) -> None:
    records = _records(tmp_path)
    records.root.mkdir(parents=True)
    if make is not None:
        make(records)
    reset_failures()
    assert _records(tmp_path).vouches(DIGEST) is vouches
    assert bool(failures()) is counted
    assert not _records(tmp_path).vouches("../" + DIGEST[3:])  # never a path


def test_a_bad_root_fails_at_once_unless_vouched_for_and_then_before_its_first_use(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "root.json"
    bad.write_bytes(b'{"mediaType": "application/vnd.dev.sigstore.trustedroot.v0.2+json"}')
    with pytest.raises(InputError):
        load_trust(root_file=bad, vouched=lambda digest: False)
    trust = load_trust(root_file=bad, vouched=lambda digest: True)  # as an honest record says
    with pytest.raises(InputError):
        trust.parse_now()
    good = load_trust(root_file=ROOT, vouched=lambda digest: digest == DIGEST)
    assert "trusted_root" not in vars(good)  # not parsed yet
    good.parse_now()
    assert good.trusted_root is good.trusted_root


def test_a_build_parses_a_vouched_root_before_it_verifies_and_a_bad_one_stops_it(
    tmp_path: Path,
) -> None:
    """An authentic record for bytes that do not parse (as after a library change the record
    did not see): the build that has bundles to verify must stop with exit 2, before any
    verdict, and keep the previous output; without the parse before verifying, every pointer
    would quietly become an internal verdict."""
    recipes = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", recipes)
    cache, out = tmp_path / "cache", tmp_path / "site"
    run_build(options(recipes, out, cache))
    published = (out / "data" / "index.json").read_bytes()
    root = recipes / "trust" / "trusted_root.json"
    root.write_bytes(b'{"mediaType": "application/vnd.dev.sigstore.trustedroot.v0.2+json"}')
    TrustRecords(cache / "trust", CacheAuth.from_environment()).remember(
        hashlib.sha256(root.read_bytes()).hexdigest()
    )
    with pytest.raises(InputError) as caught:
        run_build(options(recipes, out, cache))
    assert caught.value.message == "trust root cannot be used"
    assert (out / "data" / "index.json").read_bytes() == published


def test_bundle_refs_are_verified_only_after_a_vouched_root_parsed(tmp_path: Path) -> None:
    """A tree without pointers verifies nothing but its `--bundle-refs`: a vouched root that
    does not parse must stop that build too. (The ref's bundle is not in any layout, so without
    the parse before it the ref would quietly get a no-verdict record and the build pass.)"""
    recipes = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", recipes)
    for entry in (recipes / "evidence").iterdir():  # every pointer goes, the allowlist stays
        if entry.is_dir():
            shutil.rmtree(entry)
        elif entry.name != "allowlist.yaml":
            entry.unlink()
    root = recipes / "trust" / "trusted_root.json"
    root.write_bytes(b'{"mediaType": "application/vnd.dev.sigstore.trustedroot.v0.2+json"}')
    cache = tmp_path / "cache"
    TrustRecords(cache / "trust", CacheAuth.from_environment()).remember(
        hashlib.sha256(root.read_bytes()).hexdigest()
    )
    refs = tmp_path / "refs.json"
    refs.write_text(
        '[{"ref": "ghcr.io/example/evidence@sha256:' + "ab" * 32 + '", '
        '"issuer": "https://token.actions.githubusercontent.com", '
        '"identityPattern": "^https://github.com/example/.*$"}]',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        run_build(options(recipes, tmp_path / "site", cache, bundle_refs=refs, data_only=True))
    assert caught.value.message == "trust root cannot be used"


def test_a_record_larger_than_the_bound_is_never_read(tmp_path: Path) -> None:
    """A record of 4 KiB (`MAX_RECORD_BYTES`) is read (and, padded, fails its tag: counted);
    one byte more is not read at all (not counted): the bound is on what is read, at the byte."""
    records = _records(tmp_path)
    records.remember(DIGEST)
    path = records.root / f"{DIGEST}.parsed"
    honest = path.read_bytes()
    for size, read in ((4096, True), (4097, False)):
        path.write_bytes(honest + b" " * (size - len(honest)))
        reset_failures()
        assert not _records(tmp_path).vouches(DIGEST)
        assert bool(failures()) is read, size


def test_a_record_is_read_once_and_its_writer_vouches_for_it(tmp_path: Path) -> None:
    """`load_trust` asks, then the build remembers: the record is not read a second time, and
    the instance that wrote one vouches for it at once."""
    records = _records(tmp_path)
    assert not records.vouches(DIGEST)
    records.remember(DIGEST)
    assert records.vouches(DIGEST)
    path = records.root / f"{DIGEST}.parsed"
    path.write_bytes(b"not read again")
    assert records.vouches(DIGEST)  # answered from what this instance found
    records.remember(DIGEST)
    assert path.read_bytes() == b"not read again"  # nothing rewritten either
    assert not _records(tmp_path).vouches(DIGEST)  # a new build reads it, and refuses it


def test_remember_writes_nothing_for_a_digest_that_is_not_one(tmp_path: Path) -> None:
    records = _records(tmp_path)
    records.remember("../" + DIGEST[3:])
    records.remember(DIGEST.upper())
    assert not records.root.exists()
