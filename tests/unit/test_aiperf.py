"""`orv add-run --from aiperf`: AIPerf's real output (aiperf 0.13.0 run here against a fake OpenAI-compatible
server, tests/fixtures/tools/aiperf/make_fixture.sh) recomputes to AIPerf's own summary; what cannot be
evidence is refused. Also: a client result (vLLM's bench serve) backs a recipe whose engine is not the client.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples
from tests.testing.mutation import odd_edit
from tests.testing.registry import TOOLS, make_registry
from validator.adapters import aiperf, convert, metadata, with_report
from validator.adapters.detect import detect
from validator.checks.collect import Collector
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.errors import AdapterError
from validator.evidence import tiers
from validator.load.pipeline import assemble_loaded, load_tree
from validator.science.throughput import inference_facts

AIPERF = TOOLS / "aiperf"
STREAMING = AIPERF / "streaming"
RECIPE = """\
id: {id}
kind: inference
model: {model}
checkpoint: {checkpoint}
hardware: {{gpu: h100, count: 1}}
author: ATTUNE
measured: "2026-12-05"
software:
  engine: {{name: {engine}, version: "{version}"}}
quant: fp8
serving: {{context_len: 8192, concurrency: {concurrency}}}
workload: {workload}
claimed: {{}}
runs: []
"""


def recipe_text(**values: Any) -> str:
    base = {
        "id": "qwen3-8-27b-h100-vllm-fp8-single-stream-256-c1",
        "model": "qwen3.8-27b",
        "checkpoint": "Qwen/Qwen3.8-27B",
        "engine": "vllm",
        "version": "0.11.0",
        "concurrency": 1,
        "workload": "single-stream-256",
    }
    return RECIPE.format(**{**base, **values})


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry")


def write_recipe(root: Path, **values: Any) -> Path:
    text = recipe_text(**values)
    rid, model = text.split("\n")[0].split(": ")[1], text.split("\n")[2].split(": ")[1]
    path = root / "recipes" / "inference" / model / f"{rid}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def artifacts(
    tmp_path: Path,
    records: list[dict[str, Any]] | None = None,
    summary: dict[str, Any] | None = None,
    source: Path = STREAMING,
) -> Path:
    """A copy of an AIPerf artifact folder, with records or summary replaced (a forgery under test)."""
    folder = tmp_path / "artifacts"
    shutil.copytree(source, folder)
    if records is not None:
        (folder / aiperf.RECORDS).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    if summary is not None:
        (folder / aiperf.SUMMARY).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return folder


def saved_records(source: Path = STREAMING) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (source / aiperf.RECORDS).read_text().splitlines() if line.strip()]


def saved_summary(source: Path = STREAMING) -> dict[str, Any]:
    return json.loads((source / aiperf.SUMMARY).read_text())


def adapt(folder: Path, recipe: Path, root: Path) -> Any:
    records = folder / aiperf.RECORDS
    source = with_report("aiperf", str(records), records.read_bytes(), None)
    return convert("aiperf", source, metadata("aiperf", str(root), str(recipe), {}))


def add_run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["add-run", "--root", str(root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def refused_codes(exc: pytest.ExceptionInfo[AdapterError]) -> list[str]:
    return [d.code for d in exc.value.diagnostics]


# --------------------------------------------------------------------------- golden


def test_recomputed_figures_equal_aiperfs_own_summary(registry: Path) -> None:
    recipe = write_recipe(registry)
    doc = adapt(STREAMING, recipe, registry).document
    summary = saved_summary()
    assert len(doc["samples"]) == summary["request_count"]["avg"] == 10  # the 2 warm-ups are left out
    facts = inference_facts(doc["samples"], doc["duration_s"])
    # recomputed from the per-request records == AIPerf's own aggregate, within 1e-9 relative
    assert math.isclose(facts.headline["ttft_ms"], summary["time_to_first_token"]["avg"], rel_tol=1e-9)
    assert math.isclose(facts.headline["tpot_ms"], summary["inter_token_latency"]["avg"], rel_tol=1e-9)
    assert math.isclose(doc["duration_s"], summary["benchmark_duration"]["avg"], rel_tol=1e-9)
    assert sum(s["output_tokens"] for s in doc["samples"]) == summary["output_sequence_length"]["sum"] == 2560
    assert sum(s["prompt_tokens"] for s in doc["samples"]) == summary["input_sequence_length"]["sum"] == 2560
    # AIPerf 0.13 divides by the phase's window, orv by the records' span: close, not equal
    assert math.isclose(facts.headline["output_tok_s"], summary["output_token_throughput"]["avg"], rel_tol=1e-2)
    assert doc["tool"] == {"name": "aiperf", "version": "0.13.0", "format": aiperf.FORMAT}
    assert doc["checkpoint"] == "Qwen/Qwen3.8-27B" and doc["serving"]["concurrency"] == 1
    assert doc["summary"]["ttft_ms"] == summary["time_to_first_token"]["avg"]


def test_the_records_file_and_the_folder_are_both_detected() -> None:
    found = detect((STREAMING / aiperf.RECORDS).read_bytes())
    assert found is not None and found.fmt == "aiperf"
    assert aiperf.summary_path("/a/profile_export.jsonl") == "/a/profile_export_aiperf.json"
    assert aiperf.summary_path("/a/run7.jsonl") == "/a/run7.json"  # --profile-export-prefix run7


def test_an_aiperf_recipe_reaches_t2_on_the_test_registry(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(registry)
    code, out, err = add_run(capsys, registry, str(STREAMING), "--recipe", str(recipe), "--write-recipe")
    assert code == 0, err
    assert "reading it as --from aiperf" in err and "2 warm-up record(s) left out" in err
    result = run(Config(root=str(registry), skip_boards=True))
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []
    snapshot = assemble_loaded(str(registry), load_tree(str(registry)), Collector())
    tier = tiers.derive(snapshot, result.diagnostics)[str(recipe.relative_to(registry))]
    assert tier.tier == "T2" and tier.verified_runs == (out.strip().split(":")[1],)


# --------------------------------------------------------------------------- refusals


def test_a_tampered_summary_is_a_finding(tmp_path: Path, registry: Path) -> None:
    recipe = write_recipe(registry)
    summary = saved_summary()
    summary["time_to_first_token"]["avg"] *= 0.9  # a flattering TTFT, records untouched
    with pytest.raises(AdapterError) as exc:
        adapt(artifacts(tmp_path, summary=summary), recipe, registry)
    assert refused_codes(exc) == ["ORV109"] and "time_to_first_token.avg" in exc.value.diagnostics[0].message
    finding, text = exc.value.diagnostics[0], (tmp_path / "artifacts" / aiperf.SUMMARY).read_text().split("\n")
    at = (
        text.index('  "time_to_first_token": {')
        + next(i for i, line in enumerate(text[text.index('  "time_to_first_token": {') :]) if '"avg"' in line)
        + 1
    )
    assert finding.path.endswith(aiperf.SUMMARY) and finding.line == at  # located in the summary, not the records


def test_a_record_edited_to_inflate_output_is_a_finding(tmp_path: Path, registry: Path) -> None:
    recipe = write_recipe(registry)
    records = saved_records()
    records[5]["metrics"]["output_sequence_length"]["value"] = 300  # more tokens in the same time
    with pytest.raises(AdapterError) as exc:
        adapt(artifacts(tmp_path, records=records), recipe, registry)
    # the record's own inter_token_latency and output_token_count contradict it before any summary is read
    assert set(refused_codes(exc)) == {"ORV216"}
    assert any("output_sequence_length` 300" in d.message for d in exc.value.diagnostics)


def test_a_summary_that_counts_warm_up_records_is_refused(tmp_path: Path, registry: Path) -> None:
    recipe = write_recipe(registry)
    summary = saved_summary()
    summary["request_count"]["avg"] = 12.0  # the 2 warm-ups counted in
    with pytest.raises(AdapterError) as exc:
        adapt(artifacts(tmp_path, summary=summary), recipe, registry)
    assert refused_codes(exc) == ["ORV109"] and "2 warm-up" in exc.value.diagnostics[0].message


def test_warm_up_records_relabelled_as_profiling_are_refused(tmp_path: Path, registry: Path) -> None:
    recipe = write_recipe(registry)
    records = saved_records()
    for record in records:
        record["metadata"]["benchmark_phase"] = "profiling"  # the cold first requests now count
    with pytest.raises(AdapterError) as exc:
        adapt(artifacts(tmp_path, records=records), recipe, registry)
    assert refused_codes(exc) == ["ORV109"] and "12 completed profiling" in exc.value.diagnostics[0].message


def test_cancelled_records_counted_by_the_summary_are_refused(tmp_path: Path, registry: Path) -> None:
    recipe = write_recipe(registry)
    records = saved_records()
    records[-1]["metadata"]["was_cancelled"] = True  # the summary still counts 10 completed
    with pytest.raises(AdapterError) as exc:
        adapt(artifacts(tmp_path, records=records), recipe, registry)
    assert refused_codes(exc) == ["ORV109"] and "1 cancelled" in exc.value.diagnostics[0].message
    summary = saved_summary()
    summary["was_cancelled"] = True
    with pytest.raises(AdapterError) as exc:
        adapt(artifacts(tmp_path / "b", summary=summary), recipe, registry)
    assert "cancelled before it finished" in exc.value.diagnostics[0].message


def test_a_run_without_streaming_is_refused(registry: Path) -> None:
    recipe = write_recipe(registry)
    with pytest.raises(AdapterError) as exc:
        adapt(AIPERF / "non-streaming", recipe, registry)
    assert refused_codes(exc)[0] == "ORV108" and "without --streaming" in exc.value.diagnostics[0].message


def test_a_truncated_records_file_is_a_one_line_error(
    tmp_path: Path, registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = write_recipe(registry)
    folder = artifacts(tmp_path)
    raw = (folder / aiperf.RECORDS).read_bytes()
    (folder / aiperf.RECORDS).write_bytes(raw[: len(raw) - 900])  # cut inside the last record
    code, out, err = add_run(capsys, registry, "--from", "aiperf", str(folder), "--recipe", str(recipe))
    assert code == 1 and out == "" and "Traceback" not in err
    findings = [line for line in err.splitlines() if "ORV1" in line]
    assert len(findings) == 1 and "ORV101" in findings[0] and "line 12" in findings[0]


def test_a_missing_summary_is_named_and_report_supplies_it(
    tmp_path: Path, registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = write_recipe(registry)
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(STREAMING / aiperf.RECORDS, lone / aiperf.RECORDS)
    code, _, err = add_run(capsys, registry, "--from", "aiperf", str(lone / aiperf.RECORDS), "--recipe", str(recipe))
    assert code == 1 and "ORV108" in err and "--report PATH" in err
    code, out, err = add_run(
        capsys,
        registry,
        "--from",
        "aiperf",
        str(lone / aiperf.RECORDS),
        "--recipe",
        str(recipe),
        "--report",
        str(STREAMING / aiperf.SUMMARY),
    )
    assert code == 0 and out.startswith("sha256:"), err


def test_a_summary_linked_into_the_folder_is_not_followed(
    tmp_path: Path, registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = write_recipe(registry)
    folder = artifacts(tmp_path)
    (folder / aiperf.SUMMARY).unlink()
    (folder / aiperf.SUMMARY).symlink_to(STREAMING / aiperf.SUMMARY)
    code, _, err = add_run(capsys, registry, str(folder), "--recipe", str(recipe))
    assert code == 1 and "ORV114" in err


def test_a_run_of_another_model_is_an_identity_error(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(
        registry,
        id="glm-5-3-flash-h100-vllm-fp8-single-stream-256-c1",
        model="glm-5.3-flash",
        checkpoint="zai-org/GLM-5.3-Flash",
    )
    code, _, err = add_run(capsys, registry, str(STREAMING), "--recipe", str(recipe))
    assert code == 1 and "ORV226" in err and "Qwen/Qwen3.8-27B" in err


def test_a_recipe_at_another_concurrency_is_refused(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = write_recipe(
        registry, id="qwen3-8-27b-h100-vllm-fp8-random-512-64-c4", workload="random-512-64", concurrency=4
    )
    code, _, err = add_run(capsys, registry, str(STREAMING), "--recipe", str(recipe))
    assert code == 1 and "ORV206" in err and "serving.concurrency" in err


# --------------------------------------------------------------------------- any OpenAI-compatible server


def test_a_vllm_client_result_backs_an_exllamav3_recipe(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TabbyAPI (ExLlamaV3) measured with `vllm bench serve --backend openai-chat`: the run's engine is the
    recipe's, the client is only the tool; identity and concurrency are what must agree."""
    recipe = write_recipe(
        registry,
        id="qwen3-8-27b-h100-exllamav3-fp8-random-512-64-c1",
        engine="exllamav3",
        version="0.0.18",
        workload="random-512-64",
        checkpoint="Qwen/Qwen3.8-27B-FP8",
    )
    result = str(TOOLS / "vllm" / "serve-detailed.json")
    code, _, err = add_run(capsys, registry, "--from", "vllm", result, "--recipe", str(recipe))
    assert code == 1 and "tool_version" in err  # the client's own version is not the engine's: say it
    code, out, err = add_run(
        capsys,
        registry,
        "--from",
        "vllm",
        result,
        "--recipe",
        str(recipe),
        "--tool-version",
        "0.11.0",
        "--write-recipe",
    )
    assert code == 0, err
    stored = json.loads((registry / "runs" / out.strip()[7:9] / f"{out.strip()[7:]}.json").read_text())
    assert stored["software"]["engine"] == {"name": "exllamav3", "version": "0.0.18"}
    assert stored["tool"]["name"] == "vllm" and stored["tool"]["version"] == "0.11.0"
    result_check = run(Config(root=str(registry), skip_boards=True))
    assert [d for d in result_check.diagnostics if d.severity.value == "error"] == []
    snapshot = assemble_loaded(str(registry), load_tree(str(registry)), Collector())
    assert tiers.derive(snapshot, result_check.diagnostics)[str(recipe.relative_to(registry))].tier == "T2"


