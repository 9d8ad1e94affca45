"""The click shell: documented exit codes, `--format json`, and errors that say what to do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from tests._support import fixtures_dir

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "recipes"
EXPECTED = json.loads((DEMO / "demo" / "expected.json").read_text())["pointers"]
TRANSPORT = [
    "--offline",
    "--oci-layout",
    str(DEMO / "bundles"),
    "--trust-root",
    str(DEMO / "trust" / "trusted_root.json"),
]
ENGINE = ["--recipes", str(DEMO), *TRANSPORT]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _pointer(exit_code: int, cls: str | None = None) -> str:
    for path, expect in sorted(EXPECTED.items()):
        if expect["exit"] == exit_code and expect["class"] == cls and not expect["pending"]:
            return path
    raise AssertionError(f"no demo pointer with exit {exit_code} / {cls}")


@pytest.mark.parametrize(
    ("exit_code", "cls"), [(0, None), (1, None), (2, "integrity"), (2, "signature")]
)
def test_verify_exit_codes_follow_the_verdict(
    tmp_path: Path, exit_code: int, cls: str | None
) -> None:
    path = DEMO / _pointer(exit_code, cls)
    code, out, _ = run(
        "verify", str(path), *TRANSPORT, "--cache", str(tmp_path), "--format", "json"
    )
    assert code == exit_code
    result = json.loads(out)
    assert result["exit"] == exit_code
    assert [s["name"] for s in result["steps"]][:2] == ["materialize-bundle", "signature-verify"]
    if cls:
        assert result["failureCause"]["class"] == cls and result["failureCause"]["hint"]
    else:
        assert "failureCause" not in result or result["failureCause"] is None


def test_verify_text_names_the_verdict(tmp_path: Path) -> None:
    path = DEMO / _pointer(2, "signature")
    code, out, _ = run("verify", str(path), *TRANSPORT, "--cache", str(tmp_path))
    assert code == 2 and "invalid - signature" in out and "next step:" in out


def test_build_json_summary_and_data(tmp_path: Path) -> None:
    out_dir = tmp_path / "site"
    code, out, _ = run(
        "build",
        *ENGINE,
        "--out",
        str(out_dir),
        "--cache",
        str(tmp_path / "c"),
        "--data-only",
        "--quiet",
        "--format",
        "json",
    )
    assert code == 0, out
    summary = json.loads(out)
    assert summary["exit"] == 0 and summary["pointers"] == len(EXPECTED)
    assert summary["rejected"] == sum(1 for e in EXPECTED.values() if e["exit"] == 2)
    assert summary["pending"] == sum(1 for e in EXPECTED.values() if e["pending"])
    assert (out_dir / "data" / "pointers.json").is_file()
    assert not (out_dir / "index.html").exists()  # --data-only


def test_build_without_evidence_folder_is_exit_2_with_a_next_step(tmp_path: Path) -> None:
    tree = tmp_path / "tree"  # --out may not lie inside the tree, so the two are siblings
    tree.mkdir()
    code, out, _ = run(
        "build",
        "--recipes",
        str(tree),
        "--out",
        str(tmp_path / "o"),
        "--offline",
        "--format",
        "json",
    )
    assert code == 2
    error = json.loads(out)
    assert error["file"] == str(tree) and "evidence" in error["expected"] and error["hint"]


def test_build_with_a_broken_allowlist_is_exit_2_and_keeps_the_old_site(tmp_path: Path) -> None:
    tree = tmp_path / "recipes"
    shutil.copytree(DEMO, tree)
    out_dir = tmp_path / "site"
    out_dir.mkdir()
    (out_dir / "index.html").write_text("previous")
    (out_dir / ".evidence-dashboard-site").write_text("a site this tool built earlier\n")
    (tree / "evidence" / "allowlist.yaml").write_text("schemaVersion: 1.0.0\nidentity: x\n")
    code, _, err = run(
        "build",
        "--recipes",
        str(tree),
        "--out",
        str(out_dir),
        "--offline",
        "--cache",
        str(tmp_path / "c"),
    )
    assert code == 2 and "allowlist.yaml" in err
    assert (out_dir / "index.html").read_text() == "previous"


def test_bad_registry_mirror_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("build", *ENGINE, "--out", str(tmp_path), "--registry-mirror", "nonsense")
    assert code == 2 and "HOST=URL" in err


def test_check_tree_clean_with_allow_pending_is_driven_by_the_tree(tmp_path: Path) -> None:
    code, out, _ = run("check-tree", "--recipes", str(DEMO), "--allow-pending", "--format", "json")
    doc = json.loads(out)
    assert code == (1 if doc["violations"] else 0) and doc["exit"] == code
    assert all(v["path"].startswith("evidence/") for v in doc["violations"])


def test_check_tree_unreadable_root_is_exit_2(tmp_path: Path) -> None:
    code, _, err = run("check-tree", "--recipes", str(tmp_path / "missing"))
    assert code == 2 and err


@pytest.mark.fixtures
def test_check_tree_on_real_upstream_tree_reports_five_violations() -> None:
    shared = fixtures_dir()
    if shared is None:
        pytest.skip("../shared/fixtures is not present")
    code, out, _ = run("check-tree", "--recipes", str(shared / "aicr-tree/upstream/recipes"))
    lines = out.strip().splitlines()
    assert code == 1 and len(lines) == 5
    assert sum("aicr.nvidia.com" in line for line in lines) == 2
    assert sum("not in the allowlist" in line for line in lines) == 3


def test_recipe_digest_prints_bare_hex(tmp_path: Path) -> None:
    doc = tmp_path / "r.yaml"
    doc.write_text("zoo: 1\napple: 2\n")
    code, out, _ = run("recipe-digest", str(doc))
    assert code == 0
    assert out.strip() == "8a7542418d447cec7effa1742625c3aab23b3b589a43554335f743f953ce405b"


def test_recipe_digest_metadata_overlay_warns_and_bad_yaml_is_exit_2(tmp_path: Path) -> None:
    overlay = tmp_path / "o.yaml"
    overlay.write_text("kind: RecipeMetadata\nmetadata:\n  name: x\n")
    code, out, err = run("recipe-digest", str(overlay))
    assert code == 0 and len(out.strip()) == 64 and "aicr" in err
    broken = tmp_path / "b.yaml"
    broken.write_text("a: [1, 2\n")
    code, _, err = run("recipe-digest", str(broken))
    assert code == 2 and "b.yaml" in err


def test_index_prints_the_pointer_index() -> None:
    code, out, _ = run("index", "--recipes", str(DEMO))
    assert code == 0 and "pointers:" in out


def test_a_build_sweeps_staging_folders_of_killed_builds_only(tmp_path: Path) -> None:
    import os

    from generator.build import STAGING_PREFIX, sweep_dead_staging

    dead = tmp_path / f"{STAGING_PREFIX}999999999-abc"
    alive = tmp_path / f"{STAGING_PREFIX}{os.getpid()}-def"
    unrelated = tmp_path / f"{STAGING_PREFIX}notapid"
    for folder in (dead, alive, unrelated):
        (folder / "site").mkdir(parents=True)
    kept = tmp_path / "kept"
    kept.mkdir()
    (tmp_path / f"{STAGING_PREFIX}999999998-link").symlink_to(kept)  # never followed
    (tmp_path / f"{STAGING_PREFIX}999999997-file").write_text("x", encoding="utf-8")
    assert sweep_dead_staging(tmp_path) == [dead]
    assert not dead.exists() and alive.exists() and unrelated.exists()
    assert kept.is_dir() and (tmp_path / f"{STAGING_PREFIX}999999997-file").is_file()


def test_a_retired_output_is_gone_when_the_build_returns_or_swept_after_a_kill(
    tmp_path: Path,
) -> None:
    """The replaced output is deleted on a thread (`retire`); the build waits for it, and the
    folder a killed build was still deleting is removed by the next build's sweep."""
    import os

    from generator.build import STAGING_PREFIX, finish_retiring, sweep_dead_staging
    from generator.evaluate.output import retire

    old = tmp_path / "site.old"
    (old / "data").mkdir(parents=True)
    (old / "data" / "index.json").write_text("{}")
    retire(old)
    assert not old.exists()  # moved away before `retire` returns
    finish_retiring()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    killed = tmp_path / f"{STAGING_PREFIX}999999999-retired-abc" / "old"
    killed.mkdir(parents=True)
    mine = tmp_path / f"{STAGING_PREFIX}{os.getpid()}-retired-def" / "old"
    mine.mkdir(parents=True)
    assert sweep_dead_staging(tmp_path) == [killed.parent]
    assert mine.exists()


def test_make_site_command_with_relative_paths_builds_the_full_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's `make site` runs the CLI with relative --recipes/--out from the checkout."""
    shutil.copytree(DEMO, tmp_path / "recipes")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(
        "build",
        "--recipes",
        "recipes",
        "--out",
        "site",
        "--offline",
        "--oci-layout",
        "recipes/bundles",
        "--trust-root",
        "recipes/trust/trusted_root.json",
        "--cache",
        "cache",
        "--quiet",
    )
    assert code == 0, err
    assert (tmp_path / "site" / "index.html").is_file()
    assert (
        tmp_path / "site" / "recipes" / "h100-eks-ubuntu-training-kubeflow" / "index.html"
    ).is_file()
    assert not list(tmp_path.glob(".evidence-build-*"))
