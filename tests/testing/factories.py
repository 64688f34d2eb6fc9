"""Recipe and run factories: documents (dicts) for tier and boards tests, YAML text for pull-request tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from tests.testing.git import commit_all, git
from tests.testing.registry import make_registry, write
from validator.boards.regenerate import regenerate_files
from validator.engine.evaluate import analyse
from validator.registry.store import store_run_document

TOKENS_PER_STEP = 128 * 8192  # the SFT workload: global batch 128 rows of 8,192 tokens
MEGATRON = {"framework": {"name": "megatron-core", "version": "0.30.0"}}
VLLM = {"engine": {"name": "vllm", "version": "0.30.0", "commit": "1fe3a1571abcdef0123456789abcdef012345678"}}
SEED_004 = "004_cbf1754cfd687db7.txt"
SEED_000 = "000_1e2c7c041290fe1e.txt"


def training_recipe(
    rid: str,
    tok: float,
    *,
    model: str = "qwen3.8-27b",
    gpu: str = "h100",
    count: int = 8,
    layout: dict[str, Any] | None = None,
    software: dict[str, Any] | None = None,
    measured: str = "2026-10-18",
    **extra: Any,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": rid,
        "kind": "training",
        "model": model,
        "hardware": {"gpu": gpu, "count": count},
        "author": "ATTUNE",
        "measured": measured,
        "workload": "sft-8k-gb128-bf16",
        "software": copy.deepcopy(MEGATRON if software is None else software),  # tests edit what they get
        "layout": copy.deepcopy(layout)
        if layout
        else {"tp": 1, "pp": 4, "dp": count // 4, "layer_split": [16, 17, 17, 14]},
        "claimed": {"tokens_per_s_per_gpu": tok},
        "runs": [],
    }
    doc.update(extra)
    return doc


def inference_recipe(
    rid: str,
    *,
    decode: float = 40.0,
    prefill: float | None = 10000.0,
    ttft: float | None = 100.0,
    model: str = "glm-5.3-flash",
    gpu: str = "rtx-3090",
    count: int = 2,
    software: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    claimed = {k: v for k, v in (("decode_tok_s", decode), ("prefill_tok_s", prefill), ("ttft_ms", ttft)) if v}
    doc: dict[str, Any] = {
        "id": rid,
        "kind": "inference",
        "model": model,
        "hardware": {"gpu": gpu, "count": count},
        "author": "key-2952",
        "measured": "2026-10-17",
        "software": copy.deepcopy(VLLM if software is None else software),
        "quant": "w4a16",
        "serving": {"context_len": 8192, "concurrency": 1, "slots": 4},
        "workload": "chat-1000-100",  # the base catalog's workload these samples fit (inference_run)
        "claimed": claimed,
        "runs": [],
    }
    doc.update(extra)
    return doc


def _run_common(
    recipe: dict[str, Any], measured_by: str, tool_version: str, tool_name: str = "bench"
) -> dict[str, Any]:
    return {
        "kind": recipe["kind"],
        "tool": {"name": tool_name, "version": tool_version},
        "model": recipe["model"],
        "hardware": dict(recipe["hardware"]),
        "software": recipe["software"],
        "measured_at": "2026-10-18T10:00:00Z",
        "measured_by": measured_by,
    }


def training_run(
    recipe: dict[str, Any],
    tok: float | None = None,
    *,
    measured_by: str = "alice",
    tool_version: str = "0.8.0",
    samples: bool = True,
    loss_shift: float = 0.0,
    steps: int = 21,
    warmup_slowdown: float = 1.0,
    tool_name: str = "bench",
) -> dict[str, Any]:
    """A run whose samples recompute to `tok` tokens/s/GPU and whose loss follows the base reference.

    The first two steps take `warmup_slowdown` times as long: they fall in the test workload's
    warm-up (2 steps), so the recomputed figure is the same either way.
    """
    tok = recipe["claimed"]["tokens_per_s_per_gpu"] if tok is None else tok
    doc = _run_common(recipe, measured_by, tool_version, tool_name)
    doc.update(workload=recipe["workload"], layout=recipe["layout"], summary={"tokens_per_s_per_gpu": tok})
    if samples:
        step_time = TOKENS_PER_STEP / (tok * recipe["hardware"]["count"])
        doc["samples"] = [
            {
                "step": s,
                "time_s": round(step_time * (warmup_slowdown if s < 2 else 1.0), 6),
                "tokens": TOKENS_PER_STEP,
                "loss": round(2.0 - 0.005 * s + loss_shift, 6),
            }
            for s in range(steps)
        ]
    return doc


def inference_run(
    recipe: dict[str, Any],
    decode: float | None = None,
    *,
    measured_by: str = "key-2952",
    tool_version: str = "0.8.0",
    samples: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """A run whose samples recompute to `decode` tok/s per stream, 10,000 tok/s prefill and 100 ms TTFT."""
    decode = recipe["claimed"]["decode_tok_s"] if decode is None else decode
    doc = _run_common(recipe, measured_by, tool_version)
    doc.update(quant=recipe["quant"], serving=recipe["serving"], summary={"decode_tok_s": decode})
    if samples:
        doc["samples"] = [
            {"prompt_tokens": 1000, "output_tokens": 101, "ttft_ms": 100.0, "e2e_ms": 100.0 + 100 * 1000.0 / decode}
            for _ in range(8)
        ]
    doc.update(extra)
    return doc


def store_run(root: Path, run: dict[str, Any]) -> str:
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


# --------------------------------------------------------------------------- YAML text (pull-request tests)

# Distinct layouts give distinct recipe identities (ORV3xx rejects two ids for one configuration).
LAYOUTS: dict[str, dict[str, Any]] = {
    "tp1-pp4-dp2": {"tp": 1, "pp": 4, "dp": 2, "layer_split": [16, 17, 17, 14]},
    "tp2-pp2-dp2": {"tp": 2, "pp": 2, "dp": 2},
    "tp4-pp1-dp2": {"tp": 4, "pp": 1, "dp": 2},
    "tp2-pp1-dp4": {"tp": 2, "pp": 1, "dp": 4},
    "tp8-pp1-dp1": {"tp": 8, "pp": 1, "dp": 1},
}


def flow_yaml(mapping: dict[str, Any]) -> str:
    """{tp: 1, pp: 4, ...}: a one-line YAML mapping, keys in the order given."""
    return "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in mapping.items()) + "}"


def recipe_text(
    rid: str,
    claimed: float = 1480.4,
    runs: tuple[str, ...] = (),
    version: str = "0.30.0",
    extra: str = "",
    layout: str = "tp1-pp4-dp2",
) -> str:
    run_lines = "".join(f"\n  - sha256:{d}" for d in runs) if runs else " []"
    return (
        f"id: {rid}\nkind: training\nmodel: qwen3.8-27b\nhardware: {{gpu: h100, count: 8}}\n"
        f'author: ATTUNE\nmeasured: "2026-10-18"\nworkload: sft-8k-gb128-bf16\nsoftware:\n'
        f'  framework: {{name: megatron-core, version: "{version}"}}\n'
        f"layout: {flow_yaml(LAYOUTS[layout])}\n"
        f"claimed: {{tokens_per_s_per_gpu: {claimed}}}\nruns:{run_lines}\nnotes: CPU optimizer offload.\n{extra}"
    )


def training_recipe_path(rid: str) -> str:
    return f"recipes/training/qwen3.8-27b/{rid}.yaml"


def h100_training_run(
    tokens_per_s_per_gpu: float, measured_by: str = "lab-a", layout: str = "tp1-pp4-dp2"
) -> dict[str, Any]:
    """A qwen3.8-27b H100×8 training run (the one recipe_text describes) recomputing to the given figure."""
    recipe = training_recipe("r", tokens_per_s_per_gpu, layout=copy.deepcopy(LAYOUTS[layout]))
    return training_run(
        recipe, measured_by=measured_by, tool_version="1.2.0", tool_name="megatron-bench", steps=24, warmup_slowdown=1.6
    )


def add_training_run(
    repo: Path, tokens_per_s_per_gpu: float, measured_by: str = "lab-a", layout: str = "tp1-pp4-dp2"
) -> str:
    """Store h100_training_run(...) content-addressed; return its digest."""
    return store_run_document(str(repo), h100_training_run(tokens_per_s_per_gpu, measured_by, layout)).digest


def run_path(digest: str) -> str:
    return f"runs/{digest[:2]}/{digest}.json"


def registry_repo(tmp_path: Path, boards: bool = False) -> Path:
    """A registry on `main` with one recipe backed by one run, and a contributor branch `pr` off it;
    with boards=True main also has its generated boards (boards/index.json, boards/models/), as the boards
    workflow leaves them."""
    repo = make_registry(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    digest = add_training_run(repo, 1480.4)
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2"),
        recipe_text("qwen3-8-27b-h100-tp1-pp4-dp2", runs=(digest,)),
    )
    write(repo, "README.md", "# registry\n")
    commit_all(repo, "registry on main")
    if boards:
        commit_boards(repo)
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def commit_boards(repo: Path) -> None:
    """Generate the boards for the committed data and commit them on their own (docs/boards.md)."""
    for path, data in regenerate_files(analyse(str(repo))).items():
        write(repo, path, data.decode("utf-8"))
    commit_all(repo, "boards")


def existing_run(repo: Path) -> str:
    return next(p for p in git(repo, "ls-files", "runs").splitlines())
