"""One meaning of "clean": a contributor's `orv check` and pre-commit hook pass a branch that adds a
recipe and its run; stale boards are main's business (`orv check --boards`); a pull request that
touches a generated boards file fails the gate (ORV609); hook configuration is never a finding."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.testing.checking import check, found
from tests.testing.factories import add_training_run, recipe_text, registry_repo, training_recipe_path
from tests.testing.git import commit_all, git, git_env
from tests.testing.paths import REPO as ROOT
from tests.testing.registry import write
from validator.checks import all_checks
from validator.cli import main

BOARDS = "boards/index.json"


def orv(*args: str) -> int:
    return main(list(args))


def main_with_boards(tmp_path: Path) -> Path:
    """registry_repo plus a recipe with no run (a T0 row) and boards regenerated and committed on main."""
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp4-pp1-dp2"),
        recipe_text("qwen3-8-27b-h100-tp4-pp1-dp2", claimed=1500.0, layout="tp4-pp1-dp2"),
    )
    commit_all(repo, "a claim without a run", "2026-10-18T00:00:00+00:00")
    assert orv("boards", "--root", str(repo)) == 0
    commit_all(repo, "boards", "2026-10-18T01:00:00+00:00")
    assert orv("check", "--boards", "--root", str(repo)) == 0
    git(repo, "checkout", "-q", "-b", "contribution")
    return repo


def add_contribution(repo: Path) -> str:
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    return digest


# --------------------------------------------------------------------------- plain orv check


@pytest.mark.git
def test_plain_check_passes_a_branch_that_adds_a_recipe_and_boards_are_checked_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = main_with_boards(tmp_path)
    add_contribution(repo)
    commit_all(repo, "a contribution", "2026-10-19T00:00:00+00:00")
    capsys.readouterr()
    assert orv("check", "--root", str(repo)) == 0
    out = capsys.readouterr().out
    assert "ORV7" not in out and "no findings" in out
    assert orv("check", "--root", str(repo), "--base", "main") == 0
    # main's boards workflow asks for the comparison: the boards are stale now
    assert orv("check", "--boards", "--root", str(repo)) == 1
    out = capsys.readouterr().out
    assert "ORV701" in out and "on a pull request branch, leave them as main has them" in out
    assert orv("boards", "--check", "--root", str(repo)) == 1


@pytest.mark.git
def test_boards_flag_and_base_do_not_mix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = registry_repo(tmp_path)
    assert orv("check", "--boards", "--base", "main", "--root", str(repo)) == 2
    assert "never changes it" in capsys.readouterr().err


def test_the_boards_workflow_asks_for_the_boards_comparison() -> None:
    workflow = yaml.safe_load((ROOT / ".github/workflows/boards.yml").read_text(encoding="utf-8"))
    runs = [step.get("run", "") for step in workflow["jobs"]["boards"]["steps"]]
    assert any("check --boards" in r for r in runs), runs


# --------------------------------------------------------------------------- ORV609


@pytest.mark.git
@pytest.mark.parametrize(
    "files, before, after",
    [
        ("models/*/*.json", '"tier": "T0"', '"tier": "T3"'),  # the model's chunk of rows: what the site shows
        (
            "standings/*.json",
            '"T0"',
            '"T3"',
        ),  # its standings: what the gate's summary reads of the base (never a PR's own)
    ],
)
def test_a_hand_forged_tier_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: str, before: str, after: str
) -> None:
    repo = main_with_boards(tmp_path)
    (path,) = (repo / "boards").glob(files)  # the one model's file
    part = path.relative_to(repo).as_posix()
    text = path.read_text(encoding="utf-8")
    assert before in text
    path.write_text(text.replace(before, after, 1), encoding="utf-8")
    commit_all(repo, "promote my recipe")
    capsys.readouterr()
    assert orv("check", "--root", str(repo), "--base", "main", "--format", "json") == 1
    out = capsys.readouterr().out
    assert '"code": "ORV609"' in out and '"severity": "error"' in out
    assert "ORV606" not in out  # one finding, the error, not a second warning about the same file
    assert f"git checkout main -- {part}" in out
    assert found(check(repo)) == [f"ORV609 {part}:1"]  # the neighbourhood and the whole tree agree


@pytest.mark.git
def test_adding_a_boards_file_in_a_pull_request_says_to_remove_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = registry_repo(tmp_path)  # main has no boards file yet
    assert orv("boards", "--root", str(repo)) == 0
    commit_all(repo, "boards from a branch")
    capsys.readouterr()
    assert orv("check", "--root", str(repo), "--base", "main") == 1
    out = capsys.readouterr().out
    assert "ORV609 error" in out and f"git rm {BOARDS}" in out and "git rm boards/models/" in out


@pytest.mark.git
def test_committing_the_combined_document_in_a_pull_request_is_orv609(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC §7: boards/boards.json is published by the boards workflow, never committed, so a pull request that
    adds it (written with `orv boards --combined`, as a reader might) is refused like any generated file."""
    repo = main_with_boards(tmp_path)
    assert orv("boards", "--combined", str(repo / "boards" / "boards.json"), "--root", str(repo)) == 0
    commit_all(repo, "the combined boards, for readers")
    capsys.readouterr()
    assert orv("check", "--root", str(repo), "--base", "main") == 1
    out = capsys.readouterr().out
    assert "ORV609 error" in out and "publishes with the site and never commits" in out
    assert "git rm boards/boards.json" in out
    assert found(check(repo)) == ["ORV609 boards/boards.json:1"]
    # and any other file under boards/ is an error too, never a silent addition
    git(repo, "rm", "-q", "boards/boards.json")
    (repo / "boards" / "notes.md").write_text("hand-kept notes\n", encoding="utf-8")
    commit_all(repo, "notes beside the boards")
    capsys.readouterr()
    assert orv("check", "--root", str(repo), "--base", "main") == 1
    assert "boards/notes.md" in capsys.readouterr().out


