"""`orv boards --incremental`: a merge's boards update writes exactly what a full regeneration writes.

Random sequences of merges on a small registry (a recipe added with its run, a run added to a recipe, a
claim edited, a recipe deleted, a second model's inference recipes, one run shared by copies across
recipes, a training recipe made or unmade its pair's baseline): after each, the incremental update leaves boards/ byte for byte as `orv boards` then does. The
fallbacks are held too: keys stamped by another orv (its code, schemas or catalog changed) and a merge
that edits the catalog regenerate everything, and say so; the update runs in a blobless, tree-less,
sparse clone as the boards workflow makes it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.testing.factories import (
    LAYOUTS,
    inference_recipe,
    inference_run,
    store_run,
    training_recipe,
    training_run,
    write_recipe,
)
from tests.testing.git import commit_all, git
from tests.testing.registry import boards_tree, make_registry
from validator.boards import split
from validator.boards.keyfile import blob_id
from validator.cli import main
from validator.load import pipeline

pytestmark = pytest.mark.git

OPS = ("add", "add", "add-run", "edit-claim", "delete", "share", "add-inference", "inference-run", "baseline")


def orv(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


class Registry:
    """A scratch registry on `main` whose merges the tests make, recipe by recipe."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        self.recipes: dict[str, dict[str, Any]] = {}  # path -> document
        self.runs: list[str] = []  # every stored run's `sha256:` reference

    def write(self, recipe: dict[str, Any]) -> str:
        rel = write_recipe(self.root, recipe)
        self.recipes[rel] = recipe
        return rel

    def new_id(self, stem: str) -> str:
        self.count += 1
        return f"{stem}-{self.count}"

    def add_training(self, tok: float, with_run: bool = True) -> None:
        layout = sorted(LAYOUTS)[self.count % len(LAYOUTS)]
        recipe = training_recipe(self.new_id("train"), tok, layout=LAYOUTS[layout], count=8)
        recipe["layout"] = dict(LAYOUTS[layout])
        if with_run:
            ref = store_run(self.root, training_run(recipe, measured_by=f"lab-{self.count}"))
            recipe["runs"] = [ref]
            self.runs.append(ref)
        self.write(recipe)

    def add_inference(self, decode: float) -> None:
        recipe = inference_recipe(self.new_id("serve"), decode=decode, count=1 + self.count % 4)
        ref = store_run(self.root, inference_run(recipe, measured_by=f"lab-{self.count}"))
        recipe["runs"] = [ref]
        self.runs.append(ref)
        self.write(recipe)

    def apply(self, op: str, pick: int, figure: float) -> None:
        paths = sorted(self.recipes)
        target = paths[pick % len(paths)] if paths else None
        if op == "add" or target is None:
            self.add_training(figure)
        elif op == "add-inference":
            self.add_inference(round(figure / 40, 1))
        elif op == "add-run":
            recipe = self.recipes[target]
            make = training_run if recipe["kind"] == "training" else inference_run
            ref = store_run(self.root, make(recipe, measured_by=f"second-{pick}"))
            recipe["runs"] = [*recipe["runs"], ref]
            self.runs.append(ref)
            self.write(recipe)
        elif op == "inference-run":
            inference = [p for p in paths if self.recipes[p]["kind"] == "inference"]
            if not inference:
                self.add_inference(round(figure / 40, 1))
                return
            self.apply("add-run", paths.index(inference[pick % len(inference)]), figure)
        elif op == "baseline":  # a pair's starting point: its models entry reads the baseline's path
            training = [p for p in paths if self.recipes[p]["kind"] == "training"]
            if training:
                recipe = self.recipes[training[pick % len(training)]]
                recipe["baseline"] = not recipe.get("baseline", False)
                self.write(recipe)
        elif op == "edit-claim":
            recipe = self.recipes[target]
            if recipe["kind"] == "training":
                recipe["claimed"]["tokens_per_s_per_gpu"] = figure
            else:
                recipe["claimed"]["decode_tok_s"] = round(figure / 40, 1)
            self.write(recipe)
        elif op == "delete":
            os.remove(self.root / target)
            del self.recipes[target]
        elif op == "share" and self.runs:  # a copy: another recipe naming a run already on record
            source = self.recipes[target]
            copy = yaml.safe_load(yaml.safe_dump(source))
            copy["id"] = self.new_id("copy")
            if copy["kind"] == "training":
                copy["claimed"]["tokens_per_s_per_gpu"] = figure
            self.write(copy)


def scratch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Registry:
    root = make_registry(tmp_path / "repo")
    git(root, "init", "-q", "-b", "main")
    registry = Registry(root)
    registry.add_training(1480.4)
    registry.add_inference(40.0)
    commit_all(root, "registry")
    code, said = orv(capsys, "boards", "--root", str(root))
    assert code == 0, said
    commit_all(root, "boards")
    return registry


