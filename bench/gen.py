"""Synthetic signed evidence trees for the benchmark: R recipes x S signers x B builds.

`generate_tree(shape, out)` writes, under the recipes folder `out`, what a real aicr checkout
plus a mirror would hold: `evidence/allowlist.yaml` and one pointer per attestation,
`bundles/` (one OCI image layout with every bundle and its Sigstore referrer),
`trust/trusted_root.json` (the project's test authority) and `overlays/` (current recipes).

The bundles differ the way real ones do, so no cache keyed on content can hide a real cost:
each recipe has its own criteria, profile, component versions and NCCL floors; each run its
own cluster, aicr version, predicate type, dates, certificate, log entry and CTRF numbers.
Some runs record failed checks (exit 1) and a few are tampered after signing (rejected), as
in a real tree. Everything is derived from the shape's seed, so a shape always gives the same
tree; signing is spread over worker processes (each with its own log shard, so log indices
never collide) because one process signs only a few hundred bundles per second.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import product
from pathlib import Path
from typing import Any

from generator.bundle.layout_writer import LayoutWriter
from generator.model import Phase, PredicateType, SignerIdentity
from generator.testing import yamlemit
from generator.testing.authority import TestAuthority
from generator.testing.bundles import (
    BuiltBundle,
    BundleSpec,
    build_bundle,
    recipe_yaml_and_digest,
    tamper_modify_file,
    write_to_layout,
)
from generator.testing.demo_content import (
    cluster_for,
    criteria_match,
    fingerprint_for,
    policy_identity,
    recipe_document,
    snapshot_for,
    stable_hex,
    stable_int,
    tests_for,
)
from generator.testing.demo_scenario import Measured, Outcome, RecipeDecl, RunDecl

GENERATOR_VERSION = "bench-tree/v1"
"""Bumped whenever the generated content changes, so cached trees are rebuilt."""
STAMP_FILE = "bench-tree.json"
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
REPOSITORY = "ghcr.io/bench-evidence/aicr-evidence"
SHARD_BASE = 300_000_000
SHARD_STRIDE = 10_000_000

_ACCELERATORS = ("h100", "h200", "gb200", "gb300", "vr200")
_SERVICES = ("eks", "gke", "aks", "oke", "rke2", "k0s")
_OSES = ("ubuntu", "rhel")
_WORKLOADS = (
    ("training", "kubeflow"),
    ("training", "slurm"),
    ("training", None),
    ("inference", "dynamo"),
    ("inference", None),
)
_PROFILES: tuple[tuple[str, str] | None, ...] = (
    None,
    ("gpuStack", "bundle-installer"),
    ("gpuStack", "vendor-managed"),
    ("gpuStack", "oci-managed"),
)
_AICR_VERSIONS = ("v0.12.1", "v0.13.0", "v0.14.0", "v0.14.2", "v0.14.3")
_ORGS = (
    "acme-cloud",
    "nimbus-ai",
    "gpulab-partner",
    "orbit-compute",
    "helix-labs",
    "tessera-hpc",
    "kestrel-gpu",
    "lumen-infra",
    "quarry-ai",
    "vector-dc",
)
_TRAINING_CHECKS = {
    Phase.DEPLOYMENT: (
        "operator-health",
        "expected-resources",
        "gpu-operator-version",
        "check-nvidia-smi",
    ),
    Phase.CONFORMANCE: (
        "dra-support",
        "gang-scheduling",
        "accelerator-metrics",
        "secure-accelerator-access",
    ),
}
_INFERENCE_CHECKS = {
    Phase.DEPLOYMENT: ("operator-health", "expected-resources", "gpu-operator-version"),
    Phase.CONFORMANCE: (
        "inference-gateway",
        "ai-service-metrics",
        "pod-autoscaling",
        "accelerator-metrics",
    ),
}


@dataclass(frozen=True)
class TreeShape:
    """How big a tree is and how it is drawn: `recipes` x `signers` x `builds` attestations.

    Every `fail_every`-th run records a failed check (exit 1); every `reject_every`-th run is
    tampered after signing (a CTRF file no longer matches the manifest: rejected, integrity).
    """

    recipes: int
    signers: int
    builds: int
    seed: str = "evidence-dashboard-bench-1"
    fail_every: int = 7
    reject_every: int = 97

    def __post_init__(self) -> None:
        if self.recipes < 1 or self.signers < 1 or self.builds < 1:
            raise ValueError("recipes, signers and builds must each be at least 1")
        if self.recipes > max_recipes():
            raise ValueError(f"at most {max_recipes()} distinct recipes can be drawn")
        if self.signers > len(_ORGS) * 2:
            raise ValueError(f"at most {len(_ORGS) * 2} signers")

    @property
    def attestations(self) -> int:
        return self.recipes * self.signers * self.builds

    def key(self) -> str:
        """A short digest of the shape and generator version (the cached tree's folder name)."""
        doc = json.dumps({"v": GENERATOR_VERSION, "shape": self.as_dict()}, sort_keys=True)
        return hashlib.sha256(doc.encode()).hexdigest()[:12]

    def as_dict(self) -> dict[str, Any]:
        return {
            "recipes": self.recipes,
            "signers": self.signers,
            "builds": self.builds,
            "seed": self.seed,
            "failEvery": self.fail_every,
            "rejectEvery": self.reject_every,
        }


@dataclass(frozen=True)
class TreeInfo:
    """What `generate_tree` wrote: the paths a build needs and the counts it should find."""

    root: Path
    shape: TreeShape
    pointers: int
    rejected: int
    failing: int
    reused: bool

    @property
    def layout(self) -> Path:
        return self.root / "bundles"

    @property
    def trust_root(self) -> Path:
        return self.root / "trust" / "trusted_root.json"


@dataclass(frozen=True)
class _Signer:
    key: str
    identity: SignerIdentity
    listing: str | None
    """`first-party`, `community`, `partner`, or None for an unlisted signer."""
    pattern: str | None


@dataclass(frozen=True)
class _Job:
    """One attestation to build: indices into the shape."""

    recipe: int
    signer: int
    build: int
    ordinal: int


# --------------------------------------------------------------------------- the drawing


def max_recipes() -> int:
    """How many distinct recipes the criteria space holds."""
    return len(_ACCELERATORS) * len(_SERVICES) * len(_OSES) * len(_WORKLOADS) * len(_PROFILES)


def recipe_decls(shape: TreeShape) -> list[RecipeDecl]:
    """`shape.recipes` distinct recipes, drawn deterministically from the criteria space."""
    space = list(product(_ACCELERATORS, _SERVICES, _OSES, _WORKLOADS, _PROFILES))
    space.sort(key=lambda item: stable_hex(shape.seed, "recipe", repr(item)))
    decls = []
    for accelerator, service, os_kind, (intent, platform), profile in space[: shape.recipes]:
        criteria = {"service": service, "accelerator": accelerator, "os": os_kind, "intent": intent}
        if platform:
            criteria["platform"] = platform
        ident = repr((accelerator, service, os_kind, intent, platform, profile))
        minor = stable_int(shape.seed, "gpu-operator", ident) % 11
        components = [("gpu-operator", f"v25.{minor}.{stable_int(shape.seed, 'p', ident) % 3}")]
        if service in ("eks", "aks", "oke"):
            components.append(("network-operator", f"v25.{1 + minor % 4}.0"))
        if platform == "kubeflow":
            components.append(
                ("kubeflow-trainer", f"v2.0.{stable_int(shape.seed, 'kf', ident) % 4}")
            )
        elif platform == "slurm":
            components.append(("slinky-slurm-operator", "v0.3.0"))
        elif platform == "dynamo":
            components.append(("dynamo-platform", f"v0.{4 + minor % 2}.1"))
        floors: dict[str, float] = {}
        if intent == "training":
            if accelerator.startswith(("gb", "vr")):
                floors["nccl-all-reduce-bw-nvls"] = float(250 + 50 * (minor % 12))
            else:
                floors["nccl-all-reduce-bw-net"] = float(300 + 10 * (minor % 5))
        name = _recipe_name(criteria, profile)
        moved = stable_int(shape.seed, "moved", ident) % 5 == 0
        current = None
        if moved:
            current = tuple((n, v + "-1") if n == "gpu-operator" else (n, v) for n, v in components)
        decls.append(
            RecipeDecl(
                name=name,
                criteria=criteria,
                profile=profile,
                components=tuple(components),
                current_components=current,
                floors=floors,
                overlay=stable_int(shape.seed, "overlay", ident) % 10 != 0,
            )
        )
    return decls


def _recipe_name(criteria: Mapping[str, str], profile: tuple[str, str] | None) -> str:
    parts = [criteria.get(k, "") for k in ("accelerator", "service", "os", "intent", "platform")]
    name = "-".join(p for p in parts if p)
    if profile is not None:
        name += f"-{profile[0].lower()}-{profile[1].lower()}"
    return name


def signers(shape: TreeShape) -> list[_Signer]:
    """`shape.signers` signers: CI workflows (pattern-listed partners, or listed by source), people
    (listed by source), and from four signers on one unlisted (verified, only reported). None is
    first-party: first-party evidence is ingested directly, never committed as pointers."""
    out = []
    for i in range(shape.signers):
        org = _ORGS[i % len(_ORGS)] + ("" if i < len(_ORGS) else "-2")
        if i == 0:
            identity = SignerIdentity(
                "https://token.actions.githubusercontent.com",
                "https://github.com/aicr-bench/aicr/.github/workflows/evidence.yaml@refs/heads/main",
            )
            out.append(_Signer(f"s{i}", identity, "community", None))
        elif i % 3 == 1:
            identity = SignerIdentity(
                "https://token.actions.githubusercontent.com",
                f"https://github.com/{org}/evidence/.github/workflows/publish.yaml@refs/heads/main",
            )
            pattern = (
                rf"^https://github\.com/{org}/evidence/\.github/workflows/"
                r"publish\.yaml@refs/heads/.+$"
            )
            out.append(_Signer(f"s{i}", identity, "partner", pattern))
        else:
            identity = SignerIdentity(
                "https://github.com/login/oauth", f"gpu-validation@{org}.example"
            )
            listed = None if (i == 3 and shape.signers >= 4) else "community"
            out.append(_Signer(f"s{i}", identity, listed, None))
    return out


def _jobs(shape: TreeShape) -> list[_Job]:
    jobs: list[_Job] = []
    for r in range(shape.recipes):
        for s in range(shape.signers):
            for b in range(shape.builds):
                jobs.append(_Job(r, s, b, len(jobs)))
    return jobs


def _run_decl(shape: TreeShape, decl: RecipeDecl, signer: _Signer, job: _Job) -> RunDecl:
    seed = shape.seed
    ident = f"{job.recipe}/{job.signer}/{job.build}"
    at = EPOCH + timedelta(
        days=30 * job.build + stable_int(seed, "day", ident) % 28,
        seconds=stable_int(seed, "second", ident) % 86_400,
    )
    choice = stable_int(seed, "type", ident) % 10
    # aicr: a profiled recipe is signed as v2 or v3, an unprofiled one as v1 or v3.
    legacy = PredicateType.V2 if decl.profile is not None else PredicateType.V1
    ptype = legacy if choice < 3 else PredicateType.V3
    aicr = _AICR_VERSIONS[(job.build + stable_int(seed, "aicr", decl.name)) % len(_AICR_VERSIONS)]
    full = stable_int(seed, "full", ident) % 3 != 0
    failing = job.ordinal % shape.fail_every == shape.fail_every - 1
    checks_of = _TRAINING_CHECKS if decl.criteria["intent"] == "training" else _INFERENCE_CHECKS
    checks: dict[Phase, dict[str, Outcome]] = {
        phase: {name: Outcome("passed") for name in names} for phase, names in checks_of.items()
    }
    bandwidth: dict[str, Measured | Outcome] = {}
    for check, floor in decl.floors.items():
        ratio = 1.0 + (stable_int(seed, "gbps", ident, check) % 400) / 1000
        if failing:
            ratio = 0.6 + (stable_int(seed, "low", ident) % 200) / 1000
        bandwidth[check] = (
            Measured(round(floor * ratio, 1))
            if full
            else Outcome("failed" if failing else "passed")
        )
    if failing and not decl.floors:
        conformance = checks[Phase.CONFORMANCE]
        victim = sorted(conformance)[stable_int(seed, "victim", ident) % len(conformance)]
        conformance[victim] = Outcome("failed")
    return RunDecl(
        index=ident,
        recipe=decl.name,
        signer=signer.key,
        at=at,
        aicr=aicr,
        predicate_type=ptype,
        full=full,
        checks=checks,
        bandwidth=bandwidth,
        gpu_nodes=None,
    )


def _spec(shape: TreeShape, decl: RecipeDecl, run: RunDecl, signer: _Signer) -> BundleSpec:
    recipe = recipe_document(decl, version=run.aicr)
    cluster = cluster_for(shape.seed, decl, run)
    fingerprint = fingerprint_for(cluster)
    tests = tests_for(shape.seed, run, cluster, decl.floors)
    tag_hex = stable_hex(shape.seed, "tag", run.index, length=12)
    return BundleSpec(
        recipe=recipe,
        predicate_type=run.predicate_type,
        signer=signer.identity,
        attested_at=run.at,
        aicr_version=run.aicr,
        aicr_commit=stable_hex(shape.seed, "aicr-commit", run.aicr),
        fingerprint=fingerprint,
        criteria_match=criteria_match(recipe, fingerprint),
        snapshot=snapshot_for(
            cluster, decl.components, run.at.strftime("%Y-%m-%dT%H:%M:%SZ"), full=run.full
        ),
        tests=tests,
        full=run.full,
        repository=REPOSITORY,
        tag=f"{run.recipe}-{tag_hex}",
        validator_images=tuple(
            f"ghcr.io/nvidia/aicr-validators/{p.value}:{run.aicr}" for p in tests
        ),
        policy_descriptor_identity=policy_identity(decl),
    )


def _tampered(built: BuiltBundle, authority: TestAuthority) -> BuiltBundle:
    """Rewrite one CTRF file after the manifest was computed, then re-sign (integrity failure)."""
    path = sorted(p for p in built.files if p.startswith("ctrf/"))[0]
    data = built.files[path].replace(b'"failed"', b'"passed"').replace(b"1", b"2", 1)
    return tamper_modify_file(built, path, data, authority)


# --------------------------------------------------------------------------- workers


class _RecordingWriter(LayoutWriter):
    """A layout writer that stores blobs at once but only records `index.json` entries, so many
    processes can share one layout and the parent writes the index."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.calls: list[tuple[bytes, str, str | None, str | None]] = []

    def add_manifest(
        self,
        data: bytes,
        media_type: str,
        *,
        artifact_type: str | None = None,
        ref_name: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> Any:
        self.calls.append((data, media_type, artifact_type, ref_name))
        return super().add_manifest(
            data,
            media_type,
            artifact_type=artifact_type,
            ref_name=ref_name,
            annotations=annotations,
        )


@dataclass(frozen=True)
class _ChunkResult:
    pointers: list[tuple[str, bytes]]
    manifests: list[tuple[bytes, str, str | None, str | None]]
    rejected: int
    failing: int


def _build_chunk(args: tuple[TreeShape, Path, int, Sequence[_Job]]) -> _ChunkResult:
    """Build, sign and store the bundles of `jobs` with this worker's own log shard."""
    shape, out, worker, jobs = args
    decls = recipe_decls(shape)
    people = signers(shape)
    authority = TestAuthority(
        shape.seed,
        name="evidence-dashboard bench",
        epoch=EPOCH,
        shard_offset=SHARD_BASE + worker * SHARD_STRIDE,
    )
    writer = _RecordingWriter(out / "bundles")
    pointers: list[tuple[str, bytes]] = []
    rejected = failing = 0
    for job in jobs:
        decl, signer = decls[job.recipe], people[job.signer]
        authority.add_filler_entries(1 + stable_int(shape.seed, "filler", str(job.ordinal)) % 5)
        run = _run_decl(shape, decl, signer, job)
        built = build_bundle(_spec(shape, decl, run, signer), authority)
        if job.ordinal % shape.reject_every == shape.reject_every - 1:
            built = _tampered(built, authority)
            rejected += 1
        elif any(t.status == "failed" for ts in built.spec.tests.values() for t in ts):
            failing += 1
        write_to_layout(built, writer)
        pointers.append((built.pointer_path, built.pointer_yaml.encode()))
    return _ChunkResult(pointers, writer.calls, rejected, failing)


def _chunks(jobs: Sequence[_Job], count: int) -> Iterator[Sequence[_Job]]:
    size = max(1, -(-len(jobs) // count))
    for start in range(0, len(jobs), size):
        yield jobs[start : start + size]


# --------------------------------------------------------------------------- the tree


def render_allowlist(people: Sequence[_Signer]) -> bytes:
    """`evidence/allowlist.yaml` for the listed signers (slug or identity-pattern entries)."""
    lines = [
        "# Generated by bench.gen: a synthetic benchmark tree; every identity is made up.",
        "schemaVersion: 1.0.0",
    ]
    for key, listing in (
        ("firstParty", "first-party"),
        ("community", "community"),
        ("partner", "partner"),
    ):
        listed = [s for s in people if s.listing == listing]
        if not listed:
            lines.append(f"{key}: []")
            continue
        lines.append(f"{key}:")
        for s in listed:
            label = s.identity.identity.split("@")[-1] if s.pattern is None else s.key
            lines.append(f"  - label: {yamlemit.scalar(label)}")
            lines.append(f"    issuer: {yamlemit.scalar(s.identity.issuer)}")
            if s.pattern is None:
                lines.append(f"    source: {s.identity.slug}")
            else:
                lines.append("    identityPattern: '" + s.pattern.replace("'", "''") + "'")
    return ("\n".join(lines) + "\n").encode()


def generate_tree(
    shape: TreeShape, out: Path, *, workers: int | None = None, reuse: bool = True
) -> TreeInfo:
    """Write the tree of `shape` under `out` (replacing it), or reuse it if `out` already holds
    exactly this shape from this generator version."""
    stamp = out / STAMP_FILE
    if reuse and stamp.is_file():
        try:
            info = json.loads(stamp.read_text(encoding="utf-8"))
        except ValueError:
            info = {}
        if info.get("key") == shape.key() and info.get("complete"):
            return TreeInfo(
                out,
                shape,
                int(info["pointers"]),
                int(info["rejected"]),
                int(info["failing"]),
                reused=True,
            )
    if out.exists():
        shutil.rmtree(out)
    (out / "bundles").mkdir(parents=True)
    jobs = _jobs(shape)
    count = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    tasks = [(shape, out, i, chunk) for i, chunk in enumerate(_chunks(jobs, count * 4))]
    if count == 1:
        results = [_build_chunk(t) for t in tasks]
    else:
        with multiprocessing.get_context("fork").Pool(count) as pool:
            results = pool.map(_build_chunk, tasks, chunksize=1)

    writer = LayoutWriter(out / "bundles")
    pointers = 0
    for result in results:
        for data, media_type, artifact_type, ref_name in result.manifests:
            writer.add_manifest(data, media_type, artifact_type=artifact_type, ref_name=ref_name)
        for relative, text in result.pointers:
            path = out / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
            pointers += 1
    writer.close()

    people = signers(shape)
    _write(out / "evidence" / "allowlist.yaml", render_allowlist(people))
    authority = TestAuthority(shape.seed, name="evidence-dashboard bench", epoch=EPOCH)
    _write(out / "trust" / "trusted_root.json", authority.trusted_root_json(valid_from=EPOCH))
    for decl in recipe_decls(shape):
        if decl.overlay:
            current = recipe_document(decl, version=_AICR_VERSIONS[-1], current=True)
            _write(
                out / "overlays" / f"{decl.name}.yaml",
                recipe_yaml_and_digest(current, PredicateType.V3)[0],
            )
    rejected = sum(r.rejected for r in results)
    failing = sum(r.failing for r in results)
    _write(
        stamp,
        (
            json.dumps(
                {
                    "key": shape.key(),
                    "shape": shape.as_dict(),
                    "complete": True,
                    "pointers": pointers,
                    "rejected": rejected,
                    "failing": failing,
                },
                indent=2,
            )
            + "\n"
        ).encode(),
    )
    return TreeInfo(out, shape, pointers, rejected, failing, reused=False)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def shape_for(attestations: int, *, signers: int = 5, builds: int = 2) -> TreeShape:
    """The benchmark's shape for a size: `attestations / (signers * builds)` recipes
    (10,000 attestations -> 1,000 recipes x 5 signers x 2 builds)."""
    per = signers * builds
    recipes = max(1, attestations // per)
    if recipes * per != attestations:
        raise ValueError(f"{attestations} is not a multiple of {per} (signers x builds)")
    return TreeShape(recipes=recipes, signers=signers, builds=builds)
