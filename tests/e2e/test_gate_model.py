"""Which rules judge a pull request: the pull-request workflow emulated on a copy of this project.

A project repository (this worktree's validator, schemas, action, locks and workflows, plus a small
registry) gets a pull request that relaxes a check — ORV402 stops treating `latest` as a floating
version — and, in one scenario, adds a recipe only the relaxed check accepts. The workflow is run
the way GitHub runs it: read from the pull request's merge commit, each actions/checkout step a
clone at its `ref` into its `path`, and the local action (`uses: ./…`) run by tests/e2e/test_action.py's
ActionRunner from that folder, with orv installed from that same folder into a fresh virtual
environment (the hash-pinned download of its dependencies is not repeated here; the environment
borrows the test interpreter's).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_action import ActionRun, ActionRunner
from tests.testing.factories import (
    add_training_run,
    commit_boards,
    h100_training_run,
    recipe_text,
    training_recipe_path,
)
from tests.testing.git import commit_all, git, git_env
from tests.testing.paths import REPO as ROOT
from tests.testing.registry import make_registry, write
from validator.cli import main as cli_main
from validator.registry.store import store_run_document

pytestmark = pytest.mark.git

WORKFLOW = ".github/workflows/pull-request.yml"
# What a copy of the project needs for its action to install and run orv.
PROJECT_PATHS = ("validator", "schema", "action.yml", "requirements", "pyproject.toml", "README.md", ".github")
# The rule the pull request relaxes: an exact release is also whatever says `latest` (ORV402, and
# ORV407 behind it, stop firing).
RELAXED = re.compile(r"(def version_problem\(.*?\n(?:.*\n)*?\s+if exact_release\(version\))(:)")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


# --------------------------------------------------------------------------- the project and its pull requests


def project_repo(tmp_path: Path) -> Path:
    """`main`: this project's rules and a registry of one recipe with its run; branch `pr` checked out."""
    repo = make_registry(tmp_path / "origin")
    listed = git(ROOT, "ls-files", "-co", "--exclude-standard", "--", *PROJECT_PATHS).splitlines()
    for rel in listed:
        if (ROOT / rel).is_file() and "__pycache__" not in rel:
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, repo / rel)
    git(repo, "init", "-q", "-b", "main")
    digest = add_training_run(repo, 1480.4)
    rid = "qwen3-8-27b-h100-tp1-pp4-dp2"
    write(repo, training_recipe_path(rid), recipe_text(rid, runs=(digest,)))
    commit_all(repo, "the project on main")
    commit_boards(repo)
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def relax_orv402(repo: Path) -> str:
    """Edit the validator so that `version: latest` is no longer a floating version; return the file."""
    for path in sorted((repo / "validator").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if RELAXED.search(text):
            path.write_text(RELAXED.sub(r'\1 or version == "latest"\2', text, count=1), encoding="utf-8")
            return path.relative_to(repo).as_posix()
    raise AssertionError(
        "no version_problem() with `if exact_release(version):` in validator/ to relax; update RELAXED"
    )


def add_unpinned_recipe(repo: Path) -> str:
    rid = "qwen3-8-27b-floating"
    write(repo, training_recipe_path(rid), recipe_text(rid, version="latest", layout="tp4-pp1-dp2"))
    return training_recipe_path(rid)


# --------------------------------------------------------------------------- GitHub, emulated


def open_pull_request(origin: Path) -> tuple[str, dict[str, Any]]:
    """refs/pull/7/merge as GitHub makes it; the merge commit and the `pull_request` event."""
    base, head = git(origin, "rev-parse", "main"), git(origin, "rev-parse", "pr")
    git(origin, "checkout", "-q", "--detach", "main")
    git(origin, "merge", "-q", "--no-ff", "--no-edit", "pr")
    merge = git(origin, "rev-parse", "HEAD")
    git(origin, "update-ref", "refs/pull/7/merge", merge)
    git(origin, "checkout", "-q", "pr")
    return merge, {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "base": {"ref": "main", "sha": base},
            "head": {"ref": "pr", "sha": head},
            "labels": [],
        },
    }


def evaluate(value: Any, event: dict[str, Any]) -> Any:
    """`${{ github.event.… }}` in a step's `with:`, the only context this workflow uses there."""

    def lookup(m: re.Match[str]) -> str:
        parts = m.group(1).split(".")
        assert parts[:2] == ["github", "event"], f"`{m.group(1)}` is outside what this emulation evaluates"
        node: Any = event
        for part in parts[2:]:
            node = node[part]
        return str(node)

    return EXPRESSION.sub(lookup, value) if isinstance(value, str) else value


