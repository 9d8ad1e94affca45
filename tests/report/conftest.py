"""Shared helpers for the report tests: a real git repository built from the demo tree.

`pr_repo` copies the embedded demo `recipes/` into a temporary git repository, commits it as the
base (plus a few RecipeMetadata overlays with a `spec.base` chain, a mixin, a values file, a
wildcard overlay and a registry), then commits a head that edits overlays, removes and adds
pointers and changes the allowlist. Commit dates and authors are fixed, so commit ids (and the
goldens that show them) are stable. Verification is real: offline, the copied OCI layout and the
demo trust root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.build import BuildOptions

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "recipes"
EPOCH = 1_800_000_000
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Report Test",
    "GIT_AUTHOR_EMAIL": "report@example.invalid",
    "GIT_COMMITTER_NAME": "Report Test",
    "GIT_COMMITTER_EMAIL": "report@example.invalid",
    "GIT_AUTHOR_DATE": "2026-12-01T12:00:00Z",
    "GIT_COMMITTER_DATE": "2026-12-01T12:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

EKS = """kind: RecipeMetadata
apiVersion: aicr.run/v1beta1
metadata:
  name: eks
spec:
  criteria:
    service: eks
  componentRefs:
    - name: aws-efa
      type: Helm
      valuesFile: components/aws-efa/values.yaml
"""

LEAF = """kind: RecipeMetadata
apiVersion: aicr.run/v1beta1
metadata:
  name: h100-eks-ubuntu-inference
spec:
  base: eks
  criteria:
    service: eks
    accelerator: h100
    os: ubuntu
    intent: inference
  mixins:
    - os-ubuntu
  componentRefs:
    - name: gpu-operator
      type: Helm
      valuesFile: components/gpu-operator/values.yaml
"""

DYNAMO = """kind: RecipeMetadata
apiVersion: aicr.run/v1beta1
metadata:
  name: h100-eks-ubuntu-inference-dynamo
spec:
  base: h100-eks-ubuntu-inference
  criteria:
    service: eks
    accelerator: h100
    os: ubuntu
    intent: inference
    platform: dynamo
"""

WILDCARD = """kind: RecipeMetadata
apiVersion: aicr.run/v1beta1
metadata:
  name: gb300-any
spec:
  criteria:
    service: any
    accelerator: gb300
"""

MIXIN = """kind: RecipeMixin
apiVersion: aicr.run/v1beta1
metadata:
  name: os-ubuntu
spec:
  constraints:
    - name: OS.release.ID
      value: ubuntu
"""

NIGHTLY = """  - label: acme-cloud/nightly
    issuer: https://token.actions.githubusercontent.com
    source: bcf8821fa7188aaa2d40d7150b2f6db8
"""

GPULAB = """partner:
  - label: gpulab-partner
"""

DRIVE_BY = """partner:
  - label: drive-by <b>@octocat</b> | `x`
    issuer: https://github.com/login/oauth
    source: bad8c17387a34634f7e648b68ca4acda
"""

H100_AKS_REMOVED = (
    "evidence/h100-aks-ubuntu-inference-dynamo-gpustack-azure-managed/"
    "6afcbba3212e46571a8e4527e58f56a2/sha256-3ecf0cf51759dc614475c42ec5da4459fc36f"
    "045cff7de19093f2ed5f312d303.yaml"
)
VR200_DIR = "evidence/vr200-rke2-ubuntu-training-kubeflow"
ORPHAN_SOURCE = (
    "evidence/h100-eks-ubuntu-training-kubeflow/6afcbba3212e46571a8e4527e58f56a2/"
    "sha256-f87117444f0d897e94698cec14a5fbd8bae45d5e4dd2498d6270190dad5b4f11.yaml"
)
ORPHAN = (
    "evidence/h100-gke-cos-training/6afcbba3212e46571a8e4527e58f56a2/"
    "sha256-f87117444f0d897e94698cec14a5fbd8bae45d5e4dd2498d6270190dad5b4f11.yaml"
)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class PrRepo:
    repo: Path
    base: str
    head: str

    @property
    def recipes(self) -> Path:
        return self.repo / "recipes"


def init_repo(root: Path) -> Path:
    """A git repository holding a copy of the demo recipes/ plus the RecipeMetadata overlays."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shutil.copytree(DEMO, repo / "recipes")
    recipes = repo / "recipes"
    write(recipes / "overlays" / "eks.yaml", EKS)
    write(recipes / "overlays" / "h100-eks-ubuntu-inference.yaml", LEAF)
    write(recipes / "overlays" / "gb300-any.yaml", WILDCARD)
    write(recipes / "mixins" / "os-ubuntu.yaml", MIXIN)
    write(recipes / "components" / "gpu-operator" / "values.yaml", "driver:\n  enabled: true\n")
    write(recipes / "components" / "aws-efa" / "values.yaml", "efa: {}\n")
    write(recipes / "registry.yaml", "components:\n  - name: gpu-operator\n")
    write(repo / "README.md", "evidence tree\n")
    return repo


