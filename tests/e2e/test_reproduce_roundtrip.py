"""`orv reproduce` on a new recipe prints a benchmark whose output `orv add-run` accepts for that recipe
(issue 28, Done when): the printed `python -m sglang.bench_serving …` line is run, flag by flag, by the
client rebuilt from SGLang's source (tests/testing/serving_bench.py) against a local OpenAI-compatible
streaming server, and the printed `orv add-run` line stores its output; the run then proves the
recipe's workload (no ORV24x) and verifies the recipe (T2)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.testing.serving_bench import bench_serving, fake_server
from validator.cli import main
from validator.engine.evaluate import Config, analyse, run
from validator.evidence.tiers import derive

# lengths uniform in [⌊0.8·L⌋, L] like InferenceX's, small enough to stream in a second
RANGE_WORKLOAD = (
    "  rt-160-48:\n    name: Round trip, 128-160 / 38-48 tokens\n    label: 160/48\n    kind: inference\n"
    "    dataset: {name: random, distribution: uniform}\n    input_len: 160\n    output_len: 48\n"
    "    range_ratio: 0.8\n    ignore_eos: true\n    min_prompts: 8\n    prompts_per_concurrency: 10\n"
    "    warmups_per_concurrency: 2\n"
)


def _new_recipe(registry: Path, workload: str, concurrency: int, capsys: pytest.CaptureFixture[str]) -> Path:
    """What a contributor does: `orv new`, then states the checkpoint and how the server was launched."""
    assert (
        main(
            [
                "new",
                "inference",
                "--root",
                str(registry),
                "--model",
                "glm-5.3-flash",
                "--gpu",
                "h100",
                "--count",
                "2",
                "--engine",
                "sglang@0.5.23",
                "--workload",
                workload,
                "--concurrency",
                str(concurrency),
                "--author",
                "key-2952",
                "--measured",
                "2026-12-04",
                "--no-interactive",
            ]
        )
        == 0
    )
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    path = path if path.is_absolute() else registry / path
    with path.open("a") as recipe:
        recipe.write(
            "checkpoint: zai-org/GLM-5.3-Flash\nlaunch:\n  args: [--model-path, zai-org/GLM-5.3-Flash, "
            f"--tp, '2', --max-running-requests, '{max(concurrency, 8)}']\n"
        )
    return path


@pytest.mark.parametrize("workload, concurrency, prompts", [("single-stream-256", 1, 8), ("rt-160-48", 2, 20)])
def test_reproduce_then_the_benchmark_it_prints_then_add_run_accepts_the_run(
    registry: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    workload: str,
    concurrency: int,
    prompts: int,
) -> None:
    catalog = registry / "catalog" / "workloads.yaml"
    catalog.write_text(catalog.read_text() + RANGE_WORKLOAD)
    # the served checkpoint proves the model only when the catalog lists it (else T1: docs/metrics.md, "Identity")
    models = registry / "catalog" / "models.yaml"
    listed = "    name: GLM-5.3-Flash\n    checkpoints: [zai-org/GLM-5.3-Flash]\n    checkpoints_source: test\n"
    models.write_text(models.read_text().replace("    name: GLM-5.3-Flash\n", listed, 1))
    path = _new_recipe(registry, workload, concurrency, capsys)
    monkeypatch.chdir(registry)
    rel = str(path.relative_to(registry))
    assert main(["reproduce", rel]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.startswith("# missing") for line in lines), lines  # the recipe states all a re-run needs
    bench = next(line for line in lines if line.startswith("python -m sglang.bench_serving"))
    add_run = lines[lines.index("# 4. store the evidence") + 1]
    with fake_server(token_ms=1.0) as url:
        output = bench_serving(bench, url)
    record = json.loads(Path(output).read_text())
    assert len(record["input_lens"]) == prompts  # the workload's minimum (10 x concurrency); warm-ups not saved
    assert main(shlex.split(add_run)[1:]) == 0, capsys.readouterr().err
    found = [
        (d.code, d.message)
        for d in run(Config(root=str(registry), skip_boards=True)).diagnostics
        if d.path == rel or d.code.startswith("ORV24")
    ]
    assert found == []
    analysis = analyse(str(registry))
    assert derive(analysis.snapshot, analysis.diagnostics)[rel].tier == "T2"


def test_a_benchmark_on_other_lengths_is_refused_for_the_same_recipe(
    registry: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cheapest forgery: run the printed command with the lengths changed; add-run refuses to store it
    (issue 52) and says which length was off, and the tree holds no run."""
    path = _new_recipe(registry, "single-stream-256", 1, capsys)
    monkeypatch.chdir(registry)
    rel = str(path.relative_to(registry))
    assert main(["reproduce", rel]) == 0
    lines = capsys.readouterr().out.splitlines()
    bench = next(line for line in lines if line.startswith("python -m sglang.bench_serving"))
    add_run = lines[lines.index("# 4. store the evidence") + 1]
    with fake_server(token_ms=1.0) as url:
        bench_serving(bench.replace("--random-input-len 256", "--random-input-len 64"), url)
    assert main(shlex.split(add_run)[1:]) == 1
    found = [line for line in capsys.readouterr().err.splitlines() if "ORV241 error" in line]
    assert len(found) == 1 and "mean input length 64 tokens" in found[0], found
    assert not list((registry / "runs").rglob("*.json"))
