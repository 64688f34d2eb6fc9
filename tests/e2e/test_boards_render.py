"""The boards can never be broken by a merged file (issue 49, item 4): whatever the gate accepts, `orv boards`
regenerates, and its output validates against schema/boards.schema.json.

Each example is a pull request on a scratch registry repository, gated as action.yml gates it
(`orv check --base main --format github`); when the gate passes it, the pull request is merged into `main`
and `orv boards` must succeed there, its combined document valid against the boards schema.
"""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples
from tests.testing.factories import inference_recipe, inference_run, store_run, training_recipe, write_recipe
from tests.testing.git import commit_all, git, git_init
from tests.testing.registry import make_registry
from validator.cli import main
from validator.load import schema as schemas
from validator.science.throughput import inference_facts, training_facts

HARDWARE = "catalog/hardware.yaml"
TOKENS_PER_STEP = 128 * 8192


def gate(root: Path) -> int:
    return main(["check", "--root", str(root), "--base", "main", "--format", "github"])


def merged_boards(root: Path, out: Path) -> dict[str, Any]:
    """Merge the pull request into main as a maintainer does, regenerate the boards there and read them whole."""
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge", "pr")
    assert main(["boards", "--root", str(root)]) == 0
    assert main(["boards", "--root", str(root), "--combined", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert schemas.validate("boards", document) == []
    return document


def scratch(tmp_path: Path) -> Path:
    root = make_registry(tmp_path / "repo")
    git_init(root)
    commit_all(root, "registry on main")
    assert main(["boards", "--root", str(root)]) == 0
    commit_all(root, "boards")
    git(root, "checkout", "-q", "-b", "pr")
    return root


def set_price(root: Path, gpu: str, price: float) -> None:
    data = yaml.safe_load((root / HARDWARE).read_text(encoding="utf-8"))
    data["hardware"][gpu]["price_per_gpu_hour"] = price
    (root / HARDWARE).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def signif(value: float) -> float:
    """A claim as a person writes it: the recomputed figure to 6 significant digits (well within 1%)."""
    return float(f"{value:.6g}")


# --------------------------------------------------------------------------- the crash row


def eight_gpu_run(duration_s: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """An 8×H100 inference recipe and its run: 8 serial requests of 2.6 s each (20.8 s), `duration_s` as stated."""
    recipe = inference_recipe("glm-5-3-flash-h100-x8", gpu="h100", count=8)
    run = inference_run(recipe)
    run["duration_s"] = duration_s
    return recipe, run


@pytest.mark.git
def test_a_duration_3000_times_too_long_is_refused_at_the_gate_naming_the_field_and_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ms entered as s: 808 output tokens over 62,400 s is 0.0016 tok/s per GPU, which the boards round to 0.00
    (and whose schema refuses a frontier point at 0): refused at the gate, never crashing `orv boards` later."""
    root = scratch(tmp_path)
    recipe, run = eight_gpu_run(20.8 * 3000)
    recipe["runs"] = [store_run(root, run)]
    write_recipe(root, recipe)
    commit_all(root, "an 8-GPU run whose duration is in ms")
    assert gate(root) == 1
    out = capsys.readouterr().out
    assert "ORV217" in out and "duration_s" in out and "62400" in out.replace(",", "")
    # had it been merged anyway, `orv boards` still regenerates: the refused point is left off the frontier
    document = merged_boards(root, tmp_path / "boards.json")
    assert all(p["tok_s_per_gpu"] > 0 for g in document["frontiers"] for p in g["points"] + g["apart"])


@pytest.mark.git
def test_the_honest_twin_with_its_real_duration_passes_and_the_boards_regenerate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = scratch(tmp_path)
    recipe, run = eight_gpu_run(20.8)
    recipe["runs"] = [store_run(root, run)]
    write_recipe(root, recipe)
    commit_all(root, "an 8-GPU run with its duration in s")
    assert gate(root) == 0
    assert "ORV217" not in capsys.readouterr().out
    document = merged_boards(root, tmp_path / "boards.json")
    (point,) = [p for g in document["frontiers"] for p in g["points"] + g["apart"]]
    assert point["tok_s_per_gpu"] == round(808 / 20.8 / 8, 2)


# --------------------------------------------------------------------------- the property

TINY_TO_HUGE = st.floats(1e-300, 1e300, allow_nan=False, allow_infinity=False)


@dataclass(frozen=True)
class Inference:
    """An inference recipe and its run: 8 requests of 1,000 prompt and 101 output tokens (the test workload),
    each with TTFT `ttft_ms` and `tpot_ms` per further token, the run lasting `duration_s` on `gpus` GPUs;
    without `samples`, only the tool's summary of those figures (a T1 run, still on the boards)."""

    gpus: int
    concurrency: int
    ttft_ms: float
    tpot_ms: float
    duration_s: float | None
    samples: bool = True


@dataclass(frozen=True)
class Training:
    """A training recipe and its run: 21 steps of 128 × 8,192 tokens, `step_s` each, on `gpus` GPUs, the loss
    falling from `loss`."""

    gpus: int
    step_s: float
    baseline: bool
    loss: float = 2.0


INFERENCE = st.builds(
    Inference,
    st.sampled_from([1, 2, 8, 1024, 65_536, 1_048_576]),
    st.sampled_from([1, 4, 256, 65_536]),
    st.one_of(st.sampled_from([0.0, 1e-6, 100.0, 1e9]), TINY_TO_HUGE),
    st.one_of(st.sampled_from([1e-9, 0.01, 25.0, 1e7]), TINY_TO_HUGE),
    st.one_of(st.sampled_from([1e-9, 20.8, 20.8 * 3000, 1e9]), TINY_TO_HUGE, st.none()),
    st.booleans(),
)
TRAINING = st.builds(
    Training,
    st.sampled_from([1, 8, 4096, 1_048_576]),
    st.one_of(st.sampled_from([1e-9, 1.0, 708.0, 3.15e9]), TINY_TO_HUGE),
    st.booleans(),
    st.one_of(st.just(2.0), st.sampled_from([1e-300, 1e300])),  # half the curves follow the reference
)
PRICES = st.one_of(st.sampled_from([1e-300, 0.01, 6.88, 1e300, 1.7e308]), st.none())


def add_inference(root: Path, spec: Inference) -> None:
    """The recipe claims what its run recomputes to (so the claim is not what the gate refuses)."""
    recipe = inference_recipe("extreme-inference", gpu="h100", count=spec.gpus)
    recipe["serving"]["concurrency"] = spec.concurrency
    run = inference_run(recipe, 40.0)
    for sample in run["samples"]:
        sample["ttft_ms"] = spec.ttft_ms
        sample["e2e_ms"] = spec.ttft_ms + 100 * spec.tpot_ms
    if spec.duration_s is not None:
        run["duration_s"] = spec.duration_s
    facts = inference_facts(run["samples"], spec.duration_s)
    claims = {k: signif(v) for k, v in facts.headline.items() if k in ("decode_tok_s", "prefill_tok_s", "ttft_ms")}
    claims = {k: v for k, v in claims.items() if 0 < v < 1.7e308} or {"decode_tok_s": 40.0}
    run["summary"], recipe["claimed"] = dict(claims), dict(claims)
    if not spec.samples:  # the tool's summary alone, its aggregate included
        del run["samples"]
        summary = {k: signif(v) for k, v in facts.headline.items()}
        run["summary"] = {k: v for k, v in summary.items() if 0 < v < 1.7e308} or dict(claims)
    recipe["runs"] = [store_run(root, run)]
    write_recipe(root, recipe)


def add_training(root: Path, spec: Training) -> None:
    layout = {"tp": 1, "pp": 1, "dp": spec.gpus}
    recipe = training_recipe("extreme-training", 1.0, count=spec.gpus, layout=layout, baseline=spec.baseline)
    samples = [
        {"step": s, "time_s": spec.step_s, "tokens": TOKENS_PER_STEP, "loss": spec.loss * (1 - 0.0025 * s)}
        for s in range(21)
    ]
    figure = training_facts(samples, spec.gpus, 2).headline.get("tokens_per_s_per_gpu")
    claim = signif(figure) if figure and 0 < figure < 1.7e308 else 1.0
    recipe["claimed"] = {"tokens_per_s_per_gpu": claim}
    run = {
        "kind": "training",
        "tool": {"name": "bench", "version": "0.8.0"},
        "model": recipe["model"],
        "hardware": dict(recipe["hardware"]),
        "software": copy.deepcopy(recipe["software"]),
        "measured_at": "2026-10-18T10:00:00Z",
        "measured_by": "lab-a",
        "workload": recipe["workload"],
        "layout": layout,
        "summary": {"tokens_per_s_per_gpu": claim},
        "samples": samples,
    }
    recipe["runs"] = [store_run(root, run)]
    write_recipe(root, recipe)


@pytest.mark.git
@pytest.mark.slow
def test_any_registry_the_gate_accepts_regenerates_into_valid_boards(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Extreme-but-schema-valid runs (tiny and huge durations, rates, GPU counts, prices): either the gate
    reports an error, or after the merge `orv boards` succeeds and its document validates."""
    template = scratch(tmp_path_factory.mktemp("template"))
    outcomes: list[bool] = []

    @settings(
        max_examples=fuzz_examples(40),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(PRICES, st.one_of(st.none(), INFERENCE), st.one_of(st.none(), TRAINING))
    # the crash row (ms entered as s on 8 GPUs), and the dearest price a catalog can state
    @example(None, Inference(8, 1, 100.0, 25.0, 20.8 * 3000), None)
    @example(None, Inference(8, 1, 100.0, 25.0, 20.8 * 3000, samples=False), None)
    # either side of the least the boards show: 0.0051 tok/s per GPU is shown as 0.01, 0.0049 refused
    @example(None, Inference(8, 1, 100.0, 25.0, 808 / (8 * 0.0051)), None)
    @example(None, Inference(8, 1, 100.0, 25.0, 808 / (8 * 0.0049)), None)
    @example(1.7e308, Inference(8, 1, 100.0, 25.0, 20.8), Training(8, 708.0, True))
    @example(6.88, None, Training(8, 1e12, False))
    def accepted_means_renderable(price: float | None, inference: Inference | None, training: Training | None) -> None:
        where = tmp_path_factory.mktemp("example")
        root = where / "repo"
        shutil.copytree(template, root, symlinks=True)
        if price is not None:
            set_price(root, "h100", price)
        if inference is not None:
            add_inference(root, inference)
        if training is not None:
            add_training(root, training)
        commit_all(root, "an extreme change")
        passed = gate(root) == 0
        outcomes.append(passed)
        if passed:
            merged_boards(root, where / "boards.json")
        shutil.rmtree(where)

    accepted_means_renderable()
    assert any(outcomes) and not all(outcomes), outcomes  # both sides of the property were exercised