def build_pr_repo(root: Path) -> PrRepo:
    repo = init_repo(root)
    recipes = repo / "recipes"
    base = commit(repo, "base: demo tree")
    git(repo, "checkout", "-q", "-b", "pr")

    # 1. overlays: a stale-making edit, an ancestor and values-file edit, a new leaf,
    #    a criteria-matched wildcard overlay and the registry (not walked).
    k0s = recipes / "overlays" / "h200-k0s-ubuntu-training.yaml"
    k0s.write_text(k0s.read_text(encoding="utf-8").replace("v25.3.0", "v25.10.1"), encoding="utf-8")
    write(
        recipes / "overlays" / "eks.yaml", EKS.replace("aws-efa\n", "aws-efa\n      version: v2\n")
    )
    write(recipes / "components" / "gpu-operator" / "values.yaml", "driver:\n  enabled: false\n")
    write(recipes / "overlays" / "h100-eks-ubuntu-inference-dynamo.yaml", DYNAMO)
    write(recipes / "overlays" / "gb300-any.yaml", WILDCARD + "  mixins: [os-ubuntu]\n")
    write(recipes / "registry.yaml", "components:\n  - name: gpu-operator\n    version: v2\n")
    commit(repo, "overlays")

    # 2. pointers: one removed, a whole pointer folder removed, an orphan added.
    (recipes / H100_AKS_REMOVED).unlink()
    shutil.rmtree(recipes / VR200_DIR)
    write(recipes / ORPHAN, (recipes / ORPHAN_SOURCE).read_text(encoding="utf-8"))
    commit(repo, "pointers")

    # 3. allowlist: a signer removed, one moved partner -> community, a hostile label added.
    allowlist = recipes / "evidence" / "allowlist.yaml"
    text = allowlist.read_text(encoding="utf-8")
    assert NIGHTLY in text and GPULAB in text
    text = text.replace(NIGHTLY, "")
    text = text.replace(
        "community:\n",
        "community:\n  - label: gpulab-partner\n"
        "    issuer: https://token.actions.githubusercontent.com\n"
        "    identityPattern: '^https://github\\.com/gpulab-partner/evidence/"
        "\\.github/workflows/publish\\.yaml@refs/heads/.+$'\n",
        1,
    )
    start = text.index(GPULAB)
    text = text[:start] + DRIVE_BY
    allowlist.write_text(text, encoding="utf-8")
    head = commit(repo, "allowlist")
    return PrRepo(repo, base, head)


def options_for(recipes: Path, cache: Path) -> BuildOptions:
    """The build's options for a copied demo tree: offline, its own layout and trust root."""
    return BuildOptions.flat(
        recipes=recipes,
        out=cache.parent / "site",
        trust_root=recipes / "trust" / "trusted_root.json",
        oci_layouts=(recipes / "bundles",),
        offline=True,
        cache=cache,
        jobs=2,
        quiet=True,
        source_date_epoch=EPOCH,
    )


@pytest.fixture(scope="module")
def pr_repo(tmp_path_factory: pytest.TempPathFactory) -> PrRepo:
    if shutil.which("git") is None:
        pytest.fail("git is required for the report tests")
    return build_pr_repo(tmp_path_factory.mktemp("pr"))
