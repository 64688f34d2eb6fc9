"""ORV5xx arithmetic: layout rules against the training leaderboard's real layouts, MFU, and decode bounds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.testing.registry import CASES, make_registry
from validator.checks.physics import divisors
from validator.engine.evaluate import Config, run
from validator.models import ModelSpec
from validator.registry.store import StoredRun, store_run_document
from validator.science.physics import (
    DECODE_READ_FRACTION,
    QuantBits,
    bits_per_weight,
    decode_bound,
    implied_mfu,
    is_moe,
    mfu_ceiling,
)

# Every distinct (GPUs, layout, layer split) of the "Latest recipes" table of seed 000
# (shared/seeds/000_1e2c7c041290fe1e.txt), as printed there. They are real, running Megatron-Core
# layouts, so the rules ORV501-ORV504 must accept every one.
SEED_000_LAYOUTS = [
    (256, "TP8 PP16 EP16 DP2", None),
    (8, "TP1 PP1 EP8 DP8", None),
    (128, "TP4 PP16 EP8 DP2", None),
    (16, "TP4 PP2 EP8 DP2", None),
    (64, "TP1 PP8 VPP4 EP8 DP8", None),
    (32, "TP4 PP4 EP8 DP2", "12/10/10/10"),
    (8, "TP2 PP4 DP1", "13/16/16/15"),
    (8, "TP1 PP4 DP2", "16/17/17/14"),
    (8, "TP1 PP4 DP2", "17/17/17/13"),
    (8, "TP1 PP2 DP4", "34/30"),
    (8, "TP1 PP8", "7/9/9/9/9/9/9/3"),
    (16, "TP1 PP4 EP4 DP4", None),
    (16, "TP1 PP8 EP2 DP2", None),
    (64, "TP2 PP8 VPP2 EP8 DP4", None),
    (48, "TP2 PP6 EP8 DP4", None),
    (8, "TP4 PP2", None),
    (128, "TP2 PP16 EP8 DP4", None),
    (8, "TP1 PP2 EP4 DP4", None),
    (8, "TP4 PP2", None),
    (64, "TP1 PP8 EP8 DP8", "3/5/5/5/5/5/5/3"),
    (64, "TP1 PP4 EP8 DP16", "9/10/10/7"),
    (8, "TP1 PP2 EP4 DP4", "13/11"),
    (8, "TP1 PP1 EP4 DP8", None),
    (48, "TP4 PP6 EP8 DP2", None),
    (48, "TP4 PP3 EP16 DP4", None),
    (32, "TP1 PP4 EP8 DP8", None),
    (128, "TP2 PP16 VPP2 EP8 DP4", None),
    (128, "TP2 PP8 VPP2 EP16 DP8", None),
    (128, "TP1 PP4 EP32 DP32", None),
    (128, "TP2 PP2 EP64 DP32", None),
    (256, "TP4 PP8 EP32 DP8", None),
    (256, "TP4 PP8 CP2 EP32 DP4", None),
    (128, "TP8 PP4 EP32 DP4", None),
    (64, "TP4 PP2 CP4 EP32 DP2", None),
    (64, "TP4 PP2 CP8 EP32 DP1", None),
    (64, "TP2 PP4 EP8 DP8", None),
    (128, "TP2 PP4 EP32 DP16", None),
    (128, "TP4 PP4 EP32 DP8", None),
]


def parse_layout(text: str) -> dict[str, int]:
    dims = {k.lower(): int(v) for k, v in re.findall(r"(TP|PP|VPP|CP|EP|ETP|DP)(\d+)", text)}
    return {"tp": 1, "pp": 1, "vpp": 1, "cp": 1, "ep": 1, "etp": 1, "dp": 1, **dims}


@pytest.mark.parametrize("gpus,layout,split", SEED_000_LAYOUTS)
def test_every_seed_layout_passes_the_megatron_rules(gpus: int, layout: str, split: str | None) -> None:
    lay = parse_layout(layout)
    assert lay["tp"] * lay["pp"] * lay["cp"] * lay["dp"] == gpus  # ORV501
    assert (lay["tp"] * lay["cp"] * lay["dp"]) % (lay["ep"] * lay["etp"]) == 0  # ORV502, etp absent = 1
    assert not (lay["vpp"] > 1 and lay["pp"] == 1)  # ORV503
    if split:
        assert len(split.split("/")) == lay["pp"] * lay["vpp"]  # ORV504


# (active parameters in B, GPU, tokens/s/GPU) of seed 000's fastest rows; peaks as in the base catalog.
PEAK_TFLOPS = {"h100": 989.4, "h200": 989.4, "b200": 2250.0}
SEED_000_FIGURES = [
    (25.6, "h100", 1480.4),
    (25.6, "b200", 4011.4),
    (25.6, "b200", 4330.9),
    (2.9, "b200", 6597.0),
    (3.0, "h200", 6913.2),
    (3.2, "h200", 7814.0),
    (3.6, "b200", 14536.3),
    (3.6, "h200", 10483.9),
    (44.4, "b200", 505.2),
    (40.3, "h200", 161.8),
    (30.7, "h100", 1178.1),
    (32.0, "h200", 2200.2),
]


@pytest.mark.parametrize("active_b,gpu,tok_s", SEED_000_FIGURES)
def test_seed_figures_stay_below_the_dense_ceiling(active_b: float, gpu: str, tok_s: float) -> None:
    assert implied_mfu(tok_s, active_b, PEAK_TFLOPS[gpu]) < 0.5


def test_implied_mfu_is_six_active_flops_per_token_over_peak() -> None:
    # 1480.4 tok/s x 6 x 25.6e9 = 2.2739e14 FLOP/s of 9.894e14
    assert implied_mfu(1480.4, 25.6, 989.4) == pytest.approx(0.22982, rel=1e-4)
    # the ORV509 golden case: 7000 tok/s is 108.7%
    assert implied_mfu(7000.0, 25.6, 989.4) == pytest.approx(1.0867, rel=1e-3)


def test_moe_ceiling_is_lower_and_unknown_models_get_the_dense_one() -> None:
    moe = ModelSpec(name="m", family="f", params_b=122, active_b=9.0, moe=True)
    dense = ModelSpec(name="d", family="f", params_b=27, active_b=25.6)
    unsaid_moe = ModelSpec(name="u", family="f", params_b=30, active_b=3.0)
    unknown_total = ModelSpec(name="x", family="f", active_b=3.0)
    assert is_moe(moe) and is_moe(unsaid_moe) and not is_moe(dense) and not is_moe(unknown_total)
    assert mfu_ceiling(moe, None) == 0.5 < mfu_ceiling(dense, None) == 0.65


def test_decode_bound_is_bandwidth_over_active_weight_bytes() -> None:
    bits = QuantBits(4.0, "w4a16")
    bound = decode_bound(1, 0.936, 25.6, bits)
    expected = 0.936e12 / (25.6e9 * 0.5 * DECODE_READ_FRACTION)
    assert bound.per_step == pytest.approx(expected) and bound.tok_s == pytest.approx(expected)
    assert bound.tok_s == pytest.approx(97.5, abs=0.05)
    spec = decode_bound(1, 0.936, 25.6, bits, speculative_k=3)
    assert spec.tok_s == pytest.approx(4 * expected) and spec.tokens_per_step == 4
    assert decode_bound(2, 0.936, 25.6, bits).tok_s == pytest.approx(2 * expected)


@pytest.mark.parametrize(
    "quant,bits",
    [
        ("bf16", 16),
        ("fp8", 8),
        ("official-fp8", 8),
        ("int8-w8a16", 8),
        ("w4a16", 4),
        ("awq-w4a16-g32", 4),
        ("nvfp4", 4),
        ("mxfp6-paro", 6),
        ("exl3-3-05bpw", 3.05),
        ("exl3-2bpw", 2),
        ("auto-round-3bpw-mtp", 3),
        ("exl3-2-9bpw-routed-experts-fp8-core-hybrid", 2.9),
        ("w4a16-fp8-kv", 4),
        ("q4-k-vq-nonexpert-v3", 4),
        ("iq2-xxs-experts-nvfp4-mamba-q8-0-rest", 2),
        ("fp4-fp8-native", 4),
        ("awq", 3),
        ("gptq", 2),
        ("exl3", 1),
    ],
)
def test_quant_names_give_their_lowest_width(quant: str, bits: float) -> None:
    got = bits_per_weight(quant)
    assert got is not None and got.bits == pytest.approx(bits)


@pytest.mark.parametrize("quant", ["official", "exlr8-k2-k3-k4", "qwen", "native-weights"])
def test_unrecognised_quant_names_skip_the_bound(quant: str) -> None:
    assert bits_per_weight(quant) is None


def test_divisors() -> None:
    assert divisors(128) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert divisors(1) == [1]
    assert divisors(10**12) == []  # too large to list in a hint; never slow


# --------------------------------------------------------------------------- runs' figures, end to end


def _training_run(tok_s_per_gpu: float) -> dict[str, object]:
    step_tokens = 128 * 8192
    samples = [
        {"step": s, "time_s": step_tokens / (tok_s_per_gpu * 8), "tokens": step_tokens, "loss": 2.0 - 0.005 * s}
        for s in range(24)
    ]
    return {
        "kind": "training",
        "tool": {"name": "megatron-bench", "version": "0.3.1"},
        "model": "qwen3.8-27b",
        "hardware": {"gpu": "h100", "count": 8},
        "software": {"framework": {"name": "megatron-core", "version": "0.30.0"}},
        "workload": "sft-8k-gb128-bf16",
        "layout": {"tp": 1, "pp": 4, "dp": 2, "layer_split": [16, 17, 17, 14]},
        "measured_at": "2026-10-18",
        "measured_by": "x",
        "summary": {"tokens_per_s_per_gpu": tok_s_per_gpu},
        "samples": samples,
    }


def _recipe(claim: float, digest: str) -> str:
    return (
        "id: r\nkind: training\nmodel: qwen3.8-27b\nhardware: {gpu: h100, count: 8}\nauthor: a\n"
        'measured: "2026-10-18"\nworkload: sft-8k-gb128-bf16\n'
        'software:\n  framework: {name: megatron-core, version: "0.30.0"}\n'
        "layout: {tp: 1, pp: 4, dp: 2, layer_split: [16, 17, 17, 14]}\n"
        f'claimed: {{tokens_per_s_per_gpu: {claim}}}\nruns: ["sha256:{digest}"]\n'
    )


def _registry_with(tmp_path: Path, tokens_per_s_per_gpu: float) -> tuple[Path, StoredRun]:
    """A registry holding one training run at this rate and one recipe claiming it."""
    root = make_registry(tmp_path / "reg")
    stored = store_run_document(str(root), _training_run(tokens_per_s_per_gpu))
    folder = root / "recipes" / "training" / "qwen3.8-27b"
    folder.mkdir(parents=True)
    (folder / "r.yaml").write_text(_recipe(tokens_per_s_per_gpu, stored.digest), encoding="utf-8")
    return root, stored


def test_an_impossible_run_is_flagged_in_the_run_file_as_well(tmp_path: Path) -> None:
    root, stored = _registry_with(tmp_path, 7000.0)
    result = run(Config(root=str(root), skip_boards=True))
    got = sorted((d.code, d.path) for d in result.diagnostics)
    assert got == [("ORV509", "recipes/training/qwen3.8-27b/r.yaml"), ("ORV509", stored.path)]
    run_finding = next(d for d in result.diagnostics if d.path == stored.path)
    assert "recomputed from the run's raw samples" in run_finding.message and "108.7%" in run_finding.message


def test_a_possible_run_behind_a_possible_claim_has_no_physics_findings(tmp_path: Path) -> None:
    root, _ = _registry_with(tmp_path, 1480.4)
    assert run(Config(root=str(root), skip_boards=True)).diagnostics == ()


def test_orv501_hint_gives_the_dp_that_adds_up(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", CASES / "orv501-gpu-count")
    (finding,) = run(Config(root=str(root), skip_boards=True)).diagnostics
    assert finding.message == "the layout covers 8 GPUs but hardware.count is 16"
    assert finding.hint.startswith("8 GPUs = TP1×PP4×CP1×DP2; with 16 GPUs DP would be 4")


def test_orv512_hint_says_how_much_speculation_the_claim_needs(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", CASES / "orv512-decode-bound")
    plain = next(d for d in run(Config(root=str(root), skip_boards=True)).diagnostics if "eagle" not in d.path)
    assert "97.5 tok/s" in plain.message and "k ≥ 1 would allow" in plain.hint


def test_the_importer_and_orv512_use_one_decode_bound() -> None:
    """Issue 11: the importer's copy was 25% stricter (no read fraction) and read AWQ as 4 bits where
    ORV512 read 3; both now call validator.science.physics."""
    from validator.importers.legacy_boards import Variant
    from validator.importers.legacy_boards import decode_bound as importer_bound
    from validator.models import GpuSpec, ModelSpec
    from validator.registry.catalog import CatalogView
    from validator.science.physics import decode_bound_for

    model = ModelSpec.model_validate({"name": "M", "family": "F", "params_b": 8.0, "active_b": 8.0})
    gpu = GpuSpec.model_validate(
        {"name": "G", "vendor": "V", "bf16_dense_tflops": 989.4, "hbm_gib": 80, "hbm_tb_s": 3.35}
    )
    catalog = CatalogView({"g": gpu}, {"m": model}, {})
    variant = Variant("x", "M", "fp8", "g", "vllm", "0.11.0", model_id="m", gpu_id="g", count=1)
    shared = decode_bound_for(model, gpu, 1, "fp8")
    assert shared is not None and shared.tok_s == pytest.approx(558.33, rel=1e-4)  # not the importer's old 418.75
    assert importer_bound(variant, catalog) == shared
    variant.quant = "awq"
    assert importer_bound(variant, catalog) == decode_bound_for(model, gpu, 1, "awq")
    variant.serving = {"speculative": {"method": "dflash2"}}  # k unknown: the bound is unknown, not a rejection
    assert importer_bound(variant, catalog) is None