def run_installed_action(
    action_dir: Path, workspace: Path, event: dict[str, Any], given: dict[str, Any], tmp: Path
) -> ActionRun:
    """The Action's step as a runner takes it: orv installed from `action_dir` into a fresh environment,
    then action.yml's steps run with the workflow's inputs (`given`) on `workspace`."""
    orv = install_orv_from(action_dir, tmp / "orv-venv")
    runner_tmp = tmp / "runner"
    runner_tmp.mkdir()
    inputs = {name: str(value) for name, value in given.items()}
    return ActionRunner(
        workspace, event, runner_tmp, {**inputs, "install": "false"}, action_dir=action_dir, bin=orv
    ).run()


def install_orv_from(folder: Path, where: Path) -> Path:
    """A fresh virtual environment with `folder`'s orv installed as its wheel lays it out; its bin directory.

    validator/ becomes the package and schema/*.json its validator.schemas data (pyproject.toml's
    package-dir), copied, so nothing is imported from, or byte-compiled into, the checkout.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)}))
    assert site.is_dir(), site
    shutil.copytree(folder / "validator", site / "validator", ignore=shutil.ignore_patterns("__pycache__"))
    schemas = site / "validator" / "schemas"
    schemas.mkdir(exist_ok=True)
    for schema in (folder / "schema").glob("*.json"):
        shutil.copyfile(schema, schemas / schema.name)
    # The dependencies come from the test interpreter's site-packages (a path, so its .pth files,
    # such as an editable install of this worktree, stay out).
    borrowed = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
    (site / "borrowed-dependencies.pth").write_text("\n".join(borrowed) + "\n", encoding="utf-8")
    return where / "bin"


def check_out(step: dict[str, Any], origin: Path, workspace: Path, merge: str, full: bool = False) -> None:
    """One actions/checkout step as its source does it (src/git-source-provider.ts): `git init`, a
    fetch — of every branch with `fetch-depth: 0`, else of the one commit at that depth — with
    `filter` (or blob:none when `sparse-checkout` is given), the sparse patterns, then the checkout.
    From a file:// URL with uploadpack.allowFilter, so a partial clone is one here as on GitHub.
    `full`: the old workflow's checkout, every blob, no sparse patterns."""
    given = step["with"]
    assert given.get("persist-credentials") is False
    dest = workspace / given.get("path", ".")
    dest.mkdir(parents=True)
    git(dest, "init", "-q")
    git(dest, "remote", "add", "origin", origin.as_uri())
    patterns = [] if full else str(given.get("sparse-checkout") or "").split()
    filtering = (
        [] if full else [f"--filter={given.get('filter') or 'blob:none'}"] if (given.get("filter") or patterns) else []
    )
    ref = given.get("ref") or merge
    if int(given.get("fetch-depth", 1)) == 0:
        git(dest, "fetch", "-q", "--no-tags", *filtering, "origin", "+refs/heads/*:refs/remotes/origin/*")
        git(dest, "fetch", "-q", "--no-tags", *filtering, "origin", "refs/pull/7/merge")
    else:
        git(dest, "fetch", "-q", "--no-tags", f"--depth={given.get('fetch-depth', 1)}", *filtering, "origin", ref)
    if patterns:
        cone = given.get("sparse-checkout-cone-mode", True) is not False
        git(dest, "sparse-checkout", "set", "--cone" if cone else "--no-cone", *patterns)
    git(dest, "checkout", "-q", "--detach", ref)


def run_step(step: dict[str, Any], event: dict[str, Any], workspace: Path, home: Path) -> None:
    """A `run:` step: its script under bash -e, in its working directory, with its `env:` evaluated."""
    env = {
        **git_env(home),
        **{name: str(evaluate(value, event)) for name, value in (step.get("env") or {}).items()},
        "GITHUB_WORKSPACE": str(workspace),
    }
    cwd = workspace / step.get("working-directory", ".")
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"step `{step.get('name')}` failed: {done.stdout}{done.stderr}"


