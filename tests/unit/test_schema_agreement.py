"""The JSON Schemas (what editors use) and the pydantic models (what the engine tries first) accept
exactly the same documents.

The engine validates a recipe or run with its strict model first and runs jsonschema only on
rejection, then builds the lax model (validator/engine/evaluate.py `_validated`); catalog files go through
jsonschema, then the catalog models. So the engine's verdict is the schema's only if
  - strict model accepts  =>  schema accepts   (else a document breaking the schema passes), and
  - schema accepts        =>  model accepts    (else ORV900 "schema accepted the file but the model did not").

Two ways to find a disagreement:
  1. boundary values for every constraint: each value of a maximal valid seed document replaced by
     values at and just past each pattern, bound, length, enum, type and key rule of its schema —
     and a coverage test that every constraint keyword of every schema under schema/ rejected at
     least one of them;
  2. documents Hypothesis draws from the schemas (hypothesis-jsonschema), mutated at one node.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.conftest import fuzz_examples
from tests.testing.paths import FIXTURES
from tests.testing.registry import CASES
from validator.errors import LoadError
from validator.load import schema as schemas
from validator.load.documents import decode_utf8, parse_json, parse_yaml
from validator.load.pipeline import samples_fast_ok
from validator.models import GpuSpec, InferenceRecipe, ModelSpec, RunMeta, StartingPoint, TrainingRecipe, WorkloadSpec
from validator.quality.lmeval import read_output, to_document
from validator.quality.verify import check as quality_check
from validator.registry.snapshot import strip_samples

HEX = "0123456789abcdef" * 4
MAX_DOUBLE = 1.7976931348623157e308

# Maximal seeds: every optional field present, so every constraint has a value to break.
TRAINING_RECIPE = {
    "id": "qwen3-8-27b-h100-tp1-pp4-dp2",
    "kind": "training",
    "model": "qwen3.8-27b",
    "hardware": {"gpu": "h100", "count": 8},
    "author": "ATTUNE",
    "measured": "2026-10-18",
    "workload": "sft-8k-gb128-bf16",
    "software": {
        "framework": {
            "name": "megatron-core",
            "version": "0.30.0",
            "commit": "0f685aa",
            "image": "nvcr.io/nvidia/nemo@sha256:" + HEX,
            "repository": "https://x/y",
            "patches": [{"name": "fix.patch", "sha256": HEX, "url": "https://x/p"}],
        }
    },
    "layout": {"tp": 1, "pp": 4, "dp": 2, "vpp": 1, "cp": 1, "ep": 1, "etp": 1, "layer_split": [16, 17, 17, 14]},
    "tuning": {
        "max_tokens_per_gpu": 16384,
        "micro_batch_size": 1,
        "rows_per_microbatch": 2,
        "recompute": {"kind": "selective", "scope": ["attention", "mlp"], "layers": 4},
        "optimizer_cpu_offload": 1.0,
        "optimizer_on_gpu": False,
        "moe_dispatcher": "alltoall",
        "attention_backend": "flash",
        "expandable_segments": True,
        "load_balancing_loss": True,
    },
    "claimed": {"tokens_per_s_per_gpu": 1480.4},
    "baseline": False,
    "launch": {"args": ["--use-distributed-optimizer", "--overlap-grad-reduce"], "env": {"NCCL_DEBUG": "WARN"}},
    "runs": ["sha256:" + HEX],
    "notes": "CPU optimizer offload.",
    "provenance": {"source": "leaderboard", "row": 3, "legacy_id": "x-1", "original": {"a": 1}},
}
INFERENCE_RECIPE = {
    "id": "qwen3-8-27b-w4a16-1x-rtx3090-mtp3",
    "kind": "inference",
    "model": "qwen3.8-27b",
    "hardware": {"gpu": "rtx-3090", "count": 1},
    "author": "key-2952",
    "measured": "2026-10-20",
    "software": {
        "engine": {
            "name": "exllamav3",
            "commit": "0f685aa3c1d2e4f5a6b7c8d9e0f1a2b3c4d5e6f7",
            "version": "0.0.6",
            "image": "ghcr.io/x/y@sha256:" + HEX,
            "repository": "r",
            "patches": [{"name": "p", "sha256": HEX, "url": "u"}],
        }
    },
    "checkpoint": "org/model-exl3",
    "quant": "w4a16",
    "serving": {
        "context_len": 32768,
        "concurrency": 1,
        "slots": 1,
        "tp": 1,
        "pp": 1,
        "ep": 1,
        "speculative": {"method": "mtp", "k": 3},
    },
    "claimed": {"decode_tok_s": 110.0, "prefill_tok_s": 4096.0, "ttft_ms": 250.0},
    "sweep": {
        "concurrency": [1, 2],
        "claimed": [{"concurrency": 2, "decode_tok_s": 100.0, "prefill_tok_s": 4000.0, "ttft_ms": 260.0}],
    },
    "workload": "isl1k-osl1k",
    "launch": {"args": ["--tensor-parallel-size", "1"], "env": {"VLLM_USE_V1": "1"}},
    "runs": ["sha256:" + HEX],
    "notes": "n",
    "provenance": {"source": "s", "row": "r7", "legacy_id": "x-1", "original": {"a": [1]}},
}
INFERENCE_RECIPE["software"] = {**TRAINING_RECIPE["software"], **INFERENCE_RECIPE["software"]}
_TOOL = {"name": "llm-inference-bench", "version": "0.8.0", "commit": "abc", "format": "jsonl"}
TRAINING_RUN = {
    "kind": "training",
    "tool": _TOOL,
    "model": "qwen3.8-27b",
    "hardware": {"gpu": "h100", "count": 8},
    "software": TRAINING_RECIPE["software"],
    "workload": "sft-8k-gb128-bf16",
    "layout": TRAINING_RECIPE["layout"],
    "measured_at": "2026-10-18T09:30:00.5+02:00",
    "measured_by": "ATTUNE",
    "summary": {"tokens_per_s_per_gpu": 1480.4, "final_loss": 1.889},
    "notes": "n",
    "provenance": TRAINING_RECIPE["provenance"],
    "architecture": {
        "params_b": 27.1,
        "layers": 64,
        "hidden_size": 5120,
        "attention_heads": 40,
        "vocab_size": 151936,
        "experts": 128,
        "experts_per_token": 8,
    },
    "samples": [
        {"step": 0, "time_s": 141.6, "tokens": 1048576, "loss": 1.996},
        {"step": 1, "time_s": 87.6, "tokens": 1048576, "loss": "nan"},
    ],
}
INFERENCE_RUN = {
    "kind": "inference",
    "tool": _TOOL,
    "model": "qwen3.8-27b",
    "checkpoint": "org/model",
    "hardware": {"gpu": "rtx-3090", "count": 1},
    "software": INFERENCE_RECIPE["software"],
    "quant": "w4a16",
    "serving": INFERENCE_RECIPE["serving"],
    "measured_at": "2026-10-20T18:00:00Z",
    "measured_by": "key-2952",
    "duration_s": 31.4,
    "notes": "n",
    "provenance": INFERENCE_RECIPE["provenance"],
    "synthetic": {
        "tool": "llama-bench",
        "test": "tg",
        "n_prompt": 0,
        "n_gen": 128,
        "n_depth": 0,
        "model_filename": "m.gguf",
        "model_type": "llama 8B Q4_K - Medium",
        "model_n_params": 8030261248,
        "gpu_info": "NVIDIA GeForce RTX 3090",
        "backends": "CUDA",
    },
    "reported": {
        "tool": "trtllm-bench",
        "machine_name": "NVIDIA GeForce RTX 3090",
        "tp_size": 1,
        "pp_size": 1,
        "ep_size": 1,
        "world_size": 1,
        "quantization": "W4A16",
        "dtype": "bfloat16",
        "kv_cache_dtype": "FP8",
    },
    "summary": {"decode_tok_s": 110, "prefill_tok_s": 4096, "ttft_ms": 250, "output_tok_s": 97.7, "tpot_ms": 9.1},
    "samples": [
        {"prompt_tokens": 1024, "output_tokens": 256, "ttft_ms": 245, "e2e_ms": 2516.8, "start_ms": 0},
        {"prompt_tokens": 1024, "output_tokens": 256, "ttft_ms": 250, "e2e_ms": 2568.1},
    ],
}
HARDWARE = {
    "hardware": {
        "h100": {
            "name": "NVIDIA H100",
            "vendor": "nvidia",
            "device_names": ["NVIDIA H100 80GB HBM3", "NVIDIA H100"],
            "device_names_source": "s",
            "bf16_dense_tflops": 989.4,
            "hbm_gib": 80,
            "hbm_tb_s": 3.35,
            "memory_kind": "HBM3",
            "price_per_gpu_hour": 6.88,
            "price_source": "s",
            "aliases": ["H100"],
            "sources": ["s"],
            "notes": "n",
        }
    }
}
MODELS = {
    "models": {
        "qwen3.8-27b": {
            "name": "Qwen3.8-27B",
            "family": "Qwen",
            "params_b": 27,
            "active_b": 25.6,
            "moe": False,
            "layers": 64,
            "layers_source": "s",
            "aliases": ["q"],
            "architecture": {
                "hidden_size": 5120,
                "attention_heads": 40,
                "kv_heads": 8,
                "attention": "gqa",
                "vocab_size": 151936,
                "experts": 128,
                "experts_per_token": 8,
                "shared_experts": 1,
                "moe_layers": 48,
                "tied_embeddings": False,
                "source": "s",
            },
            "checkpoints": ["Qwen/Qwen3.8-27B"],
            "checkpoints_source": "s",
            "derived_checkpoints": [{"id": "org/Qwen3.8-27B-AWQ", "base": "Qwen/Qwen3.8-27B", "source": "s"}],
            "quality_reference": {"gsm8k": "sha256:" + "a" * 64},
            "quality_bound": 0.99,
            "convergence_reference": {"sft-8k-gb128-bf16": "sha256:" + "c" * 64},
            "sources": ["s"],
            "notes": "n",
        }
    }
}
WORKLOADS = {
    "workloads": {
        "sft-8k-gb128-bf16": {
            "name": "SFT",
            "kind": "sft",
            "rows": "r",
            "seq_len": 8192,
            "global_batch": 128,
            "dtype": "bf16",
            "warmup_steps": 2,
            "gpus": ["h100", "h200"],
            "mfu_ceiling_dense": 0.65,
            "mfu_ceiling_moe": 0.5,
            "sources": ["s"],
            "notes": "n",
            "convergence": {
                "reference": [{"step": 0, "loss": 2.0}, {"step": 100, "loss": 1.5}],
                "reference_source": "s",
                "reference_model": "qwen3.8-27b",
                "tolerance": 0.05,
                "tolerance_kind": "relative",
                "window": {"start": 10, "end": 100},
                "smoothing_steps": 5,
            },
        },
        "isl1k-osl1k": {
            "name": "1k/1k",
            "label": "1k/1k",
            "kind": "inference",
            "dataset": {"name": "sharegpt", "distribution": "uniform", "sha256": "b" * 64, "url": "u", "source": "s"},
            "input_len": 1024,
            "output_len": 1024,
            "range_ratio": 0.8,
            "ignore_eos": True,
            "min_prompts": 10,
            "prompts_per_concurrency": 10,
            "warmups_per_concurrency": 2,
            "concurrency": 4,
            "length_slack": 0.02,
            "sources": ["s"],
            "notes": "n",
        },
        "llama-bench-tg128": {
            "name": "tg128",
            "label": "tg128",
            "kind": "llama-bench",
            "n_prompt": 0,
            "n_gen": 128,
            "n_depth": 0,
            "min_repetitions": 5,
            "concurrency": 1,
            "sources": ["s"],
            "notes": "n",
        },
        "unspecified": {"name": "Unspecified", "kind": "unspecified"},
    }
}
STARTING_POINTS = {
    "starting_points": [
        {
            "model": "qwen3.8-27b",
            "gpu": "h100",
            "workload": "sft-8k-gb128-bf16",
            "tokens_per_s_per_gpu": 224.4,
            "source": "s",
            "notes": "n",
        }
    ]
}

# A quality run from real lm-eval output (tests/fixtures/lmeval), trimmed to a few documents.
QUALITY_RUN = to_document(
    read_output(str(FIXTURES / "lmeval" / "reference")),
    {"model": "qwen3.8-27b", "measured_by": "ann", "measured_at": "2026-10-18T10:00:00Z", "quant": "bf16"},
)
QUALITY_RUN["notes"] = "n"
QUALITY_RUN["tool"]["commit"] = "1fe3a1571abcdef0123456789abcdef012345678"
for _task in QUALITY_RUN["tasks"].values():
    _task["samples"] = _task["samples"][:3]

SEEDS: dict[str, dict[str, Any]] = {
    "recipe-training": TRAINING_RECIPE,
    "recipe-inference": INFERENCE_RECIPE,
    "run-training": TRAINING_RUN,
    "run-inference": INFERENCE_RUN,
    "run-quality": QUALITY_RUN,
    "catalog-hardware": HARDWARE,
    "catalog-models": MODELS,
    "catalog-workloads": WORKLOADS,
    "catalog-starting-points": STARTING_POINTS,
}
KINDS = sorted(SEEDS)
# boards.schema.json, partial.schema.json and judged.schema.json describe orv's own output (written by code,
# checked in tests/unit/test_boards.py and tests/e2e/test_shard.py), not contributor input, and have no model to agree with.
assert set(KINDS) == set(schemas.SCHEMA_FILES) - {"boards", "partial", "judged"}


# --------------------------------------------------------------------------- the two verdicts


def schema_accepts(kind: str, doc: Any) -> bool:
    return bool(schemas.validator_for(kind).is_valid(doc))


def _has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def _ok(build: Callable[[], Any]) -> bool:
    try:
        build()
    except (ValidationError, ValueError, TypeError):
        return False
    return True


_CATALOG_MODELS = {
    "catalog-hardware": ("hardware", GpuSpec),
    "catalog-models": ("models", ModelSpec),
    "catalog-workloads": ("workloads", WorkloadSpec),
}


def disagreement(kind: str, doc: Any, schema_ok: bool | None = None) -> str | None:
    """Why the engine's verdict on doc differs from the schema's, or None when they agree."""
    if schema_ok is None:
        schema_ok = schema_accepts(kind, doc)
    if kind == "run-quality":
        # quality runs have no typed model: the schema is the engine's verdict, and the verifier that
        # re-scores them must take whatever the schema accepts without raising
        if schema_ok and not _ok(lambda: quality_check(doc)):
            return "the schema accepts what the quality verifier cannot read"
        return None
    if kind.startswith("catalog-"):
        if not schema_ok:
            return None
        if kind == "catalog-starting-points":
            entries = [(StartingPoint, p) for p in doc["starting_points"]]
        else:
            key, model = _CATALOG_MODELS[kind]
            entries = [(model, v) for v in doc[key].values()]
        bad = [v for model, v in entries if not _ok(lambda m=model, v=v: m.model_validate(v))]
        return f"schema accepts, catalog model rejects {bad[0]!r}" if bad else None
    if kind.startswith("recipe-"):
        model: Any = TrainingRecipe if kind == "recipe-training" else InferenceRecipe
        data = doc
        fast_ok = True
    else:
        model, data = RunMeta, strip_samples(doc) if isinstance(doc, dict) else doc
        fast_ok = isinstance(doc, dict) and samples_fast_ok(kind.removeprefix("run-"), doc.get("samples", []))
    strict_ok = fast_ok and not _has_null(data) and _ok(lambda: model.model_validate(data))
    if strict_ok and not schema_ok:
        return "the strict model (and samples fast path) accepts what the schema rejects"
    if schema_ok and not _ok(lambda: model.model_validate(data, strict=False)):
        return "the schema accepts what the model rejects (ORV900)"
    return None


# --------------------------------------------------------------------------- boundary values


def _subschemas(schema: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any] | None:
    node: Any = schema
    for part in path:
        if not isinstance(node, dict):
            return None
        if isinstance(part, int):
            node = node.get("items")
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        else:
            extra = node.get("additionalProperties")
            node = extra if isinstance(extra, dict) else None
    return node if isinstance(node, dict) else None


def _string_variants(value: str) -> list[str]:
    return [
        value + "\n",
        "\n" + value,
        " " + value,
        value + " ",
        value.upper(),
        "\u200b" + value,
        value + "\u202e",
        value + "\x00",
        value[:-1] if value else "",
        value + "-",
        "-" + value,
        value.replace("-", "--"),
        value.replace("-", "_"),
        value + "{0}",
        "",
    ]


def boundary_values(schema: dict[str, Any], current: Any) -> Iterator[Any]:
    """Values at and just past each constraint of `schema`, plus a value of every other type."""
    yield from (None, True, 0, -1, 1.5, 2.0, "x", [], {}, 2**53, 10**400, 1e300, -1e300)
    if isinstance(current, str):
        yield from _string_variants(current)
    for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if bound in schema:
            b = schema[bound]
            yield from (b, b - 1, b + 1, b - 0.5, b + 0.5, float(b))
            if isinstance(b, float) and b > 1e300:
                yield from (2**1024 - 1, int(b), int(b) + 1, -int(b) - 1)
    for length in ("maxLength", "minLength"):
        if length in schema:
            n = schema[length]
            yield from ("a" * n, "a" * (n + 1), "a" * max(n - 1, 0), "0" * n, "0" * (n + 1))
    if "pattern" in schema and isinstance(current, str) and "maxLength" in schema:
        n = schema["maxLength"]
        yield (current * (n // max(len(current), 1) + 2))[:n]  # a matching value of the longest length
        yield (current * (n // max(len(current), 1) + 2))[: n + 1]
    for listed in schema.get("enum", []) + ([schema["const"]] if "const" in schema else []):
        yield listed
        if isinstance(listed, str):
            yield from (listed + "\n", listed.upper(), listed + "x")
    if "items" in schema or schema.get("type") == "array":
        item = current[0] if isinstance(current, list) and current else 1
        cap = schema.get("maxItems", 3)
        yield from (
            [item, item],
            [item] * (cap + 1 if cap <= 10_000 else 3),
            [item] * max(schema.get("minItems", 1) - 1, 0),
            [None],
            [item, None],
        )
    if schema.get("type") == "object" or "properties" in schema:
        base = dict(current) if isinstance(current, dict) else {}
        yield from (
            {},
            {**base, "zz_unknown": 1},
            {**base, "Bad Key": 1},
            {**base, "x\n": base.get(next(iter(base), ""), 1)},
        )
        for name in schema.get("required", []):
            yield {k: v for k, v in base.items() if k != name}
        for name in schema.get("properties", {}):
            if name not in base:
                yield {**base, name: None}
        if isinstance(current, dict) and current:  # every key renamed past its rule
            first = next(iter(current))
            for variant in _string_variants(first):
                renamed = {(variant if k == first else k): v for k, v in current.items()}
                if len(renamed) == len(current):
                    yield renamed
        names = schema.get("propertyNames", {})
        if isinstance(current, dict) and current and "maxLength" in names:
            first = next(iter(current))
            for n in (names["maxLength"], names["maxLength"] + 1):
                yield {("a" * n if k == first else k): v for k, v in current.items()}
        if "maxProperties" in schema and base:
            yield {**base, **{f"k{i}": next(iter(base.values())) for i in range(schema["maxProperties"] + 1)}}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


def _replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(doc)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


def boundary_documents(kind: str) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """The seed with one node replaced by each of its schema's boundary values."""
    schema = schemas.bundled(kind)
    seed = SEEDS[kind]
    for path, current in _paths(seed):
        sub = _subschemas(schema, path)
        seen = set()
        for value in boundary_values(sub or {}, current):
            key = (type(value), repr(value))
            if key not in seen:
                seen.add(key)
                yield path, _replaced(seed, path, value)


