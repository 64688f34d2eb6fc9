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

from tests.e2e.test_action import ActionRun, ActionRunner
from tests.e2e.test_gate_model import check_out, evaluate, install_orv_from, open_pull_request
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
            orv = install_orv_from(action_dir, tmp / "orv-venv")
            runner_tmp = tmp / "runner"
            runner_tmp.mkdir()
            inputs = {name: str(value) for name, value in given.items()}
            return ActionRunner(
                workspace, event, runner_tmp, {**inputs, "install": "false"}, action_dir=action_dir, bin=orv
            ).run()
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
