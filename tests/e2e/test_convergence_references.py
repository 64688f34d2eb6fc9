"""Convergence references are finite and fair (issue 49, item 5), each row built as a pull request and
gated as action.yml gates it (`orv check --base main`), each forgery beside its honest twin.

The scratch registry's training workload keeps only the rule (tolerance 5%, window 10..20) and averages
over 5 steps (`smoothing_steps: 5`); on `main` qwen3.8-27b has no reference yet, so its recipes wait at T1.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testing.checking import check
from tests.testing.factories import store_run, training_recipe, training_run, write_recipe
from tests.testing.git import commit_all, git, git_init
from tests.testing.registry import make_registry
from validator.cli import main
from validator.engine.evaluate import analyse
from validator.evidence.tiers import derive

WORKLOAD = "sft-8k-gb128-bf16"
MODEL = "qwen3.8-27b"
MODELS, WORKLOADS = "catalog/models.yaml", "catalog/workloads.yaml"


def base_loss(step: int) -> float:
    return 2.0 - 0.005 * step


def noisy(step: int) -> float:
    """An honest curve as a real log prints it: ±8% from step to step around a smooth decline."""
    return round(base_loss(step) * (1.08 if step % 2 else 0.92), 6)


def with_losses(run: dict[str, Any], loss: Callable[[int], float | str]) -> dict[str, Any]:
    out = copy.deepcopy(run)
    for sample in out["samples"]:
        sample["loss"] = loss(sample["step"])
    return out


def edit_yaml(root: Path, rel: str, edit: Callable[[dict[str, Any]], None]) -> None:
    data = yaml.safe_load((root / rel).read_text(encoding="utf-8"))
    edit(data)
    (root / rel).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def name_reference(root: Path, ref: str, workload: str = WORKLOAD) -> None:
    edit_yaml(
        root, MODELS, lambda d: d["models"][MODEL].setdefault("convergence_reference", {}).update({workload: ref})
    )


def scratch(tmp_path: Path, on_main: Callable[[Path], None] | None = None) -> Path:
    """`main`: the rule without a curve, smoothing over 5 steps (and what `on_main` adds); the contributor
    branch `pr` off it."""
    root = make_registry(tmp_path / "repo")

    def rule_only(data: dict[str, Any]) -> None:
        rule = data["workloads"][WORKLOAD]["convergence"]
        for key in ("reference", "reference_model"):
            rule.pop(key)
        rule["smoothing_steps"] = 5

    edit_yaml(root, WORKLOADS, rule_only)
    if on_main is not None:
        on_main(root)
    git_init(root)
    commit_all(root, "registry on main")
    git(root, "checkout", "-q", "-b", "pr")
    return root


def gate(root: Path, *waive: str) -> int:
    """The Action's command: `orv check --base main --format github` (its exit code), after the engine has
    decided the same in both pull-request modes (tests/testing/checking.py)."""
    check(root, waive=waive)
    return main(
        ["check", "--root", str(root), "--base", "main", "--format", "github", *(f"--waive={c}" for c in waive)]
    )


def codes(root: Path, *waive: str) -> set[str]:
    return {d.code for d in check(root, waive=waive).result.diagnostics if d.severity.value == "error"}


def tier_of(root: Path, rel: str) -> tuple[str, tuple[str, ...]]:
    analysis = analyse(str(root))
    found = derive(analysis.snapshot, analysis.diagnostics)[rel]
    return found.tier, found.reasons


def recipe_with_run(root: Path, rid: str, loss: Callable[[int], float | str], layout: dict[str, Any]) -> str:
    recipe = training_recipe(rid, 1502.0, layout=layout)  # its own timings: not a copy of the reference (ORV304)
    recipe["runs"] = [store_run(root, with_losses(training_run(recipe, measured_by="lab-b"), loss))]
    return write_recipe(root, recipe)


def reference_run(root: Path, loss: Callable[[int], float | str], workload: str = WORKLOAD, tok: float = 1480.4) -> str:
    baseline = training_recipe("baseline", tok, layout={"tp": 8, "pp": 1, "dp": 1}, workload=workload)
    return store_run(root, with_losses(training_run(baseline, measured_by="maintainer"), loss))


# --------------------------------------------------------------------------- a NaN reference judges nothing


@pytest.mark.git
def test_a_first_reference_with_nan_inside_the_window_is_orv244_and_lifts_no_recipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = scratch(tmp_path)
    name_reference(root, reference_run(root, lambda s: "nan" if 12 <= s <= 18 else base_loss(s)))
    triple = recipe_with_run(root, "triple-loss", lambda s: round(3 * base_loss(s), 6), {"tp": 2, "pp": 1, "dp": 4})
    commit_all(root, "qwen3.8-27b's first convergence reference, and a recipe")
    assert gate(root) == 1
    out = capsys.readouterr().out
    assert "ORV244" in out and "loss is nan at step 12" in out
    assert "ORV244" in codes(root)
    tier, reasons = tier_of(root, triple)
    assert tier == "T1" and any("convergence reference for `sft-8k-gb128-bf16` is unusable" in r for r in reasons)


@pytest.mark.git
def test_the_honest_twin_a_finite_reference_verifies_an_honest_recipe_and_refuses_the_triple_loss(
    tmp_path: Path,
) -> None:
    root = scratch(tmp_path)
    name_reference(root, reference_run(root, base_loss))
    honest = recipe_with_run(root, "honest", base_loss, {"tp": 4, "pp": 1, "dp": 2})
    commit_all(root, "qwen3.8-27b's first convergence reference, and a recipe")
    assert gate(root) == 0
    assert tier_of(root, honest)[0] == "T2"
    triple = recipe_with_run(root, "triple-loss", lambda s: round(3 * base_loss(s), 6), {"tp": 2, "pp": 1, "dp": 4})
    commit_all(root, "a recipe whose every loss is three times the reference's")
    assert gate(root) == 1 and "ORV219" in codes(root)
    assert tier_of(root, triple)[0] == "T1"


# --------------------------------------------------------------------------- the reference against itself


@pytest.mark.git
def test_the_honest_baseline_recorded_as_its_models_reference_passes_against_itself(tmp_path: Path) -> None:
    """Today's ORV219: the run averaged over 5 steps, its own curve compared raw ("loss 1.4919 is above the
    reference 1.4162"). Both are now averaged over the same steps: the gap is 0 at every step."""
    baseline = training_recipe("qwen3-8-27b-h100-baseline", 1480.4, layout={"tp": 8, "pp": 1, "dp": 1}, baseline=True)
    found: dict[str, str] = {}

    def the_baseline(root: Path) -> None:  # on main, waiting for a reference
        found["ref"] = store_run(root, with_losses(training_run(baseline, measured_by="lab-a"), noisy))
        found["rel"] = write_recipe(root, {**baseline, "runs": [found["ref"]]})

    root = scratch(tmp_path, the_baseline)
    ref, rel = found["ref"], found["rel"]
    git(root, "checkout", "-q", "main")
    assert tier_of(root, rel)[0] == "T1"
    git(root, "checkout", "-q", "pr")
    name_reference(root, ref)
    commit_all(root, "the baseline's run is qwen3.8-27b's convergence reference")
    assert gate(root) == 0
    tier, reasons = tier_of(root, rel)
    assert tier == "T2", reasons
    analysis = analyse(str(root))
    verdict = analysis.snapshot.runs[ref.split(":")[1]].facts.convergence
    assert verdict.ok and verdict.gap == 0.0

    # its forged twin: the same noise a tenth higher fails against it, at the first window step
    forged = recipe_with_run(root, "shifted", lambda s: round(noisy(s) * 1.1, 6), {"tp": 2, "pp": 1, "dp": 4})
    commit_all(root, "a run 10% above the reference")
    assert gate(root) == 1 and "ORV219" in codes(root)
    assert tier_of(root, forged)[0] == "T1"