@pytest.mark.git
def test_hook_configuration_is_not_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = registry_repo(tmp_path)
    add_contribution(repo)
    shutil.copy(ROOT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
    commit_all(repo, "a contribution and my hooks")
    capsys.readouterr()
    assert orv("check", "--root", str(repo), "--base", "main") == 0
    assert "no findings" in capsys.readouterr().out


def test_every_boards_hint_gives_the_same_instruction() -> None:
    """ORV701/702 (main), ORV609 (a pull request), the docs and README: leave the file to main."""
    docs = {code: all_checks()[code].doc for code in ("ORV606", "ORV609", "ORV701")}
    assert "ORV609" in docs["ORV606"] and "orv check --boards" in docs["ORV701"]
    pull_requests = (ROOT / "docs/pull-requests.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "| ORV609 | error |" in pull_requests
    for text in (pull_requests, readme):
        assert "orv check --boards" in text
    # no contributor-facing text tells a branch to commit the boards
    for text in (readme, (ROOT / "docs/contributing.md").read_text(encoding="utf-8")):
        assert "run `orv boards` and commit" not in text


# --------------------------------------------------------------------------- pre-commit


def _manifest() -> dict[str, dict[str, object]]:
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}


def test_hook_stages_commit_check_at_commit_and_pull_request_rules_at_push() -> None:
    for hooks in (
        _manifest(),
        {
            h["id"]: h
            for repo in yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())["repos"]
            for h in repo["hooks"]
        },
    ):
        assert hooks["orv-check"]["stages"] == ["pre-commit"]
        assert hooks["orv-check-pr"]["stages"] == ["pre-push"]
        assert hooks["orv-check"]["entry"] == "orv check" and hooks["orv-check"]["pass_filenames"] is False


def _pre_commit() -> str:
    found = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("pre-commit is missing; it is in the test extra")
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    return found


def test_pre_commit_accepts_the_config_and_the_manifest() -> None:
    pre_commit = _pre_commit()
    for command, path in (
        ("validate-config", ".pre-commit-config.yaml"),
        ("validate-manifest", ".pre-commit-hooks.yaml"),
    ):
        done = subprocess.run([pre_commit, command, str(ROOT / path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.git
def test_commits_through_the_shipped_pre_commit_config(tmp_path: Path) -> None:
    """Real pre-commit with the registry's own .pre-commit-config.yaml: a commit adding a recipe and
    its run passes although the boards are stale; a commit with a broken recipe is refused."""
    pre_commit = _pre_commit()
    repo = main_with_boards(tmp_path)
    shutil.copy(ROOT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
    commit_all(repo, "hooks")
    env = {
        **git_env(repo),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        # `language: system` runs the orv on PATH: this interpreter's
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
    }

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=repo, env=env, capture_output=True, text=True, timeout=300)

    assert run(pre_commit, "install").returncode == 0
    assert (repo / ".git/hooks/pre-commit").is_file() and not (repo / ".git/hooks/pre-push").exists()
    add_contribution(repo)
    assert run("git", "add", "recipes", "runs").returncode == 0
    done = run("git", "commit", "-m", "qwen3.8-27b on H100, TP2 PP2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "orv check" in done.stdout + done.stderr and "Passed" in done.stdout + done.stderr
    assert orv("check", "--boards", "--root", str(repo)) == 1  # stale boards did not stop the commit

    write(
        repo,
        training_recipe_path("qwen3-8-27b-unquoted"),
        recipe_text("qwen3-8-27b-unquoted", layout="tp8-pp1-dp1").replace('version: "0.30.0"', "version: 0.30"),
    )
    assert run("git", "add", "recipes").returncode == 0
    done = run("git", "commit", "-m", "broken")
    assert done.returncode != 0 and "ORV105" in done.stdout + done.stderr
    # a commit outside the hook's files does not run it
    run("git", "reset", "-q", "--hard")
    write(repo, "notes.txt", "a note\n")
    run("git", "add", "notes.txt")
    done = run("git", "commit", "-m", "a note")
    assert done.returncode == 0 and "Skipped" in done.stdout + done.stderr
