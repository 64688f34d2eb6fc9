"""A cheap clone — blobless (`--filter=blob:none`) and sparse — is enough to contribute and to gate.

The clones here come from a file:// remote with uploadpack.allowFilter, so they are real partial
clones: every commit and tree, file contents only for what the sparse patterns select, the rest
fetched from the remote when git checks it out. orv must never take such a checkout for the whole
registry (validator/git/): a full check refuses it, `orv check --base` checks out exactly the
files it reads and judges as it does in a full clone, and `orv new` / `orv add-run` see what git
tracks and keep what they write in the checkout.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.testing.factories import h100_training_run, recipe_text, run_path, training_recipe_path
from tests.testing.git import commit_all, git
from tests.testing.registry import TOOLS, make_registry, write
from validator.cli import main
from validator.git.partial import prefetch
from validator.git.sparse import materialize, sparse_checkout
from validator.registry.layout import GATE_CHECKOUT
from validator.registry.store import store_run_document

pytestmark = pytest.mark.git

CONTRIBUTOR_PATTERNS = GATE_CHECKOUT  # docs/contributing.md, "A cheap clone" (with the code's folders, not needed here)
TAKEN = "qwen3-8-27b-h100-tp1-pp4-dp2"  # the id `orv new` derives for the journey below
VERSIONS = ("0.30.0", "0.30.1", "0.30.2", "0.30.3")


def recipe_rel(i: int) -> str:
    return training_recipe_path(TAKEN if i == 0 else f"qwen-{i:02d}")


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """main: four recipes with their runs (the first holds the id the journey's `orv new` derives),
    boards and relation keys published as main's boards workflow leaves them; served with filters."""
    repo = make_registry(tmp_path / "origin")
    git(repo, "init", "-q", "-b", "main")
    for i, version in enumerate(VERSIONS):
        run = h100_training_run(1400.0 + 10 * i)
        run["software"]["framework"]["version"] = version
        digest = store_run_document(str(repo), run).digest
        rid = recipe_rel(i).rsplit("/", 1)[1][:-5]
        write(repo, recipe_rel(i), recipe_text(rid, claimed=1400.0 + 10 * i, runs=(digest,), version=version))
    commit_all(repo, "four recipes")
    assert main(["boards", "--root", str(repo)]) == 0
    commit_all(repo, "boards and keys")
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    return repo


def cheap_clone(origin: Path, dest: Path, *patterns: str, cone: bool = False) -> Path:
    """What docs/contributing.md tells a contributor to run."""
    git(dest.parent, "clone", "-q", "--filter=blob:none", "--sparse", origin.as_uri(), str(dest))
    git(dest, "sparse-checkout", "set", "--cone" if cone else "--no-cone", *(patterns or CONTRIBUTOR_PATTERNS))
    return dest


def full_clone(origin: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", origin.as_uri(), str(dest))
    return dest


def orv(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def findings(capsys: pytest.CaptureFixture[str], clone: Path, base: str = "origin/main") -> tuple[int, list[str]]:
    code, out, err = orv(
        capsys, "check", "--root", str(clone), "--base", base, "--format", "json", "--show-all", "--no-cache"
    )
    assert code in (0, 1), err
    return code, sorted(f"{f['code']} {f['path']}: {f['message']}" for f in json.loads(out)["findings"])


def test_the_cheap_clone_holds_no_recipe_and_no_run(origin: Path, tmp_path: Path) -> None:
    clone = cheap_clone(origin, tmp_path / "clone")
    assert not (clone / "recipes").exists() and not (clone / "runs").exists()
    sparse = sparse_checkout(str(clone))
    assert sparse is not None and sparse.partial and not sparse.cone
    assert recipe_rel(1) in sparse.hidden and "boards/index.json" in sparse.hidden


def test_a_full_check_is_refused_in_a_sparse_checkout_and_says_what_to_run(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = cheap_clone(origin, tmp_path / "clone")
    code, _, err = orv(capsys, "check", "--root", str(clone))
    assert code == 2
    assert "sparse" in err and "only part of the registry" in err and "orv check --base origin/main" in err
    assert "git sparse-checkout disable" in err
    code, _, err = orv(capsys, "boards", "--root", str(clone))  # the boards need every file too
    assert code == 2 and "`orv boards` needs every file" in err and "a check of the whole registry" not in err
    assert "a branch never regenerates them" in err
    code, out, err = orv(capsys, "wanted", "--root", str(clone))  # so does `orv wanted`, named as itself
    assert code == 2 and out == "" and "`orv wanted` needs every file" in err and "orv check --base" not in err
    assert "`wanted` object of main's published boards" in err and "git sparse-checkout disable" in err
    # a checkout whose patterns leave nothing out is a whole one
    git(clone, "sparse-checkout", "set", "--no-cone", "/*")
    assert sparse_checkout(str(clone)) is None
    code, _, err = orv(capsys, "check", "--root", str(clone))
    assert code == 0, err


@pytest.mark.parametrize("cone", [False, True], ids=["non-cone", "cone"])
def test_check_base_in_a_cheap_clone_judges_as_a_full_clone(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], cone: bool
) -> None:
    """A branch that duplicates qwen-02's configuration (found through the published keys) and
    stores qwen-01's samples again under another measurer: the same findings both ways."""
    git(origin, "checkout", "-q", "-b", "pr")
    text = (origin / recipe_rel(2)).read_text(encoding="utf-8").replace("id: qwen-02", "id: qwen-dup")
    write(origin, training_recipe_path("qwen-dup"), text)
    first = (origin / recipe_rel(1)).read_text(encoding="utf-8").split("sha256:", 1)[1][:64]
    copied = json.loads((origin / run_path(first)).read_text(encoding="utf-8"))
    copied["measured_by"] = "lab-z"
    store_run_document(str(origin), copied)
    commit_all(origin, "a duplicate and a copied run")
    git(origin, "checkout", "-q", "main")
    patterns = ("catalog", "measurers", "boards") if cone else CONTRIBUTOR_PATTERNS
    cheap = cheap_clone(origin, tmp_path / "cheap", *patterns, cone=cone)
    full = full_clone(origin, tmp_path / "full")
    for clone in (cheap, full):
        git(clone, "switch", "-q", "pr")
    assert not (cheap / recipe_rel(3)).exists()
    code, cheap_found = findings(capsys, cheap)
    assert (code, cheap_found) == findings(capsys, full)
    assert {line.split()[0] for line in cheap_found} >= {"ORV302", "ORV304"}, cheap_found
    # what was read is now in the checkout; what was not, still is not (cone mode takes whole folders)
    assert (cheap / recipe_rel(2)).is_file() and (cone or not (cheap / recipe_rel(3)).exists())
    assert sparse_checkout(str(cheap)) is not None


def test_a_contributor_journey_in_a_cheap_clone(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/contributing.md's walkthrough, in the cheap clone: orv new, orv add-run, git add, commit,
    orv check --base origin/main — and the id `orv new` derives is taken by a recipe the checkout
    leaves out, which it sees through git."""
    clone = cheap_clone(origin, tmp_path / "clone")
    shutil.copy(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log", tmp_path / "train.log")
    git(clone, "switch", "-q", "-c", "contribution")
    assert not (clone / recipe_rel(0)).exists()
    new = (
        "new",
        "training",
        "--root",
        str(clone),
        "--model",
        "qwen3.8-27b",
        "--gpu",
        "H100",
        "--count",
        "8",
        "--pp",
        "4",
        "--framework",
        "megatron-core@0.14.0",
        "--author",
        "your-name",
        "--no-interactive",
    )
    code, out, err = orv(capsys, *new)
    assert code == 0, err
    path = out.strip()
    assert path == training_recipe_path(TAKEN + "-2") and TAKEN in err  # the note names the holder
    code, _, err = orv(capsys, *new, "--id", "qwen-01")
    assert code != 0 and "exists already" in err
    code, out, err = orv(
        capsys,
        "add-run",
        str(tmp_path / "train.log"),
        "--root",
        str(clone),
        "--from",
        "megatron",
        "--recipe",
        str(clone / path),
        "--write-recipe",
    )
    assert code == 0, err
    stored = run_path(out.strip().split(":", 1)[1])
    # git takes both files without --sparse: they are inside the sparse patterns
    git(clone, "add", path, stored)
    assert set(git(clone, "diff", "--cached", "--name-only").splitlines()) == {path, stored}
    git(clone, "commit", "-q", "-m", "qwen3.8-27b on 8 H100, Megatron-Core 0.14.0")
    assert findings(capsys, clone) == (0, [])
    assert not (clone / recipe_rel(3)).exists()  # unrelated recipes never arrived


def test_add_run_checks_out_the_recipe_the_clone_left_out(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second measurer reproducing a recipe on main names it by its path (`orv wanted`'s command): add-run
    checks it out, as docs/contributing.md says, rather than refusing a path the working tree lacks."""
    clone = cheap_clone(origin, tmp_path / "clone")
    shutil.copy(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log", tmp_path / "train.log")
    git(clone, "switch", "-q", "-c", "reproduction")
    assert not (clone / recipe_rel(0)).exists()
    code, out, err = orv(
        capsys,
        "add-run",
        str(tmp_path / "train.log"),
        "--root",
        str(clone),
        "--from",
        "megatron",
        "--recipe",
        str(clone / recipe_rel(0)),
        "--write-recipe",
        "--measured-by",
        "lab-b",
    )
    # checked out, then judged against it before anything is stored (issue 52): the log's 1,480.6 tokens/s/GPU
    # is 5.4% from the recipe's claimed 1,400 (ORV207), so nothing is stored and the recipe is as on main
    assert code == 1 and "ORV207 error" in err and "nothing was stored" in err, err
    assert (clone / recipe_rel(0)).read_bytes() == (origin / recipe_rel(0)).read_bytes()
    assert git(clone, "status", "--porcelain") == ""
    before = git(clone, "sparse-checkout", "list")
    code, _, err = orv(
        capsys,
        "add-run",
        str(tmp_path / "train.log"),
        "--root",
        str(clone),
        "--from",
        "megatron",
        "--recipe",
        str(clone / "recipes/training/qwen3.8-27b/no-such-recipe.yaml"),
    )
    assert code == 1 and "ORV110" in err and "no-such-recipe.yaml: No such file or directory" in err
    assert git(clone, "sparse-checkout", "list") == before  # a mistyped path leaves no pattern behind


def test_reproduce_reads_a_recipe_the_clone_left_out(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`orv reproduce` of a recipe on main, in a cheap clone: checked out and printed as in a full clone; a path
    git does not track is a finding, and adds no sparse pattern."""
    clone = cheap_clone(origin, tmp_path / "clone")
    full = full_clone(origin, tmp_path / "full")
    assert not (clone / recipe_rel(1)).exists()
    code, out, err = orv(capsys, "reproduce", "--root", str(clone), str(clone / recipe_rel(1)))
    assert code == 0, err
    code, expected, err = orv(capsys, "reproduce", "--root", str(full), str(full / recipe_rel(1)))
    assert code == 0, err
    assert out == expected and "megatron-core" in out
    before = git(clone, "sparse-checkout", "list")
    code, _, err = orv(capsys, "reproduce", "--root", str(clone), str(clone / "recipes/training/x/none.yaml"))
    assert code == 1 and "ORV110" in err and git(clone, "sparse-checkout", "list") == before


def test_a_catalog_change_in_a_sparse_checkout_asks_for_the_whole_checkout(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = cheap_clone(origin, tmp_path / "clone")
    git(clone, "switch", "-q", "-c", "catalog")
    hardware = clone / "catalog" / "hardware.yaml"
    hardware.write_text(hardware.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, _, err = orv(capsys, "check", "--root", str(clone), "--base", "origin/main")
    assert code == 2 and "catalog/" in err and "git sparse-checkout disable" in err and "--widen" in err
    assert sparse_checkout(str(clone)) is not None  # refused, and nothing fetched
    # --widen (the gate's): orv checks every file out itself and checks the whole registry
    code, _, err = orv(capsys, "check", "--root", str(clone), "--base", "origin/main", "--widen")
    assert code == 0, err
    assert "checking out the" in err and sparse_checkout(str(clone)) is None
    assert (clone / recipe_rel(3)).is_file()
    assert orv(capsys, "check", "--root", str(clone), "--widen")[0] == 2  # --widen goes with --base


def test_a_clone_too_shallow_for_the_merge_base_is_a_clear_error(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(origin, "checkout", "-q", "-b", "pr")
    for i in range(3):
        write(origin, f"notes-{i}.txt", f"{i}\n")
        commit_all(origin, f"branch commit {i}")
    git(origin, "checkout", "-q", "main")
    write(origin, "main-moved.txt", "main moved on\n")
    commit_all(origin, "main moves on")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", "--filter=blob:none", "--branch", "pr", origin.as_uri(), str(clone))
    git(clone, "fetch", "-q", "--depth=1", "origin", "main:refs/remotes/origin/main")
    code, out, err = orv(capsys, "check", "--root", str(clone), "--base", "origin/main")
    assert code == 2 and out == ""
    assert "too shallow" in err and "fetch-depth: 0" in err and "--unshallow" in err
    # with the history (commits and trees only), the same clone finds the merge base
    git(clone, "fetch", "-q", "--unshallow", "origin", "pr", "main:refs/remotes/origin/main")
    code, _, err = orv(capsys, "check", "--root", str(clone), "--base", "origin/main")
    assert code == 0, err


def test_materialize_takes_a_path_literally_never_as_a_pattern(tmp_path: Path) -> None:
    """A file named like a glob checks out that file only (sparse patterns are gitignore patterns)."""
    origin = tmp_path / "origin"
    for rel in ("recipes/a/x*.yaml", "recipes/a/xy.yaml", "recipes/a/[x].yaml", "recipes/a/x.yaml", "keep/k"):
        write(origin, rel, rel + "\n")
    git(origin, "init", "-q", "-b", "main")
    commit_all(origin, "files named like patterns")
    git(origin, "config", "uploadpack.allowFilter", "true")
    clone = cheap_clone(origin, tmp_path / "clone", "/keep/")
    assert materialize(str(clone), ["recipes/a/x*.yaml", "recipes/a/[x].yaml"]) != []
    assert sorted(p.name for p in (clone / "recipes" / "a").iterdir()) == ["[x].yaml", "x*.yaml"]
    assert materialize(str(clone), ["recipes/a/x*.yaml"]) == []  # already there: nothing to add
    assert materialize(str(tmp_path / "origin"), ["recipes/a/xy.yaml"]) == []  # not sparse: nothing to do


def test_prefetch_fetches_just_the_blobs_asked_for_in_one_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate's shards are read from the merge base's tree: fetched together, and only those."""
    origin = tmp_path / "origin"
    for i in range(5):
        write(origin, f"boards/keys/{i}.json", f"shard {i}\n")
    git(origin, "init", "-q", "-b", "main")
    commit_all(origin, "shards")
    git(origin, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{origin}", str(clone))

    def missing() -> set[str]:
        listed = git(clone, "rev-list", "--objects", "--missing=print", "HEAD").split()
        return {word[1:] for word in listed if word.startswith("?")}

    blob_of = {i: git(origin, "rev-parse", f"HEAD:boards/keys/{i}.json").strip() for i in range(5)}
    assert set(blob_of.values()) <= missing()
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    assert prefetch(str(clone), "HEAD", ["boards/keys/1.json", "boards/keys/3.json", "boards/keys/9.json"]) == 2
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert missing() == {blob_of[i] for i in (0, 2, 4)}
    fetches = [line for line in trace.read_text().splitlines() if '"event":"start"' in line and '"fetch"' in line]
    assert len(fetches) == 1, fetches
    assert prefetch(str(tmp_path), "HEAD", ["boards/keys/0.json"]) == 0  # no partial clone: nothing to do


# --------------------------------------------------------------------------- the gate's tree-less checkout

COUNTING_UPLOAD_PACK = """#!/bin/sh
echo fetch >> "$0.log"
exec git-upload-pack "$@"
"""


def treeless_clone(origin: Path, dest: Path) -> Path:
    """The gate's checkout (pull-request.yml): every commit, no tree and no blob until git needs
    them, sparse; each request to the remote counted in `fetches(dest)`."""
    counter = dest.parent / f"{dest.name}-upload-pack"
    counter.write_text(COUNTING_UPLOAD_PACK, encoding="utf-8")
    counter.chmod(0o755)
    dest.mkdir()
    git(dest, "init", "-q")
    git(dest, "remote", "add", "origin", origin.as_uri())
    git(dest, "config", "remote.origin.uploadpack", str(counter))
    git(dest, "fetch", "-q", "--filter=tree:0", "origin", "+refs/heads/*:refs/remotes/origin/*")
    git(dest, "sparse-checkout", "set", "--no-cone", *GATE_CHECKOUT)
    git(dest, "checkout", "-q", "--detach", "origin/pr")
    return dest


def fetches(clone: Path) -> int:
    log = clone.parent / f"{clone.name}-upload-pack.log"
    return len(log.read_text(encoding="utf-8").split()) if log.exists() else 0


def long_history(origin: Path, commits: int) -> None:
    """`commits` more merges' worth of history on main, each touching runs/ (what a history walk reads)."""
    for i in range(commits):
        run = h100_training_run(1500.0 + i)
        run["software"]["framework"]["version"] = f"0.31.{i}"
        store_run_document(str(origin), run)
        commit_all(origin, f"a run, {i}")


def test_the_tree_less_gate_judges_a_copied_run_as_a_full_clone_in_a_few_fetches(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copied run asks which file came first (validator/evidence/arrival.py), a walk over every commit's
    tree. In a tree-less clone git would fetch those trees one commit at a time (a request per
    commit); fetch_history_trees brings them in one, so the requests do not grow with history."""
    long_history(origin, 24)
    assert orv(capsys, "boards", "--root", str(origin))[0] == 0
    commit_all(origin, "boards and keys")
    git(origin, "checkout", "-q", "-b", "pr")
    first = (origin / recipe_rel(1)).read_text(encoding="utf-8").split("sha256:", 1)[1][:64]
    copied = json.loads((origin / run_path(first)).read_text(encoding="utf-8"))
    copied["measured_by"] = "lab-z"
    store_run_document(str(origin), copied)
    commit_all(origin, "a copied run")
    git(origin, "checkout", "-q", "main")
    full = full_clone(origin, tmp_path / "full")
    git(full, "switch", "-q", "pr")
    cheap = treeless_clone(origin, tmp_path / "cheap")
    assert git(cheap, "rev-list", "--objects", "--missing=print", "--filter=tree:1", "origin/main~1").count("?") > 20
    before = fetches(cheap)
    code, found = findings(capsys, cheap)
    assert (code, found) == findings(capsys, full)
    assert "ORV304" in {line.split()[0] for line in found}, found
    # the merge base's trees that differ (one request a level: root, runs/, a runs/ folder), the key shards
    # of the change's keys and of its neighbours' (one request a hop), the files read (two batches at most),
    # the history's trees: a fixed count, not 26 commits' worth
    assert fetches(cheap) - before <= 9, fetches(cheap) - before
    assert "?" not in git(cheap, "rev-list", "--objects", "--missing=print", "--filter=tree:1", "HEAD")


def one_recipe_pull_request(origin: Path) -> None:
    """Branch `pr`: main plus one new recipe (qwen-02's configuration with another claim); main checked out."""
    git(origin, "checkout", "-q", "-b", "pr")
    write(
        origin,
        training_recipe_path("qwen-new"),
        (origin / recipe_rel(2))
        .read_text(encoding="utf-8")
        .replace("id: qwen-02", "id: qwen-new")
        .replace("claimed_tokens_per_second_per_gpu: 1420.0", "claimed_tokens_per_second_per_gpu: 1419.0"),
    )
    commit_all(origin, "a recipe")
    git(origin, "checkout", "-q", "main")


def test_a_clean_pull_request_in_a_tree_less_clone_never_fetches_the_history(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No history walk, no history: the trees of older commits stay on the remote."""
    long_history(origin, 8)
    one_recipe_pull_request(origin)
    cheap = treeless_clone(origin, tmp_path / "cheap")
    findings(capsys, cheap)
    missing = git(cheap, "rev-list", "--objects", "--missing=print", "--filter=tree:1", "HEAD").count("?")
    assert missing >= 8, missing  # the older commits' trees were never fetched


def trees_received(clone: Path) -> int:
    """Tree objects in the packs the clone received, a tree counted once per pack that brought it."""
    return sum(
        git(clone, "verify-pack", "-v", str(idx)).count(" tree ")
        for idx in sorted((clone / ".git" / "objects" / "pack").glob("*.idx"))
    )


@pytest.mark.parametrize("boards_current", [True, False], ids=["keys-of-the-merge-base", "keys-older"])
def test_the_tree_less_gate_fetches_of_the_merge_base_only_the_trees_that_differ(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], boards_current: bool
) -> None:
    """git fetches a missing tree with every tree below it: the merge base's whole tree again, though
    the pull request shares all but a few folders of it (~10 MB at 100,000 run files). orv fetches the
    merge base's root alone, then only the folders that differ, level by level (fetch_tree_difference);
    so do the published keys' trees when main moved on since they were made. Judged as a full clone."""
    long_history(origin, 12)  # runs in many folders: the tree the pull request shares with its base
    if boards_current:
        assert orv(capsys, "boards", "--root", str(origin))[0] == 0
        commit_all(origin, "boards and keys")
    one_recipe_pull_request(origin)
    full = full_clone(origin, tmp_path / "full")
    git(full, "switch", "-q", "pr")
    cheap = treeless_clone(origin, tmp_path / "cheap")
    head_trees = trees_received(cheap)  # the checkout's: the pull request's tree, whole
    assert head_trees >= 20, head_trees
    assert findings(capsys, cheap) == findings(capsys, full)
    # root, recipes/, recipes/training/, the model's folder; with older keys, runs/ and the folders since
    extra = trees_received(cheap) - head_trees
    assert 0 < extra <= (4 if boards_current else 4 + 14), extra
    assert extra < head_trees // 2, (extra, head_trees)


def test_a_merges_boards_update_fetches_of_the_commits_since_only_the_trees_that_differ(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`orv boards --incremental` reads the trees of the commits since the data commit its boards name (the
    newest one touching the data, the keys' trees of that commit, the diff): git would fetch each commit's
    whole tree (~1 MB a commit at 10,000 run files). fetch_range_trees brings only the folders that differ
    from HEAD's; the boards are what a full clone's regeneration writes."""
    long_history(origin, 12)
    assert orv(capsys, "boards", "--root", str(origin))[0] == 0
    commit_all(origin, "boards and keys")
    one_recipe_pull_request(origin)
    full = full_clone(origin, tmp_path / "full")
    git(full, "switch", "-q", "pr")
    assert orv(capsys, "boards", "--root", str(full))[0] == 0
    cheap = treeless_clone(origin, tmp_path / "cheap")
    head_trees = trees_received(cheap)
    assert head_trees >= 20, head_trees
    code, out, err = orv(capsys, "boards", "--incremental", "--root", str(cheap))
    assert code == 0 and out.startswith("incremental update since"), (out, err)
    # of the data commit, the boards commit and the merge: root, recipes/, recipes/training/, the model's
    # folder, boards/ and its folders; never a whole tree again
    extra = trees_received(cheap) - head_trees
    assert 0 < extra < head_trees // 2, (extra, head_trees)
    written = git(cheap, "ls-files", "--modified", "--others", "--", "boards").split()
    assert "boards/index.json" in written, written
    for rel in written:
        assert (cheap / rel).read_bytes() == (full / rel).read_bytes(), rel


def test_a_remote_gone_after_the_checkout_is_a_clear_error_not_an_internal_one(
    origin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tree-less clone reads the merge base's trees and blobs from its remote while it checks. If the
    remote is unreachable then (network down, credentials not kept), orv says so and what to do — exit 2 —
    never "internal error: this is a bug in orv", and never takes an unreadable file for an absent one."""
    one_recipe_pull_request(origin)
    cheap = treeless_clone(origin, tmp_path / "cheap")
    origin.rename(tmp_path / "origin-gone")
    code, out, err = orv(capsys, "check", "--root", str(cheap), "--base", "origin/main", "--no-cache")
    assert code == 2 and out == "", (code, out, err)
    assert "internal error" not in err and "Traceback" not in err, err
    assert "merge base" in err and "remote must be reachable" in err and "persist-credentials: true" in err, err


def test_tree_comparisons_never_read_the_index(origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git diff-tree` reads the index though it compares trees only (0.08 s a call at 100,000 run files);
    orv points it at no index. Seen in git's own trace: no index entries read by any diff-tree it runs."""
    from validator.git.diff import changed_since

    one_recipe_pull_request(origin)
    clone = full_clone(origin, tmp_path / "full")
    git(clone, "switch", "-q", "pr")
    old = git(clone, "rev-parse", "origin/main^{tree}:recipes").strip()
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    moved = changed_since(str(clone), old, "HEAD", "recipes")
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert moved and all(path.startswith("recipes/") for path in moved), moved
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    diff_tree = {e["sid"] for e in events if e["event"] == "start" and "diff-tree" in e["argv"]}
    assert diff_tree, "changed_since compares trees with git diff-tree"
    # git reports the entries of an index it read (`read/cache_nr`); a missing index has none to report
    read_index = [e for e in events if e["sid"] in diff_tree and e.get("key") == "read/cache_nr"]
    assert not read_index, read_index
