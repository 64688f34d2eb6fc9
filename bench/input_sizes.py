"""How large a contributor's honest inputs get, for the budgets in docs/limits.md: `python -m bench.input_sizes`.

The real-format fixture writers (tests/fixtures/tools/make_fixtures.py, tests/fixtures/lmeval/) scaled
up: a `vllm bench serve --save-detailed` result and an SGLang line of 10,000 requests at 1,024 output
tokens (InferenceX's 1k/1k), Megatron-LM and NeMo logs of 10,000 iterations, an lm-eval samples file of
10,000 lines (a document under one filter each). Prints bytes per file and per request/iteration/document, so a budget can be read as
"how many of them fit".
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import tempfile
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COUNT = 10_000
OUTPUT_TOKENS = 1024


def _fixtures() -> object:
    spec = importlib.util.spec_from_file_location("make_fixtures", REPO / "tests/fixtures/tools/make_fixtures.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_fixtures"] = module
    spec.loader.exec_module(module)
    return module


def _requests(fx: object, count: int, output: int) -> list[object]:
    rng, now, out = random.Random(1), 5021.318, []
    for _ in range(count):
        itl = [0.02409 * (1 + rng.uniform(-0.03, 0.03)) for _ in range(output - 1)]
        req = fx.Request(
            1024 + rng.randrange(-24, 25),
            output,
            0.0621 * (1 + rng.uniform(-0.08, 0.08)),
            itl,  # type: ignore[attr-defined]
            rng.uniform(2e-4, 6e-4),
            now,
        )
        out.append(req)
        now += req.latency + 0.0012
    return out


def measure() -> dict[str, tuple[int, int]]:
    """File -> (bytes, items) for each scaled honest input."""
    fx = _fixtures()
    sizes: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        outputs = _requests(fx, COUNT, OUTPUT_TOKENS)
        detailed, _ = fx.vllm_result(outputs, detailed=True)  # type: ignore[attr-defined]
        sizes["vllm --save-detailed result"] = (len(json.dumps(detailed).encode()), COUNT)
        sizes["sglang --output-file line"] = (len(fx.sglang_line(outputs, 64, nested=True).encode()), COUNT)  # type: ignore[attr-defined]
        del outputs, detailed
        fx.megatron_log(
            folder / "m.log",
            1,
            88538.1,
            datetime(2026, 10, 18),
            fx.healthy_loss,  # type: ignore[attr-defined]
            iterations=COUNT,
            prefix="[default0]:",
        )
        sizes["Megatron-LM log"] = ((folder / "m.log").stat().st_size, COUNT)
        fx.nemo_log(folder / "n.log", 1, 88538.1)  # type: ignore[attr-defined]
        nemo_lines = [l for l in (folder / "n.log").read_text().splitlines() if "Training epoch" in l]
        per_line = sum(len(l) + 1 for l in nemo_lines) / len(nemo_lines)
        sizes["NeMo log"] = (int(per_line * COUNT), COUNT)
        samples = sorted((REPO / "tests/fixtures/lmeval/reference").glob("samples_*.jsonl"))[0].read_bytes()
        lines = [l for l in samples.split(b"\n") if l.strip()]
        sizes["lm-eval samples JSONL (gsm8k)"] = (int(sum(len(l) + 1 for l in lines) / len(lines) * COUNT), COUNT)
        results = sorted((REPO / "tests/fixtures/lmeval/reference").glob("results_*.json"))[0].stat().st_size
        sizes["lm-eval results JSON (1 task)"] = (results, 1)
        configs = REPO / "tests/fixtures/hf-configs"
        sizes["HF config.json (largest fixture)"] = (max(p.stat().st_size for p in configs.glob("*.json")), 1)
        seeds = REPO / "tests/fixtures/import"
        sizes["seed sources (largest)"] = (max(p.stat().st_size for p in seeds.iterdir()), 1)
    return sizes


def main() -> None:
    for name, (size, items) in measure().items():
        print(f"{name:36} {size:>14,} bytes  {items:>6,} items  {size / items:>12,.0f} bytes each")


if __name__ == "__main__":
    main()
