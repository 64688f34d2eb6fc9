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

    from validator.science.loss_curve import _gap, _reference_problem, reference_at

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
    smoothed = {}
    for i, (step, _) in enumerate(series):
        if start <= step <= end:
            window = [loss for _, loss in series[max(0, i - k + 1) : i + 1]]
            smoothed[step] = math.fsum(window) / len(window)
    reference = [(p.step, p.loss) for p in spec.reference]
    for step in range(start, end + 1):
        gap = _gap(smoothed[step], reference_at(reference, step), spec.tolerance_kind)
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
