"""A new registry adopts OpenRecipes from docs/examples alone (issue 52 item 5).

The OpenRecipes project (this worktree's released files and .ci/release) cuts a release in a scratch
clone; `uses: openrecipes/openrecipes@<series>` in the example resolves to what GitHub downloads for it,
the tree of the tag's commit. The registry starts from nothing but the example workflows and a copy
of catalog/ and measurers/. Its pull-request workflow, read from the pull request's merge commit, is
replayed step by step as tests/e2e/test_gate_model.py does: a good pull request passes, a bad one
fails with its finding.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_action import ActionRun
from tests.e2e.test_gate_model import check_out, evaluate, install_orv_from, open_pull_request, run_installed_action
from tests.e2e.test_release import RELEASED
from tests.e2e.test_workflows import OWN_ACTION, release_series
from tests.testing.factories import add_training_run, commit_boards, recipe_text, training_recipe_path
from tests.testing.git import commit_all, git, git_env
from tests.testing.paths import REPO as ROOT
from tests.testing.registry import write

pytestmark = pytest.mark.git

EXAMPLES = ROOT / "docs" / "examples"


def cut_release(tmp: Path) -> tuple[Path, str]:
    """The project in a scratch clone of its own, released with .ci/release; (the clone, the version)."""
    project = tmp / "openrecipes"
    for rel in git(ROOT, "ls-files", "--", ".ci/release", *RELEASED).splitlines():
        if (ROOT / rel).is_file():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, project / rel)
    git(project, "init", "-q", "-b", "main")
    commit_all(project, "the project on main")
    version = git(project, "show", "HEAD:validator/__init__.py").split('__version__ = "')[1].split('"')[0]
    done = subprocess.run(
        [str(project / ".ci" / "release"), version], cwd=project, env=git_env(project), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return project, version


def download_action(project: Path, uses: str, dest: Path) -> Path:
    """What GitHub downloads for `uses: <owner>/<repo>@<ref>`: the tree of the commit the ref names."""
    name, ref = uses.split("@")
    assert name == OWN_ACTION, uses
    dest.mkdir()
    subprocess.run(f"git -C {project} archive {ref} | tar -x -C {dest}", shell=True, check=True)
    return dest


def adopting_registry(tmp: Path) -> Path:
    """main: docs/examples' workflows copied unchanged, the shipped catalog/ and measurers/, the boards."""
    repo = tmp / "registry"
    for name in ("pull-request.yml", "boards.yml"):
        (repo / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLES / name, repo / ".github" / "workflows" / name)
    for folder in ("catalog", "measurers"):
        shutil.copytree(ROOT / folder, repo / folder)
    for folder in ("recipes", "runs"):
        (repo / folder).mkdir()
    git(repo, "init", "-q", "-b", "main")
    digest = add_training_run(repo, 1480.4)
    rid = "qwen3-8-27b-h100-tp1-pp4-dp2"
    write(repo, training_recipe_path(rid), recipe_text(rid, runs=(digest,)))
    commit_all(repo, "a registry adopts OpenRecipes")
    commit_boards(repo)  # as its boards workflow leaves main
    git(repo, "checkout", "-q", "-b", "pr")
    for key, value in (("uploadpack.allowFilter", "true"), ("uploadpack.allowAnySHA1InWant", "true")):
        git(repo, "config", key, value)  # as GitHub serves partial clones and fetches by SHA
    return repo


