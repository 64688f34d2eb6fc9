"""Builders for tier and boards tests: recipes, run files with consistent raw samples, real git commits."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from validator.storing import store_run_document

TOKENS_PER_STEP = 128 * 8192  # the SFT workload: global batch 128 rows of 8,192 tokens
MEGATRON = {"framework": {"name": "megatron-core", "version": "0.30.0"}}
VLLM = {"engine": {"name": "vllm", "version": "0.30.0", "commit": "1fe3a1571abcdef0123456789abcdef012345678"}}
SEED_004 = "004_cbf1754cfd687db7.txt"
SEED_000 = "000_1e2c7c041290fe1e.txt"


def training_recipe(rid: str, tok: float, *, model: str = "qwen3.8-27b", gpu: str = "h100", count: int = 8,
                    layout: dict[str, Any] | None = None, software: dict[str, Any] | None = None,
                    measured: str = "2026-10-18", **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": rid, "kind": "training", "model": model, "hardware": {"gpu": gpu, "count": count},
        "author": "ATTUNE", "measured": measured, "workload": "sft-8k-gb128-bf16",
        "software": MEGATRON if software is None else software,
        "layout": layout or {"tp": 1, "pp": 4, "dp": count // 4, "layer_split": [16, 17, 17, 14]},
        "claimed": {"tokens_per_s_per_gpu": tok}, "runs": [],
    }
    doc.update(extra)
    return doc


def inference_recipe(rid: str, *, decode: float = 40.0, prefill: float | None = 10000.0, ttft: float | None = 100.0,
                     model: str = "glm-5.3-flash", gpu: str = "rtx-3090", count: int = 2,
                     software: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    claimed = {k: v for k, v in (("decode_tok_s", decode), ("prefill_tok_s", prefill), ("ttft_ms", ttft)) if v}
    doc: dict[str, Any] = {
        "id": rid, "kind": "inference", "model": model, "hardware": {"gpu": gpu, "count": count},
        "author": "key-2952", "measured": "2026-10-17", "software": VLLM if software is None else software,
        "quant": "w4a16", "serving": {"context_len": 8192, "concurrency": 1, "slots": 4},
        "claimed": claimed, "runs": [],
    }
    doc.update(extra)
    return doc


def _run_common(recipe: dict[str, Any], measured_by: str, tool_version: str) -> dict[str, Any]:
    return {
        "kind": recipe["kind"], "tool": {"name": "bench", "version": tool_version}, "model": recipe["model"],
        "hardware": dict(recipe["hardware"]), "software": recipe["software"],
        "measured_at": "2026-10-18T10:00:00Z", "measured_by": measured_by,
    }


def training_run(recipe: dict[str, Any], tok: float | None = None, *, measured_by: str = "alice",
                 tool_version: str = "0.8.0", samples: bool = True, loss_shift: float = 0.0) -> dict[str, Any]:
    """A run whose samples recompute to `tok` tokens/s/GPU and whose loss follows the base reference."""
    tok = recipe["claimed"]["tokens_per_s_per_gpu"] if tok is None else tok
    doc = _run_common(recipe, measured_by, tool_version)
    doc.update(workload=recipe["workload"], layout=recipe["layout"], summary={"tokens_per_s_per_gpu": tok})
    if samples:
        step_time = TOKENS_PER_STEP / (tok * recipe["hardware"]["count"])
        doc["samples"] = [{"step": s, "time_s": step_time, "tokens": TOKENS_PER_STEP,
                           "loss": 2.0 - 0.005 * s + loss_shift} for s in range(21)]
    return doc


def inference_run(recipe: dict[str, Any], decode: float | None = None, *, measured_by: str = "key-2952",
                  tool_version: str = "0.8.0", samples: bool = True, **extra: Any) -> dict[str, Any]:
    """A run whose samples recompute to `decode` tok/s per stream, 10,000 tok/s prefill and 100 ms TTFT."""
    decode = recipe["claimed"]["decode_tok_s"] if decode is None else decode
    doc = _run_common(recipe, measured_by, tool_version)
    doc.update(quant=recipe["quant"], serving=recipe["serving"], summary={"decode_tok_s": decode})
    if samples:
        doc["samples"] = [{"prompt_tokens": 1000, "output_tokens": 101, "ttft_ms": 100.0,
                           "e2e_ms": 100.0 + 100 * 1000.0 / decode} for _ in range(8)]
    doc.update(extra)
    return doc


def add_run(root: Path, run: dict[str, Any]) -> str:
    """Store a run document content-addressed; return its `sha256:` reference."""
    return f"sha256:{store_run_document(str(root), run).digest}"


def recipe_path(recipe: dict[str, Any], folder: str | None = None) -> str:
    return f"recipes/{recipe['kind']}/{folder or recipe['model']}/{recipe['id']}.yaml"


def write_recipe(root: Path, recipe: dict[str, Any], folder: str | None = None) -> str:
    rel = recipe_path(recipe, folder)
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(recipe, sort_keys=False), encoding="utf-8")
    return rel


def write_yaml(root: Path, rel: str, data: Any) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def git(root: Path, *args: str, date: str = "2026-10-20T12:00:00+00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    done = subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def git_init(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")


def commit_all(root: Path, message: str, date: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message, date=date)
    return git(root, "rev-parse", "HEAD")
