"""action.yml, the workflows and the pre-commit hooks: public schemas, zizmor, and the hardening rules.

The schema and zizmor tests need the `test` extra (check-jsonschema, zizmor). Where they are
missing they skip locally and fail under CI=true, so CI can never pass without running them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from tests.test_pr import add_run, commit_all, git, recipe_path, recipe_text, registry_repo, write

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")


def require_tool(found: bool, what: str) -> None:
    if not found:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is missing; CI installs it with `pip install -e '.[test]'`")
        pytest.skip(f"{what} is not installed (pip install -e '.[test]')")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_there_are_two_workflows() -> None:
    assert [p.name for p in WORKFLOWS] == ["boards.yml", "pull-request.yml"]


# --------------------------------------------------------------------------- public schemas and zizmor


@pytest.mark.parametrize("schema, files", [
    ("vendor.github-actions", [ACTION]),
    ("vendor.github-workflows", WORKFLOWS),
], ids=["action", "workflows"])
def test_files_validate_against_the_public_github_schemas(schema: str, files: list[Path]) -> None:
    require_tool(shutil.which("check-jsonschema") is not None or _importable("check_jsonschema"), "check-jsonschema")
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema,
                           *map(str, files)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    require_tool(_importable("check_jsonschema"), "check-jsonschema")
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    step: []\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(broken)], capture_output=True, text=True)
    assert done.returncode == 1


def _zizmor() -> str | None:
    here = Path(sys.executable).parent / "zizmor"
    return str(here) if here.exists() else shutil.which("zizmor")


def _zizmor_findings(*targets: str) -> list[dict[str, Any]]:
    zizmor = _zizmor()
    require_tool(zizmor is not None, "zizmor")
    assert zizmor is not None
    # --offline: no GitHub API (the check must not need the network); the auditor persona reports
    # everything zizmor knows, so "nothing" here is nothing at any persona.
    done = subprocess.run([zizmor, "--offline", "--no-progress", "--persona", "auditor", "--format", "json",
                           *targets], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode in (0, 10, 11, 12, 13, 14), done.stderr
    findings: list[dict[str, Any]] = json.loads(done.stdout or "[]")
    return findings


def test_zizmor_reports_nothing_for_the_repository() -> None:
    findings = _zizmor_findings(".")
    assert findings == [], [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in findings]


def test_zizmor_would_catch_an_injection(tmp_path: Path) -> None:
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: pull_request\npermissions: {}\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "      - run: echo \"${{ github.event.pull_request.title }}\"\n", encoding="utf-8")
    assert "template-injection" in {f["ident"] for f in _zizmor_findings(str(bad))}


# --------------------------------------------------------------------------- hardening rules, stated directly


def _steps(document: Any) -> Iterator[dict[str, Any]]:
    if "runs" in document:
        yield from document["runs"]["steps"]
    for job in (document.get("jobs") or {}).values():
        yield from job.get("steps", [])


def _triggers(document: Any) -> Any:
    return document.get("on", document.get(True))  # YAML 1.1 reads a bare `on:` key as True


@pytest.mark.parametrize("path", WORKFLOWS + [ACTION], ids=lambda p: p.name)
def test_no_expression_inside_run_scripts_and_every_action_pinned(path: Path) -> None:
    document = load(path)
    for step in _steps(document):
        if "run" in step:
            assert "${{" not in step["run"], f"{path.name}: pass values through env:, not ${{{{ }}}} in run:"
        if "uses" in step:
            uses = step["uses"]
            assert uses in ("$/", "./") or PINNED.match(uses), f"{path.name}: {uses} is not pinned by full SHA"
    triggers = _triggers(document) or {}
    assert "pull_request_target" not in (triggers if isinstance(triggers, (dict, list)) else [triggers])


def test_the_pull_request_workflow_uses_this_repositorys_action_read_only() -> None:
    document = load(ROOT / ".github" / "workflows" / "pull-request.yml")
    assert set(_triggers(document)) == {"pull_request"}
    assert {"labeled", "unlabeled"} <= set(_triggers(document)["pull_request"]["types"])  # waiver labels re-run it
    assert document["permissions"] == {"contents": "read"}
    (job,) = document["jobs"].values()
    assert "permissions" not in job
    checkout, gate = job["steps"]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}  # the merge base must be there
    assert gate["uses"] == "$/"  # self-repository form of `./`: this repository's action.yml at this commit


def test_the_boards_workflow_regenerates_and_commits_on_main_only() -> None:
    document = load(ROOT / ".github" / "workflows" / "boards.yml")
    assert _triggers(document) == {"push": {"branches": ["main"]}}
    assert document["permissions"] == {}
    assert document["concurrency"]["cancel-in-progress"] is False
    job = document["jobs"]["boards"]  # the other job publishes the site (tests/test_site.py)
    assert job["permissions"] == {"contents": "write"}
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "orv\" boards" in runs and "git add boards/boards.json" in runs
    assert "--require-hashes" in runs
    checkout = job["steps"][0]
    assert checkout["with"]["persist-credentials"] is False  # the token reaches git only for the push


def test_the_action_outputs_come_from_the_check_step() -> None:
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    assert {"errors", "warnings", "entries", "tiers", "waived"} <= set(action["outputs"])
    for spec in action["outputs"].values():
        assert re.fullmatch(r"\$\{\{ steps\.check\.outputs\.[a-z-]+ \}\}", spec["value"])
    check = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    assert "--format github" in check["run"] and "--base" in check["run"]


# --------------------------------------------------------------------------- pre-commit hooks


def _hooks() -> dict[str, dict[str, Any]]:
    return {hook["id"]: hook for hook in load(HOOKS)}


def test_the_pre_commit_manifest_is_well_formed() -> None:
    hooks = _hooks()
    assert set(hooks) == {"orv-check", "orv-check-pr"}
    scripts = _console_scripts()
    for hook in hooks.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        assert shlex.split(hook["entry"])[0] in scripts  # the command the package installs
    assert re.search(hook_regex := hooks["orv-check"]["files"], "recipes/training/m/r.yaml")
    assert not re.search(hook_regex, "docs/readme.md")
    try:
        from pre_commit.clientlib import MANIFEST_SCHEMA, load_manifest  # the authoritative validator
    except ImportError:
        return
    assert MANIFEST_SCHEMA and load_manifest(str(HOOKS))


def _console_scripts() -> set[str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"])


def run_hook(hook_id: str, repo: Path) -> subprocess.CompletedProcess[str]:
    """Run a hook's entry the way pre-commit does (entry + args, no filenames), with this worktree's orv."""
    argv = shlex.split(_hooks()[hook_id]["entry"])
    assert argv[0] == "orv"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "validator", *argv[1:]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_orv_check_hook_passes_a_clean_registry_and_fails_a_broken_one(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    assert run_hook("orv-check", repo).returncode == 0
    write(repo, recipe_path("qwen3-8-27b-unquoted"),
          recipe_text("qwen3-8-27b-unquoted", layout="tp8-pp1-dp1").replace('version: "0.30.0"', "version: 0.30"))
    done = run_hook("orv-check", repo)
    assert done.returncode == 1 and "ORV105" in done.stdout


def test_the_pre_push_hook_applies_the_pull_request_rules_against_origin(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(origin))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "contribution")
    digest = add_run(clone, 1612.0, layout="tp2-pp2-dp2")
    write(clone, recipe_path("qwen3-8-27b-new"),
          recipe_text("qwen3-8-27b-new", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"))
    commit_all(clone, "a contribution")
    assert run_hook("orv-check-pr", clone).returncode == 0
    run_file = next(p for p in git(clone, "ls-files", "runs").splitlines() if digest not in p)
    (clone / run_file).write_bytes((clone / run_file).read_bytes() + b" ")
    done = run_hook("orv-check-pr", clone)
    assert done.returncode == 1 and "ORV601" in done.stdout


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