def run_gate(origin: Path, project: Path, tmp: Path) -> ActionRun:
    """The registry's pull-request workflow, read from the merge commit, step by step."""
    merge, event = open_pull_request(origin)
    workflow: dict[str, Any] = yaml.safe_load(git(origin, "show", f"{merge}:.github/workflows/pull-request.yml"))
    (job,) = workflow["jobs"].values()
    workspace = tmp / "workspace"
    for step in job["steps"]:
        uses = step.get("uses", "")
        given = {name: evaluate(value, event) for name, value in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout@"):
            check_out({**step, "with": given}, origin, workspace, merge)
        elif uses.startswith(OWN_ACTION + "@"):
            action_dir = download_action(project, uses, tmp / "action")
            assert not {"recipes", "runs", "catalog", "boards"} & {p.name for p in action_dir.iterdir()}
            return run_installed_action(action_dir, workspace, event, given, tmp)
        else:
            raise AssertionError(f"{uses or step.get('name')}: a step this replay does not know")
    raise AssertionError("the example pull-request workflow has no step that runs the OpenRecipes Action")


@pytest.fixture
def released(tmp_path: Path) -> Path:
    project, version = cut_release(tmp_path)
    assert git(project, "rev-parse", f"{release_series()}^{{}}") == git(project, "rev-parse", f"v{version}^{{}}")
    return project


def test_a_good_pull_request_to_an_adopting_registry_passes(tmp_path: Path, released: Path) -> None:
    origin = adopting_registry(tmp_path)
    digest = add_training_run(origin, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    rid = "qwen3-8-27b-h100-tp2-pp2-dp2"
    write(origin, training_recipe_path(rid), recipe_text(rid, claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"))
    commit_all(origin, "contributor: a TP2 PP2 recipe and its run")
    run = run_gate(origin, released, tmp_path)
    assert not run.failed, run.log
    assert run.outputs["errors"] == "0" and run.outputs["warnings"] == "0"
    assert f"| `{rid}` | new |" in run.summary


def test_a_bad_pull_request_to_an_adopting_registry_fails_with_its_finding(tmp_path: Path, released: Path) -> None:
    origin = adopting_registry(tmp_path)
    rid = "qwen3-8-27b-floating"
    rel = training_recipe_path(rid)
    write(origin, rel, recipe_text(rid, version="latest", layout="tp4-pp1-dp2"))
    commit_all(origin, "contributor: a recipe on a floating engine version")
    run = run_gate(origin, released, tmp_path)
    assert run.failed and run.exit_codes["check"] == 1, run.log
    assert (rel, "ORV402") in {(a.properties["file"], a.properties["title"]) for a in run.of_level("error")}


# --------------------------------------------------------------------------- the boards workflow, replayed


def run_boards_workflow(origin: Path, project: Path, tmp: Path) -> list[str]:
    """The registry's boards job after a push to main, step by step up to the Pages upload; the logs.

    The commit step runs without BOARDS_DEPLOY_KEY (no ruleset here), so it pushes with the token,
    which a file:// remote ignores. setup-python is the test interpreter; the hash-pinned download
    of the dependencies is not repeated (install_orv_from, as test_gate_model does), the rest of the
    install step is: orv from the release checkout alone, which is then removed.
    """
    sha = git(origin, "rev-parse", "main")
    workflow: dict[str, Any] = yaml.safe_load(git(origin, "show", f"{sha}:.github/workflows/boards.yml"))
    job = workflow["jobs"]["boards"]
    workspace, runner_tmp = tmp / "boards-workspace", tmp / "boards-runner"
    runner_tmp.mkdir(parents=True)
    logs = []
    git(origin, "config", "uploadpack.allowFilter", "true")  # GitHub serves partial clones
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    for step in job["steps"]:
        uses, given = step.get("uses", ""), step.get("with") or {}
        # the run a push to main starts: a step for the schedule or a dispatch only is skipped
        if step.get("if") not in (None, "github.event_name == 'push'"):
            assert step["if"] == "github.event_name != 'push'", step["if"]
            continue
        if uses.startswith("actions/checkout@") and given.get("repository") == OWN_ACTION:
            download_action(project, f"{OWN_ACTION}@{given['ref']}", workspace / given["path"])
        elif uses.startswith("actions/checkout@"):
            # main's commit with its history, commits only (tree:0), the catalog's folders checked out
            assert given == {
                "fetch-depth": 0,
                "filter": "tree:0",
                "sparse-checkout": "/catalog/\n/measurers/\n",
                "sparse-checkout-cone-mode": False,
                "persist-credentials": False,
            }, given
            workspace.mkdir()
            git(workspace, "init", "-q")
            git(workspace, "remote", "add", "origin", origin.as_uri())
            git(
                workspace,
                "fetch",
                "-q",
                "--no-tags",
                "--filter=tree:0",
                "origin",
                "+refs/heads/*:refs/remotes/origin/*",
            )
            git(workspace, "sparse-checkout", "set", "--no-cone", *given["sparse-checkout"].split())
            git(workspace, "checkout", "-q", "-B", "main", sha)
        elif uses.startswith(("actions/setup-python@", "actions/upload-pages-artifact@")):
            continue
        elif "run" in step and "requirements/action.txt" in step["run"]:
            release = workspace / ".orv-release"
            bin_dir = install_orv_from(release, runner_tmp / "orv-venv")
            (bin_dir / "orv").write_text('#!/bin/sh\nexec "$(dirname "$0")/python" -I -m validator "$@"\n')
            (bin_dir / "orv").chmod(0o755)
            shutil.rmtree(release)
        elif "run" in step:
            env = {
                **git_env(tmp),
                "GITHUB_TOKEN": "not-a-token",
                "DEPLOY_KEY": "",
                "GITHUB_SHA": sha,
                "GITHUB_WORKSPACE": str(workspace),
                "GITHUB_REPOSITORY": "someone/registry",
                "GITHUB_SERVER_URL": "https://github.com",
                "RUNNER_TEMP": str(runner_tmp),
            }
            if "EVENT" in (step.get("env") or {}):  # ${{ github.event_name }}: the run a push starts
                env["EVENT"] = "push"
            env.pop("PYTHONPATH", None)
            done = subprocess.run(
                ["bash", "-e", "-c", step["run"]], cwd=workspace, env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, f"step `{step.get('name')}` failed: {done.stdout}{done.stderr}"
            logs.append(done.stdout)
        else:
            raise AssertionError(f"{uses or step.get('name')}: a step this replay does not know")
    return logs


def test_the_boards_workflow_regenerates_and_commits_only_the_boards(tmp_path: Path, released: Path) -> None:
    origin = adopting_registry(tmp_path)
    digest = add_training_run(origin, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    rid = "qwen3-8-27b-h100-tp2-pp2-dp2"
    write(origin, training_recipe_path(rid), recipe_text(rid, claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"))
    merged = commit_all(origin, "contributor: a TP2 PP2 recipe and its run")
    git(origin, "checkout", "-q", "main")
    git(origin, "merge", "-q", "--ff-only", "pr")
    git(origin, "checkout", "-q", "--detach")  # a remote's checked-out branch cannot be pushed to
    logs = run_boards_workflow(origin, released, tmp_path / "first")
    boards = git(origin, "rev-parse", "main")
    assert git(origin, "rev-parse", f"{boards}^") == merged  # one commit on top of the merge
    changed = git(origin, "diff", "--name-only", merged, boards).splitlines()
    assert changed and all(p.startswith("boards/") for p in changed), changed
    assert any(rid in git(origin, "show", f"{boards}:{p}") for p in changed)
    # run again on the boards commit: nothing to regenerate, nothing pushed, and ORV7xx passes
    logs = run_boards_workflow(origin, released, tmp_path / "second")
    assert "boards/ is up to date" in "".join(logs) and git(origin, "rev-parse", "main") == boards
