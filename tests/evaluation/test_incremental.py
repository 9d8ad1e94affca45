"""Incremental evaluation per recipe (generator.evaluate.perrecipe): a build after one change
re-evaluates only the recipes the change reaches, and publishes exactly what a cold build of the
same tree publishes.

Each test builds a private copy of the signed demo tree once (which stores every recipe's
product), makes one kind of change, builds again on the same cache, and compares that output,
file by file and byte by byte, with a cold build (a cache of its own, `--reevaluate`). The demo's
recipes and who signed them (verdict signers, by allowlist label):

- gb200-gke-...: nimbus-ai, acme-cloud/aicr-evidence
- gb300-eks-...: acme-cloud/aicr-evidence, acme-cloud/nightly
- gb300-generic-...: an unlisted signer
- gb300-oke-...: acme-cloud/aicr-evidence, gpulab-partner
- h100-aks-...: acme-cloud/aicr-evidence, an unlisted signer
- h100-eks-...: nimbus-ai, acme-cloud/aicr-evidence, gpulab-partner, an unlisted signer
- h200-k0s-...: nimbus-ai
- vr200-rke2-...: gpulab-partner; and a flat pending copy of its own (a recipe of its own here)
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import generator.build as build_module
import generator.evaluate.evaluation as evaluation_module
import generator.evaluate.productwrites as productwrites
from generator.build import BuildOptions, run_build
from generator.cachewriter import CacheWriter
from generator.data.laidout import LaidOutEntry
from generator.evaluate import Evaluation, evaluate
from generator.evaluate.memoize import counts_of
from generator.site.build import commit_mark
from generator.site.pagecache import PageCache
from generator.site.pages import RecipePages
from generator.site.rowcache import RowCache
from generator.testing.authority import TestAuthority

REPO = Path(__file__).resolve().parents[2]
ALL = 9
"""The demo's recipes: eight recipe folders and one flat pending copy."""
H100 = "evidence/h100-eks-ubuntu-training-kubeflow"
H200 = "evidence/h200-k0s-ubuntu-training"


class Tree:
    """A private copy of the demo tree, built on one warm cache."""

    def __init__(self, root: Path, seen: list[Evaluation], verified: list[int]) -> None:
        self.root = root
        self.verified = verified
        """How many bundles each build verified (its verdict cache misses)."""
        self.recipes = root / "recipes"
        self.cache = root / "cache"
        self.seen = seen
        shutil.copytree(REPO / "recipes", self.recipes)
        self.builds = 0
        self.extra: dict[str, Any] = {}
        """Options every build of the tree is given (its `--commit`)."""

    def options(self, out: Path, cache: Path, **extra: Any) -> BuildOptions:
        return BuildOptions.flat(
            recipes=self.recipes,
            out=out,
            cache=cache,
            offline=True,
            quiet=True,
            oci_layouts=(self.recipes / "bundles",),
            trust_root=self.recipes / "trust" / "trusted_root.json",
            **{**self.extra, **extra},
        )

    def build(self) -> tuple[Path, Evaluation]:
        """A build on the warm cache; its output and its evaluation."""
        self.builds += 1
        out = self.root / f"warm-{self.builds}"
        self.seen.clear()
        run_build(self.options(out, self.cache))
        assert len(self.seen) == 1, "the evaluation memo answered: nothing was evaluated"
        return out, self.seen[0]

    def cold(self) -> Path:
        """A cold build of the tree as it is now (a cache of its own, everything evaluated)."""
        out = self.root / "cold"
        shutil.rmtree(out, ignore_errors=True)
        cache = self.root / "cold-cache"
        shutil.rmtree(cache, ignore_errors=True)
        self.seen.clear()
        run_build(self.options(out, cache, reevaluate=True))
        assert self.seen[0].recipes_evaluated == ALL and self.seen[0].recipes_reused == 0
        self.cold_counts = counts_of(self.seen[0])
        return out

    def forget_memo(self) -> None:
        """Drop the whole-tree evaluation memo, so an unchanged tree is evaluated again."""
        shutil.rmtree(self.cache / "evaluation")

    def product_of(self, folder: str) -> Path:
        """The stored product file of the recipe whose pointers sit in `folder`."""
        needle = f'"path":"{folder}/'.encode()
        found = [p for p in (self.cache / "recipes").iterdir() if needle in p.read_bytes()]
        assert len(found) == 1, found
        return found[0]


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[Evaluation]:
    """Every evaluation the builds of a test made."""
    made: list[Evaluation] = []
    inner = build_module.evaluate

    def spy(*args: Any, **kwargs: Any) -> Evaluation:
        evaluation = inner(*args, **kwargs)
        made.append(evaluation)
        return evaluation

    monkeypatch.setattr(build_module, "evaluate", spy)
    return made