def test_a_client_result_at_another_concurrency_does_not_back_it(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = write_recipe(
        registry,
        id="qwen3-8-27b-h100-exllamav3-fp8-random-512-64-c8",
        engine="exllamav3",
        version="0.0.18",
        workload="random-512-64",
        checkpoint="Qwen/Qwen3.8-27B-FP8",
        concurrency=8,
    )
    code, _, err = add_run(
        capsys,
        registry,
        "--from",
        "vllm",
        str(TOOLS / "vllm" / "serve-detailed.json"),
        "--recipe",
        str(recipe),
        "--tool-version",
        "0.11.0",
    )
    assert code == 1 and "ORV206" in err


@pytest.mark.parametrize("engine", ["exllamav3", "llama-server"])
def test_reproduce_measures_a_server_without_a_benchmark_with_vllms_client(
    registry: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    recipe = write_recipe(
        registry,
        id=f"qwen3-8-27b-h100-{engine}-fp8-single-stream-256-c1",
        engine=engine,
        version="0.0.18" if engine == "exllamav3" else "b6800",
    )
    assert main(["reproduce", "--root", str(registry), str(recipe)]) == 0
    out = capsys.readouterr().out
    assert (
        "vllm bench serve --backend openai-chat --base-url http://127.0.0.1:8000 --endpoint "
        "/v1/chat/completions --model Qwen/Qwen3.8-27B --dataset-name random" in out
    )
    assert "--max-concurrency 1" in out and "--save-result --save-detailed" in out
    assert "orv add-run result.json --from vllm --tool-version VLLM_VERSION --recipe" in out


# --------------------------------------------------------------------------- hostile input


ODD = [None, True, 0, -1, 1.5, 2**64, 1e300, "", "x", [], {}, [None], {"value": -5}, {"value": "nan"}]


@settings(max_examples=fuzz_examples(30), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_mutation_of_aiperfs_files_gives_a_run_or_a_finding(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    root = make_registry(tmp_path_factory.mktemp("fuzz") / "registry")
    recipe = write_recipe(root)
    records, summary = saved_records(), saved_summary()
    for _ in range(data.draw(st.integers(1, 3))):
        target = data.draw(st.sampled_from(["record", "summary"]))
        doc: Any = records[data.draw(st.integers(0, len(records) - 1))] if target == "record" else summary
        odd_edit(data, doc, ODD)
    folder = artifacts(tmp_path_factory.mktemp("a"), records=records, summary=summary)
    try:
        adapt(folder, recipe, root)
    except AdapterError as exc:
        for d in exc.diagnostics:
            assert d.code != "ORV900" and d.line >= 1 and d.col >= 1 and d.hint


def test_the_records_must_prove_the_recipes_workload(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """256/256-token requests for a recipe naming the ~512/64 workload: ORV241 from the run's own lengths, said
    by add-run before anything is stored (issue 52), as `orv check` would say it."""
    recipe = write_recipe(registry, id="qwen3-8-27b-h100-vllm-fp8-random-512-64-c1", workload="random-512-64")
    code, _, err = add_run(capsys, registry, str(STREAMING), "--recipe", str(recipe), "--write-recipe")
    assert code == 1 and err.count("ORV241 error") == 2 and "nothing was stored" in err
    assert not list((registry / "runs").rglob("*.json"))
    result = run(Config(root=str(registry), skip_boards=True))
    assert "ORV241" not in {d.code for d in result.diagnostics}  # nothing stored, nothing to refuse


def test_the_run_is_dated_by_aiperfs_own_start_time_and_says_so(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AIPerf's summary states when the profiling began (`start_time`): that is the run's date, as vLLM's
    `date` and llama-bench's `test_time` are, and a recipe saying otherwise is told (issue 52)."""
    recipe = write_recipe(registry)
    recipe.write_text(recipe.read_text(encoding="utf-8").replace('measured: "2026-12-05"', 'measured: "2026-12-01"'))
    code, out, err = add_run(capsys, registry, str(STREAMING), "--recipe", str(recipe))
    assert code == 0, err
    digest = out.strip().removeprefix("sha256:")
    stored = json.loads((registry / "runs" / digest[:2] / f"{digest}.json").read_text(encoding="utf-8"))
    assert stored["measured_at"] == "2026-12-05T06:55:59"
    assert "aiperf output states measured_at = '2026-12-05T06:55:59'" in err


def test_aiperfs_output_throughput_is_checked_within_its_windows_rounding(tmp_path: Path, registry: Path) -> None:
    recipe = write_recipe(registry)
    summary = saved_summary()
    printed = summary["output_token_throughput"]["avg"]
    window = 67.667964  # the summary's end_time − start_time
    assert abs(printed - 2560 / window) / printed < 1e-6 / window  # AIPerf's own figure passes
    summary["output_token_throughput"]["avg"] = printed * 1.0001  # a 0.01% flattering edit
    with pytest.raises(AdapterError) as exc:
        adapt(artifacts(tmp_path, summary=summary), recipe, registry)
    assert refused_codes(exc) == ["ORV109"] and "output_token_throughput" in exc.value.diagnostics[0].message


def test_an_artifact_folder_named_through_a_link_is_refused(
    tmp_path: Path, registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = write_recipe(registry)
    link = tmp_path / "link"
    link.symlink_to(STREAMING)
    code, _, err = add_run(capsys, registry, str(link), "--recipe", str(recipe))
    assert code == 1 and "ORV114" in err and str(STREAMING) in err


def test_the_older_summary_layout_states_model_and_concurrency_too(tmp_path: Path, registry: Path) -> None:
    """AIPerf 0.1 (GitHub @db4f6397) wrote the user config as endpoint.model_names and loadgen.concurrency."""
    recipe = write_recipe(registry)
    summary = saved_summary()
    summary["input_config"] = {
        "endpoint": {"model_names": ["Qwen/Qwen3.8-27B"], "streaming": True},
        "loadgen": {"concurrency": 1},
    }
    doc = adapt(artifacts(tmp_path, summary=summary), recipe, registry).document
    assert doc["checkpoint"] == "Qwen/Qwen3.8-27B" and doc["serving"]["concurrency"] == 1
