"""Pull-request mode checks the change's neighbourhood only: it must decide exactly as checking everything.

The argument is in validator/pr/neighbourhood.py; these tests hold it to account: every registry check
is classified, random pull requests over a registry full of cross-file relations (shared ids,
identical configurations, copied claims, shared and missing runs, paths that differ by case) give
the same findings both ways, and a warm key index keeps the work proportional to the change.
"""

from __future__ import annotations

import gc
import json
import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.testing.factories import add_training_run, h100_training_run, recipe_text, run_path
from tests.testing.git import commit_all, git
from tests.testing.registry import make_registry, write
from validator.boards.keyfile import blob_id, fresh_key_files, published_files, shard_name, shard_path
from validator.checks import all_checks, by_scope
from validator.cli import main
from validator.engine.evaluate import Config, analyse, evaluate
from validator.git.diff import BaseTree
from validator.load import pipeline
from validator.pr import incremental
from validator.pr.incremental import _PathKeyHolders
from validator.pr.neighbourhood import neighbourhood
from validator.registry.layout import KEYS_DIR, KEYS_PATH
from validator.registry.relations import keys_of, path_keys
from validator.registry.store import store_run_document

SCENARIOS = 24  # random pull requests compared with a full check (each on its own git repository)


def test_every_registry_check_says_whether_it_compares_files() -> None:
    for c in by_scope("registry"):
        assert (c.related_by is not None) != c.per_file, (
            f"{c.code}: say related_by=KEY or per_file=True on its @check (validator/pr/neighbourhood.py)"
        )


def test_two_hops_reach_the_groups_of_every_file_a_change_touches() -> None:
    base = {"a": ("i:x",), "b": ("i:x", "d:1"), "c": ("d:1", "d:2"), "d": ("d:2",), "e": ("i:y",)}
    assert neighbourhood(base, {}, {"a"}) == {"a", "b", "c"}  # c completes b's d:1 group; d is three hops away
    assert neighbourhood(base, {"new": ("i:y",)}, {"new"}) == {"new", "e"}
    assert neighbourhood(base, {"a": ("i:z",)}, {"a"}) == {"a", "b", "c"}  # the old version's keys count too


def test_the_second_hop_follows_no_pairwise_key() -> None:
    # x ties the changed run by a sample key (ORV304 judges the pair alone), y ties only x: y's pair with x is
    # judged the same on both sides, so y stays out; the recipe naming x is reached (a group x belongs to)
    base = {
        "c": ("s:training:n:1",),
        "x": ("r:x", "s:training:n:1", "s:training:n:2"),
        "y": ("s:training:n:2",),
        "recipe": ("r:x", "d:1"),
        "twin": ("d:1",),
    }
    assert neighbourhood(base, {}, {"c"}) == {"c", "x", "recipe"}
    # the same keys of a grouping kind are followed twice: the recipe's d:1 group is complete
    assert neighbourhood(base, {}, {"x"}) == {"x", "c", "y", "recipe", "twin"}


# --------------------------------------------------------------------------- random pull requests

STEMS = ["qwen-a", "qwen-b", "qwen-c", "Qwen-a", "qwen-d"]
LAYOUTS = ["tp1-pp4-dp2", "tp2-pp2-dp2", "tp4-pp1-dp2"]
CLAIMS = [1480.4, 1612.0, 1500.0]
MISSING = "ab" * 32


def random_recipe(rng: random.Random, stem: str, runs: list[str]) -> str:
    rid = stem.lower() if rng.random() < 0.8 else rng.choice(STEMS).lower()
    refs = tuple(rng.sample(runs + [MISSING], k=rng.choice([0, 1, 1, 2])))
    text = recipe_text(
        rid,
        claimed=rng.choice(CLAIMS),
        runs=refs,
        layout=rng.choice(LAYOUTS),
        version=rng.choice(["0.30.0", "0.30.0", "latest"]),
    )
    if rng.random() < 0.2:  # the same claim at another GPU count (ORV303, and a layout that no longer covers it)
        text = text.replace("count: 8", "count: 16")
    return text


def recipe_rel(stem: str) -> str:
    return f"recipes/training/qwen3.8-27b/{stem}.yaml"