@pytest.fixture
def verified(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pointers each evaluation had to verify (the verdict cache did not answer)."""
    counts: list[int] = []
    inner = evaluation_module.split_cached

    def spy(*args: Any, **kwargs: Any) -> Any:
        answered, misses = inner(*args, **kwargs)
        counts.append(len(misses))
        return answered, misses

    monkeypatch.setattr(evaluation_module, "split_cached", spy)
    return counts


@pytest.fixture
def tree(tmp_path: Path, seen: list[Evaluation], verified: list[int]) -> Iterator[Tree]:
    yield Tree(tmp_path, seen, verified)


def files(root: Path) -> dict[str, bytes]:
    """Every file under `root` (data files and site pages), by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def assert_same_as_cold(tree: Tree, out: Path) -> None:
    incremental, cold = files(out), files(tree.cold())
    assert sorted(incremental) == sorted(cold)
    differ = [name for name in cold if incremental[name] != cold[name]]
    assert differ == []


def signer_labels(out: Path) -> set[Any]:
    """Every signer label the site's data/pointers.json shows."""
    doc = json.loads((out / "data" / "pointers.json").read_bytes())
    return {(p["signer"] or {}).get("label") for p in doc["pointers"]}


def pointers(folder: Path) -> list[Path]:
    return sorted(folder.rglob("sha256-*.yaml"))


def allowlist(tree: Tree) -> Path:
    return tree.recipes / "evidence" / "allowlist.yaml"


def without_entry(text: str, label: str) -> str:
    """The allowlist text without the community entry labelled `label` (three lines)."""
    lines = text.splitlines(keepends=True)
    start = lines.index(f"  - label: {label}\n")
    return "".join(lines[:start] + lines[start + 3 :])


def change_and_compare(
    tree: Tree,
    change: Callable[[Tree], None],
    evaluated: int,
    verified: int | None,
    before: Callable[[Tree], None] | None = None,
) -> None:
    """`before` the warm build, then `change`, then a build that must re-evaluate `evaluated`
    recipes, verify `verified` bundles (None: every one the first build verified), reuse the
    rest and publish what a cold build publishes (and not what the build before the change
    published: every change here shows on the site)."""
    if before is not None:
        before(tree)
    tree.verified.clear()
    first, evaluation = tree.build()
    assert evaluation.recipes_evaluated == ALL and evaluation.recipes_reused == 0
    change(tree)
    out, evaluation = tree.build()
    assert (evaluation.recipes_evaluated, evaluation.recipes_reused) == (evaluated, ALL - evaluated)
    assert tree.verified[0] > 0
    assert tree.verified[1] == (tree.verified[0] if verified is None else verified)
    assert files(out) != files(first)
    assert_same_as_cold(tree, out)
    # the build summary counts the reused pointers as the cold build counts them
    assert counts_of(evaluation) == tree.cold_counts
    assert (len(evaluation.reused) > 0) is (evaluated < ALL)
    assert evaluated == ALL or tree.cold_counts.verified > 0  # reused verified pointers counted


# --------------------------------------------------------------------------- each kind of change


def test_a_removed_pointer_re_evaluates_its_recipe_only(tree: Tree) -> None:
    change_and_compare(
        tree, lambda t: pointers(t.recipes / H100)[0].unlink(), evaluated=1, verified=0
    )


def test_products_a_helper_wrote_are_reused_as_those_written_here(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's products written by a helper process (`generator.evaluate.productwrites`,
    made to hand over the demo's few recipes): the next build reuses them alike."""
    helpers: list[Any] = []
    real = CacheWriter.start

    def counted(folder: Path) -> Any:
        writer = real(folder)
        if writer is not None:
            helpers.append(writer)
        return writer

    monkeypatch.setattr(productwrites, "MIN_HANDED", 1)
    monkeypatch.setattr(CacheWriter, "start", staticmethod(counted))
    change_and_compare(
        tree, lambda t: pointers(t.recipes / H100)[0].unlink(), evaluated=1, verified=0
    )
    assert len(helpers) >= 2  # the first build's products and the second's, each by a helper
    assert not productwrites._WRITING  # every build waited for its helper


def test_an_added_pointer_re_evaluates_its_recipe_only(tree: Tree) -> None:
    stash = tree.root / "stash.yaml"
    victim = pointers(tree.recipes / H100)[0]

    def take(t: Tree) -> None:
        shutil.move(victim, stash)

    change_and_compare(
        tree, lambda t: shutil.move(stash, victim), evaluated=1, verified=1, before=take
    )


def test_a_replaced_pointer_re_evaluates_its_recipe_only(tree: Tree) -> None:
    """One pointer of a recipe goes, another comes (two bundles of one signer)."""
    kept, swapped = pointers(tree.recipes / H100 / "6afcbba3212e46571a8e4527e58f56a2")
    stash = tree.root / "stash.yaml"

    def take(t: Tree) -> None:
        shutil.move(swapped, stash)

    def replace(t: Tree) -> None:
        kept.unlink()
        shutil.move(stash, swapped)

    change_and_compare(tree, replace, evaluated=1, verified=1, before=take)


def test_a_changed_overlay_re_evaluates_the_recipes_it_is_current_for(tree: Tree) -> None:
    """The overlay's recipe is now stale: its pages show the diff."""
    overlay = tree.recipes / "overlays" / "h200-k0s-ubuntu-training.yaml"

    def change(t: Tree) -> None:
        text = overlay.read_text(encoding="utf-8")
        assert "version: v" in text
        overlay.write_text(text.replace("version: v", "version: v9", 1), encoding="utf-8")

    change_and_compare(tree, change, evaluated=1, verified=0)


def _overlay(tree: Tree, recipe: str) -> Path:
    return tree.recipes / "overlays" / f"{recipe}.yaml"


def _overlay_added(t: Tree) -> None:
    """gb300-generic had no overlay (freshness unknown); it gets h200's."""
    assert not _overlay(t, "gb300-generic-ubuntu-training").exists()
    shutil.copyfile(
        _overlay(t, "h200-k0s-ubuntu-training"), _overlay(t, "gb300-generic-ubuntu-training")
    )


def _overlay_removed(t: Tree) -> None:
    _overlay(t, "h200-k0s-ubuntu-training").unlink()


def _overlay_broken(t: Tree) -> None:
    _overlay(t, "h200-k0s-ubuntu-training").write_text("kind: [RecipeResult\n", "utf-8")


def _pointer_broken(t: Tree) -> None:
    """One of h100-eks's pointers no longer parses: it is reported, its recipe is evaluated
    with the others."""
    pointers(t.recipes / H100)[0].write_text("recipe: [unclosed\n", encoding="utf-8")


def _two_at_once(t: Tree) -> None:
    pointers(t.recipes / H100)[0].unlink()
    _overlay_removed(t)


@pytest.mark.parametrize(
    ("change", "evaluated"),
    [
        (_overlay_added, 1),
        (_overlay_removed, 1),
        (_overlay_broken, 1),
        (_pointer_broken, 1),
        (_two_at_once, 2),
    ],
    ids=["overlay added", "overlay removed", "overlay broken", "pointer broken", "two at once"],
)
def test_more_kinds_of_change_re_evaluate_what_they_reach_and_publish_the_cold_site(
    tree: Tree, change: Callable[[Tree], None], evaluated: int
) -> None:
    """An overlay that appears or goes (the key names an absent overlay too), one that no
    longer parses, a pointer file that no longer parses, and two changes in two recipes at
    once."""
    change_and_compare(tree, change, evaluated=evaluated, verified=0)


def test_an_added_allowlist_entry_re_evaluates_the_recipes_of_its_signer(tree: Tree) -> None:
    text = allowlist(tree).read_text(encoding="utf-8")

    def take(t: Tree) -> None:
        allowlist(t).write_text(without_entry(text, "nimbus-ai"), encoding="utf-8")

    change_and_compare(
        tree,
        lambda t: allowlist(t).write_text(text, encoding="utf-8"),
        evaluated=3,
        verified=0,  # the allowlist decides what a verdict counts for, not the verdict
        before=take,
    )


def test_a_removed_allowlist_entry_re_evaluates_the_recipes_of_its_signer(tree: Tree) -> None:
    def remove(t: Tree) -> None:
        text = allowlist(t).read_text(encoding="utf-8")
        allowlist(t).write_text(without_entry(text, "nimbus-ai"), encoding="utf-8")

    change_and_compare(tree, remove, evaluated=3, verified=0)


def with_entry_on_top(text: str) -> str:
    """The allowlist text with a first community entry for the unlisted signer (of the
    gb300-generic, h100-aks and h100-eks recipes)."""
    top = "  - label: acme-cloud/aicr-evidence\n"
    newcomer = (
        "  - label: someone\n"
        "    issuer: https://github.com/login/oauth\n"
        "    source: bad8c17387a34634f7e648b68ca4acda\n"
    )
    assert top in text
    return text.replace(top, newcomer + top, 1)


def test_an_allowlist_entry_added_above_the_others_re_evaluates_the_recipes_of_its_signer(
    tree: Tree,
) -> None:
    """An entry's place in the file is not part of what a product depends on: the entries
    below the new one moved, their signers are classified as before, and only the three
    recipes of the newly listed signer are evaluated (not the four more of the signers below)."""
    change_and_compare(
        tree,
        lambda t: allowlist(t).write_text(with_entry_on_top(allowlist(t).read_text()), "utf-8"),
        evaluated=3,
        verified=0,
    )


def test_the_first_allowlist_entry_removed_re_evaluates_the_recipes_of_its_signer_only(
    tree: Tree,
) -> None:
    """The five recipes acme-cloud/aicr-evidence signs; not those of the signers whose entries
    moved up in its place (nimbus-ai's h200 recipe among them)."""

    def remove(t: Tree) -> None:
        text = allowlist(t).read_text(encoding="utf-8")
        allowlist(t).write_text(without_entry(text, "acme-cloud/aicr-evidence"), "utf-8")

    change_and_compare(tree, remove, evaluated=5, verified=0)


NIMBUS = (
    "  - label: nimbus-ai\n"
    "    issuer: https://github.com/login/oauth\n"
    "    source: 01b371adbfaf2b2ccfd905f302fab231\n"
)
NIMBUS_BY_PATTERN = (
    "  - label: nimbus-ai-by-pattern\n"
    "    issuer: https://github.com/login/oauth\n"
    "    identityPattern: '^gpu-validation@nimbus-ai\\.example$'\n"
)


def test_two_entries_of_one_signer_swapped_re_evaluate_nothing_and_change_nothing(
    tree: Tree,
) -> None:
    """What tries to break the reuse of products across moved entries: nimbus-ai's signer is
    listed twice (by its source and by a pattern, under another label) and the two entries
    swap places. Classification does not depend on the order (a source entry is preferred to
    a pattern, whatever their places), so nothing is evaluated, the site is what it was and
    what a cold build makes."""
    text = allowlist(tree).read_text(encoding="utf-8")
    assert NIMBUS in text
    allowlist(tree).write_text(text.replace(NIMBUS, NIMBUS + NIMBUS_BY_PATTERN), "utf-8")
    first, _ = tree.build()
    swapped = allowlist(tree).read_text(encoding="utf-8")
    allowlist(tree).write_text(
        swapped.replace(NIMBUS + NIMBUS_BY_PATTERN, NIMBUS_BY_PATTERN + NIMBUS), "utf-8"
    )
    out, evaluation = tree.build()
    assert (evaluation.recipes_evaluated, evaluation.recipes_reused) == (0, ALL)
    assert files(out) == files(first)
    labels = signer_labels(out)
    assert "nimbus-ai" in labels and "nimbus-ai-by-pattern" not in labels
    assert_same_as_cold(tree, out)


def _commit(tree: Tree, message: str, *flags: str) -> None:
    """Commit the tree (a checkout of its own) and build with that commit, as the CLI does."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tree.recipes), "-c", "user.name=t", "-c", "user.email=t@e.test"]
            + ["-c", "commit.gpgsign=false", *args],
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    if not (tree.recipes / ".git").exists():
        git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", message, *flags)
    tree.extra["commit"] = git("rev-parse", "HEAD")


def _explaining(out: Path) -> set[str]:
    """The recipes one of whose entries explains stale evidence (from git's history)."""
    doc = json.loads((out / "data" / "pointers.json").read_text(encoding="utf-8"))
    return {
        str(p.get("recipe"))
        for p in doc["pointers"]
        if ((p.get("freshness") or {}).get("explanation")) is not None
    }


def test_a_new_commit_re_evaluates_only_the_recipes_explaining_stale_evidence(
    tree: Tree,
) -> None:
    """A product whose entries name no commit stands at any commit: a PR's next push, with the
    tree's bytes unchanged, re-evaluates only what reads the history (the commits since a
    stale attestation), and the site is the cold build's (which names the new commit)."""
    _commit(tree, "the evidence tree")
    stale = _explaining(tree.build()[0])
    assert 0 < len(stale) < ALL
    change_and_compare(
        tree,
        lambda t: _commit(t, "the next push", "--allow-empty"),
        evaluated=len(stale),
        verified=0,
        before=lambda t: shutil.rmtree(t.cache),
    )


def _rendered_on_the_next_push(tree: Tree) -> tuple[Path, list[str], int]:
    """Build, commit nothing new, build again: the second build's output, the recipe pages it
    rendered (the demo's pages are all rendered in this process) and how many rows of the
    Markdown pages it rendered."""
    _commit(tree, "the evidence tree")
    tree.build()
    _commit(tree, "the next push", "--allow-empty")
    rendered: list[str] = []
    row_caches: list[RowCache] = []
    real, real_rows = RecipePages.render, RowCache.__init__

    def counting(self: RecipePages, tab: Any) -> Any:
        rendered.append(tab.recipe)
        return real(self, tab)

    def kept(self: RowCache, *args: Any) -> None:
        real_rows(self, *args)
        row_caches.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RecipePages, "render", counting)
        patch.setattr(RowCache, "__init__", kept)
        out, _ = tree.build()
    assert len(row_caches) == 1  # the Markdown pages were rendered again (the About page)
    return out, rendered, row_caches[0].rendered


def test_a_new_commit_finishes_each_cached_recipe_page_body_in_the_new_shell(tree: Tree) -> None:
    """Without a source URL the commit is shown only in the shell's footer and on the About
    page: after the next push every recipe page is its cached body in the new shell and every
    row of the Markdown pages comes from the cache, none is rendered again, and the site is
    the cold build's at the new commit."""
    out, rendered, rows = _rendered_on_the_next_push(tree)
    assert (rendered, rows) == ([], 0)
    commit = tree.extra["commit"]
    page = next((out / "recipes").glob("*/index.html")).read_text(encoding="utf-8")
    assert commit[:12] in page  # the footer names the new commit
    assert f"commit <code>{commit}</code>" in (out / "about" / "index.html").read_text()
    assert_same_as_cold(tree, out)


def test_with_a_source_url_a_new_commit_renders_nothing_and_links_the_new_commit(
    tree: Tree,
) -> None:
    """With a source URL every evidence card links its pointer file at the commit. The bodies
    and rows are rendered with a secret mark in its place and kept so; each page written gets
    the commit. After the next push nothing is rendered again, every link names the new
    commit, the mark is nowhere in the site, and the site is the cold build's."""
    tree.extra["source_url"] = "https://github.com/example/evidence"
    out, rendered, rows = _rendered_on_the_next_push(tree)
    assert (rendered, rows) == ([], 0)
    commit = tree.extra["commit"]
    blob = f"https://github.com/example/evidence/blob/{commit}/recipes/evidence/"
    pages = sorted(p.parent.name for p in (out / "recipes").glob("*/index.html"))
    assert pages and any(blob in (out / "recipes" / p / "index.html").read_text() for p in pages)
    assert blob in (out / "rejected" / "index.html").read_text()  # a Markdown page's card
    mark = commit_mark(PageCache(tree.cache / "pages")).encode()
    site = files(out)
    assert not [name for name, data in site.items() if mark in data]
    linked = b"https://github.com/example/evidence/blob/"
    assert all(data.count(linked) == data.count(linked + commit.encode()) for data in site.values())
    assert_same_as_cold(tree, out)


def test_a_changed_label_re_evaluates_nothing_and_shows_the_new_label(tree: Tree) -> None:
    """A label only names a signer: every product is reused, its entries renamed."""

    def relabel(t: Tree) -> None:
        text = allowlist(t).read_text(encoding="utf-8")
        new = text.replace("label: acme-cloud/nightly\n", "label: acme-cloud/nightly-2\n")
        assert new != text
        allowlist(t).write_text(new, encoding="utf-8")

    change_and_compare(tree, relabel, evaluated=0, verified=0)
    out = tree.root / f"warm-{tree.builds}"
    labels = signer_labels(out)
    assert "acme-cloud/nightly-2" in labels and "acme-cloud/nightly" not in labels
    # the products of the renamed signer's recipe were stored again with the new label, so
    # the next build writes their entries from their text, none parsed (a page's key is its
    # entries' content, whether they were kept laid out or made: no page is rendered again)
    stored = (tree.product_of("evidence/gb300-eks-ubuntu-inference-dynamo")).read_bytes()
    assert b'"label":"acme-cloud/nightly-2"' in stored and b'"acme-cloud/nightly"' not in stored
    parsed: list[str] = []
    real = LaidOutEntry._parsed

    def counting(self: LaidOutEntry) -> dict[str, Any]:
        if not self.is_parsed:
            parsed.append(str(self.get("path")))
        return real(self)

    tree.forget_memo()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LaidOutEntry, "_parsed", counting)
        out, evaluation = tree.build()
    assert (evaluation.recipes_evaluated, parsed) == (0, [])
    assert_same_as_cold(tree, out)


def test_another_trust_root_re_evaluates_everything(tree: Tree) -> None:
    """Under another authority's root every bundle is rejected: nothing is reused."""
    other = TestAuthority("incremental-other-root", name="another root")

    def change(t: Tree) -> None:
        root = t.recipes / "trust" / "trusted_root.json"
        root.write_bytes(other.trusted_root_json())

    change_and_compare(tree, change, evaluated=ALL, verified=None)


def test_a_reevaluation_and_the_pr_report_path_evaluate_everything(tree: Tree) -> None:
    tree.build()
    tree.forget_memo()
    _, again = tree.build()
    assert (again.recipes_evaluated, again.recipes_reused) == (0, ALL)
    whole = evaluate(tree.options(tree.root / "unused", tree.cache).evaluation)
    assert (whole.recipes_evaluated, whole.recipes_reused) == (ALL, 0)
    tree.seen.clear()
    run_build(tree.options(tree.root / "again", tree.cache, reevaluate=True))
    assert (tree.seen[0].recipes_evaluated, tree.seen[0].recipes_reused) == (ALL, 0)


# --------------------------------------------------------------------------- a hostile cache


def flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "swapped", "link"])
def test_a_damaged_product_is_rejected_and_its_recipe_evaluated_again(
    tree: Tree, damage: str
) -> None:
    """One recipe's stored product is damaged; that recipe alone is evaluated again, with the
    verdicts a cold build gives, the damage is counted as an authentication failure (a link
    is not read at all) and the product is stored afresh."""
    tree.build()
    tree.forget_memo()
    target = tree.product_of(H200)
    if damage == "flipped byte":
        flip(target)
    elif damage == "truncated":
        truncate(target)
    elif damage == "swapped":  # another recipe's authentic product under this one's key
        shutil.copyfile(tree.product_of("evidence/gb300-generic-ubuntu-training"), target)
    else:
        moved = target.with_name("elsewhere")
        target.rename(moved)
        target.symlink_to(moved.name)
    out, evaluation = tree.build()
    assert (evaluation.recipes_evaluated, evaluation.recipes_reused) == (1, ALL - 1)
    cold = tree.cold()
    data = out / "data"
    for name in ("pointers.json", "index.json"):
        assert (data / name).read_bytes() == (cold / "data" / name).read_bytes()
    assert files(data / "series") == files(cold / "data" / "series")
    failures = json.loads((data / "build-info.json").read_bytes())["cache"]
    assert failures == {"authenticationFailures": 0 if damage == "link" else 1}
    tree.forget_memo()
    out, evaluation = tree.build()
    assert (evaluation.recipes_evaluated, evaluation.recipes_reused) == (0, ALL)
    assert json.loads((out / "data" / "build-info.json").read_bytes())["cache"] == {
        "authenticationFailures": 0
    }
    assert_same_as_cold(tree, out)


