"""No site configuration from the working directory, and none that runs code.

A hostile mkdocs.yml (hooks that write a marker file) in the working directory is never read;
given by --config it is refused with exit 2 before anything runs. The file checks themselves
(plugins, Markdown extensions, INHERIT, Python tags) are exercised on `load_site_config`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from generator.errors import UsageError
from generator.site.siteconfig import load_site_config
from tests.hostile.conftest import ROOT, Sandbox, new_sandbox

EVIL_HOOK = """\
from pathlib import Path

Path(__file__).with_name("HOOK-RAN").write_text("the hook ran")
"""
PACKAGED = ROOT / "generator" / "resources" / "mkdocs.yml"


def hostile_config(hook: Path) -> str:
    """The packaged configuration (a site MkDocs builds cleanly) with another title and a hook."""
    text = PACKAGED.read_text(encoding="utf-8").replace(
        "site_name: Recipe evidence", "site_name: HOSTILE CONFIGURATION WAS READ"
    )
    return f"{text}\nhooks:\n  - {hook}\n"


def site_digest(out: Path) -> dict[str, str]:
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


@pytest.fixture()
def box(tmp_path: Path) -> Sandbox:
    return new_sandbox(tmp_path)


def _plant(folder: Path) -> Path:
    hook = folder / "evil.py"
    hook.write_text(EVIL_HOOK, encoding="utf-8")
    config = folder / "mkdocs.yml"
    config.write_text(hostile_config(hook), encoding="utf-8")
    return config


@pytest.mark.slow
def test_mkdocs_yml_in_the_working_directory_is_never_read(box: Sandbox) -> None:
    clean = box.run("--reevaluate")
    assert clean.returncode == 0, clean.stderr
    before = site_digest(box.out)
    _plant(box.root)  # the build's working directory
    done = box.run("--reevaluate")
    assert not (box.root / "HOOK-RAN").exists()
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert site_digest(box.out) == before
    assert "HOSTILE" not in (box.out / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_hostile_config_given_by_option_is_refused(box: Sandbox) -> None:
    config = _plant(box.inputs)
    done = box.run("--config", str(config))
    assert not (box.inputs / "HOOK-RAN").exists()
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = json.loads(done.stdout)
    assert error["file"] == str(config) and error["key"] == "hooks"
    assert not box.out.exists()  # refused before anything was built


@pytest.mark.slow
def test_python_tag_in_config_is_refused_and_never_constructed(box: Sandbox) -> None:
    ran = box.inputs / "TAG-RAN"
    config = box.inputs / "site.yml"
    config.write_text(
        PACKAGED.read_text(encoding="utf-8") + f"extra:\n  boom: !!python/object/apply:os.system "
        f'["touch {ran}"]\n',
        encoding="utf-8",
    )
    done = box.run("--config", str(config))
    assert not ran.exists()
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = json.loads(done.stdout)
    assert error["file"] == str(config) and error["key"] == "extra.boom"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mkdocs.yml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("plugins:\n  - search\n  - macros\n", "plugins[1]"),
        ("plugins:\n  search: {}\n  evil: {}\n", "plugins[1]"),
        ("plugins:\n  - tags\n  - {exec: {x: 1}}\n", "plugins[1]"),
        ("markdown_extensions:\n  - toc\n  - evil_module\n", "markdown_extensions[1]"),
        ("INHERIT: other.yml\nsite_name: x\n", "INHERIT"),
        ("hooks: []\n", "hooks"),
        (
            "markdown_extensions:\n  - pymdownx.superfences:\n      custom_fences:\n"
            "        - name: m\n          format: !!python/name:os.system\n",
            "markdown_extensions[0].pymdownx.superfences.custom_fences[0].format",
        ),
        ("site_name: !relative $config_dir\n", "site_name"),
    ],
)
def test_code_running_config_is_refused(tmp_path: Path, text: str, key: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(UsageError) as err:
        load_site_config(path)
    assert err.value.exit_code == 2
    assert err.value.location is not None
    assert err.value.location.file == str(path) and err.value.location.key == key


@pytest.mark.parametrize(
    "config", [ROOT / "mkdocs.example.yml", ROOT / "generator" / "resources" / "mkdocs.yml"]
)
def test_the_shipped_configurations_pass(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITE_URL", "https://example.test/")
    cfg = load_site_config(config)
    assert cfg["plugins"] == ["search", "tags"]
    assert cfg["site_url"] == "https://example.test/"  # !ENV still works


def test_allowed_forms_and_aliases_pass(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "defaults: &d {x: 1}\nextra:\n  <<: *d\n  y: 2\n"
        "plugins:\n  - material/search\n  - tags: {}\n"
        "markdown_extensions:\n  - pymdownx.tabbed:\n"
        "      alternate_style: true\n  - markdown.extensions.toc\n",
    )
    cfg = load_site_config(path)
    assert cfg["extra"] == {"x": 1, "y": 2}


def test_broken_yaml_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not valid YAML"):
        load_site_config(_write(tmp_path, "site_name: [unclosed\n"))


def test_a_configuration_read_again_is_what_its_bytes_place_and_environment_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build reads its configuration three times and is answered from the last reading
    while nothing it depends on changed; each answer is a copy of its own."""
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: !ENV [SITE_TITLE, untitled]\nextra: {a: [1]}\n", encoding="utf-8")
    monkeypatch.setenv("SITE_TITLE", "first")
    one = load_site_config(config)
    one["extra"]["a"].append(2)  # a caller changing its copy changes no later answer
    assert load_site_config(config) == {"site_name": "first", "extra": {"a": [1]}}
    monkeypatch.setenv("SITE_TITLE", "second")  # the environment an !ENV tag reads
    assert load_site_config(config)["site_name"] == "second"
    config.write_text("site_name: edited\n", encoding="utf-8")  # the bytes
    assert load_site_config(config) == {"site_name": "edited"}
    moved = tmp_path / "other" / "mkdocs.yml"  # the same bytes in another place
    moved.parent.mkdir()
    moved.write_bytes(config.read_bytes())
    assert load_site_config(moved) == {"site_name": "edited"}
    config.write_text("site_name: x\nhooks: [h.py]\n", encoding="utf-8")
    with pytest.raises(UsageError):  # refused however often it is read
        load_site_config(config)
    with pytest.raises(UsageError):
        load_site_config(config)
