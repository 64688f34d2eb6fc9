"""`orv add-run --from trtllm-bench`: trtllm-bench's --request_json recomputes to its --report_json.

trtllm-bench needs a GPU, so the fixtures are source-derived: tests/fixtures/tools/trtllm/make_fixtures.py
writes both files as TensorRT-LLM's own writers do (cited there).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples
from tests.testing.mutation import odd_edit
from tests.testing.registry import TOOLS, make_registry
from validator.adapters import convert, metadata, trtllm, with_report
from validator.adapters.detect import detect
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.errors import AdapterError
from validator.science.throughput import inference_facts

TRT = TOOLS / "trtllm"
RECIPE = """\
id: {id}
kind: inference
model: {model}
checkpoint: {checkpoint}
hardware: {{gpu: h100, count: {count}}}
author: ATTUNE
measured: "2026-12-05"
software:
  engine: {{name: tensorrt-llm, version: "{version}"}}
quant: fp8
serving: {{context_len: 8192, concurrency: 1{serving}}}
workload: single-stream-256
claimed: {{}}
runs: []
"""


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry")


def write_recipe(root: Path, **values: Any) -> Path:
    base = {
        "id": "qwen3-8-27b-h100-trtllm-fp8-single-stream-256-c1",
        "model": "qwen3.8-27b",
        "checkpoint": "Qwen/Qwen3.8-27B",
        "version": "1.2.1",
        "count": 1,
        "serving": "",
    }
    base.update(values)
    path = root / "recipes" / "inference" / base["model"] / f"{base['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RECIPE.format(**base), encoding="utf-8")
    return path


def files(tmp_path: Path, name: str = "streaming", requests: Any = None, report: Any = None) -> tuple[Path, Path]:
    req, rep = tmp_path / f"{name}-requests.json", tmp_path / f"{name}-report.json"
    req.write_text(json.dumps(requests) if requests is not None else (TRT / req.name).read_text(), encoding="utf-8")
    rep.write_text(
        json.dumps(report, indent=4) if report is not None else (TRT / rep.name).read_text(), encoding="utf-8"
    )
    return req, rep


def saved(name: str) -> Any:
    return json.loads((TRT / name).read_text())


def adapt(requests: Path, report: Path, recipe: Path, root: Path) -> Any:
    source = with_report("trtllm-bench", str(requests), requests.read_bytes(), str(report))
    return convert("trtllm-bench", source, metadata("trtllm-bench", str(root), str(recipe), {}))


def add_run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["add-run", "--root", str(root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_recomputed_figures_equal_the_reports_own(registry: Path) -> None:
    recipe = write_recipe(registry)
    doc = adapt(TRT / "streaming-requests.json", TRT / "streaming-report.json", recipe, registry).document
    report = saved("streaming-report.json")
    facts = inference_facts(doc["samples"], doc["duration_s"])
    streaming, perf = report["streaming_metrics"], report["performance"]
    assert math.isclose(facts.headline["ttft_ms"], streaming["ttft_percentiles"]["average"], rel_tol=1e-9)
    assert math.isclose(facts.headline["tpot_ms"], streaming["tpot_percentiles"]["average"], rel_tol=1e-9)
    assert math.isclose(facts.headline["output_tok_s"], perf["system_output_throughput_tok_s"], rel_tol=1e-9)
    assert math.isclose(doc["duration_s"] * 1000, perf["total_latency_ms"], rel_tol=1e-9)
    assert len(doc["samples"]) == report["request_info"]["num_requests"] == 10
    assert doc["tool"]["version"] == "1.2.1" and doc["software"]["engine"] == {
        "name": "tensorrt-llm",
        "version": "1.2.1",
    }
    assert doc["checkpoint"] == "Qwen/Qwen3.8-27B" and doc["serving"]["tp"] == doc["serving"]["pp"] == 1


def test_the_request_json_is_detected() -> None:
    found = detect((TRT / "streaming-requests.json").read_bytes())
    assert found is not None and found.fmt == "trtllm-bench"
    assert detect((TRT / "streaming-report.json").read_bytes()) is None


def test_a_trtllm_recipe_reaches_t2(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(registry)
    code, _, err = add_run(
        capsys,
        registry,
        str(TRT / "streaming-requests.json"),
        "--report",
        str(TRT / "streaming-report.json"),
        "--recipe",
        str(recipe),
        "--write-recipe",
    )
    assert code == 0, err
    result = run(Config(root=str(registry), skip_boards=True))
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []


@pytest.mark.parametrize(
    "path",
    [
        ("performance", "system_output_throughput_tok_s"),
        ("streaming_metrics", "ttft_percentiles", "average"),
        ("performance", "avg_request_latency_ms"),
    ],
)
def test_a_tampered_report_is_a_finding(tmp_path: Path, registry: Path, path: tuple[str, ...]) -> None:
    recipe = write_recipe(registry)
    report = saved("streaming-report.json")
    node = report
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] *= 1.05
    with pytest.raises(AdapterError) as exc:
        adapt(*files(tmp_path, report=report), recipe, registry)
    assert [d.code for d in exc.value.diagnostics] == ["ORV109"] and ".".join(path) in exc.value.diagnostics[0].message
    assert exc.value.diagnostics[0].path.endswith("streaming-report.json")  # located in the report


def test_output_tokens_inflated_with_the_report_edited_to_match_are_refused(tmp_path: Path, registry: Path) -> None:
    """The report recomputes from the requests, so a forger edits both; each request's own redundant
    fields (num_total_output_tokens, num_generated_tokens, intertoken_latency) still tell (ORV216)."""
    recipe = write_recipe(registry)
    requests, report = saved("streaming-requests.json"), saved("streaming-report.json")
    for request in requests:
        request["output_tokens"] += 10  # +3.9% output in the same time
    for path, value in trtllm.recomputed_report(requests, True).items():  # every figure the report derives
        node = report
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    with pytest.raises(AdapterError) as exc:
        adapt(*files(tmp_path, requests=requests, report=report), recipe, registry)
    codes = {d.code for d in exc.value.diagnostics}
    assert codes == {"ORV216"}, [d.message for d in exc.value.diagnostics]
    assert (
        "request 0: `num_total_output_tokens` is 256 but its `output_tokens` give 266"
        in exc.value.diagnostics[0].message
    )


def test_a_non_streaming_run_is_refused(tmp_path: Path, registry: Path) -> None:
    recipe = write_recipe(registry)
    with pytest.raises(AdapterError) as exc:
        adapt(TRT / "non-streaming-requests.json", TRT / "non-streaming-report.json", recipe, registry)
    assert [d.code for d in exc.value.diagnostics] == ["ORV108"]
    assert "without --streaming" in exc.value.diagnostics[0].message


def test_a_non_streaming_run_claiming_ttft_is_refused(tmp_path: Path, registry: Path) -> None:
    """The cheapest forgery: paste a streaming run's streaming_metrics into a non-streaming report."""
    recipe = write_recipe(registry)
    report = saved("non-streaming-report.json")
    report["streaming_metrics"] = saved("streaming-report.json")["streaming_metrics"]
    with pytest.raises(AdapterError) as exc:
        adapt(*files(tmp_path, "non-streaming", report=report), recipe, registry)
    assert [d.code for d in exc.value.diagnostics] == ["ORV109"]
    assert "did not stream" in exc.value.diagnostics[0].message