@pytest.mark.parametrize("where", ["middle", "last-entry-text"])
def test_an_entry_file_changed_to_its_own_size_costs_one_evaluation_more(
    tree: Tree, where: str
) -> None:
    """A product's file of laid-out entries changed without changing its size passes the
    product's read (only its size is checked there) and is found when an entry's text is read
    to write data/pointers.json (its layout, or its finished text, the file's last bytes):
    the build starts its evaluation again, that recipe a miss, and publishes the data a cold
    build publishes, the damage counted and the product stored afresh."""
    tree.build()
    tree.forget_memo()
    layouts = tree.product_of(H200).with_suffix(".layouts")
    intact = layouts.read_bytes()
    if where == "middle":
        flip(layouts)
    else:
        layouts.write_bytes(intact[:-3] + bytes([intact[-3] ^ 1]) + intact[-2:])
    out = tree.root / "after-damage"
    tree.seen.clear()
    run_build(tree.options(out, tree.cache))
    runs = [(e.recipes_evaluated, e.recipes_reused) for e in tree.seen]
    assert runs == [(0, ALL), (1, ALL - 1)]
    cold = tree.cold()
    for name in ("pointers.json", "index.json"):
        assert (out / "data" / name).read_bytes() == (cold / "data" / name).read_bytes()
    assert files(out / "data" / "series") == files(cold / "data" / "series")
    info = json.loads((out / "data" / "build-info.json").read_bytes())
    assert info["cache"] == {"authenticationFailures": 1}
    assert layouts.read_bytes() == intact
