"""The `evidence-dashboard verify` command a card prints works as printed: built from the demo
tree checked out as `recipes/`, run from the folder that holds it, it verifies the pointer."""

from __future__ import annotations

import html
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from generator.site.pages import SiteModel, pointer_card
from tests.site.conftest import load_documents

REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_printed_verify_command_verifies_a_demo_pointer(tmp_path: Path) -> None:
    shutil.copytree(REPO / "recipes", tmp_path / "recipes")
    built = _run(
        [
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
            "--data-only",
            "--quiet",
            "--jobs",
            "1",
        ],
        tmp_path,
    )
    assert built.returncode in (0, 1), built.stderr
    docs = load_documents(tmp_path / "site" / "data")
    model = SiteModel(docs["index"], docs["series"], docs["pointers"], docs["build_info"])
    verified = [
        p
        for p in docs["pointers"]["pointers"]
        if p["verify"]["exit"] == 0 and not str(p["path"]).startswith("bundle-refs/")
    ]
    assert verified
    pointer = verified[0]
    card = str(pointer_card(model, f"recipes/{pointer['recipe']}.md", pointer))
    texts = [  # as a reader copies them: the words are spans
        html.unescape(re.sub(r"<[^>]+>", "", c))
        for c in re.findall(r"<pre[^>]*><code>(.*?)</code></pre>", card)
    ]
    printed = [t for t in texts if t.startswith("evidence-dashboard verify ")]
    assert len(printed) == 1, card
    args = shlex.split(printed[0])
    assert args[:2] == ["evidence-dashboard", "verify"]
    assert not any(str(tmp_path) in a for a in args)  # no path of the build machine
    ran = _run(args[1:], tmp_path)
    assert ran.returncode == 0, f"{printed[0]}\n{ran.stdout}\n{ran.stderr}"
