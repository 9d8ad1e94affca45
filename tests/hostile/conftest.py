"""Helpers for the hostile-input suite: sandboxed copies of the demo tree, hostile bundles signed
by the demo authority, the real CLI run with a fresh HOME/XDG_CACHE_HOME/TMPDIR, and snapshots
that prove nothing was written outside the allowed folders.

A `Sandbox` is one tmp folder holding `recipes/` (a copy of the demo tree), `cache/`, `home/`,
`tmp/` and the output `site/`. `run()` runs `evidence-dashboard build` there with the sandbox as
the working directory, so a stray relative write lands where `stray_files()` sees it.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from generator.bundle.layout_writer import LayoutWriter
from generator.model import SignerIdentity
from generator.testing.authority import TestAuthority
from generator.testing.bundles import (
    BuiltBundle,
    BundleSpec,
    gzip_deterministic,
    make_recipe,
    oci_manifest,
    referrer_manifest,
    statement_bytes,
    write_to_layout,
)
from generator.testing.demo_content import stable_int
from generator.testing.demo_scenario import parse_scenario
from tests.conftest import TEST_CACHE_KEY

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "recipes"
DEMO_PARTS = ("evidence", "bundles", "overlays", "trust", "demo")
CLI = Path(sys.executable).parent / "evidence-dashboard"
#: Folders other developers edit while this suite runs; new files there are not ours.
SOURCE_FOLDERS = (
    "generator",
    "tests",
    "site_templates",
    "docs",
    "scripts",
    ".git",
    ".venv",
    ".mypy_cache",
    ".ruff_cache",
    "evidence_dashboard.egg-info",
    "build",
)
ATTESTED = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)
HOSTILE_SIGNER = SignerIdentity("https://github.com/login/oauth", "hostile@example.net")


def demo_authority() -> TestAuthority:
    """The demo signing authority, rebuilt from its scenario (same keys as recipes/trust/)."""
    plan = parse_scenario((DEMO / "demo" / "scenario.yaml").read_bytes(), file="scenario.yaml")
    authority = TestAuthority(
        plan.seed,
        name="evidence-dashboard demo",
        epoch=plan.authority_valid_from,
        shard_offset=200_000_000 + stable_int(plan.seed, "shard") % 10_000_000,
    )
    authority.add_filler_entries(3)
    return authority


def demo_repository() -> str:
    plan = parse_scenario((DEMO / "demo" / "scenario.yaml").read_bytes(), file="scenario.yaml")
    return plan.repository


# --------------------------------------------------------------------------- bundles


def hostile_spec(
    accelerator: str, *, signer: SignerIdentity = HOSTILE_SIGNER, **fields: Any
) -> BundleSpec:
    """A small signed-bundle spec for a new recipe `<accelerator>-eks-ubuntu-training`."""
    recipe = fields.pop("recipe", None) or make_recipe(accelerator=accelerator, nccl_floors={})
    fields.setdefault("attested_at", ATTESTED)
    return BundleSpec(recipe=recipe, signer=signer, repository=demo_repository(), **fields)


def tar_of(members: Sequence[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    """A tar of hand-made members (any type, any name), in the given order."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def member(
    name: str, data: bytes = b"", *, kind: bytes = tarfile.REGTYPE, link: str = ""
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o644
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        return info, data
    return info, None


def files_members(built: BuiltBundle) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """The bundle's own files as tar members (so a repacked layer still holds a whole bundle)."""
    return [member(path, data) for path, data in sorted(built.files.items())]


def repack(
    built: BuiltBundle, layer: bytes, authority: TestAuthority, *, tar_digest: str | None = None
) -> BuiltBundle:
    """`built` with its layer replaced by `layer` (any bytes), its manifest and pointer updated
    and the statement re-signed over the new manifest: only the layer's content is hostile."""
    manifest = oci_manifest(
        layer,
        tar_digest or "sha256:" + "0" * 64,  # type: ignore[arg-type]
        aicr_version=built.spec.aicr_version,
        recipe_name=built.recipe_name,
    )
    digest = "sha256:" + hashlib.sha256(manifest).hexdigest()
    ptype = built.spec.predicate_type.value
    signer = built.pointer.signer
    assert signer is not None
    statement = statement_bytes(
        built.oci_ref, digest.removeprefix("sha256:"), ptype, dict(built.predicate)
    )
    sig = authority.sign_dsse(statement, signer=signer, signed_at=built.spec.attested_at)
    index = int(json.loads(sig)["verificationMaterial"]["tlogEntries"][0]["logIndex"])
    return dataclasses.replace(
        built,
        layer=layer,
        manifest=manifest,
        digest=digest,  # type: ignore[arg-type]
        statement=statement,
        sigstore_bundle=sig,
        referrer_manifest=referrer_manifest(sig, manifest, ptype),
        pointer=dataclasses.replace(built.pointer, digest=digest, rekor_log_index=index),
    )


