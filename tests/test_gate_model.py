"""Which rules judge a pull request: the pull-request workflow emulated on a copy of this project.

A project repository (this worktree's validator, schemas, action, locks and workflows, plus a small
registry) gets a pull request that relaxes a check — ORV402 stops treating `latest` as a floating
version — and, in one scenario, adds a recipe only the relaxed check accepts. The workflow is run
the way GitHub runs it: read from the pull request's merge commit, each actions/checkout step a
clone at its `ref` into its `path`, and the local action (`uses: ./…`) run by tests/test_action.py's
ActionRunner from that folder, with orv installed from that same folder into a fresh virtual
environment (the hash-pinned download of its dependencies is not repeated here; the environment
borrows the test interpreter's).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import yaml

from tests.testing.registry import make_registry
from tests.test_action import ActionRun, ActionRunner
from tests.testing.factories import add_training_run, commit_boards, recipe_text, training_recipe_path
from tests.testing.git import commit_all, git
from tests.testing.registry import write

ROOT = Path(__file__).resolve().parent.parent
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
    raise AssertionError("no version_problem() with `if exact_release(version):` in validator/ to relax; update RELAXED")


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
    return merge, {"action": "synchronize", "number": 7,
                   "pull_request": {"number": 7, "base": {"ref": "main", "sha": base},
                                    "head": {"ref": "pr", "sha": head}, "labels": []}}


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


def run_pull_request_workflow(origin: Path, tmp: Path) -> ActionRun:
    """Run pull-request.yml as GitHub would for refs/pull/7/merge; the gate step's result."""
    merge, event = open_pull_request(origin)
    # GitHub reads a pull_request workflow from the merge commit: the pull request's own copy.
    workflow = yaml.safe_load(git(origin, "show", f"{merge}:{WORKFLOW}"))
    (job,) = workflow["jobs"].values()
    workspace = tmp / "workspace"
    workspace.mkdir()
    for step in job["steps"]:
        uses = step["uses"]
        given = {name: evaluate(value, event) for name, value in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout@"):
            assert given.get("persist-credentials") is False
            dest = workspace / given.get("path", ".")
            git(tmp, "clone", "-q", "--no-checkout", str(origin), str(dest))
            git(dest, "fetch", "-q", "origin", "refs/pull/7/merge")
            git(dest, "checkout", "-q", "--detach", given.get("ref") or merge)
        elif uses.startswith("./"):
            action_dir = workspace / uses[2:]
            orv = install_orv_from(action_dir, tmp / "orv-venv")
            runner_tmp = tmp / "runner"
            runner_tmp.mkdir()
            inputs = {name: str(value) for name, value in given.items()}
            return ActionRunner(workspace, event, runner_tmp, {**inputs, "install": "false"},
                                action_dir=action_dir, bin=orv).run()
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
        triggers["pull_request"])


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
        tmp_path: Path) -> None:
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
    assert "uses: ./base-rules" in text
    workflow.write_text(text.replace("uses: ./base-rules", "uses: ./pull-request"), encoding="utf-8")
    commit_all(origin, "contributor: judge the pull request by its own rules")
    run = run_pull_request_workflow(origin, tmp_path)
    assert not run.failed and run.outputs["errors"] == "0", run.log  # the relaxed rule let `latest` through
    assert WORKFLOW in {a.properties.get("file") for a in run.of_level("warning")}
    owners = (ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    assert re.search(r"^/\.github/\s+@openrecipes/maintainers$", owners, re.M)