def publish_keys(repo: Path) -> None:
    """What main's boards workflow does for the key file: regenerate boards/keys.json and commit it."""
    for rel, data in fresh_key_files(analyse(str(repo)).snapshot).items():
        write(repo, rel, data.decode("utf-8"))
    commit_all(repo, "keys")


def build_base(tmp_path: Path, rng: random.Random, published: bool = False) -> tuple[Path, list[str]]:
    repo = make_registry(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    runs = [add_training_run(repo, claim, layout=layout) for claim, layout in zip(CLAIMS, LAYOUTS)]
    for stem in rng.sample(STEMS, k=4):
        write(repo, recipe_rel(stem), random_recipe(rng, stem, runs))
    if rng.random() < 0.7:
        write(repo, "runs/stray.json", "{}")
    commit_all(repo, "main")
    if published:  # a fresh runner then takes the unchanged files' keys from main's key file
        publish_keys(repo)
    git(repo, "checkout", "-q", "-b", "pr")
    return repo, runs


def mutate(repo: Path, rng: random.Random, runs: list[str]) -> list[str]:
    """One to three random edits a pull request can make; returns what was done."""
    done = []
    for _ in range(rng.randint(1, 3)):
        present = sorted(p.name[:-5] for p in (repo / "recipes/training/qwen3.8-27b").glob("*.yaml"))
        action = rng.choice(["add", "edit", "edit", "delete", "add-run", "delete-run", "tamper-run", "stray", "stray"])
        if action == "add" or (action in ("edit", "delete") and not present):
            stem = rng.choice(STEMS + ["qwen-e"])
            write(repo, recipe_rel(stem), random_recipe(rng, stem, runs))
        elif action == "edit":
            stem = rng.choice(present)
            write(repo, recipe_rel(stem), random_recipe(rng, stem, runs))
        elif action == "delete":
            os.remove(repo / recipe_rel(rng.choice(present)))
        elif action == "add-run":
            runs.append(
                add_training_run(
                    repo,
                    rng.choice([1480.4, 1612.0, 1700.0]),
                    measured_by=f"lab-{rng.randint(1, 9)}",
                    layout=rng.choice(LAYOUTS),
                )
            )
        elif action in ("delete-run", "tamper-run"):
            path = repo / run_path(rng.choice(runs))
            if path.exists():
                if action == "delete-run":
                    path.unlink()
                else:
                    path.write_bytes(path.read_bytes().replace(b'"lab-a"', b'"lab-b"'))
        else:  # a file with no place, maybe differing only by case from one on main (ORV117)
            write(repo, f"runs/{rng.choice(['Stray', 'STRAY', 'notes'])}.json", json.dumps({"kind": "training"}))
        done.append(action)
    if rng.random() < 0.7:
        commit_all(repo, "the pull request")  # else the contributor checks before committing
    return done


@pytest.mark.slow
@pytest.mark.git
def test_random_pull_requests_are_judged_as_a_full_check_judges_them(tmp_path: Path) -> None:
    codes: Counter[str] = Counter()
    checked = 0
    for seed in range(SCENARIOS):
        rng = random.Random(seed)
        repo, runs = build_base(tmp_path / str(seed), rng, published=seed % 2 == 0)
        if rng.random() < 0.5:  # a contributor who ran `orv check` before: the key index is warm
            evaluate(Config(root=str(repo), cache=True))
        actions = mutate(repo, rng, runs)
        whole = evaluate(Config(root=str(repo), base="main", skip_boards=True, neighbourhood=False))
        sizes = set()
        for cache in (False, True):
            near = evaluate(Config(root=str(repo), base="main", skip_boards=True, cache=cache))
            assert near.partial, actions
            assert near.result.diagnostics == whole.result.diagnostics, (seed, actions)
            sizes.add(near.result.files_checked)
            checked += 1
        # keys from the published shards, the local index or loading: the same neighbourhood
        assert len(sizes) == 1, (seed, actions, sizes)
        codes.update(d.code for d in whole.result.diagnostics)
    assert checked == 2 * SCENARIOS
    # The scenarios reach the cross-file checks, or the comparison proves little.
    assert len({code for code in codes if all_checks()[code].related_by}) >= 6, codes
    assert "ORV304" in codes, codes  # copies among the runs: the pairwise rule's one hop is compared too


# --------------------------------------------------------------------------- the key index


def add_recipe(repo: Path, rid: str, claim: float, layout: str, version: str) -> str:
    """A valid recipe and its run; the version sets the configuration apart from the others."""
    document = h100_training_run(claim, layout=layout)
    document["software"]["framework"]["version"] = version
    digest = store_run_document(str(repo), document).digest
    write(repo, recipe_rel(rid), recipe_text(rid, claimed=claim, runs=(digest,), layout=layout, version=version))
    return digest


@pytest.fixture
def wide_repo(tmp_path: Path) -> Path:
    """main with 12 unrelated valid recipes (each its own run and configuration), and a branch `pr`."""
    repo = make_registry(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    for i in range(12):
        add_recipe(repo, f"qwen-{i:02d}", 1400.0 + 10 * i, LAYOUTS[i % 3], f"0.30.{i}")
    commit_all(repo, "main")
    assert evaluate(Config(root=str(repo), skip_boards=True)).result.diagnostics == ()
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def count_loads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    loads: Counter[str] = Counter()
    real = pipeline._load_one

    def counted(rel: str) -> Any:
        loads[rel] += 1
        return real(rel)

    monkeypatch.setattr(pipeline, "_load_one", counted)
    return loads


@pytest.mark.git
def test_a_warm_index_loads_only_the_neighbourhood(wide_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evaluate(Config(root=str(wide_repo), cache=True))  # the contributor's first `orv check` fills the index
    digest = add_recipe(wide_repo, "qwen-new", 1612.0, "tp2-pp2-dp2", "0.31.0")
    loads = count_loads(monkeypatch)
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=True))
    assert near.partial and near.result.diagnostics == ()
    assert set(loads) == {recipe_rel("qwen-new"), run_path(digest)}
    assert near.result.files_checked == 2


@pytest.mark.git
def test_a_cold_index_loads_each_recipe_once_then_remembers(wide_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(wide_repo, recipe_rel("qwen-new"), recipe_text("qwen-new", version="0.31.0"))
    loads = count_loads(monkeypatch)
    evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=True))
    assert sum(1 for rel in loads if rel.startswith("recipes/")) == 13 and max(loads.values()) == 1
    # run files are loaded once too: the fingerprint of their samples is a key (ORV304)
    assert all(count == 1 for rel, count in loads.items() if rel.startswith("runs/"))
    loads.clear()
    evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=True))
    assert set(loads) == {recipe_rel("qwen-new")}


