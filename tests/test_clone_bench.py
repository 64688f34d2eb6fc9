"""bench/history.py and bench/clone.py on a tiny registry: the history is main-shaped and passes orv
check, the checkout emulation reads the workflow's parameters, and the byte counter sees every
fetch (on-demand ones included), so the clone figures in the README measure what they say."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import clone
from bench.history import counts, generate_history
from validator.cli import main


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_history(60, commits=8, root=tmp_path_factory.mktemp("history") / "reg")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def test_the_history_arrives_over_many_commits_and_passes_the_check(registry: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    made = counts(registry)
    assert made["run_files"] >= 60
    assert int(git(registry, "rev-list", "--count", "main")) >= 8 + 2  # catalog, batches, boards
    # later runs rewrite a recipe: some recipe file has more than one version in history
    versions = git(registry, "log", "--format=", "--name-only", "main", "--", "recipes").splitlines()
    assert len(versions) > len(set(versions))
    assert any("quality" in p.read_text() for p in (registry / "runs").rglob("*.json"))
    changed = (registry / ".git" / "orv-bench-pr").read_text().split()
    assert git(registry, "diff", "--name-only", "main", "pr").split() == changed
    assert main(["check", "--root", str(registry), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "no findings" in out or " 0 error(s)" in out


def test_a_sparse_checkout_step_gets_its_patterns_and_the_change_and_counts_on_demand_fetches(
        registry: Path, tmp_path: Path) -> None:
    workflow = tmp_path / "pull-request.yml"
    workflow.write_text("""on: pull_request
jobs:
  orv:
    steps:
      - uses: actions/checkout@0000000000000000000000000000000000000000
        with:
          path: pull-request
          filter: blob:none
          sparse-checkout: |
            /catalog/
            /boards/keys.json
          sparse-checkout-cone-mode: false
""")
    steps = clone.checkout_steps(workflow)
    assert clone.patterns(steps[0]) == ["/catalog/", "/boards/keys.json"]
    meter = clone.Meter(registry, tmp_path)
    changed = (registry / ".git" / "orv-bench-pr").read_text().split()
    pr = git(registry, "rev-parse", "pr")
    sparse = tmp_path / "sparse"
    meter.checkout(sparse, steps[0], pr, [f"/{p}" for p in changed])
    sparse_bytes = meter.sent()
    files = sorted(p.relative_to(sparse).as_posix() for p in sparse.rglob("*") if ".git" not in p.parts and p.is_file())
    assert set(changed) <= set(files) and "boards/keys.json" in files
    assert all(f.startswith("catalog/") or f in changed or f == "boards/keys.json" for f in files)
    # a blob outside the patterns is fetched on demand, through the counter
    other = next(p for p in git(registry, "ls-tree", "-r", "--name-only", "main").split() if p.startswith("runs/"))
    meter.git(sparse, "cat-file", "-p", f"{pr}:{other}")
    assert meter.sent() > sparse_bytes
    meter.log.unlink()
    meter.checkout(tmp_path / "full", {"fetch-depth": 0}, pr, [])
    assert meter.sent() > 2 * sparse_bytes


def test_the_old_workflow_is_what_main_had_before_issue_32() -> None:
    pr_step, base_step = clone.OLD_STEPS
    assert pr_step["fetch-depth"] == 0 and "base.sha" in base_step["ref"]
    assert [s.get("path") for s in clone.checkout_steps(clone.WORKFLOW)][:1] == ["pull-request"]
