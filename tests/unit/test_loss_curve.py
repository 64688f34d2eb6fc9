"""The convergence check (docs/convergence.md): pass within tolerance; fail with the step and the gap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.testing import paths
from tests.testing.registry import make_registry
from validator.adapters import Source, convert, metadata
from validator.engine.evaluate import Config, run
from validator.models import Convergence
from validator.science.loss_curve import check_convergence
from validator.science.throughput import training_losses

MEGATRON_LOGS = paths.FIXTURES / "tools" / "megatron"
RECIPE = paths.CASES / "valid-training" / "recipes" / "training" / "qwen3.8-27b" / "qwen3-8-27b-h100-tp1-pp4-dp2.yaml"


def spec(**overrides: Any) -> Convergence:
    """The shape of tests/cases/_base's workload: 2.0 at step 0 to 1.5 at step 100, 5% band, steps 10..20."""
    data: dict[str, Any] = {
        "reference": [{"step": 0, "loss": 2.0}, {"step": 100, "loss": 1.5}],
        "tolerance": 0.05,
        "tolerance_kind": "relative",
        "window": {"start": 10, "end": 20},
    }
    data.update(overrides)
    return Convergence.model_validate(data)


def ref(step: int) -> float:
    return 2.0 - 0.005 * step


def curve(f: Any = ref, steps: range = range(1, 25)) -> list[tuple[int, float]]:
    return [(s, f(s)) for s in steps]


def fixture_losses(name: str) -> tuple[tuple[int, float], ...]:
    meta = metadata("megatron", str(paths.CASES / "_base"), str(RECIPE), {})
    doc = convert("megatron", Source(name, (MEGATRON_LOGS / name).read_bytes()), meta).document
    return tuple(training_losses(doc["samples"]))


def test_a_run_following_the_reference_passes_and_reports_its_largest_gap() -> None:
    result = check_convergence(curve(lambda s: ref(s) * 1.01), spec())
    assert result.ok
    assert result.gap == pytest.approx(0.01) and 10 <= (result.step or 0) <= 20


def test_the_healthy_megatron_fixture_passes() -> None:
    result = check_convergence(fixture_losses("qwen3-8-27b-tp1-pp4-dp2.log"), spec())
    assert result.ok, result.reason


def test_the_diverged_megatron_fixture_fails_at_the_first_step_beyond_tolerance() -> None:
    losses = fixture_losses("diverged.log")
    result = check_convergence(losses, spec())
    assert not result.ok
    # Independently: the first window step whose loss is more than 5% from the reference.
    expected = next(s for s, loss in losses if 10 <= s <= 20 and abs(loss - ref(s)) / ref(s) > 0.05)
    assert result.step == expected == 17
    assert result.gap == pytest.approx(abs(dict(losses)[17] - ref(17)) / ref(17))
    assert result.gap > 0.05 and "above the reference" in result.reason


def test_the_band_is_inclusive_at_exactly_the_tolerance() -> None:
    # Binary fractions keep the arithmetic exact: a gap of exactly 0.25 passes, 0.25 + 2^-10 fails.
    exact_ref = [{"step": 0, "loss": 2.0}, {"step": 128, "loss": 1.5}]

    def losses(extra: float) -> list[tuple[int, float]]:
        return [(s, 2.0 - 0.5 * s / 128 + (extra if s == 16 else 0.0)) for s in range(0, 30)]

    absolute = {"reference": exact_ref, "tolerance": 0.25, "tolerance_kind": "absolute"}
    assert check_convergence(losses(0.25), spec(**absolute)).ok
    result = check_convergence(losses(0.25 + 2**-10), spec(**absolute))
    assert not result.ok and result.step == 16 and result.gap == 0.25 + 2**-10


def test_a_loss_far_below_the_reference_fails_too() -> None:
    result = check_convergence(curve(lambda s: ref(s) * 0.9), spec())
    assert not result.ok and result.step == 10 and "below the reference" in result.reason
    assert result.gap == pytest.approx(0.1)


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_a_non_finite_loss_fails_even_outside_the_window(bad: str) -> None:
    losses = [(s, float(bad) if s == 22 else ref(s)) for s in range(1, 25)]
    result = check_convergence(losses, spec())
    assert not result.ok and result.step == 22 and bad in result.reason