@pytest.mark.git
def test_an_edited_recipe_on_main_is_loaded_again_not_taken_from_the_index(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evaluate(Config(root=str(wide_repo), cache=True))
    with on_main(wide_repo):
        rel = recipe_rel("qwen-03")
        write(wide_repo, rel, (wide_repo / rel).read_text(encoding="utf-8").replace("0.30.3", "0.30.0"))
        commit_all(wide_repo, "main moves on: qwen-03 now has qwen-00's configuration (and disagrees with its run)")
    add_recipe(wide_repo, "qwen-new", 1612.0, "tp2-pp2-dp2", "0.31.0")
    loads = count_loads(monkeypatch)
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=True))
    assert rel in loads  # its blob changed, so its indexed keys were not trusted
    assert near.result.diagnostics == ()  # main's own duplicate is not the pull request's


@pytest.mark.git
def test_a_catalog_change_checks_everything(wide_repo: Path) -> None:
    catalog = wide_repo / "catalog" / "hardware.yaml"
    catalog.write_text(catalog.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    evaluation = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True))
    assert not evaluation.partial
    assert evaluation.result.files_checked >= 24


# --------------------------------------------------------------------------- the published key file (a fresh runner)


@pytest.mark.git
def test_a_fresh_runner_takes_keys_from_mains_key_file_and_loads_only_the_neighbourhood(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with on_main(wide_repo):
        assert main(["boards", "--root", str(wide_repo)]) == 0  # as main's boards workflow does
        commit_all(wide_repo, "boards")
    digest = add_recipe(wide_repo, "qwen-new", 1612.0, "tp2-pp2-dp2", "0.31.0")
    loads = count_loads(monkeypatch)
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))  # no .git/orv
    assert near.partial and near.result.diagnostics == ()
    assert set(loads) == {recipe_rel("qwen-new"), run_path(digest)}
    # without the key file the same check loads every recipe and run file to find their keys
    with on_main(wide_repo):
        git(wide_repo, "rm", "-q", KEYS_PATH)
        commit_all(wide_repo, "no key file")
    loads.clear()
    evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    assert len(loads) == 26


