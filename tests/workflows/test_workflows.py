"""The publishing workflows: triggers, least privilege, pins, the determinism gate, the cache.

Every workflow under .github/workflows/ and the documented template (docs/templates/) is parsed
with PyYAML and checked against the rules of docs/publishing.md; comments (the version next to
a pinned SHA) are read from the raw text.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest

from tests.workflows._workflows import (
    PINNED_USES,
    REPO,
    TEMPLATE,
    USES_LINE,
    WORKFLOWS,
    Workflow,
    action_of,
    build_commands,
    load,
    option,
    uses_of,
    workflow_files,
)

PAGES = WORKFLOWS / "pages.yml"
PR = WORKFLOWS / "pr.yml"
COMMENT = WORKFLOWS / "pr-comment.yml"
MARKER = "<!-- recipe-evidence-gate -->"

#: (file, job) -> the exact permissions that job holds.
JOB_PERMISSIONS = [
    (PAGES, "build", {"contents": "read", "id-token": "write"}),
    (PAGES, "deploy", {"pages": "write", "id-token": "write"}),
    (TEMPLATE, "build", {"contents": "read", "id-token": "write"}),
    (TEMPLATE, "deploy", {"pages": "write", "id-token": "write"}),
    (PR, "preview", {"contents": "read"}),
    (COMMENT, "render", {"contents": "read", "actions": "read"}),
    (COMMENT, "comment", {"pull-requests": "write"}),
]

PUBLISHERS = [PAGES, TEMPLATE]


def _ids(path: Any) -> str:
    return path.name if hasattr(path, "name") else str(path)


@pytest.fixture(scope="module", params=workflow_files(), ids=_ids)
def workflow(request: pytest.FixtureRequest) -> Workflow:
    return load(request.param)


# --------------------------------------------------------------------------- every workflow


def test_the_expected_workflows_exist() -> None:
    names = {path.name for path in workflow_files() if path.is_file()}
    assert {"pages.yml", "pr.yml", "pr-comment.yml", TEMPLATE.name} <= names


def test_top_level_permissions_are_empty(workflow: Workflow) -> None:
    assert "permissions" in workflow.doc, f"{workflow.path.name}: no top-level permissions"
    assert workflow.doc["permissions"] == {}


def test_every_job_declares_its_own_permissions(workflow: Workflow) -> None:
    for name, job in workflow.jobs().items():
        assert isinstance(job.get("permissions"), dict), f"{workflow.path.name}: job {name}"
        assert "write-all" not in str(job["permissions"]) and "read-all" not in str(
            job["permissions"]
        )


@pytest.mark.parametrize(
    ("path", "job", "expected"),
    JOB_PERMISSIONS,
    ids=[f"{p.name}:{j}" for p, j, _ in JOB_PERMISSIONS],
)
def test_least_privilege_per_job(path: Any, job: str, expected: dict[str, str]) -> None:
    assert load(path).job(job)["permissions"] == expected


def test_no_job_is_left_out_of_the_permission_table(workflow: Workflow) -> None:
    listed = {job for path, job, _ in JOB_PERMISSIONS if path == workflow.path}
    assert set(workflow.jobs()) == listed


def test_every_uses_is_pinned_to_a_full_sha_with_a_version_comment(workflow: Workflow) -> None:
    lines = [line for line in workflow.text.splitlines() if USES_LINE.match(line)]
    assert lines, f"{workflow.path.name} uses no actions"
    for line in lines:
        assert PINNED_USES.match(line), (
            f"{workflow.path.name}: not pinned with a version: {line.strip()}"
        )


def test_parsed_uses_match_the_raw_pins(workflow: Workflow) -> None:
    """No `uses:` hides from the line check (flow style, quoting): the parsed values agree."""
    raw = {
        f"{m['action']}@{m['sha']}" for m in map(PINNED_USES.match, workflow.text.splitlines()) if m
    }
    parsed = {
        uses_of(step) for name in workflow.jobs() for step in workflow.steps(name) if "uses" in step
    }
    assert parsed == raw


def test_one_sha_per_action_across_all_workflows() -> None:
    seen: dict[str, tuple[str, str]] = {}
    for path in workflow_files():
        for line in path.read_text(encoding="utf-8").splitlines():
            match = PINNED_USES.match(line)
            if match is None:
                continue
            repo = "/".join(match["action"].split("/")[:2])
            pin = (match["sha"], match["version"])
            assert seen.setdefault(repo, pin) == pin, f"{repo} is pinned twice differently"


def test_checkouts_never_persist_credentials(workflow: Workflow) -> None:
    for name in workflow.jobs():
        for step in workflow.steps(name):
            if action_of(step) == "actions/checkout":
                assert step.get("with", {}).get("persist-credentials") is False


def test_python_is_pinned_to_one_minor_version(workflow: Workflow) -> None:
    for name in workflow.jobs():
        for step in workflow.steps(name):
            if action_of(step) == "actions/setup-python":
                assert step["with"]["python-version"] == "3.11"


def test_installs_use_the_lock(workflow: Workflow) -> None:
    for name in workflow.jobs():
        for step in workflow.steps(name):
            run = str(step.get("run", ""))
            if "pip install" in run:
                assert re.search(r"pip install -c \S*constraints\.txt \S+", run), run


# --------------------------------------------------------------------------- Pages publishing


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_triggers_push_main_daily_schedule_and_dispatch(path: Any) -> None:
    triggers = load(path).triggers()
    assert set(triggers) == {"push", "schedule", "workflow_dispatch"}
    assert triggers["push"]["branches"] == ["main"]
    crons = [entry["cron"] for entry in triggers["schedule"]]
    assert len(crons) == 1
    minute, hour, day, month, weekday = crons[0].split()
    assert minute.isdigit() and hour.isdigit(), "the schedule runs at one fixed time"
    assert (day, month, weekday) == ("*", "*", "*"), "the schedule runs every day"


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_repository_guard_on_build_and_deploy(path: Any) -> None:
    wf = load(path)
    guards = []
    for job in ("build", "deploy"):
        condition = str(wf.job(job).get("if", ""))
        match = re.search(r"github\.repository == '([\w.-]+/[\w.-]+)'", condition)
        assert match, f"{path.name}: job {job} has no repository guard"
        guards.append(match[1])
    assert guards[0] == guards[1]
    assert "github.ref == 'refs/heads/main'" in str(wf.job("deploy")["if"])


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_concurrency_group_pages_never_cancels(path: Any) -> None:
    assert load(path).doc["concurrency"] == {"group": "pages", "cancel-in-progress": False}


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_deploy_job_is_one_deploy_pages_step_in_github_pages(path: Any) -> None:
    deploy = load(path).job("deploy")
    assert deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"
    assert deploy["environment"]["url"] == "${{ steps.deployment.outputs.page_url }}"
    steps = deploy["steps"]
    assert [action_of(s) for s in steps] == ["actions/deploy-pages"]
    assert steps[0]["id"] == "deployment"


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_build_uploads_the_pages_artifact_of_the_first_build(path: Any) -> None:
    wf = load(path)
    steps = wf.steps("build")
    builds = _build_steps(steps)
    uploads = [s for s in steps if action_of(s) == "actions/upload-pages-artifact"]
    assert len(uploads) == 1
    first_out = option(build_commands(builds[0][1]["run"])[0], "--out")
    assert first_out is not None
    assert uploads[0]["with"]["path"] == first_out.replace("$RUNNER_TEMP", "${{ runner.temp }}")


def _build_steps(steps: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, s) for i, s in enumerate(steps) if build_commands(str(s.get("run", "")))]


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_determinism_gate(path: Any) -> None:
    """Two builds in separate steps: other seed, zone, locale, jobs; second from the cache; diff -r."""
    steps = load(path).steps("build")
    builds = _build_steps(steps)
    assert len(builds) == 2, f"{path.name}: the gate needs exactly two builds"
    (i_a, a), (i_b, b) = builds
    argv_a, argv_b = build_commands(a["run"])[0], build_commands(b["run"])[0]
    env_a, env_b = a["env"], b["env"]
    for variable in ("PYTHONHASHSEED", "TZ", "LC_ALL"):
        assert env_a[variable] and env_b[variable], variable
        assert env_a[variable] != env_b[variable], f"{variable} must differ between the builds"
    assert env_a["SOURCE_DATE_EPOCH"] == env_b["SOURCE_DATE_EPOCH"]
    assert "steps.clock.outputs.epoch" in env_a["SOURCE_DATE_EPOCH"]
    assert option(argv_a, "--jobs") == "1"
    assert "--jobs" not in argv_b, "the second build uses the default number of jobs"
    cache = option(argv_a, "--cache")
    assert cache and option(argv_b, "--cache") == cache, "the second build reuses the first's cache"
    out_a, out_b = option(argv_a, "--out"), option(argv_b, "--out")
    assert out_a and out_b and out_a != out_b
    gates = [
        (i, s) for i, s in enumerate(steps) if re.search(r"\bdiff -r\b", str(s.get("run", "")))
    ]
    assert len(gates) == 1
    i_gate, gate = gates[0]
    assert out_a in gate["run"] and out_b in gate["run"]
    upload = next(i for i, s in enumerate(steps) if action_of(s) == "actions/upload-pages-artifact")
    assert i_a < i_b < i_gate < upload


def test_this_repositorys_second_build_is_offline_from_the_cache_alone() -> None:
    builds = _build_steps(load(PAGES).steps("build"))
    argv_a = build_commands(builds[0][1]["run"])[0]
    argv_b = build_commands(builds[1][1]["run"])[0]
    assert "--offline" in argv_b
    assert "--oci-layout" in argv_a and "--oci-layout" not in argv_b


def test_the_template_builds_an_aicr_tree_with_links_and_trusted_registries() -> None:
    run = _build_steps(load(TEMPLATE).steps("build"))[0][1]["run"]
    argv = build_commands(run)[0]
    assert option(argv, "--recipes") == "recipes"
    assert option(argv, "--commit") == "${{ github.sha }}"
    source_url = option(argv, "--source-url")
    assert source_url is not None and source_url.endswith("/blob/{commit}/recipes/{path}")
    assert "--trusted-registry" in run and "--offline" not in argv


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_build_time_is_the_days_midnight_for_both_builds(path: Any) -> None:
    steps = load(path).steps("build")
    clock = [s for s in steps if s.get("id") == "clock"]
    assert len(clock) == 1
    assert steps.index(clock[0]) < _build_steps(steps)[0][0]


# --------------------------------------------------------------------------- the cache


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_cache_is_restored_then_saved_on_push_to_main_only(path: Any) -> None:
    steps = load(path).steps("build")
    restores = [s for s in steps if action_of(s) == "actions/cache/restore"]
    saves = [s for s in steps if action_of(s) == "actions/cache/save"]
    assert len(restores) == 1 and len(saves) == 1
    condition = str(saves[0].get("if", ""))
    assert "github.event_name == 'push'" in condition
    assert "github.ref == 'refs/heads/main'" in condition
    assert "||" not in condition
    assert saves[0]["with"]["key"] == restores[0]["with"]["key"]
    assert saves[0]["with"]["path"] == restores[0]["with"]["path"]
    assert steps.index(restores[0]) < _build_steps(steps)[0][0] < steps.index(saves[0])


def test_no_workflow_uses_the_saving_cache_action_or_a_setup_cache(workflow: Workflow) -> None:
    """`actions/cache` (restore + post-save) and setup-python's cache would write from any ref."""
    for name in workflow.jobs():
        for step in workflow.steps(name):
            assert action_of(step) != "actions/cache"
            if action_of(step) == "actions/setup-python":
                assert "cache" not in step.get("with", {})


