"""One evidence tree full of hostile files and bundles, built once with the real CLI.

Every bad item sits next to the untouched demo tree: the build must exit 0, keep every demo
recipe in the state it has without the bad items, report each bad item in `data/pointers.json`
(and on the rejected page) with its rule or failure class and a message that says what is wrong,
and write nothing outside `--out`, `--cache`, the staging folder and TMPDIR.
"""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.model import Phase
from generator.site import escape
from generator.testing.authority import TestAuthority
from generator.testing.bundles import TestSpec, build_bundle, make_recipe
from tests.hostile.conftest import (
    HOSTILE_SIGNER,
    Sandbox,
    assert_demo_unchanged,
    assert_rejected,
    compact_ctrf,
    files_members,
    gzip_fast,
    hostile_spec,
    member,
    new_sandbox,
    repack,
    repo_snapshot,
    tar_of,
    tree_snapshot,
    with_ctrf,
)

pytestmark = pytest.mark.slow
SLUG = str(HOSTILE_SIGNER.slug)
DEMO_POINTER = (
    "evidence/h200-k0s-ubuntu-training/01b371adbfaf2b2ccfd905f302fab231/"
    "sha256-bc9b28d8b90927559a89333340b5a7dcf2322e9c73a18cdf1b1f79c607ce74ec.yaml"
)
FAKE_NAME = "sha256-" + "ab" * 32 + ".yaml"


def _bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return ("\n".join(lines) + "\n").encode()


def _pointer_text(box: Sandbox) -> bytes:
    return (box.recipes / DEMO_POINTER).read_bytes()


# (name, relative path, bytes builder, rule, words in the message)
YAML_CASES: list[tuple[str, str, Callable[[Sandbox], bytes], str, tuple[str, ...]]] = [
    (
        "yaml-bomb",
        f"evidence/hostile-yaml/{SLUG}/bomb.yaml",
        lambda _b: _bomb(),
        "yaml",
        ("too many",),
    ),
    (
        "deep-nesting",
        f"evidence/hostile-yaml/{SLUG}/deep.yaml",
        lambda _b: b"[" * 5000 + b"]" * 5000 + b"\n",
        "yaml",
        ("nesting",),
    ),
    (
        "duplicate-keys",
        f"evidence/hostile-yaml/{SLUG}/dup.yaml",
        lambda b: _pointer_text(b) + b"recipe: other\n",
        "yaml",
        ("duplicate",),
    ),
    (
        "invalid-utf8",
        f"evidence/hostile-yaml/{SLUG}/utf8.yaml",
        lambda b: _pointer_text(b).replace(b"recipe: ", b"recipe: \xff\xfe"),
        "yaml",
        ("utf-8",),
    ),
    (
        "nul-byte",
        f"evidence/hostile-yaml/{SLUG}/nul.yaml",
        lambda b: _pointer_text(b) + b"\x00",
        "yaml",
        ("nul",),
    ),
    (
        "oversize",
        f"evidence/hostile-yaml/{SLUG}/big.yaml",
        lambda _b: b"# " + b"x" * (1024 * 1024) + b"\n",
        "oversize",
        ("larger",),
    ),
    (
        "recipe-traversal",
        f"evidence/hostile-yaml/{SLUG}/{FAKE_NAME}",
        lambda b: _pointer_text(b).replace(
            b"recipe: h200-k0s-ubuntu-training", b"recipe: ../../../outside"
        ),
        "recipe-name",
        ("path segment",),
    ),
    (
        "long-recipe",
        f"evidence/{'r' * 255}/{SLUG}/{FAKE_NAME}",
        lambda b: _pointer_text(b).replace(
            b"recipe: h200-k0s-ubuntu-training", b"recipe: " + b"r" * 255
        ),
        "recipe-name",
        ("path segment",),
    ),
    (
        "xss-source-folder",
        "evidence/h200-k0s-ubuntu-training/<img src=x onerror=alert(1)>/"
        "sha256-bc9b28d8b90927559a89333340b5a7dcf2322e9c73a18cdf1b1f79c607ce74ec.yaml",
        _pointer_text,
        "source-folder",
        ("squat",),
    ),
    (
        "xss-flat-name",
        'evidence/"><svg onload=alert(1)>.yaml',
        lambda b: _pointer_text(b),
        "flat-name",
        ("named",),
    ),
]