def test_a_truncated_request_json_is_a_one_line_error(
    tmp_path: Path, registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = write_recipe(registry)
    requests, report = files(tmp_path)
    requests.write_bytes(requests.read_bytes()[:-700])
    code, out, err = add_run(
        capsys, registry, "--from", "trtllm-bench", str(requests), "--report", str(report), "--recipe", str(recipe)
    )
    assert code == 1 and out == "" and "Traceback" not in err
    assert len([line for line in err.splitlines() if "ORV1" in line]) == 1 and "ORV101" in err


def test_without_the_report_the_run_is_refused(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(registry)
    code, _, err = add_run(
        capsys, registry, "--from", "trtllm-bench", str(TRT / "streaming-requests.json"), "--recipe", str(recipe)
    )
    assert code == 1 and "ORV108" in err and "--report" in err


def test_a_run_of_another_model_is_an_identity_error(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(
        registry,
        id="glm-5-3-flash-h100-trtllm-fp8-single-stream-256-c1",
        model="glm-5.3-flash",
        checkpoint="zai-org/GLM-5.3-Flash",
    )
    code, _, err = add_run(
        capsys,
        registry,
        str(TRT / "streaming-requests.json"),
        "--report",
        str(TRT / "streaming-report.json"),
        "--recipe",
        str(recipe),
    )
    assert code == 1 and "ORV226" in err


def test_the_engine_version_is_the_pin(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(registry, version="1.0.0")
    code, _, err = add_run(
        capsys,
        registry,
        str(TRT / "streaming-requests.json"),
        "--report",
        str(TRT / "streaming-report.json"),
        "--recipe",
        str(recipe),
    )
    assert code == 1 and "ORV206" in err and "TensorRT-LLM 1.2.1" in err


def test_the_world_layout_is_checked_against_the_recipe(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(
        registry, id="qwen3-8-27b-h100-x2-trtllm-fp8-single-stream-256-c1", count=2, serving=", tp: 2"
    )
    code, _, err = add_run(
        capsys,
        registry,
        str(TRT / "streaming-requests.json"),
        "--report",
        str(TRT / "streaming-report.json"),
        "--recipe",
        str(recipe),
    )
    assert code == 1 and "serving.tp" in err and "hardware.count" in err


def test_the_generator_writes_what_is_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_trtllm_fixtures", TRT / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    module.main()
    for name in (
        "streaming-requests.json",
        "streaming-report.json",
        "non-streaming-requests.json",
        "non-streaming-report.json",
    ):
        assert (tmp_path / name).read_bytes() == (TRT / name).read_bytes()
    assert trtllm.recomputed_report(json.loads((tmp_path / "streaming-requests.json").read_text()), True)


def test_reproduce_prints_the_trtllm_bench_commands(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(registry)
    assert main(["reproduce", "--root", str(registry), str(recipe)]) == 0
    out = capsys.readouterr().out
    assert (
        "trtllm-bench --model Qwen/Qwen3.8-27B prepare-dataset --output dataset.jsonl token-unif-dist "
        "--num-requests 8 --input-min 256 --input-max 256 --output-min 256 --output-max 256" in out
    )
    assert "throughput --dataset dataset.jsonl --backend pytorch --tp 1 --pp 1 --concurrency 1" in out
    assert "--streaming --request_json requests.json --report_json report.json" in out
    assert "orv add-run requests.json --from trtllm-bench --report report.json --recipe" in out
    assert "vllm bench serve" not in out and "launch.args" not in out


ODD = [None, True, 0, -1, 1.5, 2**64, 1e300, "", "x", [], {}, [None], {"k": 1}]


@settings(max_examples=fuzz_examples(30), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_mutation_of_trtllm_bench_files_gives_a_run_or_a_finding(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    root = make_registry(tmp_path_factory.mktemp("fuzz") / "registry")
    recipe = write_recipe(root)
    requests, report = saved("streaming-requests.json"), saved("streaming-report.json")
    for _ in range(data.draw(st.integers(1, 3))):
        doc: Any = requests[data.draw(st.integers(0, len(requests) - 1))] if data.draw(st.booleans()) else report
        odd_edit(data, doc, ODD)
    try:
        adapt(*files(tmp_path_factory.mktemp("t"), requests=requests, report=report), recipe, root)
    except AdapterError as exc:
        for d in exc.diagnostics:
            assert d.code != "ORV900" and d.line >= 1 and d.col >= 1 and d.hint


def test_a_log_starting_with_a_bracket_is_still_a_log() -> None:
    found = detect(
        b"[NeMo I 2026-01-01 nemo_logging:1] start\n" + (TOOLS / "nemo" / "qwen3-8-27b-nemo.log").read_bytes()
    )
    assert found is not None and found.fmt == "nemo"


def test_add_run_refuses_the_fp8_report_for_a_bf16_recipe(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """add-run's identity gate says what `orv check` says (ORV261): a refusal, no longer a note."""
    recipe = write_recipe(registry, id="qwen3-8-27b-h100-trtllm-bf16-single-stream-256-c1")
    recipe.write_text(recipe.read_text(encoding="utf-8").replace("quant: fp8", "quant: bf16"), encoding="utf-8")
    code, out, err = add_run(
        capsys,
        registry,
        str(TRT / "streaming-requests.json"),
        "--report",
        str(TRT / "streaming-report.json"),
        "--recipe",
        str(recipe),
    )
    assert code == 1 and out == "" and "ORV261" in err and "quantized (FP8)" in err and "`bf16`" in err
    report = saved("streaming-report.json")
    report["machine"]["name"] = "NVIDIA B200"
    requests, edited = files(registry.parent, report=report)
    code, _, err = add_run(capsys, registry, str(requests), "--report", str(edited), "--recipe", str(recipe))
    assert code == 1 and "ORV229" in err and "`NVIDIA B200` is catalog GPU `b200`" in err