def merge_and_update(registry: Registry, capsys: pytest.CaptureFixture[str], message: str) -> str:
    """Commit a merge, update incrementally, hold the result to a full regeneration, commit the boards."""
    root = registry.root
    commit_all(root, message)
    code, said = orv(capsys, "boards", "--incremental", "--root", str(root))
    assert code == 0, said
    incremental = boards_tree(root)
    code, full_said = orv(capsys, "boards", "--root", str(root))
    assert code == 0, full_said
    full = boards_tree(root)
    assert sorted(incremental) == sorted(full), said
    for path in full:
        assert incremental[path] == full[path], f"{path} differs after {message}: {said}"
    if git(root, "status", "--porcelain", "--", "boards"):
        commit_all(root, "boards")
    return said


merges = st.lists(
    st.lists(
        st.tuples(st.sampled_from(OPS), st.integers(0, 50), st.sampled_from([1400.0, 1480.4, 1612.0, 1700.0])),
        min_size=1,
        max_size=2,
    ),
    min_size=1,
    max_size=3,
)


@pytest.mark.parametrize("chunk_items", [split.CHUNK_ITEMS, 1, 3])
@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sequence=merges)
def test_random_merges_update_the_boards_as_a_full_regeneration_does(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    chunk_items: int,
    sequence: list[Any],
) -> None:
    """With the shipped chunk size (one chunk a model here), and with small chunks: a model in as many chunks
    as it has rows and runs, or a third of that, so a merge rewrites some chunks, reads the others' rows from
    the standings, and doubles (or halves) a model's chunk count, every chunk then rewritten."""
    monkeypatch.setattr(split, "CHUNK_ITEMS", chunk_items)
    registry = scratch(tmp_path_factory.mktemp("merges"), capsys)
    for number, ops in enumerate(sequence):
        for op, pick, figure in ops:
            registry.apply(op, pick, figure)
        said = merge_and_update(registry, capsys, f"merge {number}: {ops}")
        assert "full regeneration" not in said, said  # the honest path: no fallback for a data-only merge


@pytest.mark.parametrize("op", ["add", "add-run", "edit-claim", "delete", "share", "add-inference"])
def test_each_kind_of_merge_is_patched_not_regenerated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str
) -> None:
    registry = scratch(tmp_path, capsys)
    registry.apply(op, 0, 1612.0)
    said = merge_and_update(registry, capsys, op)
    assert said.startswith("incremental update since"), said


def test_a_baseline_in_a_chunk_the_merge_leaves_unread_still_sets_its_pairs_starting_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The models entry's starting point is a pair's baseline recipe (its figure and path): when a merge
    touches another chunk of the model, the baseline's row is read from the standings and the manifest's
    training fields, and the entry, the manifest and the standings still come out as a full regeneration's."""
    monkeypatch.setattr(split, "CHUNK_ITEMS", 2)  # the model's 4 recipes and 4 runs: 4 chunks
    registry = scratch(tmp_path, capsys)
    for figure in (1400.0, 1500.0, 1600.0):
        registry.add_training(figure)
    merge_and_update(registry, capsys, "more recipes")
    training = [p for p, r in registry.recipes.items() if r["kind"] == "training"]

    def chunks(path: str) -> set[int]:  # the chunks an edit of the recipe reads: its row's and its runs'
        recipe = registry.recipes[path]
        return {split.chunk_of(key, 4) for key in [recipe["id"], *(r.removeprefix("sha256:") for r in recipe["runs"])]}

    # a baseline and another recipe whose edit reads none of the baseline's row's chunk
    first, edited = next(
        (b, e) for b in training for e in training if split.chunk_of(registry.recipes[b]["id"], 4) not in chunks(e)
    )
    registry.recipes[first]["baseline"] = True
    registry.write(registry.recipes[first])
    merge_and_update(registry, capsys, "a baseline")
    registry.recipes[edited]["claimed"]["tokens_per_s_per_gpu"] = 1234.5
    registry.write(registry.recipes[edited])
    said = merge_and_update(registry, capsys, "a claim edited beside the baseline")
    assert said.startswith("incremental update since"), said
    manifest = orjson.loads((registry.root / "boards/models/qwen3.8-27b.json").read_bytes())
    assert manifest["chunks"] == 4 and [t for t in manifest["training"] if t[2]] == [
        [registry.recipes[first]["id"], 8, True, registry.recipes[first]["measured"], first]
    ]
    assert any((cell["starting_point"] or {}).get("source") == first for cell in manifest["models"][0]["gpus"])