def gzip_fast(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


# --------------------------------------------------------------------------- sandbox


def tree_snapshot(root: Path, *, skip: Sequence[Path] = ()) -> dict[str, tuple[str, int]]:
    """{relative path: (kind, size)} of every entry under `root`, links not followed."""
    skipped = {p.resolve() for p in skip}
    found: dict[str, tuple[str, int]] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        dirs[:] = [
            d for d in dirs if (here / d).resolve() not in skipped or (here / d).is_symlink()
        ]
        for name in [*dirs, *files]:
            path = here / name
            info = path.lstat()
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
            found[path.relative_to(root).as_posix()] = (kind, 0 if kind == "dir" else info.st_size)
    return found


@dataclasses.dataclass
class Sandbox:
    """One hostile build's folders, all under pytest's tmp_path."""

    root: Path

    @property
    def recipes(self) -> Path:
        return self.root / "recipes"

    @property
    def evidence(self) -> Path:
        return self.recipes / "evidence"

    @property
    def layout(self) -> Path:
        return self.recipes / "bundles"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def out(self) -> Path:
        return self.root / "site"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def inputs(self) -> Path:
        """Files the test itself places outside the tree (symlink targets, big blobs)."""
        return self.root / "inputs"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("SOURCE_DATE_EPOCH", "SITE_URL", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
        }
        env.update(
            HOME=str(self.home),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            TMPDIR=str(self.tmp),
            PYTHONDONTWRITEBYTECODE="1",
            # the cache key comes from the environment, as in CI: HOME stays empty
            EVIDENCE_DASHBOARD_CACHE_KEY=TEST_CACHE_KEY,
        )
        return env

    def build_args(self, *extra: str, offline: bool = True) -> list[str]:
        args = [
            str(CLI),
            "build",
            "--recipes",
            str(self.recipes),
            "--trust-root",
            str(self.recipes / "trust" / "trusted_root.json"),
            "--cache",
            str(self.cache),
            "--out",
            str(self.out),
            "--quiet",
            "--format",
            "json",
        ]
        if offline:
            args += ["--offline", "--oci-layout", str(self.layout)]
        return [*args, *extra]

    def run(
        self, *extra: str, offline: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.build_args(*extra, offline=offline),
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def add_pointer(self, relative: str, data: bytes | str) -> Path:
        path = self.recipes / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def add_bundle(self, built: BuiltBundle, *, pointer: bool = True) -> str:
        """Store the bundle in the copied layout and commit its pointer; returns the path."""
        writer = LayoutWriter(self.layout)
        write_to_layout(built, writer)
        writer.close()
        if pointer:
            self.add_pointer(built.pointer_path, built.pointer_yaml)
        return built.pointer_path

    def data(self, name: str) -> Any:
        return json.loads((self.out / "data" / name).read_text(encoding="utf-8"))

    def pointers(self) -> dict[str, dict[str, Any]]:
        return {p["path"]: p for p in self.data("pointers.json")["pointers"]}

    def stray_files(self) -> list[str]:
        """Entries of the sandbox outside recipes/, cache/, site/ (and its lock file .site.lock),
        tmp/ and the test's own inputs/ (HOME must stay empty)."""
        allowed = {"recipes", "cache", "site", ".site.lock", "tmp", "home", "inputs"}
        stray = [p.name for p in self.root.iterdir() if p.name not in allowed]
        stray += [f"home/{k}" for k in tree_snapshot(self.home)]
        return sorted(stray)


def new_sandbox(root: Path) -> Sandbox:
    """A sandbox whose recipes/ is a fresh copy of the demo tree."""
    box = Sandbox(root)
    for part in DEMO_PARTS:
        shutil.copytree(DEMO / part, box.recipes / part, symlinks=True)
    for folder in (box.home, box.tmp, box.inputs):
        folder.mkdir(parents=True, exist_ok=True)
    return box


def recipe_states(index: Mapping[str, Any]) -> dict[str, Any]:
    """{recipe: (rollup, phase rollups, ((check, consensus), ...))} from an index document."""
    states: dict[str, Any] = {}
    for group in index["groups"]:
        for dashboard in group["dashboards"]:
            for tab in dashboard["tabs"]:
                combined = tab["combined"]
                states[tab["recipe"]] = (
                    tab["rollup"],
                    tuple(sorted(combined["phaseRollup"].items())),
                    tuple(
                        sorted((t["phase"], t["name"], t["consensus"]) for t in combined["tests"])
                    ),
                )
    return states


def repo_snapshot() -> set[str]:
    """Top-level-filtered listing of the repository (without the folders others edit)."""
    names: set[str] = set()
    for entry in ROOT.iterdir():
        if entry.name in SOURCE_FOLDERS:
            continue
        names.add(entry.name)
        if entry.is_dir() and not entry.is_symlink():
            names.update(f"{entry.name}/{k}" for k in tree_snapshot(entry))
    return names


@pytest.fixture(scope="session")
def demo_states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The per-recipe states of the untouched demo tree (one in-process evaluation)."""
    from generator.build import BuildOptions, evaluate

    tmp = tmp_path_factory.mktemp("demo-baseline")
    options = BuildOptions.flat(
        recipes=DEMO,
        out=tmp / "site",
        trust_root=DEMO / "trust" / "trusted_root.json",
        oci_layouts=(DEMO / "bundles",),
        offline=True,
        cache=tmp / "cache",
        quiet=True,
    )
    states = recipe_states(evaluate(options.evaluation).documents["index"])
    assert len(states) >= 5, "the demo tree should have several recipes"
    return states


@pytest.fixture(scope="session")
def authority() -> TestAuthority:
    return demo_authority()


@pytest.fixture()
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    yield new_sandbox(tmp_path)


def assert_demo_unchanged(
    box: Sandbox, demo_states: Mapping[str, Any], affected: Sequence[str] = ()
) -> None:
    """Every demo recipe is still in index.json with the state it has in the untouched tree."""
    states = recipe_states(box.data("index.json"))
    for recipe, state in demo_states.items():
        if recipe in affected:
            continue
        assert recipe in states, f"demo recipe {recipe} vanished from index.json"
        assert states[recipe] == state, f"demo recipe {recipe} changed state"


def assert_rejected(
    record: Mapping[str, Any],
    *,
    exit_code: int = 2,
    klass: str | None = None,
    rule: str | None = None,
    words: Sequence[str] = (),
) -> str:
    """The pointer record is a rejection with this class/rule and a message naming `words`."""
    verify = record["verify"]
    assert verify["exit"] == exit_code, verify
    cause = verify["failureCause"]
    assert cause is not None, verify
    if klass is not None:
        assert cause["class"] == klass, cause
    if rule is not None:
        assert verify["rule"] == rule, verify
    detail = str(cause["detail"])
    assert len(detail) > 10, cause
    for word in words:
        assert word.lower() in detail.lower(), (word, detail)
    return detail


def with_ctrf(built: BuiltBundle, phase: str, ctrf: bytes, authority: TestAuthority) -> BuiltBundle:
    """`built` whose `ctrf/<phase>.json` is `ctrf`, with manifest, predicate and signature all
    consistent: a *valid* bundle carrying arbitrary CTRF bytes (e.g. compact JSON)."""
    from generator.testing.bundles import layer_tar, manifest_json

    files = {k: v for k, v in built.files.items() if k != "statement.intoto.json"}
    files[f"ctrf/{phase}.json"] = ctrf
    files["manifest.json"] = manifest_json(files)
    predicate = json.loads(json.dumps(dict(built.predicate)))
    predicate["phases"][phase]["ctrfDigest"] = "sha256:" + hashlib.sha256(ctrf).hexdigest()
    predicate["manifest"] = {
        "digest": "sha256:" + hashlib.sha256(files["manifest.json"]).hexdigest(),
        "fileCount": len(json.loads(files["manifest.json"])["files"]),
    }
    files["statement.intoto.json"] = statement_bytes(
        f"recipe:{built.recipe_name}",
        built.recipe_digest,
        built.spec.predicate_type.value,
        predicate,
    )
    tar = layer_tar(files)
    updated = dataclasses.replace(built, files=files, predicate=predicate)
    return repack(
        updated,
        gzip_deterministic(tar),
        authority,
        tar_digest="sha256:" + hashlib.sha256(tar).hexdigest(),
    )


def compact_ctrf(phase: str, names: Sequence[str], status: str = "passed") -> bytes:
    """A minimal CTRF report in compact JSON (many tests in few bytes)."""
    tests = [{"name": n, "status": status, "duration": 1, "suite": [phase]} for n in names]
    report = {
        "reportFormat": "CTRF",
        "specVersion": "0.0.1",
        "timestamp": "2026-11-01T12:00:00Z",
        "generatedBy": "aicr",
        "results": {
            "tool": {"name": "aicr", "version": "v0.14.2"},
            "summary": {
                "tests": len(tests),
                "passed": len(tests),
                "failed": 0,
                "skipped": 0,
                "pending": 0,
                "other": 0,
                "start": 0,
                "stop": 1,
            },
            "tests": tests,
        },
    }
    return json.dumps(report, separators=(",", ":")).encode()