def _tar_case(
    authority: TestAuthority,
    recipe: str,
    extra: list[tuple[tarfile.TarInfo, bytes | None]],
    first: bool = False,
) -> Any:
    honest = build_bundle(
        hostile_spec(recipe, tests={Phase.DEPLOYMENT: [TestSpec("ok")]}), authority
    )
    members = files_members(honest)
    members = [*extra, *members] if first else [*members, *extra]
    return repack(honest, gzip_fast(tar_of(members)), authority)


def _bundle_cases(box: Sandbox, authority: TestAuthority) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Store every hostile bundle; returns {case: (pointer path, words in the failure)}."""
    cases: dict[str, tuple[Any, tuple[str, ...]]] = {
        "tar-traversal": (_tar_case(authority, "t1", [member("../../escape.txt", b"x")]), ("..",)),
        "tar-absolute": (_tar_case(authority, "t2", [member("/etc/evil", b"x")]), ("absolute",)),
        "tar-symlink": (
            _tar_case(authority, "t3", [member("link", kind=tarfile.SYMTYPE, link="/etc/passwd")]),
            ("link",),
        ),
        "tar-hardlink": (
            _tar_case(authority, "t4", [member("hard", kind=tarfile.LNKTYPE, link="recipe.yaml")]),
            ("link",),
        ),
        "tar-device": (
            _tar_case(authority, "t5", [member("dev", kind=tarfile.CHRTYPE)]),
            ("device",),
        ),
        "tar-fifo": (
            _tar_case(authority, "t6", [member("fifo", kind=tarfile.FIFOTYPE)]),
            ("fifo",),
        ),
        "gzip-bomb": (
            _tar_case(authority, "t7", [member("zeros.bin", b"\0" * (24 << 20))], first=True),
            ("ratio",),
        ),
    }
    # a manifest listing 10,000 files (each present in the layer)
    honest = build_bundle(hostile_spec("t8", tests={Phase.DEPLOYMENT: [TestSpec("ok")]}), authority)
    many = [member(f"extra/f{i:05d}.txt", b"") for i in range(10_000)]
    cases["manifest-10000-files"] = (
        repack(honest, gzip_fast(tar_of([*files_members(honest), *many])), authority),
        ("10000",),
    )
    # a CTRF report with 100,000 tests, as aicr writes it (indented: over the 10 MiB file cap)
    names = [f"check-{i:06d}" for i in range(100_000)]
    wide = build_bundle(
        hostile_spec("t9", tests={Phase.CONFORMANCE: [TestSpec(n) for n in names]}), authority
    )
    cases["ctrf-100000-indented"] = (wide, ("ctrf",))
    # ... and compact (under the file cap, so the CTRF parser's test cap must catch it)
    small = build_bundle(
        hostile_spec("t10", tests={Phase.CONFORMANCE: [TestSpec("seed")]}), authority
    )
    cases["ctrf-100000-compact"] = (
        with_ctrf(small, "conformance", compact_ctrf("conformance", names), authority),
        ("too many tests",),
    )
    # numbers JSON cannot carry (Python's json takes them; `int(nan)` used to crash the build)
    odd = build_bundle(
        hostile_spec("t12", tests={Phase.CONFORMANCE: [TestSpec("seed")]}), authority
    )
    cases["ctrf-nan"] = (
        with_ctrf(
            odd,
            "conformance",
            (
                b'{"results": {"tool": {"name": "x"}, "summary": {"tests": NaN, "passed": 1e400},'
                b' "tests": [{"name": "seed", "status": "passed", "duration": Infinity}]}}'
            ),
            authority,
        ),
        ("ctrf/conformance.json", "not valid JSON"),
    )
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for name, (built, words) in cases.items():
        out[name] = (box.add_bundle(built), words)
    # a pointer whose bundle is gigantic: a 100 MiB (sparse) layer blob the manifest names
    giant_layer = box.inputs / "giant.blob"
    with giant_layer.open("wb") as handle:
        handle.truncate(100 << 20)
    giant_digest = _sha256_file(giant_layer)
    blob = box.layout / "blobs" / "sha256" / giant_digest
    os.replace(giant_layer, blob)
    honest = build_bundle(
        hostile_spec("t11", tests={Phase.DEPLOYMENT: [TestSpec("ok")]}), authority
    )
    manifest = json.loads(honest.manifest)
    manifest["layers"][0].update(digest="sha256:" + giant_digest, size=100 << 20)
    giant = repack_manifest(honest, json.dumps(manifest, separators=(",", ":")).encode(), authority)
    out["gigantic-layer"] = (box.add_bundle(giant), ("compressed_layer",))
    return out


def repack_manifest(built: Any, manifest: bytes, authority: TestAuthority) -> Any:
    """Re-sign `built` over an exact manifest (for a manifest naming a blob we did not pack)."""
    import dataclasses
    import hashlib

    from generator.testing.bundles import referrer_manifest, statement_bytes

    digest = "sha256:" + hashlib.sha256(manifest).hexdigest()
    ptype = built.spec.predicate_type.value
    statement = statement_bytes(
        built.oci_ref, digest.removeprefix("sha256:"), ptype, dict(built.predicate)
    )
    sig = authority.sign_dsse(
        statement, signer=built.pointer.signer, signed_at=built.spec.attested_at
    )
    index = int(json.loads(sig)["verificationMaterial"]["tlogEntries"][0]["logIndex"])
    return dataclasses.replace(
        built,
        manifest=manifest,
        digest=digest,
        statement=statement,
        sigstore_bundle=sig,
        referrer_manifest=referrer_manifest(sig, manifest, ptype),
        pointer=dataclasses.replace(built.pointer, digest=digest, rekor_log_index=index),
    )


def _sha256_file(path: Path) -> str:
    import hashlib

    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


class Built:
    """The hostile tree after one CLI build."""

    def __init__(
        self,
        box: Sandbox,
        result: Any,
        yaml_paths: dict[str, str],
        bundles: dict[str, tuple[str, tuple[str, ...]]],
        special: dict[str, str],
        before: dict[str, Any],
        repo_before: set[str],
    ) -> None:
        self.box = box
        self.result = result
        self.yaml_paths = yaml_paths
        self.bundles = bundles
        self.special = special
        self.before = before
        self.repo_before = repo_before


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, authority: TestAuthority) -> Built:
    box = new_sandbox(tmp_path_factory.mktemp("hostile-tree"))
    yaml_paths: dict[str, str] = {}
    for name, relative, make, _rule, _words in YAML_CASES:
        box.add_pointer(relative, make(box))
        yaml_paths[name] = relative
    special: dict[str, str] = {}
    # a FIFO where a pointer should be (must not block the build)
    fifo = box.evidence / "hostile-special" / SLUG / "fifo.yaml"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    special["fifo"] = f"evidence/hostile-special/{SLUG}/fifo.yaml"
    # a symlink to a file outside the tree, and a symlinked recipe folder
    secret = box.inputs / "outside-secret.yaml"
    secret.write_bytes(_pointer_text(box))
    (box.evidence / "hostile-special" / SLUG / "link.yaml").symlink_to(secret)
    special["file-symlink"] = f"evidence/hostile-special/{SLUG}/link.yaml"
    (box.evidence / "hostile-linkdir").symlink_to(box.evidence / "h200-k0s-ubuntu-training")
    special["dir-symlink"] = "evidence/hostile-linkdir"
    bundles = _bundle_cases(box, authority)
    before = tree_snapshot(box.recipes)
    repo_before = repo_snapshot()
    result = box.run(timeout=300)
    return Built(box, result, yaml_paths, bundles, special, before, repo_before)


def test_build_finishes_and_demo_recipes_are_unaffected(
    built: Built, demo_states: dict[str, Any]
) -> None:
    assert built.result.returncode == 0, built.result.stdout + built.result.stderr
    summary = json.loads(built.result.stdout)
    assert summary["exit"] == 0
    assert_demo_unchanged(built.box, demo_states)
    pointers = built.box.pointers()
    for path in [
        *built.yaml_paths.values(),
        *built.special.values(),
        *(p for p, _w in built.bundles.values()),
    ]:
        assert path in pointers, f"{path} is not reported in pointers.json"


@pytest.mark.parametrize(
    ("name", "rule", "words"),
    [(c[0], c[3], c[4]) for c in YAML_CASES],
    ids=[c[0] for c in YAML_CASES],
)
def test_bad_pointer_file_is_a_schema_rejection(
    built: Built, name: str, rule: str, words: tuple[str, ...]
) -> None:
    record = built.box.pointers()[built.yaml_paths[name]]
    assert_rejected(record, klass="schema", rule=rule, words=words)
    assert record["bundle"] is None


@pytest.mark.parametrize(
    ("name", "rule"),
    [("fifo", "not-regular"), ("file-symlink", "symlink"), ("dir-symlink", "symlink")],
)
def test_special_files_are_refused_not_followed(built: Built, name: str, rule: str) -> None:
    record = built.box.pointers()[built.special[name]]
    assert_rejected(record, klass="schema", rule=rule)


@pytest.mark.parametrize(
    "name",
    [
        "tar-traversal",
        "tar-absolute",
        "tar-symlink",
        "tar-hardlink",
        "tar-device",
        "tar-fifo",
        "gzip-bomb",
        "manifest-10000-files",
        "ctrf-100000-indented",
        "ctrf-100000-compact",
        "ctrf-nan",
        "gigantic-layer",
    ],
)
def test_hostile_bundle_is_rejected_with_a_reason(built: Built, name: str) -> None:
    path, words = built.bundles[name]
    record = built.box.pointers()[path]
    assert_rejected(record, klass="integrity", words=words)


def test_nothing_escapes_the_tar_or_the_tree(built: Built) -> None:
    box = built.box
    for name in ("escape.txt", "evil", "zeros.bin", "link", "hard"):
        hits = list(box.root.rglob(name))
        assert not hits, hits
    # the tree itself is untouched, and nothing was written outside the allowed folders
    assert tree_snapshot(box.recipes) == built.before
    assert box.stray_files() == []
    assert not list(box.root.glob(".evidence-build-*")), "staging folder left behind"
    new_in_repo = repo_snapshot() - built.repo_before
    assert not new_in_repo, new_in_repo


def test_every_rejection_is_on_the_rejected_page(built: Built) -> None:
    page = (built.box.out / "rejected" / "index.html").read_text(encoding="utf-8")
    pointers = built.box.pointers()
    paths = [
        *built.yaml_paths.values(),
        *built.special.values(),
        *(p for p, _w in built.bundles.values()),
    ]
    for path in paths:
        shown = pointers[path]["path"]
        assert str(escape.html(shown)) in page or str(escape.md(shown)) in page, shown
    assert "<img src=x onerror" not in page
    assert "<svg onload" not in page


def test_cache_holds_only_matching_blobs(built: Built) -> None:
    blobs = built.box.cache / "bundles" / "blobs" / "sha256"
    for blob in blobs.iterdir() if blobs.is_dir() else ():
        if blob.name.startswith("."):
            continue
        assert _sha256_file(blob) == blob.name, blob


def test_source_folder_is_never_turned_into_a_page(built: Built) -> None:
    names = [p.name for p in built.box.out.rglob("*")]
    assert not [n for n in names if "onerror" in n or "onload" in n or n.startswith("..")]
    assert not (built.box.out / "recipes" / ("r" * 255)).exists()
    _ = make_recipe  # the factory's recipe helper is part of this suite's vocabulary