@pytest.mark.parametrize("name", ["nan.log", "nan-v0.17-torchrun.log"])
def test_the_real_format_nan_megatron_fixtures_fail_at_their_first_nan_iteration(name: str) -> None:
    # bf16 at core_v0.14.0 (srun -l) and core_v0.17.0 (torchrun --tee): from iteration 77 the line
    # has no `lm loss` and shows `grad norm: nan`
    result = check_convergence(fixture_losses(name), spec())
    assert not result.ok and result.step == 77 and result.reason == "loss is nan at step 77"


def test_a_run_must_cover_the_whole_window() -> None:
    stops = check_convergence(curve(steps=range(1, 18)), spec())
    assert not stops.ok and stops.step == 17 and "before the window ends" in stops.reason
    starts = check_convergence(curve(steps=range(12, 25)), spec())
    assert not starts.ok and starts.step == 12 and "after the window starts" in starts.reason
    gap = check_convergence([p for p in curve() if p[0] != 14], spec())
    assert not gap.ok and gap.step == 14


def test_a_flat_loss_inside_the_band_fails_for_not_decreasing() -> None:
    result = check_convergence(curve(lambda s: 1.925), spec())  # within 1.4% of the reference everywhere
    assert not result.ok and "does not decrease" in result.reason and result.step == 20


def test_smoothing_dilutes_a_one_step_spike_but_not_a_sustained_gap() -> None:
    spike = curve(lambda s: ref(s) * (1.08 if s == 15 else 1.0))
    assert not check_convergence(spike, spec()).ok
    assert check_convergence(spike, spec(smoothing_steps=4)).ok  # 8% / 4 = 2%
    sustained = curve(lambda s: ref(s) * (1.08 if s >= 15 else 1.0))
    result = check_convergence(sustained, spec(smoothing_steps=4))
    assert not result.ok and result.step == 17  # the trailing mean crosses 5% at the third bad step


def test_a_reference_that_does_not_cover_the_window_is_the_catalogs_problem() -> None:
    result = check_convergence(curve(), spec(reference=[{"step": 0, "loss": 2.0}, {"step": 15, "loss": 1.9}]))
    assert not result.ok and result.reference_problem
    assert "covers steps 0..15, not the whole window 10..20" in result.reason


def test_a_step_logged_twice_fails() -> None:
    result = check_convergence(curve() + [(12, ref(12))], spec())
    assert not result.ok and result.step == 12 and "twice" in result.reason


def test_no_losses_fail() -> None:
    assert not check_convergence([], spec()).ok


# --------------------------------------------------------------------------- ORV210 in the pipeline