def test_pull_requests_only_restore_the_cache() -> None:
    steps = load(PR).steps("preview")
    actions = [action_of(s) for s in steps]
    assert "actions/cache/restore" in actions
    assert "actions/cache/save" not in actions


# --------------------------------------------------------------------------- pull requests


def test_pr_workflow_is_read_only_on_pull_request() -> None:
    wf = load(PR)
    assert set(wf.triggers()) == {"pull_request"}
    assert set(wf.jobs()) == {"preview"}


def test_pr_workflow_builds_a_preview_and_the_json_report() -> None:
    steps = load(PR).steps("preview")
    builds = _build_steps(steps)
    assert len(builds) == 1
    assert "--preview" in build_commands(builds[0][1]["run"])[0]
    reports = [s for s in steps if "evidence-dashboard report" in str(s.get("run", ""))]
    assert len(reports) == 1
    run = reports[0]["run"]
    assert re.search(r'--base "\$BASE_SHA" --head "\$HEAD_SHA" --format json > "\$json"', run)
    assert "--format markdown" not in run
    assert reports[0]["env"]["BASE_SHA"] == "${{ github.event.pull_request.base.sha }}"
    assert reports[0]["env"]["HEAD_SHA"] == "${{ github.event.pull_request.head.sha }}"
    uploads = {s["with"]["name"]: s for s in steps if action_of(s) == "actions/upload-artifact"}
    assert {"preview-site", "recipe-evidence-report"} <= set(uploads)
    # only the data crosses to the comment workflow, never Markdown the PR's code wrote
    assert uploads["recipe-evidence-report"]["with"]["path"].endswith("/report.json")
    assert uploads["recipe-evidence-report"].get("if") == "always()"