@functools.cache
def _bundled_validator(kind: str) -> Any:
    """The engine's validator class (ECMA patterns) on the bundled schema: the same verdicts as
    validator_for(kind) (test_bundled_schemas_give_the_same_verdicts), ~2x faster without $ref
    lookups, and error paths that name one place in one document, which the coverage counts."""
    cls = type(schemas.validator_for(kind))
    return cls(schemas.bundled(kind))


@pytest.mark.parametrize("kind", KINDS)
def test_bundled_schemas_give_the_same_verdicts(kind: str) -> None:
    for i, (_, doc) in enumerate(boundary_documents(kind)):
        if i % 7 == 0:  # a sample: the full set is the boundary test's
            assert schemas.validator_for(kind).is_valid(doc) == _bundled_validator(kind).is_valid(doc)


def _leaf_errors(errors: list[Any]) -> Iterator[Any]:
    """Each error and, for propertyNames, the nested errors that say which rule the key broke."""
    for error in errors:
        yield error
        for sub in error.context or ():
            sub_path = (*error.schema_path, *sub.schema_path)
            yield type("E", (), {"schema_path": sub_path})


# propertyNames holds constraints (counted inside it); its `type: string` cannot fail, JSON keys are text.
CONSTRAINTS = (
    "type",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "enum",
    "const",
    "required",
    "additionalProperties",
    "uniqueItems",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)