def run_pull_request_workflow(origin: Path, tmp: Path, full: bool = False) -> ActionRun:
    """Run pull-request.yml as GitHub would for refs/pull/7/merge; the gate step's result.
    `full`: with the old checkout (every blob of every commit, no sparse patterns)."""
    for key, value in (("uploadpack.allowFilter", "true"), ("uploadpack.allowAnySHA1InWant", "true")):
        git(origin, "config", key, value)  # as GitHub serves partial clones and fetches by SHA
    merge, event = open_pull_request(origin)
    # GitHub reads a pull_request workflow from the merge commit: the pull request's own copy.
    workflow = yaml.safe_load(git(origin, "show", f"{merge}:{WORKFLOW}"))
    (job,) = workflow["jobs"].values()
    workspace = tmp / "workspace"
    workspace.mkdir()
    for step in job["steps"]:
        uses = step.get("uses", "")
        given = {name: evaluate(value, event) for name, value in (step.get("with") or {}).items()}
        if "run" in step:
            run_step(step, event, workspace, tmp)
        elif uses.startswith("actions/checkout@"):
            check_out({**step, "with": given}, origin, workspace, merge, full)
        elif uses.startswith("./"):
            return run_installed_action(workspace / uses[2:], workspace, event, given, tmp)
        else:
            raise AssertionError(f"{uses}: a step this emulation does not know")
    raise AssertionError(f"{WORKFLOW} has no step that runs the gate")


# --------------------------------------------------------------------------- the model


def test_relaxing_a_rule_and_using_it_in_one_pull_request_fails_the_gate(tmp_path: Path) -> None:
    origin = project_repo(tmp_path)
    relaxed = relax_orv402(origin)
    rel = add_unpinned_recipe(origin)
    commit_all(origin, "contributor: `latest` is pinned enough, and a recipe that says so")
    run = run_pull_request_workflow(origin, tmp_path)
    assert run.failed and run.exit_codes["check"] == 1, run.log
    errors = {(a.properties["file"], a.properties["title"]) for a in run.of_level("error")}
    assert (rel, "ORV402") in errors  # judged by the base's validator, which the pull request cannot edit
    assert (relaxed, "ORV606") in {(a.properties["file"], a.properties["title"]) for a in run.of_level("warning")}


def test_the_same_rule_change_without_data_passes_the_gate_and_runs_the_tests(tmp_path: Path) -> None:
    origin = project_repo(tmp_path)
    relaxed = relax_orv402(origin)
    commit_all(origin, "contributor: `latest` is pinned enough")
    run = run_pull_request_workflow(origin, tmp_path)
    assert not run.failed, run.log
    assert run.outputs["errors"] == "0" and int(run.outputs["warnings"]) >= 1
    assert any(a.properties.get("file") == relaxed for a in run.of_level("warning"))  # ORV606: a maintainer reviews it
    # The code change is judged by the test suite instead: tests.yml runs on every pull request.
    tests = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text(encoding="utf-8"))
    triggers = tests.get("on", tests.get(True))
    assert triggers["pull_request"] in (None, {}) or not {"paths", "paths-ignore", "branches"} & set(
        triggers["pull_request"]
    )


