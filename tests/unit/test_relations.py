"""What makes two recipes the same configuration (ORV302) or a copied claim (ORV303)."""

from __future__ import annotations

from typing import Any

import pytest

from validator.models import InferenceRecipe, TrainingRecipe
from validator.registry.relations import copied_claim_key, identity


def training(**changes: Any) -> TrainingRecipe:
    data: dict[str, Any] = {
        "id": "qwen3-8-27b-h100-tp1-pp4-dp2",
        "kind": "training",
        "model": "qwen3.8-27b",
        "hardware": {"gpu": "h100", "count": 8},
        "author": "ATTUNE",
        "measured": "2026-10-18",
        "workload": "sft-8k-gb128-bf16",
        "software": {"framework": {"name": "megatron-core", "version": "0.30.0"}},
        "layout": {"tp": 1, "pp": 4, "dp": 2},
        "claimed": {"tokens_per_s_per_gpu": 1480.4},
        "runs": [],
        "tuning": {"recompute": {"kind": "selective", "scope": ["moe_act", "layernorm"]}},
    }
    data.update(changes)
    return TrainingRecipe.model_validate(data)


def inference(**changes: Any) -> InferenceRecipe:
    data: dict[str, Any] = {
        "id": "glm-5-3-flash-h100-fp8-c1",
        "kind": "inference",
        "model": "glm-5.3-flash",
        "hardware": {"gpu": "h100", "count": 1},
        "author": "ATTUNE",
        "measured": "2026-10-18",
        "quant": "fp8",
        "software": {"engine": {"name": "vllm", "version": "0.30.0"}},
        "serving": {"context_len": 8192, "concurrency": 1},
        "claimed": {"decode_tok_s": 40.5},
        "runs": [],
    }
    data.update(changes)
    return InferenceRecipe.model_validate(data)


@pytest.mark.parametrize(
    "same",
    [
        {
            "id": "other-id",
            "author": "someone",
            "measured": "2026-01-01",
            "notes": "x",
            "baseline": True,
            "claimed": {"tokens_per_s_per_gpu": 1.0},
            "runs": ["sha256:" + "0" * 64],
        },
        {"layout": {"tp": 1, "pp": 4, "dp": 2, "vpp": 1, "cp": 1, "ep": 1, "etp": 1}},  # defaults spelled out
        {"tuning": {"recompute": {"kind": "selective", "scope": ["layernorm", "moe_act"]}}},  # scope is a set
    ],
)
def test_training_identity_ignores_evidence_and_spelling(same: dict[str, Any]) -> None:
    assert identity(training(**same)) == identity(training())


@pytest.mark.parametrize(
    "different",
    [
        {"hardware": {"gpu": "h100", "count": 16}},
        {"hardware": {"gpu": "h200", "count": 8}},
        {"model": "qwen3.5-122b-a10b"},
        {"workload": "sft-other"},
        {"layout": {"tp": 2, "pp": 4, "dp": 1}},
        {"tuning": None},
        {"software": {"framework": {"name": "megatron-core", "version": "0.31.0"}}},
        {
            "software": {
                "framework": {"name": "megatron-core", "version": "0.30.0"},
                "te": {"name": "transformer-engine", "version": "2.9.0"},
            }
        },
    ],
)
def test_training_identity_sees_every_configuration_field(different: dict[str, Any]) -> None:
    assert identity(training(**different)) != identity(training())


@pytest.mark.parametrize(
    "different",
    [
        {"quant": "awq-int4"},
        {"checkpoint": "zai-org/GLM-5.3-Flash-FP8"},
        {"serving": {"context_len": 8192, "concurrency": 4}},
        {"serving": {"context_len": 8192, "concurrency": 1, "speculative": {"method": "mtp", "k": 2}}},
    ],
)
def test_inference_identity_sees_quant_checkpoint_and_serving(different: dict[str, Any]) -> None:
    assert identity(inference(**different)) != identity(inference())
    assert identity(inference(id="x", claimed={"decode_tok_s": 1.0})) == identity(inference())


def test_copied_claim_key_ignores_count_and_serving_but_not_figures() -> None:
    base = copied_claim_key(inference())
    assert (
        copied_claim_key(
            inference(hardware={"gpu": "h100", "count": 4}, serving={"context_len": 8192, "concurrency": 1, "tp": 4})
        )
        == base
    )
    assert copied_claim_key(inference(claimed={"decode_tok_s": 40.50001})) != base
    assert copied_claim_key(inference(hardware={"gpu": "h200", "count": 1})) != base
    assert copied_claim_key(inference(claimed={"decode_tok_s": 40.5, "ttft_ms": 300.0})) != base
