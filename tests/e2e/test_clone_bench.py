"""bench/history.py and bench/clone.py on a tiny registry: the history is main-shaped and passes orv
check, the checkout emulation reads the workflow's parameters, and the byte counter sees every
fetch (on-demand ones included), so the clone figures in docs/benchmarks.md measure what they say."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from bench import clone
from bench.history import counts, generate_history
from validator.cli import main

pytestmark = pytest.mark.git


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_history(60, commits=8, root=tmp_path_factory.mktemp("history") / "reg")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def test_the_history_arrives_over_many_commits_and_passes_the_check(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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
    registry: Path, tmp_path: Path
) -> None:
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


def test_the_copied_run_pull_request_stores_an_existing_runs_samples_again_without_touching_the_work_tree(
    registry: Path,
) -> None:
    status = git(registry, "status", "--porcelain")
    commit, changed = clone.copied_run_pr(registry)
    try:
        assert git(registry, "rev-parse", "pr-copy") == commit
        assert git(registry, "diff", "--name-only", "main", "pr-copy").split() == changed
        (rel,) = changed
        raw = subprocess.run(["git", "show", f"pr-copy:{rel}"], cwd=registry, check=True, capture_output=True).stdout
        assert rel.endswith(f"/{hashlib.sha256(raw).hexdigest()}.json")  # content-addressed, as orv stores it
        copy = json.loads(raw)
        originals = [
            json.loads(git(registry, "show", f"main:{p}"))
            for p in git(registry, "ls-tree", "-r", "--name-only", "main", "--", "runs").split()[:1]
        ]
        assert copy["measured_by"] == "lab-copy" != originals[0]["measured_by"]
        assert {**copy, "measured_by": originals[0]["measured_by"]} == originals[0]  # the same samples, all of them
        assert git(registry, "status", "--porcelain") == status  # the cached registry's work tree untouched
    finally:
        git(registry, "update-ref", "-d", "refs/heads/pr-copy")


def test_the_variants_table_puts_each_checkout_beside_the_other() -> None:
    from bench.clone_table import VARIANTS, variants_table

    row = {
        "steps": [{"bytes": 3 * 2**20}, {"bytes": 2**20}],
        "orv_bytes": 2**19,
        "bytes": 4.5 * 2**20,
        "fetches": 8,
        "total_s": 2.9,
        "outputs": {"errors": "0"},
    }
    results = {VARIANTS[1][1]: {"10000": {"run_files": 10000, "commits": 322, "gate": {"new": row}}}}
    table = variants_table(results)
    expected = (
        "| 10,000 (322) | one recipe | — | 3.0 MiB + 1.0 MiB + 512 KiB = **4.5 MiB**; 8 fetches; 2.9 s (0 errors) |"
    )
    assert expected in table, table


def test_a_generated_registry_gets_the_run_benchs_pull_request_once_and_the_gate_checks_it(tmp_path: Path) -> None:
    # `--registry`: the gate on bench/generate.py's main-shaped registries, with bench/run.py's pull request
    from bench.generate import GIT, generate

    root = generate(tmp_path / "reg", 12)
    status = git(root, "status", "--porcelain")
    assert clone.registry_remote(root) == root.resolve()
    tip = git(root, "rev-parse", "pr")
    changed = (root / ".git" / "orv-bench-pr").read_text().split()
    assert len(changed) == 2 and changed[0].startswith("recipes/training/") and changed[1].startswith("runs/")
    assert git(root, "rev-parse", "pr^") == git(root, "rev-parse", "main")  # main plus the pull request
    assert git(root, "status", "--porcelain") == status and git(root, "branch", "--show-current") == "main"
    clone.registry_remote(root)
    assert git(root, "rev-parse", "pr") == tip  # made once
    # main moves on (new boards, say): the pull request is made again on it, never measured off an old main
    subprocess.run([*GIT, "commit", "-q", "--allow-empty", "-m", "boards"], cwd=root, check=True)
    clone.registry_remote(root)
    assert git(root, "rev-parse", "pr^") == git(root, "rev-parse", "main") != git(root, "rev-parse", f"{tip}^")
    assert (root / ".git" / "orv-bench-pr").read_text().split() == changed
    assert clone.generated_counts(root) == {
        "recipes": len(list((root / "recipes").rglob("*.yaml"))),
        "run_files": len(list((root / "runs").rglob("*.json"))),
        "commits": int(git(root, "rev-list", "--count", "main")),
    }
    row = clone.measure(root, ["new"], 1, clone.WORKFLOW, clone.ORV, gate_only=True)
    gate = row["gate"]["new"]
    assert gate["exit"] == 0 and "refused" not in gate, gate
    assert gate["outputs"] == {"errors": "0", "warnings": "0", "notices": "0"}