def test_pr_checkout_has_history_for_base_and_head() -> None:
    checkout = next(s for s in load(PR).steps("preview") if action_of(s) == "actions/checkout")
    assert checkout["with"]["fetch-depth"] == 0


def test_comment_workflow_follows_the_pr_workflow_by_name() -> None:
    triggers = load(COMMENT).triggers()
    assert set(triggers) == {"workflow_run"}
    assert triggers["workflow_run"]["workflows"] == [load(PR).name]
    assert triggers["workflow_run"]["types"] == ["completed"]
    for job in ("render", "comment"):
        assert "github.event.workflow_run.event == 'pull_request'" in load(COMMENT).job(job)["if"]


def test_the_commenting_job_never_checks_out_or_runs_code() -> None:
    wf = load(COMMENT)
    for step in wf.steps("comment"):
        assert action_of(step) != "actions/checkout"
        assert "run" not in step, "the job that may write runs no shell: artifacts are data only"
    assert wf.job("comment")["needs"] == "render"


def test_the_render_job_runs_only_the_default_branch_code() -> None:
    wf = load(COMMENT)
    steps = wf.steps("render")
    checkouts = [
        s for name in wf.jobs() for s in wf.steps(name) if action_of(s) == "actions/checkout"
    ]
    assert len(checkouts) == 1 and checkouts[0] in steps
    assert checkouts[0]["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    # nothing of the PR run's commit is checked out or named as code to run
    for forbidden in (
        "workflow_run.head_sha",
        "workflow_run.head_branch",
        "workflow_run.head_commit",
        "pull_request.head",
        "refs/pull/",
    ):
        assert forbidden not in str(wf.job("render")), forbidden
    order = [action_of(s) or str(s.get("run", "")).split("\n")[0] for s in steps]
    assert order.index("actions/checkout") < order.index("actions/download-artifact")


def test_the_comment_is_rendered_from_the_json_artifact() -> None:
    wf = load(COMMENT)
    steps = wf.steps("render")
    download = next(s for s in steps if action_of(s) == "actions/download-artifact")
    assert download["with"]["name"] == "recipe-evidence-report"
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    runs = [str(s["run"]) for s in steps if "run" in s]
    render = next(r for r in runs if "render-report" in r)
    assert re.search(r'evidence-dashboard render-report "\$json" > "\$out"', render)
    assert 'json="$RUNNER_TEMP/report/report.json"' in render
    upload = next(s for s in steps if action_of(s) == "actions/upload-artifact")
    assert upload["with"]["name"] == "recipe-evidence-comment"
    posted = next(s for s in wf.steps("comment") if action_of(s) == "actions/github-script")
    comment_dl = next(s for s in wf.steps("comment") if action_of(s) == "actions/download-artifact")
    assert comment_dl["with"]["name"] == "recipe-evidence-comment"
    assert "run-id" not in comment_dl["with"]  # this run's own artifact, not the PR run's
    assert posted["env"]["REPORT_FILE"] == "${{ runner.temp }}/comment/report.md"
    assert upload["with"]["path"] == "${{ runner.temp }}/comment/report.md"


def test_comment_script_uses_the_marker_and_a_limit_below_github_s() -> None:
    script = next(
        s for s in load(COMMENT).steps("comment") if action_of(s) == "actions/github-script"
    )["with"]["script"]
    assert f"'{MARKER}'" in script
    limit = int(re.search(r"const LIMIT = (\d+);", script)[1])  # type: ignore[index]
    assert limit < 65536
    assert "run.head_sha" in script and "listPullRequestsAssociatedWithCommit" in script


# --------------------------------------------------------------------------- Netlify


def _netlify() -> dict[str, Any]:
    return tomllib.loads((REPO / "netlify.toml").read_text(encoding="utf-8"))


def test_netlify_pins_the_python_minor_version_of_ci() -> None:
    version = _netlify()["build"]["environment"]["PYTHON_VERSION"]
    assert re.fullmatch(r"3\.\d+", version)
    assert version == "3.11"


def test_netlify_previews_use_the_preview_url_and_flag() -> None:
    netlify = _netlify()
    preview = netlify["context"]["deploy-preview"]["command"]
    assert re.search(r'SITE_URL="?\$DEPLOY_PRIME_URL"?', preview)
    assert "evidence-dashboard build" in preview and "--preview" in preview
    assert "--preview" not in netlify["build"]["command"]


def test_this_repositorys_builds_and_report_name_their_trusted_registry() -> None:
    """Every build and report the shipped workflows run limits fetches to ghcr.io."""
    runs = [
        str(s.get("run", "")) for s in [*load(PAGES).steps("build"), *load(PR).steps("preview")]
    ]
    builds = [argv for run in runs for argv in build_commands(run)]
    assert len(builds) == 3
    for argv in builds:
        assert option(argv, "--trusted-registry") == "ghcr.io", argv
    reports = [run for run in runs if "evidence-dashboard report" in run]
    assert len(reports) == 1 and "--trusted-registry ghcr.io" in reports[0]


# --------------------------------------------------------------------------- the cache key


CACHE_KEY = "EVIDENCE_DASHBOARD_CACHE_KEY"


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_publishing_builds_take_the_cache_key_from_a_repository_secret(path: Any) -> None:
    """Both builds of the gate share one key, which pull requests never see."""
    for _, step in _build_steps(load(path).steps("build")):
        assert step["env"][CACHE_KEY] == "${{ secrets.EVIDENCE_DASHBOARD_CACHE_KEY }}"


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_the_gate_compares_build_info_but_for_its_cache_report(path: Any) -> None:
    gate = next(
        s for s in load(path).steps("build") if re.search(r"\bdiff -r\b", str(s.get("run", "")))
    )
    assert "--exclude=build-info.json" in gate["run"]
    assert 'pop("cache", None)' in gate["run"] and "data/build-info.json" in gate["run"]


def test_pull_requests_build_with_a_fresh_random_key_and_no_secret() -> None:
    wf = load(PR)
    assert "secrets." not in wf.text
    steps = wf.steps("preview")
    keyed = [
        i
        for i, s in enumerate(steps)
        if "openssl rand" in str(s.get("run", "")) and CACHE_KEY in str(s.get("run", ""))
    ]
    assert len(keyed) == 1 and "GITHUB_ENV" in steps[keyed[0]]["run"]
    assert "add-mask" in steps[keyed[0]]["run"]
    first_use = min(i for i, s in enumerate(steps) if "--cache" in str(s.get("run", "")))
    assert keyed[0] < first_use


# --------------------------------------------------------------------------- the signed manifest


def _signs(step: dict[str, Any]) -> bool:
    return "sigstore sign" in str(step.get("run", ""))


def test_id_token_only_where_signing_or_deploying_happens(workflow: Workflow) -> None:
    for name, job in workflow.jobs().items():
        if job["permissions"].get("id-token") != "write":
            continue
        steps = job.get("steps") or []
        deploys = [s for s in steps if action_of(s) == "actions/deploy-pages"]
        signing = [s for s in steps if _signs(s)]
        assert deploys or signing, f"{workflow.path.name}: job {name} holds id-token for nothing"


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_the_manifest_is_signed_after_the_gate_and_published_with_the_site(path: Any) -> None:
    steps = load(path).steps("build")
    first_out = option(build_commands(_build_steps(steps)[0][1]["run"])[0], "--out")
    assert first_out is not None
    signing = [(i, s) for i, s in enumerate(steps) if _signs(s)]
    assert len(signing) == 1, f"{path.name}: sign the manifest exactly once"
    i_sign, sign = signing[0]
    argv = sign["run"].split()
    assert argv[:3] == ["python", "-m", "sigstore"]
    manifest = f'"{first_out}/data/manifest.json"'
    assert option(argv, "--bundle") == f'"{first_out}/data/manifest.json.sigstore.json"'
    assert argv[-1] == manifest
    assert not sign.get("env"), "keyless signing takes GitHub's OIDC token, no secret"
    gate = next(i for i, s in enumerate(steps) if re.search(r"\bdiff -r\b", str(s.get("run", ""))))
    check = next(i for i, s in enumerate(steps) if "verify-site" in str(s.get("run", "")))
    upload = next(i for i, s in enumerate(steps) if action_of(s) == "actions/upload-pages-artifact")
    assert gate < i_sign < check < upload
    assert uses_of(steps[upload]) and steps[upload]["with"]["path"] == first_out.replace(
        "$RUNNER_TEMP", "${{ runner.temp }}"
    )
    verify = steps[check]
    assert "--certificate-oidc-issuer https://token.actions.githubusercontent.com" in verify["run"]
    assert "github.workflow_ref" in verify["env"]["SIGNER"]


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_both_builds_name_the_identity_that_signs(path: Any) -> None:
    """The "Verify this site" page shows the identity verify-site is run with."""
    steps = load(path).steps("build")
    check = next(s for s in steps if "verify-site" in str(s.get("run", "")))
    for _, step in _build_steps(steps):
        assert option(build_commands(step["run"])[0], "--publisher-identity") == "$PUBLISHER"
        assert step["env"]["PUBLISHER"] == check["env"]["SIGNER"]


@pytest.mark.parametrize("path", PUBLISHERS, ids=_ids)
def test_the_gate_compares_the_manifests_but_for_build_info(path: Any) -> None:
    gate = next(
        s for s in load(path).steps("build") if re.search(r"\bdiff -r\b", str(s.get("run", "")))
    )
    assert "--exclude=manifest.json" in gate["run"]
    assert 'f["path"] != "data/build-info.json"' in gate["run"]
    assert "site-a/data/manifest.json" in gate["run"] and "site-b/data/manifest.json" in gate["run"]