@pytest.mark.git
def test_published_keys_find_what_the_change_duplicates_or_copies(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_on_main(wide_repo)
    # qwen-03's configuration again (ORV302, found through its d: key) ...
    text = (wide_repo / recipe_rel("qwen-03")).read_text(encoding="utf-8").replace("id: qwen-03", "id: qwen-dup")
    write(wide_repo, recipe_rel("qwen-dup"), text)
    # ... and qwen-05's samples stored again under another measurer (ORV304, found through its s: key)
    original = json.loads((wide_repo / run_path(run_of(wide_repo, "qwen-05"))).read_text(encoding="utf-8"))
    original["measured_by"] = "lab-z"
    copy = store_run_document(str(wide_repo), original).digest
    loads = count_loads(monkeypatch)
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    loaded = set(loads)
    assert {recipe_rel("qwen-03"), run_path(run_of(wide_repo, "qwen-05"))} <= loaded  # the neighbours
    assert len(loaded) < 10 and run_path(copy) in loaded
    whole = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, neighbourhood=False))
    assert near.partial and near.result.diagnostics == whole.result.diagnostics
    codes = {d.code for d in near.result.diagnostics}
    assert {"ORV302", "ORV304"} <= codes, codes


@pytest.mark.git
def test_a_key_file_made_by_another_orv_or_for_another_blob_is_not_trusted(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with on_main(wide_repo):
        publish_keys(wide_repo)
        stamped = (wide_repo / KEYS_PATH).read_text(encoding="utf-8")
        # main moves on without regenerating: qwen-03 now has qwen-00's configuration
        rel = recipe_rel("qwen-03")
        write(wide_repo, rel, (wide_repo / rel).read_text(encoding="utf-8").replace("0.30.3", "0.30.0"))
        commit_all(wide_repo, "qwen-03 edited; key file not regenerated")
    add_recipe(wide_repo, "qwen-new", 1612.0, "tp2-pp2-dp2", "0.31.0")
    loads = count_loads(monkeypatch)
    evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    assert rel in loads and len(loads) == 3  # its published entry names its old blob: loaded, not trusted
    # a key file stamped by another orv (or catalog) is not read at all
    with on_main(wide_repo):
        write(wide_repo, KEYS_PATH, stamped.replace('"orv":"', '"orv":"0', 1))
        commit_all(wide_repo, "key file from another orv")
    loads.clear()
    evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    assert len(loads) == 26


def hide_in_shards(repo: Path, rel: str) -> None:
    """A contributor's forgery: drop `rel`'s blob id from every key of the pull request's own shards, keeping
    their form."""
    blob = blob_id((repo / rel).read_bytes())
    edited = 0
    for shard in sorted((repo / KEYS_DIR).iterdir()):
        lines = shard.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.startswith('"') and f'"{blob}"' in line:
                comma = "," if line.endswith(",") else ""
                [(key, blobs)] = json.loads("{" + line.removesuffix(",") + "}").items()
                lines[i] = json.dumps(key) + ":" + json.dumps([b for b in blobs if b != blob]) + comma
                edited += 1
        shard.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert edited


@pytest.mark.git
def test_a_pull_requests_own_key_file_is_never_read(wide_repo: Path) -> None:
    publish_on_main(wide_repo)
    # the contributor hides qwen-03 from its keys' shards (its blob unchanged) and adds a duplicate of
    # its configuration: read from the pull request, the shards would hide qwen-03 from the change
    hide_in_shards(wide_repo, recipe_rel("qwen-03"))
    text = (wide_repo / recipe_rel("qwen-03")).read_text(encoding="utf-8").replace("id: qwen-03", "id: qwen-dup")
    write(wide_repo, recipe_rel("qwen-dup"), text)
    commit_all(wide_repo, "a duplicate, and keys that hide it")
    codes = {
        d.code
        for d in evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False)).result.diagnostics
    }
    assert {"ORV302", "ORV609"} <= codes


