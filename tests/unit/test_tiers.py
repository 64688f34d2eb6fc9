"""Tier derivation T0-T3 (SPEC §5) from the evidence on record, including the legacy-provenance cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.testing.factories import (
    SEED_000,
    SEED_004,
    inference_recipe,
    inference_run,
    store_run,
    training_recipe,
    training_run,
    write_recipe,
)
from validator.diagnostics import Diagnostic, Severity
from validator.engine.evaluate import analyse
from validator.evidence.tiers import LEGACY_REASON, NEEDS_SIGNED, TierResult, derive, legacy_capped, stack_unstated


def tier_of(root: Path, rel: str, extra: tuple[Diagnostic, ...] = ()) -> TierResult:
    analysis = analyse(str(root))
    return derive(analysis.snapshot, (*analysis.diagnostics, *extra))[rel]


def with_runs(root: Path, recipe: dict[str, Any], *runs: dict[str, Any]) -> str:
    recipe["runs"] = [store_run(root, run) for run in runs]
    return write_recipe(root, recipe)


def test_no_run_file_is_t0(registry: Path) -> None:
    rel = write_recipe(registry, training_recipe("plain", 1480.4))
    assert tier_of(registry, rel) == TierResult("T0", ("no run file on record",))


def test_verified_training_run_is_t2(registry: Path) -> None:
    recipe = training_recipe("verified", 1480.4)
    rel = with_runs(registry, recipe, training_run(recipe))
    result = tier_of(registry, rel)
    assert result.tier == "T2"
    assert len(result.verified_runs) == 1


def test_a_physics_error_blocks_t2(registry: Path) -> None:
    recipe = training_recipe("impossible", 1480.4)
    rel = with_runs(registry, recipe, training_run(recipe))
    physics = Diagnostic("ORV501", Severity.ERROR, rel, 1, 1, "layout does not fit", "fix it")
    result = tier_of(registry, rel, (physics,))
    assert result.tier == "T1"
    assert "recipe fails a physics check (ORV5xx)" in result.reasons
    warning = Diagnostic("ORV599", Severity.WARNING, rel, 1, 1, "suspicious MFU", "check it")
    assert tier_of(registry, rel, (warning,)).tier == "T2"  # a warning never blocks a tier


def test_claim_off_by_more_than_one_percent_stays_t1(registry: Path) -> None:
    recipe = training_recipe("overclaimed", 1500.0)
    rel = with_runs(registry, recipe, training_run(recipe, tok=1480.0))
    result = tier_of(registry, rel)
    assert result.tier == "T1"
    assert "recomputed headline differs from the claim by more than 1%" in result.reasons


def test_diverging_loss_fails_convergence(registry: Path) -> None:
    recipe = training_recipe("diverged", 1480.4)
    rel = with_runs(registry, recipe, training_run(recipe, loss_shift=0.5))
    assert tier_of(registry, rel).reasons == ("loss curve fails the convergence check",)


def test_two_unsigned_measurers_agreeing_within_5_percent_stay_t2(registry: Path) -> None:
    # `measured_by` is a free string: only signatures by registered measurers make T3
    # (tests/e2e/test_signing.py::test_two_registered_measurers_signing_make_t3_and_check_clean)
    recipe = training_recipe("reproduced", 1480.4)
    rel = with_runs(registry, recipe, training_run(recipe), training_run(recipe, tok=1475.0, measured_by="bob"))
    result = tier_of(registry, rel)
    assert result.tier == "T2" and result.reasons == (NEEDS_SIGNED,)


def test_same_measurer_twice_is_not_a_reproduction(registry: Path) -> None:
    recipe = training_recipe("same-hands", 1480.4)
    rel = with_runs(registry, recipe, training_run(recipe), training_run(recipe, tok=1475.0))
    assert tier_of(registry, rel).tier == "T2"


def test_t1_reasons_for_run_without_samples(registry: Path) -> None:
    recipe = inference_recipe("no-samples")
    rel = with_runs(registry, recipe, inference_run(recipe, samples=False))
    result = tier_of(registry, rel)
    assert result.tier == "T1"
    assert result.reasons == ("run has no raw samples",)


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"tool_version": "latest"}, "tool version is not pinned"),
        ({"measured_by": "x", "hardware": {"gpu": "rtx-3090", "count": 4}}, "run metadata disagrees with the recipe"),
    ],
)
def test_runs_that_do_not_back_the_recipe_leave_it_t0(registry: Path, change: dict[str, Any], reason: str) -> None:
    recipe = inference_recipe("not-backed")
    run = inference_run(recipe, tool_version=change.get("tool_version", "0.8.0"))
    if "hardware" in change:
        run["hardware"] = change["hardware"]
    rel = with_runs(registry, recipe, run)
    assert tier_of(registry, rel) == TierResult("T0", (reason,))


# --------------------------------------------------------------------------- legacy provenance


def test_legacy_import_without_a_stated_stack_is_capped_at_t0(registry: Path) -> None:
    recipe = training_recipe("seed-row", 1480.4, software={}, provenance={"source": SEED_000, "row": 10})
    rel = with_runs(registry, recipe, training_run(recipe))  # even a perfect run cannot lift it
    assert tier_of(registry, rel) == TierResult("T0", (LEGACY_REASON,))


def test_legacy_import_without_runs_names_both_reasons(registry: Path) -> None:
    rel = write_recipe(
        registry, training_recipe("seed-row", 1480.4, software={}, provenance={"source": SEED_000, "row": 10})
    )
    assert tier_of(registry, rel) == TierResult("T0", ("no run file on record", LEGACY_REASON))


def test_legacy_import_with_an_unpinned_component_is_capped(registry: Path) -> None:
    software = {"engine": {"name": "vllm", "version": "0.30.0"}, "kernels": {"name": "flashinfer", "version": "main"}}
    recipe = inference_recipe("half-pinned", software=software, provenance={"source": SEED_004, "row": 7})
    rel = with_runs(registry, recipe, inference_run(recipe, samples=False))
    assert tier_of(registry, rel).reasons == (LEGACY_REASON,)


def test_pinned_seed_004_import_reaches_t1_with_its_legacy_run(registry: Path) -> None:
    recipe = inference_recipe("seed-004-row", provenance={"source": SEED_004, "row": 3})
    legacy_run = inference_run(recipe, samples=False, provenance={"source": SEED_004, "legacy_id": "11"})
    rel = with_runs(registry, recipe, legacy_run)
    result = tier_of(registry, rel)
    assert result.tier == "T1"  # never above: the legacy run has no raw samples
    assert result.reasons == ("run has no raw samples",)


@pytest.mark.parametrize(
    "software, unstated",
    [
        ({}, True),
        ({"engine": {"name": "vllm"}}, True),
        ({"engine": {"name": "vllm", "version": "latest"}}, True),
        ({"engine": {"name": "vllm", "version": "0.1.dev21830+g8244d1c44.d20261015"}}, True),
        ({"engine": {"name": "vllm", "image": "vllm/vllm-openai:v0.30.0"}}, True),
        ({"engine": {"name": "vllm", "version": "0.30.0"}}, False),
        ({"engine": {"name": "vllm", "commit": "819146023f"}}, False),
        ({"engine": {"name": "sglang", "image": "lmsysorg/sglang@sha256:" + "a" * 64}}, False),
        ({"framework": {"name": "megatron-core", "version": "0.30.0"}}, True),  # an inference recipe needs `engine`
    ],
)
def test_stack_unstated(software: dict[str, Any], unstated: bool) -> None:
    from validator.models import InferenceRecipe

    recipe = InferenceRecipe.model_validate(inference_recipe("r", software=software))
    assert stack_unstated(recipe) is unstated
    assert legacy_capped(recipe) is False  # no provenance, no cap: unpinned entries are ORV4xx's business
    imported = recipe.model_copy(update={"provenance": {"source": SEED_004}})
    assert legacy_capped(imported) is unstated


def test_a_declared_tier_is_ignored_and_flagged(registry: Path) -> None:
    recipe = training_recipe("self-declared", 1480.4, tier="T3")
    rel = write_recipe(registry, recipe)
    analysis = analyse(str(registry))
    assert [(d.code, d.path) for d in analysis.diagnostics] == [("ORV116", rel)]
    assert derive(analysis.snapshot, analysis.diagnostics)[rel].tier == "T0"