# Breaking `samples.maxItems` takes a list of 1,000,001 samples: ~40 s of jsonschema per run. The
# engine's fast path refuses the same count (samples_fast_ok), asserted below.
SLOW_TO_BREAK = {
    ("properties", "samples", "maxItems"),
    ("properties", "tasks", "additionalProperties", "properties", "samples", "maxItems"),
}


def test_samples_cap_is_the_same_in_the_fast_path_and_the_schemas() -> None:
    for kind in ("training", "inference"):
        cap = schemas.bundled(f"run-{kind}")["properties"]["samples"]["maxItems"]
        sample = SEEDS[f"run-{kind}"]["samples"][0]
        assert samples_fast_ok(kind, [sample] * cap) and not samples_fast_ok(kind, [sample] * (cap + 1))


def constraints_of(kind: str) -> set[tuple[Any, ...]]:
    """Every constraint keyword in the bundled schema, as its schema path."""
    found: set[tuple[Any, ...]] = set()

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if (
                    key in CONSTRAINTS
                    and not (key == "additionalProperties" and value is not False)
                    and not (key == "type" and path[-1:] == ("propertyNames",))
                ):
                    found.add((*path, key))
                # an `if` only selects which `then` applies: its keywords never reject anything
                if key not in ("enum", "const", "required", "if"):
                    walk(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*path, i))

    walk(schemas.bundled(kind), ())
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_seeds_are_valid(kind: str) -> None:
    assert schema_accepts(kind, SEEDS[kind]), list(schemas.validator_for(kind).iter_errors(SEEDS[kind]))[:3]
    assert disagreement(kind, SEEDS[kind]) is None


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_boundary_values_of_every_constraint_agree(kind: str) -> None:
    failures = []
    hit: set[tuple[Any, ...]] = set()
    validator = _bundled_validator(kind)
    for path, doc in boundary_documents(kind):
        errors = list(validator.iter_errors(doc))
        why = disagreement(kind, doc, not errors)
        if why:
            failures.append(f"{'.'.join(map(str, path)) or '(document)'} = {_short(_at(doc, path))}: {why}")
        for error in _leaf_errors(errors):
            # through a $ref the path names the reference; the bundled schema has its contents there
            hit.add(tuple(part for part in error.schema_path if part != "$ref"))
    assert not failures, f"{len(failures)} disagreement(s), e.g.\n" + "\n".join(failures[:10])
    missing = constraints_of(kind) - hit - SLOW_TO_BREAK
    assert not missing, f"constraints no boundary value broke: {sorted(map(str, missing))[:10]}"


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