@pytest.mark.git
def test_a_copied_run_hidden_from_the_pull_requests_shards_is_still_found(wide_repo: Path) -> None:
    """The cheapest forgery of the shards: copy a run's samples under another measurer and drop the
    original from the pull request's shards. The gate reads the merge base's shards: ORV304, and ORV609."""
    publish_on_main(wide_repo)
    original_rel = run_path(run_of(wide_repo, "qwen-05"))
    original = json.loads((wide_repo / original_rel).read_text(encoding="utf-8"))
    original["measured_by"] = "lab-z"
    store_run_document(str(wide_repo), original)
    hide_in_shards(wide_repo, original_rel)
    commit_all(wide_repo, "a copied run, and shards that hide its original")
    found = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False)).result.diagnostics
    codes = {d.code for d in found}
    assert {"ORV304", "ORV609"} <= codes, codes
    assert {d.path for d in found if d.code == "ORV609"} <= {
        str(p.relative_to(wide_repo)) for p in (wide_repo / KEYS_DIR).iterdir()
    }


@pytest.mark.git
def test_a_one_recipe_pull_request_reads_only_the_shards_of_its_keys(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_on_main(wide_repo)
    digest = add_recipe(wide_repo, "qwen-new", 1612.0, "tp2-pp2-dp2", "0.31.0")
    read: list[str] = []
    batches: list[list[str]] = []
    original = BaseTree.read_many

    def spy(self: BaseTree, paths: list[str]) -> dict[str, bytes | None]:
        read.extend(paths)
        batches.append(list(paths))
        return original(self, paths)

    monkeypatch.setattr(BaseTree, "read_many", spy)  # BaseTree.read reads through it too
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    assert near.partial and near.result.diagnostics == ()
    shards = [path for path in read if path.startswith(KEYS_DIR + "/")]
    assert read.count(KEYS_PATH) == 1 and len(shards) == len(set(shards))  # each shard read at most once
    header = json.loads((wide_repo / KEYS_PATH).read_text(encoding="utf-8"))
    loaded = analyse(str(wide_repo)).snapshot.loaded
    keys = {
        key
        for rel in (recipe_rel("qwen-new"), run_path(digest))
        for key in keys_of(rel, loaded[rel][0])
        if not key.startswith("f:")
    }  # a path's case-folded key is never a key by content: in no shard
    # exactly the shards of the new files' keys (no file on main shares one of them here)
    assert set(shards) == {shard_path(shard_name(key, header["digits"])) for key in keys}
    assert 0 < len(shards) < len(list((wide_repo / KEYS_DIR).iterdir()))
    assert not [p for p in read if p.startswith(("recipes/", "runs/"))]  # no other file's keys needed
    # the shards of one hop come from one git process, not one read per shard
    assert len([batch for batch in batches if any(p.startswith(KEYS_DIR + "/") for p in batch)]) <= 2, batches


@pytest.mark.git
def test_shards_in_folders_past_two_digits_are_published_and_read(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry large enough for four hex digits (here: a tiny shard target) stores its shards in folders
    by their first two; the gate reads them there and judges as a full check."""
    from validator.boards import keyfile

    monkeypatch.setattr(keyfile, "SHARD_TARGET_BYTES", 1)
    publish_on_main(wide_repo)
    header = json.loads((wide_repo / KEYS_PATH).read_text(encoding="utf-8"))
    assert header["digits"] == keyfile.MAX_DIGITS == 4
    shards = sorted(p.relative_to(wide_repo).as_posix() for p in (wide_repo / KEYS_DIR).rglob("*.json"))
    assert shards and all(re.fullmatch(r"boards/keys/[0-9a-f]{2}/[0-9a-f]{2}\.json", p) for p in shards)
    assert main(["boards", "--check", "--root", str(wide_repo)]) == 1  # the index is not committed: only keys
    text = (wide_repo / recipe_rel("qwen-03")).read_text(encoding="utf-8").replace("id: qwen-03", "id: qwen-dup")
    write(wide_repo, recipe_rel("qwen-dup"), text)
    loads = count_loads(monkeypatch)
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    assert "ORV302" in {d.code for d in near.result.diagnostics} and len(set(loads)) < 10
    whole = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, neighbourhood=False))
    assert near.partial and near.result.diagnostics == whole.result.diagnostics
    assert [d for d in analyse(str(wide_repo)).diagnostics if d.code == "ORV703"] == []


@contextmanager
def on_main(repo: Path) -> Iterator[None]:
    """Commit on main inside the block; then the branch `pr` merges main, as a contributor updates."""
    git(repo, "checkout", "-q", "main")
    yield
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")


def publish_on_main(repo: Path) -> None:
    with on_main(repo):
        publish_keys(repo)


def run_of(repo: Path, stem: str) -> str:
    text = (repo / recipe_rel(stem)).read_text(encoding="utf-8")
    return text.split("sha256:", 1)[1][:64]


@pytest.mark.git
def test_a_sub_folder_registrys_key_file_names_the_blob_on_disk(tmp_path: Path) -> None:
    """git status names paths from the repository's top, ls-files from the registry: in a registry
    below the top, a modified file must not be published under its committed blob id."""
    repo = tmp_path / "repo"
    root = make_registry(repo / "registry")
    git(repo, "init", "-q", "-b", "main")
    add_recipe(root, "qwen-00", 1400.0, LAYOUTS[0], "0.30.0")
    commit_all(repo, "main")
    rel = recipe_rel("qwen-00")
    write(root, rel, (root / rel).read_text(encoding="utf-8").replace("id: qwen-00", "id: qwen-renamed"))
    published = published_files(analyse(str(root)).snapshot)
    assert published[rel][0] == blob_id((root / rel).read_bytes())
    assert "i:qwen-renamed" in published[rel][1]


@pytest.mark.git
@pytest.mark.parametrize("jobs", [1, 2])
def test_keys_computed_where_files_load_are_the_keys_of_their_entries(
    wide_repo: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `orv boards` (the tier checks) and a cached check compute each file's keys in the loader
    # (in the worker processes with jobs > 1); they must be the keys the entry has, and give the
    # same boards/keys.json as keys computed afterwards
    from validator.registry.relations import _computed_keys, content_keys

    monkeypatch.setattr(pipeline, "POOL_FROM_MS", 0.0)  # 24 files through the pool too
    monkeypatch.setattr(gc, "freeze", lambda: None)  # the pool's path freezes the process's objects: not pytest's
    for_tiers = analyse(str(wide_repo), jobs=jobs, for_tiers=True)
    entries = [entry for entry, _ in for_tiers.snapshot.loaded.values() if entry is not None]
    assert len(entries) == 24 and all(entry.keys is not None for entry in entries)
    # held as one string where that gives them back (relations.held_keys)
    assert all(content_keys(entry) == _computed_keys(entry) for entry in entries)
    assert any(isinstance(entry.keys, str) for entry in entries)
    assert any(key.startswith("s:") for entry in entries for key in content_keys(entry))  # run files' too
    assert all(replace(entry).keys is None for entry in entries)  # a changed copy never keeps stale keys
    plain = analyse(str(wide_repo), jobs=jobs)  # a check without the cache reads no keys: none computed
    assert all(entry.keys is None for entry, _ in plain.snapshot.loaded.values() if entry is not None)
    assert fresh_key_files(plain.snapshot) == fresh_key_files(for_tiers.snapshot)


# --------------------------------------------------------------------------- path keys without a pass over every file

_SEGMENTS = st.sampled_from(
    [
        "recipes",
        "runs",
        "Qwen",
        "qwen",
        "ab",
        "AB",
        "Straße",
        "STRASSE",
        "İx",
        "i̇x",
        "a" * 64,
        "A" * 64,
        "0b" + "1" * 62,
        "x.yaml",
        "X.YAML",
        "x.json",
        ".sig",
    ]
)


@given(
    st.lists(st.lists(_SEGMENTS, min_size=1, max_size=4).map("/".join), min_size=1, max_size=30, unique=True), st.data()
)
def test_path_key_holders_are_those_computing_every_files_keys_finds(paths: list[str], data: st.DataObject) -> None:
    """The substring search over the listing finds exactly the files whose path keys include a key: case
    collisions (ß/SS, dotted I), hash-named runs in and out of their shard folder, .sig companions,
    recipe stems, and a key whose value is empty."""
    base = {rel: (0o100644, "0" * 40) for rel in paths}
    keys = sorted({key for rel in paths for key in path_keys(rel)})
    asked = set(data.draw(st.lists(st.sampled_from(keys), max_size=6))) | {"r:", "i:x", "f:nowhere", "s:other"}
    want = {rel for rel in paths if not asked.isdisjoint(path_keys(rel))}
    assert _PathKeyHolders(base).holders(asked) == want


@pytest.mark.git
def test_a_fresh_runner_computes_path_keys_only_for_the_neighbourhood(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With main's key file, a one-recipe pull request looks at a handful of files, not every base file
    (at 100,000 run files computing every file's path keys took seconds of the gate)."""
    publish_on_main(wide_repo)
    add_recipe(wide_repo, "qwen-new", 1612.0, "tp2-pp2-dp2", "0.31.0")
    computed: list[str] = []
    real = incremental.path_keys

    def counted(rel: str, kind: str | None = None) -> tuple[str, ...]:
        computed.append(rel)
        return real(rel, kind)

    monkeypatch.setattr(incremental, "path_keys", counted)
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    assert near.partial and near.result.diagnostics == ()
    base_files = int(git(wide_repo, "ls-tree", "-r", "--name-only", "main", "--", "recipes", "runs").count("\n")) + 1
    assert base_files >= 24 and len(set(computed)) <= 6, computed


@pytest.mark.git
@pytest.mark.parametrize(
    "where",
    [
        lambda rel: rel.rsplit("/", 1)[0] + "/" + rel.rsplit("/", 1)[1].upper(),  # the same path but for case ("f:")
        lambda rel: rel.replace("qwen3.8-27b/", "qwen3.8-27b-copies/"),  # the same file name elsewhere ("i:")
    ],
    ids=["case", "stem"],
)
def test_a_fresh_runner_finds_a_recipe_filed_like_a_published_one(wide_repo: Path, where: Any) -> None:
    """The cheapest forgeries of a recipe's place: a published recipe's bytes filed again under a path that
    differs only by case, or under its own file name in another folder. Their path keys are found by the
    listing search (no file's path keys are computed up front): the same findings as a full check."""
    publish_on_main(wide_repo)
    rel = recipe_rel("qwen-03")
    write(wide_repo, where(rel), (wide_repo / rel).read_text(encoding="utf-8"))
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    whole = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, neighbourhood=False))
    assert near.partial and not whole.partial
    assert near.result.diagnostics and near.result.diagnostics == whole.result.diagnostics
    assert [d.code for d in near.result.diagnostics if d.path == rel]  # the published file is named too


