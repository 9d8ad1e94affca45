"""Shared builders for the tree seam tests: valid pointer documents and hand-made evidence trees."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.model import source_slug

GH_OAUTH = "https://github.com/login/oauth"
GH_ACTIONS = "https://token.actions.githubusercontent.com"
PERSON = "54385449+ramessesii2@users.noreply.github.com"
WORKFLOW = (
    "https://github.com/yuanchen8911/aicr/.github/workflows/evidence-publish.yaml"
    "@refs/heads/evidence/aks-h100-training-inference"
)
UAT = "https://github.com/NVIDIA/aicr/.github/workflows/uat-aws.yaml@refs/heads/main"

ALLOWLIST = f"""schemaVersion: 1.0.0
firstParty:
  - label: aicr-uat-aws
    issuer: {GH_ACTIONS}
    identityPattern: '^https://github\\.com/NVIDIA/aicr/\\.github/workflows/uat-aws\\.yaml@refs/heads/.+$'
community:
  - issuer: {GH_OAUTH}
    source: {source_slug(GH_OAUTH, PERSON)}
  - issuer: {GH_ACTIONS}
    source: {source_slug(GH_ACTIONS, WORKFLOW)}
    label: yuanchen8911
partner: []
"""


def digest_of(seed: str) -> str:
    """A well-formed, seed-specific bundle digest."""
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


def pointer_doc(
    recipe: str = "h100-eks-ubuntu-training",
    *,
    seed: str = "run-1",
    issuer: str | None = GH_OAUTH,
    identity: str | None = PERSON,
    profile: str | None = None,
    predicate: str = "v1",
) -> dict[str, Any]:
    """A valid pointer as plain data; `identity=None` gives an unsigned pointer."""
    entry: dict[str, Any] = {
        "attestedAt": "2026-09-09T13:31:02Z",
        "bundle": {
            "digest": digest_of(seed),
            "oci": f"ghcr.io/example/aicr-evidence:{recipe}-0123456789ab",
            "predicateType": f"https://aicr.run/recipe-evidence/{predicate}",
        },
    }
    if identity is not None:
        entry["signer"] = {"identity": identity, "issuer": issuer, "rekorLogIndex": 102847934}
    doc: dict[str, Any] = {"attestations": [entry], "recipe": recipe, "schemaVersion": "1.0.0"}
    if profile is not None:
        doc["profile"] = profile
    return doc


def dump(doc: Any) -> bytes:
    """JSON is YAML: a faithful, unambiguous serialisation for test inputs."""
    return json.dumps(doc).encode()


class TreeBuilder:
    """Builds `<root>/evidence/...` trees in a temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.evidence = root / "evidence"
        self.evidence.mkdir(parents=True)
        self.write_allowlist(ALLOWLIST)

    def write_allowlist(self, text: str) -> Path:
        path = self.evidence / "allowlist.yaml"
        path.write_text(text)
        return path

    def nested(
        self,
        doc: dict[str, Any],
        *,
        recipe_dir: str | None = None,
        source_dir: str | None = None,
        name: str | None = None,
        raw: bytes | None = None,
    ) -> str:
        """Write a pointer where it belongs (or where told); returns its display path."""
        entry = doc["attestations"][0]
        signer = entry.get("signer") or {"issuer": GH_OAUTH, "identity": PERSON}
        recipe = recipe_dir if recipe_dir is not None else doc["recipe"]
        source = (
            source_dir
            if source_dir is not None
            else source_slug(signer["issuer"], signer["identity"])
        )
        fname = name if name is not None else entry["bundle"]["digest"].replace(":", "-") + ".yaml"
        folder = self.evidence / recipe / source
        folder.mkdir(parents=True, exist_ok=True)
        (folder / fname).write_bytes(raw if raw is not None else dump(doc))
        return f"evidence/{recipe}/{source}/{fname}"

    def flat(self, doc: dict[str, Any], *, name: str | None = None) -> str:
        fname = name if name is not None else f"{doc['recipe']}.yaml"
        (self.evidence / fname).write_bytes(dump(doc))
        return f"evidence/{fname}"


@pytest.fixture
def tree(tmp_path: Path) -> TreeBuilder:
    return TreeBuilder(tmp_path / "recipes")


@pytest.fixture
def make_doc() -> Callable[..., dict[str, Any]]:
    return lambda *a, **k: copy.deepcopy(pointer_doc(*a, **k))


def fixtures_root() -> Path:
    return Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"


@pytest.fixture
def aicr_tree() -> Path:
    root = fixtures_root() / "aicr-tree"
    if not root.is_dir():
        pytest.skip("shared fixtures (aicr-tree) are not available")
    return root


@pytest.fixture
def kit() -> Any:
    """Constants and builders for tests (conftest modules are not importable by tests)."""
    import types

    return types.SimpleNamespace(
        GH_OAUTH=GH_OAUTH,
        GH_ACTIONS=GH_ACTIONS,
        PERSON=PERSON,
        WORKFLOW=WORKFLOW,
        UAT=UAT,
        ALLOWLIST=ALLOWLIST,
        pointer_doc=pointer_doc,
        dump=dump,
        digest_of=digest_of,
    )
