"""llama-bench fixtures (tests/fixtures/tools/llamabench, real output made by make_fixture.sh) and the
catalog entries a test registry needs to take them: the tiny model they timed, the CPU host they ran on
(a CPU-only build: a CPU run backs only a CPU host's recipe, ORV249), the llama-bench workloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.testing.registry import REPO, TOOLS

FIXTURES = TOOLS / "llamabench"
BOTH_JSON = FIXTURES / "pp512-tg128.json"  # llama-bench's defaults: pp512 then tg128, 5 repetitions
BOTH_JSONL = FIXTURES / "pp512-tg128.jsonl"
DEEP = FIXTURES / "tg32-d256.json"  # tg32 after 256 tokens of context
THREE_REPS = FIXTURES / "tg128-r3.jsonl"  # tg128, -r 3
ALL = (BOTH_JSON, BOTH_JSONL, DEEP, THREE_REPS)
BUILD, COMMIT = "b11312", "0c1e57098"


def bench_tests(path: Path, floats_as_text: bool = False) -> list[dict[str, Any]]:
    """The test objects of a llama-bench output; `floats_as_text` keeps each number as llama-bench printed it."""
    text = path.read_text(encoding="utf-8")
    parse = (lambda s: json.loads(s, parse_float=str)) if floats_as_text else json.loads
    if text.lstrip().startswith("["):
        return parse(text)
    return [parse(line) for line in text.splitlines() if line.strip()]


N_PARAMS = bench_tests(BOTH_JSON)[0]["model_n_params"]
TINY = {
    "name": "TinyLlama-Test",
    "family": "Llama",
    "params_b": round(N_PARAMS / 1e9, 9),
    "active_b": round(N_PARAMS / 1e9, 9),
    "layers": 2,
}
CPU_HOST = "amd-epyc"  # the fixtures' cpu_info is `AMD EPYC`, their backends `CPU`, their gpu_info empty
# a test catalog's CPU host: an EPYC 9004's 12 DDR5-4800 channels (12 x 38.4 GB/s), so ORV512's bound applies
EPYC = {
    "name": "AMD EPYC",
    "vendor": "amd",
    "device": "cpu",
    "hbm_gib": 384,
    "hbm_tb_s": 0.4608,
    "memory_kind": "DDR5",
    "notes": "a CPU host: the test registry's, where the llama-bench fixtures ran",
}


def add_llama_catalog(root: Path) -> Path:
    """The tiny model, the CPU host and the shipped llama-bench workloads (plus a tg32 @ d256 one) in root's
    catalog."""
    models_path, workloads_path = root / "catalog" / "models.yaml", root / "catalog" / "workloads.yaml"
    models = yaml.safe_load(models_path.read_text(encoding="utf-8"))
    models["models"]["tinyllama-test"] = TINY
    models_path.write_text(yaml.safe_dump(models, sort_keys=False), encoding="utf-8")
    hardware_path = root / "catalog" / "hardware.yaml"
    hardware = yaml.safe_load(hardware_path.read_text(encoding="utf-8"))
    hardware["hardware"][CPU_HOST] = EPYC
    hardware_path.write_text(yaml.safe_dump(hardware, sort_keys=False), encoding="utf-8")
    workloads = yaml.safe_load(workloads_path.read_text(encoding="utf-8"))
    shipped = yaml.safe_load((REPO / "catalog" / "workloads.yaml").read_text(encoding="utf-8"))["workloads"]
    for wid in ("llama-bench-pp512", "llama-bench-tg128"):
        workloads["workloads"][wid] = shipped[wid]
    workloads["workloads"]["llama-bench-tg32-d256"] = {
        **shipped["llama-bench-tg128"],
        "name": "tg32 @ d256",
        "label": "tg32 d256",
        "n_gen": 32,
        "n_depth": 256,
    }
    # through JSON: entries that share a list would otherwise be written as YAML aliases (refused, ORV112)
    workloads_path.write_text(yaml.safe_dump(json.loads(json.dumps(workloads)), sort_keys=False), encoding="utf-8")
    return root