def test_the_update_loads_only_what_the_rows_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recipe with another's configuration (ORV302's key) and claims: pull-request mode would load that one
    and its run too, to judge the duplicate; no tier reads ORV302, so the update loads the new files only
    (and the measurers file), and still writes what a full regeneration writes."""
    registry = scratch(tmp_path, capsys)
    source = next(p for p, r in registry.recipes.items() if r["kind"] == "training")
    twin = yaml.safe_load(yaml.safe_dump(registry.recipes[source]))
    twin["id"] = registry.new_id("twin")
    ref = store_run(registry.root, training_run(twin, measured_by="lab-twin"))
    twin["runs"] = [ref]
    rel = registry.write(twin)
    loads: list[str] = []
    real = pipeline._load_one

    def counted(path: str) -> Any:
        loads.append(path)
        return real(path)

    monkeypatch.setattr(pipeline, "_load_one", counted)
    commit_all(registry.root, "a twin configuration")
    code, said = orv(capsys, "boards", "--incremental", "--root", str(registry.root))
    assert code == 0 and said.startswith("incremental update since"), said
    digest = ref.removeprefix("sha256:")
    assert sorted(set(loads)) == sorted({rel, f"runs/{digest[:2]}/{digest}.json"}), loads
    monkeypatch.undo()
    incremental = boards_tree(registry.root)
    assert orv(capsys, "boards", "--root", str(registry.root))[0] == 0
    assert boards_tree(registry.root) == incremental


def test_keys_stamped_by_another_orv_regenerate_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the boards look like after orv's code, schemas or catalog changed: keys under another stamp."""
    registry = scratch(tmp_path, capsys)
    keys = registry.root / "boards/keys.json"
    header = orjson.loads(keys.read_bytes())
    header["orv"] = "0" * 32
    keys.write_bytes(orjson.dumps(header, option=orjson.OPT_SORT_KEYS) + b"\n")
    commit_all(registry.root, "keys made by another orv")
    registry.apply("add", 0, 1612.0)
    said = merge_and_update(registry, capsys, "a recipe")
    assert said.startswith("full regeneration: boards/keys.json is missing, unreadable or stamped by another orv")


def test_a_catalog_change_regenerates_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = scratch(tmp_path, capsys)
    hardware = registry.root / "catalog/hardware.yaml"
    hardware.write_text(hardware.read_text(encoding="utf-8").replace("price_per_gpu_hour: ", "price_per_gpu_hour: 1"))
    registry.apply("add", 0, 1612.0)
    said = merge_and_update(registry, capsys, "a price and a recipe")
    # the keys' stamp covers the catalog, so it says that first; either reason regenerates everything
    assert said.startswith("full regeneration: "), said
    assert "stamped by another orv" in said or "outside recipes/ and runs/" in said


def test_missing_boards_regenerate_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = scratch(tmp_path, capsys)
    git(registry.root, "rm", "-q", "-r", "boards")
    commit_all(registry.root, "no boards")
    registry.apply("add", 0, 1612.0)
    said = merge_and_update(registry, capsys, "a recipe")
    assert said.startswith("full regeneration: there are no committed boards"), said


def test_a_merge_with_no_data_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = scratch(tmp_path, capsys)
    (registry.root / "README.md").write_text("# notes\n", encoding="utf-8")
    before = boards_tree(registry.root)
    said = merge_and_update(registry, capsys, "docs only")
    assert said.startswith("boards up to date: nothing changed in recipes/ or runs/")
    assert boards_tree(registry.root) == before


