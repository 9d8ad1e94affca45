"""The publishing workflows pass the live site as `--previous` to both builds of the gate."""

from __future__ import annotations

from typing import Any

import pytest

from tests.workflows._workflows import TEMPLATE, WORKFLOWS, build_commands, load, option

PUBLISHERS = [WORKFLOWS / "pages.yml", TEMPLATE]


@pytest.mark.parametrize("path", PUBLISHERS, ids=lambda p: p.name)
def test_both_builds_compare_with_the_live_site(path: Any) -> None:
    steps = [s for s in load(path).steps("build") if build_commands(str(s.get("run", "")))]
    assert len(steps) == 2
    for step in steps:
        argv = build_commands(step["run"])[0]
        assert option(argv, "--previous") == "$SITE_URL", step.get("name")
        assert "steps.clock.outputs.site_url" in step["env"]["SITE_URL"]
