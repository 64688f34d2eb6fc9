"""Headline figures recomputed from raw samples follow the definitions in docs/metrics.md."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.science.throughput import inference_facts, relative_gap, training_facts, training_losses


def step(n: int, time_s: float, tokens: int = 1_048_576, loss: object = 1.9) -> dict[str, object]:
    return {"step": n, "time_s": time_s, "tokens": tokens, "loss": loss}


def request(prompt: int, output: int, ttft: float, e2e: float) -> dict[str, object]:
    return {"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": ttft, "e2e_ms": e2e}


# --------------------------------------------------------------------------- training


def test_training_rate_is_tokens_over_step_time_after_warmup() -> None:
    samples = [step(1, 200.0), step(2, 150.0)] + [step(n, 88.0 + (n % 2)) for n in range(3, 13)]
    facts = training_facts(samples, gpus=8, warmup_steps=2)
    expected = 10 * 1_048_576 / (5 * 88.0 + 5 * 89.0) / 8  # the two slow warm-up steps are left out
    assert facts.headline["tokens_per_s_per_gpu"] == pytest.approx(expected, rel=1e-12)
    assert facts.sample_count == 12 and facts.problems == ()


def test_training_warmup_counts_steps_in_step_order_not_file_order() -> None:
    samples = [step(3, 10.0), step(1, 1000.0), step(2, 10.0)]
    assert training_facts(samples, gpus=1, warmup_steps=1).headline["tokens_per_s_per_gpu"] == pytest.approx(
        2 * 1_048_576 / 20.0
    )


def test_training_without_steps_after_warmup_has_no_rate() -> None:
    facts = training_facts([step(1, 10.0), step(2, 10.0)], gpus=8, warmup_steps=2)
    assert "tokens_per_s_per_gpu" not in facts.headline
    assert "no steps left after the 2 warm-up steps" in facts.problems


def test_training_reports_repeated_and_missing_steps() -> None:
    facts = training_facts([step(1, 1.0), step(2, 1.0), step(2, 1.0), step(5, 1.0)], gpus=1, warmup_steps=0)
    assert any("step 2 appears more than once" in p for p in facts.problems)
    assert any("step 3 is missing" in p for p in facts.problems)


def test_training_losses_keep_diverged_steps_as_non_finite() -> None:
    losses = training_losses([step(1, 1.0, loss=2.0), step(2, 1.0, loss="nan"), step(3, 1.0, loss="inf")])
    assert losses[0] == (1, 2.0)
    assert math.isnan(losses[1][1]) and losses[2][1] == math.inf


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=0.5, max_value=500.0), min_size=3, max_size=40),
    st.integers(1, 64),
    st.randoms(use_true_random=False),
)
def test_training_rate_ignores_sample_order_and_scales_with_time(times: list[float], gpus: int, rnd) -> None:
    samples = [step(i + 1, t) for i, t in enumerate(times)]
    base = training_facts(samples, gpus, 1).headline["tokens_per_s_per_gpu"]
    shuffled = samples[:]
    rnd.shuffle(shuffled)
    assert training_facts(shuffled, gpus, 1).headline["tokens_per_s_per_gpu"] == pytest.approx(base, rel=1e-12)
    slower = [dict(s, time_s=s["time_s"] * 2) for s in samples]
    assert training_facts(slower, gpus, 1).headline["tokens_per_s_per_gpu"] == pytest.approx(base / 2, rel=1e-12)


# --------------------------------------------------------------------------- inference


def test_inference_definitions_match_vllm_and_sglang() -> None:
    samples = [
        request(500, 11, 60.0, 60.0 + 10 * 24.0),  # TPOT 24
        request(520, 21, 70.0, 70.0 + 20 * 26.0),  # TPOT 26
        request(480, 1, 50.0, 50.0),
    ]  # one token: no TPOT, but a TTFT
    facts = inference_facts(samples, duration_s=2.0)
    h = facts.headline
    assert h["ttft_ms"] == pytest.approx(60.0)  # mean over every request
    assert h["tpot_ms"] == pytest.approx(25.0)  # mean of per-request TPOTs, o > 1 only
    assert h["decode_tok_s"] == pytest.approx(1000.0 / 25.0)  # per-stream: 1000 / mean TPOT
    assert h["prefill_tok_s"] == pytest.approx(1500 / 180.0 * 1000)  # sum(prompt) / sum(TTFT)
    assert h["output_tok_s"] == pytest.approx(33 / 2.0)  # aggregate over the run's duration


def test_tpot_is_a_mean_of_ratios_not_a_ratio_of_sums() -> None:
    # vLLM: tpots.append((latency - ttft) / (output_len - 1)); np.mean(tpots). A long request does not
    # outweigh a short one.
    facts = inference_facts([request(1, 2, 0.0, 10.0), request(1, 101, 0.0, 100 * 30.0)], None)
    assert facts.headline["tpot_ms"] == pytest.approx((10.0 + 30.0) / 2)
    assert "output_tok_s" not in facts.headline  # no duration recorded: no aggregate figure


def test_requests_without_output_are_left_out() -> None:
    facts = inference_facts([request(500, 0, 0.0, 0.0), request(500, 11, 80.0, 80.0 + 10 * 20.0)], 1.0)
    assert facts.headline["ttft_ms"] == pytest.approx(80.0)
    assert facts.sample_count == 2


def test_single_token_requests_are_left_out_of_the_tpot_mean() -> None:
    # the column-wise path serves runs whose every request has 2+ tokens; this mix takes the other
    facts = inference_facts([request(1, 1, 0.0, 5.0), request(1, 11, 0.0, 200.0), request(1, 3, 10.0, 50.0)], None)
    assert facts.headline["tpot_ms"] == pytest.approx((20.0 + 20.0) / 2)


def test_consecutive_steps_from_any_start_have_no_problems_and_one_gap_is_found() -> None:
    assert training_facts([step(s, 1.0) for s in range(5, 9)], gpus=1, warmup_steps=0).problems == ()
    facts = training_facts([step(s, 1.0) for s in (1, 2, 4, 5)], gpus=1, warmup_steps=0)
    assert facts.problems == ("step 3 is missing: samples must cover every optimizer step",)


def test_no_decode_rate_without_a_second_token() -> None:
    facts = inference_facts([request(500, 1, 80.0, 80.0)], 1.0)
    assert "decode_tok_s" not in facts.headline
    assert any("more than one output token" in p for p in facts.problems)


def test_relative_gap_is_measured_against_the_recomputed_figure() -> None:
    assert relative_gap(101.0, 100.0) == pytest.approx(0.01)
    assert relative_gap(1.0, 0.0) == math.inf


# --------------------------------------------------------------------------- the column-wise paths

LOSSES = st.one_of(st.floats(0.5, 9), st.integers(1, 9), st.sampled_from(["skipped", "nan", "inf"]))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.floats(0.01, 5), st.integers(1, 5000), LOSSES), min_size=1, max_size=12),
    st.integers(-1, 6),
)
def test_training_rate_column_wise_equals_the_definition(
    rows: list[tuple[int, float, int, object]], warmup: int
) -> None:
    """Whatever the step order and skipped iterations (which never use up the warm-up), the
    column-wise figure is the definition computed sample by sample in step order."""
    samples = [step(n, t, tokens, loss) for n, t, tokens, loss in rows]
    ordered = sorted(samples, key=lambda s: s["step"])
    start, advanced = (0 if warmup <= 0 else len(ordered)), 0
    for i, sample in enumerate(ordered if warmup > 0 else []):
        advanced += sample["loss"] != "skipped"
        if advanced == warmup:
            start = i + 1
            break
    timed = ordered[start:]
    facts = training_facts(samples, gpus=2, warmup_steps=warmup)
    if timed:
        expected = sum(s["tokens"] for s in timed) / math.fsum(s["time_s"] for s in timed) / 2
        assert facts.headline["tokens_per_s_per_gpu"] == pytest.approx(expected, rel=1e-12)
    else:
        assert "tokens_per_s_per_gpu" not in facts.headline
        assert any("warm-up" in p for p in facts.problems)