def test_the_update_runs_in_a_treeless_sparse_clone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boards workflow's checkout: commits only (`--filter=tree:0`), nothing checked out but the root's
    files; the update checks out what it reads and writes, and leaves what a full clone's regeneration does.
    With small chunks, a touched model's chunks that hold none of the merge's recipes and runs are never fetched."""
    monkeypatch.setattr(split, "CHUNK_ITEMS", 3)  # the touched model: 8 chunks before the merge and after
    registry = scratch(tmp_path, capsys)
    origin = registry.root
    git(origin, "config", "uploadpack.allowFilter", "true")
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    for _ in range(6):
        registry.add_training(1500.0)
    commit_all(origin, "more recipes")
    assert orv(capsys, "boards", "--root", str(origin))[0] == 0
    commit_all(origin, "boards")
    registry.apply("add-run", 1, 1500.0)
    registry.apply("add", 0, 1700.0)
    # the first recipe of a model with no boards file yet: its part and standings are new files
    recipe = inference_recipe(registry.new_id("serve"), decode=41.0, model="qwen3.5-122b-a10b")
    recipe["runs"] = [store_run(origin, inference_run(recipe, measured_by="lab-new"))]
    registry.runs.extend(recipe["runs"])
    registry.write(recipe)
    commit_all(origin, "a merge")

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=tree:0", "--sparse", origin.as_uri(), str(clone))
    git(clone, "sparse-checkout", "set", "--no-cone", "/catalog/", "/measurers/")
    committed_chunks = {
        line.split("\t")[1]: line.split()[2]
        for line in git(clone, "ls-tree", "-r", "HEAD", "--", "boards/models").splitlines()
        if line.split("\t")[1].count("/") == 3
    }
    code, said = orv(capsys, "boards", "--incremental", "--root", str(clone))
    assert code == 0 and said.startswith("incremental update since"), said
    fetched = local_objects(clone)
    assert not (clone / "recipes").exists() or len(list((clone / "recipes").rglob("*.yaml"))) < len(registry.recipes)
    updated = boards_tree(clone)
    assert orv(capsys, "boards", "--root", str(origin))[0] == 0
    full = boards_tree(origin)
    # of the touched model's chunks, those holding none of the merge's recipes and runs were never fetched
    # (their rows came from the standings); each of those is unchanged, and each chunk rewritten was read
    touched = {p: b for p, b in committed_chunks.items() if p.startswith("boards/models/qwen3.8-27b/")}
    kept = {blob for path, blob in touched.items() if blob_id(full.get(path, b"")) == blob}
    unfetched = set(touched.values()) - fetched
    assert unfetched and unfetched <= kept, said
    assert set(touched.values()) - kept and set(touched.values()) - kept <= fetched
    assert "boards/standings/qwen3.5-122b-a10b.json" in updated and "boards/models/qwen3.5-122b-a10b.json" in updated
    for path, data in updated.items():
        assert full.get(path) == data, path
    # the workflow's commit takes every file written, the standings written while left out included
    git(clone, "add", "-A", "--", "boards/")
    git(clone, "-c", "user.name=bot", "-c", "user.email=bot@example.com", "commit", "-q", "-m", "boards")
    assert git(clone, "status", "--porcelain", "--", "boards/") == ""
    committed = dict(
        line.split("\t", 1)[::-1] for line in git(clone, "ls-tree", "-r", "HEAD", "--", "boards").splitlines()
    )
    assert {path: oid.split()[2] for path, oid in committed.items()} == {
        path: blob_id(data) for path, data in full.items()
    }

    # the site, as the workflow renders it next: from the same sparse clone, checking out only what it reads
    git(origin, "add", "-A")
    git(origin, "-c", "user.name=bot", "-c", "user.email=bot@example.com", "commit", "-q", "-m", "boards")
    url = "https://github.com/example/registry"
    before = files_on_disk(clone)
    assert main(["site", str(tmp_path / "site-sparse"), "--root", str(clone), "--repo-url", url]) == 0
    assert main(["site", str(tmp_path / "site-full"), "--root", str(origin), "--repo-url", url]) == 0
    capsys.readouterr()
    assert site_files(tmp_path / "site-sparse") == site_files(tmp_path / "site-full")
    checked_out = files_on_disk(clone) - before
    assert not any(p.startswith(("boards/keys", "boards/standings/")) for p in checked_out), sorted(checked_out)
    training = {r.removeprefix("sha256:") for r in registry.runs if registry_kind(registry, r) == "training"}
    inference = {r.removeprefix("sha256:") for r in registry.runs} - training
    names = {p.split("/")[-1].removesuffix(".json") for p in checked_out if p.startswith("runs/")}
    assert inference and not names & inference, sorted(checked_out)  # no inference run file: no page reads one
    assert names and names <= training, sorted(checked_out)  # the loss curves' run files
    # the combined document from a fresh sparse clone (nothing of boards/ checked out): the same bytes
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "--filter=tree:0", "--sparse", origin.as_uri(), str(fresh))
    git(fresh, "sparse-checkout", "set", "--no-cone", "/catalog/", "/measurers/")
    assert main(["boards", "--combined", str(tmp_path / "sparse.json"), "--root", str(fresh)]) == 0
    assert main(["boards", "--combined", str(tmp_path / "full.json"), "--root", str(origin)]) == 0
    capsys.readouterr()
    assert (tmp_path / "sparse.json").read_bytes() == (tmp_path / "full.json").read_bytes()
    assert not (fresh / "boards" / "keys").exists() and not (fresh / "boards" / "standings").exists()
    # every file the full regeneration wrote that the update had to write is there; the rest are unchanged
    git(clone, "sparse-checkout", "disable")
    assert boards_tree(clone) == full


def files_on_disk(clone: Path) -> set[str]:
    return {p.relative_to(clone).as_posix() for p in clone.rglob("*") if p.is_file() and ".git" not in p.parts}


def registry_kind(registry: Registry, ref: str) -> str:
    """The kind of the recipes naming a run ("training" or "inference")."""
    return next(r["kind"] for r in registry.recipes.values() if ref in r.get("runs", ()))


def local_objects(clone: Path) -> set[str]:
    """The ids of the objects a clone holds (never fetches)."""
    return set(git(clone, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)", "--unordered").split())


def site_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