# --------------------------------------------------------------------------- schema-drawn documents


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Documents drawn from a (bundled) schema's own keywords: types, properties, required and extra
    keys, patterns (drawn by Python's re, which also yields a pattern's trailing-newline edge case),
    lengths, bounds, enums. hypothesis-jsonschema 0.23 does this for any schema but fails on
    Hypothesis 6.170 ('many' object has no attribute 'more'), so this covers the keywords schema/ uses."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}) for k in kind])
    if kind == "object" or "properties" in schema:
        props, required = schema.get("properties", {}), set(schema.get("required", []))
        fixed = st.fixed_dictionaries(
            {k: from_schema(v) for k, v in props.items() if k in required},
            optional={k: from_schema(v) for k, v in props.items() if k not in required},
        )
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) or (not props and extra is not False):
            keys = _string(schema.get("propertyNames", {}))
            values = from_schema(extra) if isinstance(extra, dict) else st.integers() | st.text(max_size=5)
            return st.tuples(fixed, st.dictionaries(keys, values, max_size=3)).map(lambda ab: {**ab[1], **ab[0]})
        return fixed
    if kind == "array":
        item = from_schema(schema.get("items", {}))
        return st.lists(
            item,
            min_size=schema.get("minItems", 0),
            max_size=min(schema.get("maxItems", 4), 4),
            unique_by=(lambda v: json.dumps(v, sort_keys=True)) if schema.get("uniqueItems") else None,
        )
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        ints = st.integers(None if low is None else int(low), None if high is None else min(int(high), 2**64))
        if kind == "integer":
            return ints
        floats = st.floats(
            low,
            high,
            allow_nan=False,
            allow_infinity=False,
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
        )
        return floats | ints
    if kind == "boolean":
        return st.booleans()
    return st.none() | st.booleans() | st.integers() | st.text(max_size=5)