# --------------------------------------------------------------------------- a new rule needs the waiver


def copy_workload(root: Path, new: str, tolerance: float) -> None:
    def copied(data: dict[str, Any]) -> None:
        spec = copy.deepcopy(data["workloads"][WORKLOAD])
        spec["name"] += " (copy)"
        spec["convergence"]["tolerance"] = tolerance
        data["workloads"][new] = spec

    edit_yaml(root, WORKLOADS, copied)


@pytest.mark.git
def test_a_workload_copied_with_a_looser_tolerance_needs_the_orv621_waiver(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = scratch(tmp_path, lambda r: name_reference(r, reference_run(r, base_loss)))
    loose = "sft-8k-gb128-bf16-loose"
    copy_workload(root, loose, 0.5)
    name_reference(root, reference_run(root, base_loss, workload=loose, tok=1490.0), workload=loose)
    recipe = training_recipe("thirty-above", 1502.0, layout={"tp": 2, "pp": 1, "dp": 4}, workload=loose)
    recipe["runs"] = [store_run(root, with_losses(training_run(recipe), lambda s: round(1.3 * base_loss(s), 6)))]
    rel = write_recipe(root, recipe)
    commit_all(root, "a copy of the SFT workload at 50%, and a recipe 30% above the reference on it")
    assert gate(root) == 1
    out = capsys.readouterr().out
    assert "ORV621" in out and f"adds workload `{loose}`'s convergence rule (tolerance 0.5, relative)" in out
    assert codes(root) == {"ORV621"}
    # a maintainer who means it waives it, as for a changed reference
    assert gate(root, "ORV621") == 0
    assert tier_of(root, rel)[0] == "T2"


@pytest.mark.git
def test_the_honest_twin_a_new_workload_without_a_convergence_rule_needs_no_waiver(tmp_path: Path) -> None:
    root = scratch(tmp_path)

    def inference_copy(data: dict[str, Any]) -> None:
        spec = copy.deepcopy(data["workloads"]["chat-1000-100"])
        spec["name"] += " (second)"
        data["workloads"]["chat-1000-100-b"] = spec

    edit_yaml(root, WORKLOADS, inference_copy)
    commit_all(root, "an inference workload")
    assert gate(root) == 0 and "ORV621" not in codes(root)


def test_the_noisy_baseline_is_really_noisy() -> None:
    """The row above is a real test only if the raw curve leaves the band a 5-step mean stays in."""
    gaps = [abs(noisy(s) - base_loss(s)) / base_loss(s) for s in range(10, 21)]
    assert min(gaps) > 0.05 and math.isclose(max(gaps), 0.08, rel_tol=1e-3)
