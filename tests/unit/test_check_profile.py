"""`orv check --profile` (issue 55): where a check's time goes, per stage and per check, on stderr;
the findings and the exit code are those of the same check without it."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from tests.testing.factories import add_training_run, registry_repo
from tests.testing.git import commit_all
from validator.checks import collect
from validator.cli.app import cli

ROW = re.compile(r"^\s+(\d+\.\d{3}) s\s+(\d+\.\d)%\s+(.+)$")


def _rows(stderr: str, section: str) -> dict[str, float]:
    """name -> seconds of the rows under `section:` up to the next section."""
    rows, inside = {}, False
    for line in stderr.splitlines():
        if not line.startswith(" "):
            inside = line.startswith(section)
            continue
        match = ROW.match(line)
        if inside and match:
            rows[match.group(3)] = float(match.group(1))
    return rows


def _check(repo: Path, *options: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", "--root", str(repo), "--no-cache", "--format", "json", *options])
    return result.exit_code, result.stdout, result.stderr


def test_profile_names_every_stage_and_each_check_that_ran(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    code, out, err = _check(repo, "--profile")
    assert (code, out) == _check(repo)[:2]  # the same findings and ending
    assert "--profile" not in _check(repo)[2]
    total = float(re.search(r"--profile: (\d+\.\d{3}) s in all", err).group(1))  # type: ignore[union-attr]
    stages = _rows(err, "stages:")
    for name in ("load", "load > run-file checks", "load > run files: facts from samples", "registry checks"):
        assert any(stage.startswith(name) for stage in stages), (name, sorted(stages))
    checks = _rows(err, "checks")
    # a run-file check (counted in the loader, in this process) and a registry check are both there
    assert any(name.startswith("ORV208 integrity.") for name in checks), sorted(checks)
    assert any(name.startswith("ORV302 duplicates.") for name in checks), sorted(checks)
    # a stage is inside the whole, and the checks' sum inside the stages that run them
    assert all(seconds <= total + 0.001 for seconds in stages.values())
    assert checks["every check together"] <= total + 0.001
    assert collect.TIMINGS is None  # off again after the command: nothing else is timed


def test_profile_of_a_pull_request_names_its_stages(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path, boards=True)
    add_training_run(repo, 1490.2, measured_by="lab-b")
    commit_all(repo, "a second run")
    code, out, err = _check(repo, "--base", "main", "--profile")
    assert (code, out) == _check(repo, "--base", "main")[:2]
    stages = _rows(err, "stages:")
    assert "pull request: git diff" in stages
    assert "pull request: the neighbourhood (published keys, key index)" in stages


def test_profile_does_not_go_with_a_shard(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--root", str(repo), "--shard", "1/2", "--profile"])
    assert result.exit_code == 2 and "--profile" in result.output