def test_orv210_points_at_the_nan_sample(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    meta = metadata("megatron", str(root), str(RECIPE), {})
    doc = convert("megatron", Source("nan.log", (MEGATRON_LOGS / "nan.log").read_bytes()), meta).document
    from validator.registry.store import store_run_document

    stored = store_run_document(str(root), doc)
    result = run(Config(root=str(root), skip_boards=True))
    found = [d for d in result.diagnostics if d.code == "ORV210"]
    assert len(found) == 1 and found[0].path == stored.path and found[0].severity.value == "warning"
    text = (root / stored.path).read_text()
    # The column points at the step-77 sample's loss value, the string "nan".
    col = found[0].col - 1
    assert text[col:].startswith('"nan"')
    sample = text[text.rfind("{", 0, col) : text.find("}", col) + 1]
    assert '"step":77,' in sample
    assert "iteration 77" not in found[0].message and "step 77" in found[0].message


# --------------------------------------------------------------------------- the fast scan = the plain rule


def plain_rule(losses: Any, spec: Convergence) -> tuple[bool, str, Any]:
    """The rule written as plainly as docs/convergence.md states it (Python loops over every step):
    the oracle for check_convergence, which scans with C-level passes and bisects the window."""
    import math

    from validator.science.loss_curve import _gap, _reference_problem

    def reference_at(points: list[tuple[int, float]], step: int) -> float:
        """Linear between the reference's points, its ends held flat (a plain scan over every point)."""
        points = sorted(points)
        if step <= points[0][0]:
            return points[0][1]
        for (s0, l0), (s1, l1) in zip(points, points[1:]):
            if s0 <= step <= s1:
                return l0 if step == s0 else l1 if step == s1 else l0 + (l1 - l0) * (step - s0) / (s1 - s0)
        return points[-1][1]

    if not losses:
        return False, "the run has no loss samples", None
    series = sorted(losses)
    for (step, _), (nxt, _) in zip(series, series[1:]):
        if step == nxt:
            return False, f"step {step} is logged twice", step
    for step, loss in series:
        if not math.isfinite(loss):
            return False, f"loss is {loss} at step {step}", step
    if _reference_problem(spec):
        return False, "reference", None
    start, end = spec.window.start, spec.window.end
    logged = {step for step, _ in series}
    if series[0][0] > start or series[-1][0] < end:
        return False, "range", series[0][0] if series[0][0] > start else series[-1][0]
    missing = next((s for s in range(start, end + 1) if s not in logged), None)
    if missing is not None:
        return False, "missing", missing
    k = max(1, spec.smoothing_steps)
    reference = [(p.step, p.loss) for p in spec.reference]
    smoothed, smoothed_reference = {}, {}
    for i, (step, _) in enumerate(series):
        if start <= step <= end:  # the run and the reference averaged over the same k logged steps
            steps = series[max(0, i - k + 1) : i + 1]
            smoothed[step] = math.fsum(loss for _, loss in steps) / len(steps)
            smoothed_reference[step] = math.fsum(reference_at(reference, s) for s, _ in steps) / len(steps)
    for step in range(start, end + 1):
        gap = _gap(smoothed[step], smoothed_reference[step], spec.tolerance_kind)
        if gap > spec.tolerance:
            return False, "gap", step
    window = [loss for step, loss in series if start <= step <= end]
    part = max(1, math.ceil(len(window) / 10))
    if not math.fsum(window[-part:]) / part < math.fsum(window[:part]) / part:
        return False, "flat", end
    return True, "", None


@pytest.mark.slow
def test_the_fast_scan_decides_exactly_as_the_plain_rule() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    losses = st.one_of(st.floats(1.0, 2.2), st.sampled_from([float("nan"), float("inf"), 1.9, 1.95]))
    series = st.lists(st.tuples(st.integers(0, 30), losses), max_size=40)
    tried = []

    noise = st.lists(st.floats(-0.08, 0.08), min_size=25, max_size=25)

    @settings(max_examples=400, deadline=None, database=None)
    @given(series, noise, st.booleans(), st.integers(1, 4))
    def same(points: list[tuple[int, float]], jitter: list[float], clean: bool, smoothing: int) -> None:
        if clean:  # every step once, in order, near the reference: passes or fails on the gap or the trend
            points = [(s, ref(s) * (1 + j)) for s, j in enumerate(jitter)]
        fast = check_convergence(points, spec(smoothing_steps=smoothing))
        ok, reason, step = plain_rule(points, spec(smoothing_steps=smoothing))
        tried.append(ok)
        assert fast.ok == ok
        if reason in ("", "reference"):
            return
        assert fast.step == step
        if "twice" in reason or "loss is" in reason:
            assert fast.reason == reason

    same()
    assert len(tried) == 400 and any(tried) and not all(tried)


# --------------------------------------------------------------------------- a reference passes against itself


def _with_reference(catalog: Any, model: str, workload: str, rule: Convergence, ref: str) -> Any:
    """The catalog with `rule` as the workload's and `ref` named as the model's convergence reference."""
    from dataclasses import replace

    spec = catalog.workloads[workload].model_copy(update={"convergence": rule})
    named = catalog.models[model].model_copy(update={"convergence_reference": {workload: ref}})
    return replace(catalog, workloads={**catalog.workloads, workload: spec}, models={**catalog.models, model: named})


def _against_itself(catalog: Any, model: str, workload: str) -> None:
    """The reference's own samples, judged as any run of the model is: they pass, with a gap of 0."""
    curve = list(catalog.reference_curves[(model, workload)])
    verdict = check_convergence(curve, catalog.convergence_for(model, workload))
    assert verdict.ok and verdict.gap == 0.0, verdict.reason


def test_every_reference_in_the_shipped_catalog_passes_against_itself() -> None:
    from validator.load.references import with_reference_curves
    from validator.registry.catalog import present_files, read_catalog

    read = read_catalog(str(paths.REPO), present_files(str(paths.REPO)))
    catalog = with_reference_curves(str(paths.REPO), read.catalog)
    named = [(m, w) for m, spec in catalog.models.items() for w in spec.convergence_reference]
    assert dict(catalog.reference_problems) == {}
    assert sorted(catalog.reference_curves) == sorted(named)  # none is left unread
    for model, workload in named:
        _against_itself(catalog, model, workload)


@pytest.mark.slow
def test_a_generated_reference_is_either_refused_orv244_or_passes_against_itself(tmp_path: Path) -> None:
    """Noisy curves, any smoothing, window and tolerance (as small as 1e-9), NaN or infinite steps: the
    reference the loader accepts always passes against itself; one that cannot (non-finite inside the
    window, short of the window, not decreasing) is a reference problem (ORV244), never a silent pass."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tests.testing.factories import training_recipe, training_run
    from validator.load.references import with_reference_curves
    from validator.registry.catalog import present_files, read_catalog
    from validator.registry.store import store_run_document

    root = make_registry(tmp_path / "registry")
    base = read_catalog(str(root), present_files(str(root))).catalog
    model, workload = "qwen3.8-27b", "sft-8k-gb128-bf16"
    recipe = training_recipe("ref", 1480.4, layout={"tp": 8, "pp": 1, "dp": 1})
    outcomes: list[bool] = []

    @settings(max_examples=150, deadline=None, database=None)
    @given(
        st.integers(1, 8),
        st.integers(0, 20),
        st.integers(0, 25),
        st.floats(1e-9, 0.5),
        st.sampled_from(["relative", "absolute"]),
        st.floats(0.0, 0.03),
        st.lists(st.floats(-0.15, 0.15), min_size=50, max_size=50),
        st.one_of(st.none(), st.tuples(st.integers(0, 49), st.sampled_from(["nan", "inf", "-inf"]))),
    )
    def judged(
        k: int,
        start: int,
        length: int,
        tolerance: float,
        kind: str,
        slope: float,
        noise: list[float],
        bad: tuple[int, str] | None,
    ) -> None:
        losses: list[float | str] = [round((3.0 - slope * s) * (1 + n), 6) for s, n in enumerate(noise)]
        if bad is not None:
            losses[bad[0]] = bad[1]
        run = training_run(recipe, steps=len(losses), measured_by="maintainer")
        for sample, loss in zip(run["samples"], losses):
            sample["loss"] = loss
        ref = f"sha256:{store_run_document(str(root), run).digest}"
        rule = Convergence.model_validate(
            {
                "tolerance": tolerance,
                "tolerance_kind": kind,
                "window": {"start": start, "end": start + length},
                "smoothing_steps": k,
            }
        )
        catalog = with_reference_curves(str(root), _with_reference(base, model, workload, rule, ref))
        accepted = (model, workload) in catalog.reference_curves
        outcomes.append(accepted)
        if accepted:
            _against_itself(catalog, model, workload)
        else:
            assert "fails the convergence check against itself" in catalog.reference_problems[(model, workload)]
        if bad is not None:  # a non-finite loss anywhere in the reference: never accepted
            assert not accepted

    judged()
    assert any(outcomes) and not all(outcomes)