@pytest.mark.git
@pytest.mark.parametrize(
    "touch",
    [
        None,  # a change that touches no key shard: they stay out of the listing
        lambda repo: write(repo, "boards/KEYS/00.json", "{}\n"),  # a path a case-folding checkout shares with one
        lambda repo: (repo / sorted((repo / KEYS_DIR).rglob("*.json"))[0]).write_text("{}\n"),  # a shard edited
    ],
    ids=["untouched", "case-variant", "edited"],
)
def test_the_key_shards_are_listed_only_when_the_change_touches_one(
    wide_repo: Path, monkeypatch: pytest.MonkeyPatch, touch: Any
) -> None:
    """The gate reads the key shards by name; listing them cost it a pass over 65,536 paths at 10,000 run files.
    Left out, the findings are a full check's; a change under boards/keys/ (as a case-folding path key
    compares) lists them, so its own findings about them are judged against the base's."""
    publish_on_main(wide_repo)
    add_recipe(wide_repo, "qwen-new", 1612.0, "tp2-pp2-dp2", "0.31.0")
    if touch is not None:
        touch(wide_repo)
    commit_all(wide_repo, "the pull request")
    left_out: list[str | None] = []
    real = BaseTree.listing

    def spy(self: BaseTree, tops: tuple[str, ...], leave_out: str | None = None) -> Any:
        left_out.append(leave_out)
        listed = real(self, tops, leave_out)
        assert (leave_out is None) or not any(rel.startswith(KEYS_DIR + "/") for rel in listed)
        return listed

    monkeypatch.setattr(BaseTree, "listing", spy)
    near = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, cache=False))
    whole = evaluate(Config(root=str(wide_repo), base="main", skip_boards=True, neighbourhood=False))
    assert near.partial and near.result.diagnostics == whole.result.diagnostics
    assert left_out == [KEYS_DIR if touch is None else None]
    if touch is not None:
        assert near.result.diagnostics  # a shard edited or shadowed by hand is a finding either way