def test_the_pull_requests_own_data_is_what_gets_checked(tmp_path: Path) -> None:
    """The base's rules judge the pull request's files, not the base's: a good recipe is new, and ranked."""
    origin = project_repo(tmp_path)
    digest = add_training_run(origin, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    rid = "qwen3-8-27b-h100-tp2-pp2-dp2"
    write(origin, training_recipe_path(rid), recipe_text(rid, claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"))
    commit_all(origin, "contributor: a TP2 PP2 recipe and its run")
    run = run_pull_request_workflow(origin, tmp_path)
    assert not run.failed, run.log
    assert run.outputs["errors"] == "0" and run.outputs["warnings"] == "0"
    assert f"| `{rid}` | new |" in run.summary


def test_a_pull_request_that_points_the_workflow_at_its_own_rules_passes_so_github_is_code_owned(
    tmp_path: Path,
) -> None:
    """The limit of the model, stated as a test: GitHub runs the pull request's copy of the workflow.

    Editing it to use the pull request's own action makes the relaxed rule judge its own data, and
    the gate passes (the old model, `uses: $/`, behaved so without any edit). What stops it is
    CODEOWNERS on .github/ with required code-owner review, and ORV606 naming the edited files.
    """
    origin = project_repo(tmp_path)
    relax_orv402(origin)
    add_unpinned_recipe(origin)
    workflow = origin / WORKFLOW
    text = workflow.read_text(encoding="utf-8")
    assert "uses: ./base-rules" in text and "            /boards/keys.json\n" in text
    # ... and to check out all of the pull request's files (its action installs orv from them)
    text = text.replace("            /boards/keys.json\n", "            /boards/keys.json\n            /*\n", 1)
    workflow.write_text(text.replace("uses: ./base-rules", "uses: ./pull-request"), encoding="utf-8")
    commit_all(origin, "contributor: judge the pull request by its own rules")
    run = run_pull_request_workflow(origin, tmp_path)
    assert not run.failed and run.outputs["errors"] == "0", run.log  # the relaxed rule let `latest` through
    assert WORKFLOW in {a.properties.get("file") for a in run.of_level("warning")}
    owners = (ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    assert re.search(r"^/\.github/\s+@openrecipes/maintainers$", owners, re.M)


# --------------------------------------------------------------------------- the blobless, sparse checkout


VERSIONS = ("0.30.1", "0.30.2", "0.30.3", "0.30.4", "0.30.5")


def populated_project(tmp_path: Path) -> Path:
    """project_repo's main plus five unrelated recipes (each its own run and configuration), with the
    boards and the relation keys published as main's boards workflow leaves them; branch `pr` out."""
    origin = project_repo(tmp_path)
    git(origin, "checkout", "-q", "main")
    for i, version in enumerate(VERSIONS):
        rid = f"qwen-{i:02d}"
        run = h100_training_run(1400.0 + 10 * i)
        run["software"]["framework"]["version"] = version
        digest = store_run_document(str(origin), run).digest
        write(
            origin,
            training_recipe_path(rid),
            recipe_text(rid, claimed=1400.0 + 10 * i, runs=(digest,), version=version),
        )
    commit_all(origin, "five more recipes")
    assert cli_main(["boards", "--root", str(origin)]) == 0
    commit_all(origin, "boards and keys")
    git(origin, "checkout", "-q", "-B", "pr")
    return origin


def recipe_of(origin: Path, i: int) -> str:
    return training_recipe_path(f"qwen-{i:02d}")


def run_of(origin: Path, i: int) -> str:
    text = (origin / recipe_of(origin, i)).read_text(encoding="utf-8")
    digest = text.split("sha256:", 1)[1][:64]
    return f"runs/{digest[:2]}/{digest}.json"


def clean(origin: Path) -> set[str]:
    digest = add_training_run(origin, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    rid = "qwen3-8-27b-h100-tp2-pp2-dp2"
    write(origin, training_recipe_path(rid), recipe_text(rid, claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"))
    return set()


def duplicate_configuration(origin: Path) -> set[str]:
    """qwen-03's configuration again: found only through qwen-03's published keys (ORV302)."""
    text = (origin / recipe_of(origin, 3)).read_text(encoding="utf-8").replace("id: qwen-03", "id: qwen-dup")
    write(origin, training_recipe_path("qwen-dup"), text)
    return {"ORV302"}


def copied_run(origin: Path) -> set[str]:
    """qwen-01's samples stored again under another measurer (ORV304, through the sample fingerprint)."""
    document = json.loads((origin / run_of(origin, 1)).read_text(encoding="utf-8"))
    document["measured_by"] = "lab-z"
    store_run_document(str(origin), document)
    return {"ORV304"}


def rename(origin: Path) -> set[str]:
    """qwen-02 moved to a new name and id: a published recipe's id changed (ORV602)."""
    new = training_recipe_path("qwen-02-renamed")
    text = (origin / recipe_of(origin, 2)).read_text(encoding="utf-8").replace("id: qwen-02", "id: qwen-02-renamed")
    git(origin, "rm", "-q", recipe_of(origin, 2))
    write(origin, new, text)
    return {"ORV602"}


def deletion(origin: Path) -> set[str]:
    """qwen-04's run file removed while the recipe still lists it."""
    git(origin, "rm", "-q", run_of(origin, 4))
    return {"ORV601"}


def judged(run: ActionRun) -> tuple[set[tuple[str, str, str, str]], str, str]:
    findings = {
        (a.level, a.properties.get("file", ""), a.properties.get("title", ""), a.message)
        for a in run.annotations
        if a.properties.get("title", "").startswith("ORV")
    }
    return findings, run.outputs.get("errors", ""), run.outputs.get("warnings", "")


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario", [clean, duplicate_configuration, copied_run, rename, deletion], ids=lambda f: f.__name__
)
def test_the_sparse_blobless_gate_judges_as_the_full_checkout_did(tmp_path: Path, scenario: Any) -> None:
    origin = populated_project(tmp_path)
    expected = scenario(origin)
    commit_all(origin, f"contributor: {scenario.__name__}")
    (tmp_path / "full").mkdir()
    (tmp_path / "sparse").mkdir()
    full = run_pull_request_workflow(origin, tmp_path / "full", full=True)
    sparse = run_pull_request_workflow(origin, tmp_path / "sparse")
    assert judged(sparse) == judged(full), (sparse.log, full.log)
    codes = {title for _, _, title, _ in judged(sparse)[0]}
    assert expected <= codes, sparse.log
    assert sparse.failed == bool(expected) and full.failed == bool(expected), sparse.log
    # ... and the sparse checkout stayed sparse: recipes the change is not related to never arrived
    checkout = tmp_path / "sparse" / "workspace" / "pull-request"
    assert git(checkout, "config", "--bool", "core.sparseCheckout") == "true"
    assert not (checkout / recipe_of(origin, 0)).exists()
    hidden = [line for line in git(checkout, "ls-files", "-t").splitlines() if line.startswith("S ")]
    assert hidden, "nothing was left out of the pull request's checkout"


@pytest.mark.slow
def test_a_catalog_change_widens_the_gates_checkout_and_is_checked_whole(tmp_path: Path) -> None:
    origin = populated_project(tmp_path)
    hardware = origin / "catalog" / "hardware.yaml"
    hardware.write_text(hardware.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    commit_all(origin, "contributor: a catalog edit")
    run = run_pull_request_workflow(origin, tmp_path)
    assert not run.failed and run.outputs["errors"] == "0", run.log
    checkout = tmp_path / "workspace" / "pull-request"
    assert (checkout / recipe_of(origin, 0)).is_file()  # every file, for the full check
    assert "pull-request mode" not in run.log  # checked whole, not the neighbourhood


# --------------------------------------------------------------------------- the base commit's rules, from the clone


def test_the_rules_step_writes_the_bases_rules_and_fetches_none_of_its_registry(tmp_path: Path) -> None:
    """The workflow's second step, run for real after its first: base-rules/ holds the base commit's
    validator, schema, requirements and top-level files byte for byte (not the pull request's edits),
    and the clone still lacks the base's registry trees (recipes/, runs/, which the pull request changed, so the
    checkout above has its own): they were never fetched."""
    origin = populated_project(tmp_path)
    relaxed = relax_orv402(origin)
    add_unpinned_recipe(origin)
    add_training_run(origin, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")  # runs/ differs from the base's too
    commit_all(origin, "contributor: a relaxed rule, a recipe and a run")
    for key, value in (("uploadpack.allowFilter", "true"), ("uploadpack.allowAnySHA1InWant", "true")):
        git(origin, "config", key, value)
    merge, event = open_pull_request(origin)
    base = event["pull_request"]["base"]["sha"]
    (job,) = yaml.safe_load((ROOT / WORKFLOW).read_text(encoding="utf-8"))["jobs"].values()
    data, rules = job["steps"][:2]
    workspace = tmp_path / "workspace"
    check_out({**data, "with": {k: evaluate(v, event) for k, v in data["with"].items()}}, origin, workspace, merge)
    clone = workspace / "pull-request"
    registry_trees = {top: git(origin, "rev-parse", f"{base}:{top}") for top in ("recipes", "runs")}
    run_step(rules, event, workspace, tmp_path)
    out = workspace / "base-rules"
    expected = git(origin, "ls-tree", "-r", "--name-only", base, "--", "validator", "schema", "requirements").split()
    expected += [line.split("\t", 1)[1] for line in git(origin, "ls-tree", base).splitlines() if " blob " in line]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == sorted(expected)
    assert all((out / rel).read_bytes() == git_bytes(origin, f"{base}:{rel}") for rel in expected)
    assert (out / relaxed).read_bytes() != (origin / relaxed).read_bytes()  # the base's rule, not the edit
    assert not [top for top, tree in registry_trees.items() if is_here(clone, tree)]
    assert is_here(clone, git(origin, "rev-parse", f"{base}:validator"))  # what the step did fetch


def is_here(clone: Path, tree: str) -> bool:
    """Is this tree in the clone? (rev-list never fetches: a missing id is "bad object" or `?`-marked.)"""
    done = subprocess.run(
        ["git", "-C", str(clone), "rev-list", "--objects", "--missing=print", "--filter=tree:1", "--no-walk", tree],
        capture_output=True,
        text=True,
    )
    return done.returncode == 0 and bool(done.stdout.strip()) and not done.stdout.startswith("?")


def git_bytes(repo: Path, spec: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "cat-file", "blob", spec], capture_output=True, check=True).stdout