def _string(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    low, high = schema.get("minLength", 0), schema.get("maxLength", 30)
    if "pattern" in schema:
        return st.from_regex(schema["pattern"]).filter(lambda s: low <= len(s) <= high)
    return st.text(min_size=low, max_size=min(high, 30))


@functools.cache
def _drawn(kind: str) -> Any:
    return from_schema(schemas.bundled(kind))


_ODD = st.sampled_from(
    [
        None,
        True,
        0,
        -1,
        1.5,
        2**53,
        10**400,
        1e300,
        "",
        "x\n",
        " x",
        "X",
        [],
        {},
        [None],
        {"zz": 1},
        "2026-13-01",
        "2026-00-10",
        "2026-01-00",
        "2026-13-45T25:61:61Z",
        "2026-10-18T24:00:00Z",
        "2026-10-18T10:00:00+24:00",
        "2026-02-31T10:00:00Z",
        "sha256:" + HEX + "\n",
        HEX.upper(),
    ]
)


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> Any:
    doc = draw(_drawn(kind))
    if draw(st.booleans()):
        paths = [p for p, _ in _paths(doc)]
        path = draw(st.sampled_from(paths))
        doc = _replaced(doc, path, draw(_ODD))
    return doc


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=fuzz_examples(30), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_documents_drawn_from_the_schemas_agree(kind: str, data: st.DataObject) -> None:
    doc = data.draw(mutated(kind))
    assert disagreement(kind, doc) is None, doc


def test_golden_case_documents_agree() -> None:
    """Every YAML and JSON document under tests/cases, valid or not, gets one verdict."""
    from validator.registry.layout import classify

    checked = 0
    for path in sorted(CASES.rglob("*")):
        rel = "/".join(path.relative_to(CASES).parts[1:])
        kind = classify(rel)
        if kind is None or kind == "boards" or not path.is_file() or path.is_symlink():
            continue
        try:  # orv's own loaders: they refuse NaN, aliases, YAML-only types before any schema
            raw = path.read_bytes()
            doc = parse_json(raw) if rel.endswith(".json") else parse_yaml(decode_utf8(raw))
        except LoadError:
            continue
        if kind == "run":
            kind = (
                f"run-{doc.get('kind')}"
                if isinstance(doc, dict) and doc.get("kind") in ("training", "inference")
                else None
            )
        if kind is None or not isinstance(doc, dict):
            continue
        assert disagreement(kind, doc) is None, rel
        checked += 1
    assert checked > 50
