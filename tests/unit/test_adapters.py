"""`orv add-run --from`: real tool outputs become run files whose recomputed headline matches the tool's own.

Fixtures (tests/fixtures/tools/, written by make_fixtures.py from the tools' own output code):
Megatron-LM and NeMo training logs, vLLM `bench serve` result JSON (detailed, summary-only and the
older benchmark_serving.py layout), SGLang `bench_serving` JSONL (top-level and nested details).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.testing.paths import CASES
from tests.testing.registry import INFERENCE_RECIPE_TEXT, TOOLS, VALID_TRAINING_RECIPE, make_registry
from validator.adapters import Source, convert, metadata
from validator.cli import main
from validator.errors import AdapterError
from validator.hashing import content_address
from validator.science.throughput import inference_facts, training_facts

BASE = str(CASES / "_base")
TRAINING_RECIPE = VALID_TRAINING_RECIPE
INFERENCE_RECIPE = INFERENCE_RECIPE_TEXT


@pytest.fixture
def inference_recipe(tmp_path: Path) -> str:
    path = tmp_path / "qwen3-8-27b-h100-vllm-fp8-c1.yaml"
    path.write_text(INFERENCE_RECIPE, encoding="utf-8")
    return str(path)


def adapt(fmt: str, raw: bytes, recipe: str | None, name: str = "output", **flags: Any) -> Any:
    return convert(fmt, Source(name, raw), metadata(fmt, BASE, recipe, flags))


def codes(exc: pytest.ExceptionInfo[AdapterError]) -> list[tuple[str, int]]:
    return [(d.code, d.line) for d in exc.value.diagnostics]


# --------------------------------------------------------------------------- Megatron-LM


def printed_megatron(text: str) -> list[tuple[int, float, float]]:
    """(iteration, elapsed ms, lm loss) exactly as Megatron printed them."""
    pattern = re.compile(r"iteration\s+(\d+)/.*elapsed time per iteration \(ms\): ([\d.]+) .*lm loss: ([\dE.+-]+)")
    return [(int(m[1]), float(m[2]), float(m[3])) for m in pattern.finditer(text)]


def test_megatron_log_becomes_every_optimizer_step_with_the_printed_figures() -> None:
    raw = (TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log").read_bytes()
    doc = adapt("megatron", raw, str(TRAINING_RECIPE)).document
    printed = printed_megatron(raw.decode())
    assert [s["step"] for s in doc["samples"]] == [p[0] for p in printed] == list(range(1, 25))
    assert [s["time_s"] for s in doc["samples"]] == pytest.approx([p[1] / 1000 for p in printed], rel=1e-12)
    assert [s["loss"] for s in doc["samples"]] == [p[2] for p in printed]
    assert {s["tokens"] for s in doc["samples"]} == {128 * 8192}  # global batch x seq_length (arguments)
    # The headline, from the printed per-iteration times after the workload's 2 warm-up steps:
    expected = 22 * 128 * 8192 / (sum(p[1] for p in printed[2:]) / 1000) / 8
    facts = training_facts(doc["samples"], doc["hardware"]["count"], 2)
    assert facts.headline["tokens_per_s_per_gpu"] == pytest.approx(expected, rel=1e-7)
    assert doc["summary"]["tokens_per_s_per_gpu"] == pytest.approx(expected, rel=1e-7)
    assert abs(expected - 1480.4) / expected < 0.01  # the recipe's claim (seed 000's row)
    # What the log states about itself: layout, world size, first timestamp.
    assert doc["layout"] == {
        "tp": 1,
        "pp": 4,
        "dp": 2,
        "cp": 1,
        "vpp": 1,
        "layer_split": [16, 17, 17, 14],
        "ep": 1,
        "etp": 1,
    }
    assert doc["hardware"] == {"gpu": "h100", "count": 8}
    assert doc["measured_at"] == "2026-10-18T09:14:05"
    assert doc["tool"] == {"name": "megatron-lm", "version": "0.30.0", "format": "megatron-lm-training-log"}


def test_older_megatron_lines_without_timestamp_or_batch_use_consumed_samples() -> None:
    # Megatron-LM before 0.9 printed neither the timestamp nor `global batch size`; the batch is then
    # the growth of `consumed samples`, and the date is the recipe's.
    text = (TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log").read_text()
    text = re.sub(r" \[[0-9-]+ [0-9:.]+\]", "", text)
    text = re.sub(r" global batch size: +128 \|", "", text)
    text = re.sub(r"  global_batch_size \.+ 128\n", "", text)
    assert "global batch" not in text and "global_batch" not in text
    doc = adapt("megatron", text.encode(), str(TRAINING_RECIPE)).document
    assert {s["tokens"] for s in doc["samples"]} == {128 * 8192}
    assert doc["measured_at"] == "2026-10-18"


def test_megatron_nan_iterations_are_recorded_as_diverged_steps() -> None:
    # bf16 (core_v0.14.0 `training_log`): a NaN loss is averaged, `nan > 0.0` is false, so the line
    # has no `lm loss` and shows `grad norm: nan` (fixture: make_fixtures.py, `srun -l` prefixes).
    doc = adapt("megatron", (TOOLS / "megatron" / "nan.log").read_bytes(), str(TRAINING_RECIPE)).document
    assert doc["samples"][76] == {"step": 77, "time_s": doc["samples"][76]["time_s"], "tokens": 1048576, "loss": "nan"}
    assert all(isinstance(s["loss"], float) for s in doc["samples"][:76])
    assert {s["loss"] for s in doc["samples"][76:]} == {"nan"}
    assert doc["measured_at"] == "2026-10-18T09:14:05"  # core_v0.14.0 prints no microseconds


def edited_megatron(old: str, new: str, count: int = 1) -> bytes:
    text = (TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log").read_text()
    assert old in text
    return text.replace(old, new, count).encode()


def line_of(raw: bytes, needle: str) -> int:
    return raw.decode().split("\n").index(next(l for l in raw.decode().split("\n") if needle in l)) + 1


@pytest.mark.parametrize(
    "old,new,code,needle",
    [
        (
            "  log_interval .................................... 1",
            "  log_interval .................................... 10",
            "ORV109",
            "log_interval",
        ),
        (
            "  seq_length ...................................... 8192",
            "  seq_length ...................................... 4096",
            "ORV109",
            "seq_length",
        ),
        (
            "  fp8 ............................................. None",
            "  fp8 ............................................. e4m3",
            "ORV109",
            "  fp8 ",
        ),
        (
            "global batch size:   128 | lm loss: 1.946",
            "global batch size:    64 | lm loss: 1.946",
            "ORV109",
            "global batch size:    64",
        ),
        ("iteration        7/      24", "iteration        9/      24", "ORV109", "iteration        9/"),
        ("| lm loss: 1.946", "| mtp_1 loss: 1.946", "ORV108", "mtp_1 loss"),
    ],
)
def test_megatron_logs_that_are_not_evidence_for_the_workload_are_refused(
    old: str, new: str, code: str, needle: str
) -> None:
    raw = edited_megatron(old, new)
    with pytest.raises(AdapterError) as exc:
        adapt("megatron", raw, str(TRAINING_RECIPE))
    assert (code, line_of(raw, needle)) in codes(exc)
    assert all(d.hint for d in exc.value.diagnostics)


def test_megatron_layout_in_the_log_wins_over_the_recipe_with_a_note() -> None:
    raw = edited_megatron(
        "  tensor_model_parallel_size ...................... 1", "  tensor_model_parallel_size ...................... 2"
    )
    # the same 8 GPUs as tp2 × pp4 × dp1 (Megatron derives dp from the world size)
    raw = raw.replace(
        b"data_parallel_size .............................. 2", b"data_parallel_size .............................. 1"
    )
    converted = adapt("megatron", raw, str(TRAINING_RECIPE))
    assert converted.document["layout"]["tp"] == 2
    assert any("layout.tp = 2; the recipe says 1" in n for n in converted.notes)


def test_a_megatron_world_size_that_is_not_its_layouts_product_is_refused() -> None:
    raw = edited_megatron(
        "  world_size ...................................... 8",
        "  world_size ...................................... 16",
    )
    with pytest.raises(AdapterError) as exc:
        adapt("megatron", raw, str(TRAINING_RECIPE))
    assert ("ORV109", line_of(raw, "  world_size ..")) in codes(exc)
    assert "1 × 4 × 1 × 2 = 8" in str([d.message for d in exc.value.diagnostics])


def test_megatron_log_without_iterations_is_refused() -> None:
    with pytest.raises(AdapterError) as exc:
        adapt("megatron", b"nothing to see\n", str(TRAINING_RECIPE))
    assert ("ORV108", 1) in codes(exc)


# --------------------------------------------------------------------------- NeMo


def test_nemo_log_matches_its_printed_per_step_throughput() -> None:
    raw = (TOOLS / "nemo" / "qwen3-8-27b-nemo.log").read_bytes()
    converted = adapt("nemo", raw, str(TRAINING_RECIPE), tool_version="2.4.0")
    doc = converted.document
    printed = [
        (int(m[1]), float(m[2]), float(m[3]))
        for m in re.finditer(
            r"global_step: (\d+) \| reduced_train_loss: ([\d.]+) \| train_step_timing in s: ([\d.]+)", raw.decode()
        )
    ]
    rates = [float(r) for r in re.findall(r"tokens_per_sec_per_gpu: ([\d.e+]+)", raw.decode())]
    assert [s["step"] for s in doc["samples"]] == [g + 1 for g, _, _ in printed] == list(range(1, 25))
    assert [s["time_s"] for s in doc["samples"]] == [t for _, _, t in printed]
    for sample, rate in zip(doc["samples"], rates):  # NeMo prints 4 significant digits
        assert sample["tokens"] / sample["time_s"] / 8 == pytest.approx(rate, rel=1e-3)
    assert doc["summary"]["tokens_per_s_per_gpu"] == pytest.approx(sum(rates[2:]) / 22)
    recomputed = training_facts(doc["samples"], 8, 2).headline["tokens_per_s_per_gpu"]
    assert recomputed == pytest.approx(doc["summary"]["tokens_per_s_per_gpu"], rel=1e-3)
    assert doc["tool"]["name"] == "nemo" and doc["tool"]["version"] == "2.4.0"


def test_nemo_wrong_gpu_count_contradicts_the_printed_throughput() -> None:
    raw = (TOOLS / "nemo" / "qwen3-8-27b-nemo.log").read_bytes()
    with pytest.raises(AdapterError) as exc:
        adapt("nemo", raw, str(TRAINING_RECIPE), tool_version="2.4.0", gpus=4)
    assert ("ORV109", 3) in codes(exc)
    assert "4 GPUs" in exc.value.diagnostics[0].message


def test_nemo_needs_a_tool_version_the_recipe_does_not_have() -> None:
    with pytest.raises(AdapterError) as exc:
        adapt("nemo", (TOOLS / "nemo" / "qwen3-8-27b-nemo.log").read_bytes(), str(TRAINING_RECIPE))
    assert any("tool_version" in d.message and "--tool-version" in d.hint for d in exc.value.diagnostics)


# --------------------------------------------------------------------------- vLLM


def console_value(console: str, label: str) -> str:
    return re.search(re.escape(label) + r"\s+(\S+)", console)[1]  # type: ignore[index]


def test_vllm_detailed_result_recomputes_to_what_vllm_printed(inference_recipe: str) -> None:
    raw = (TOOLS / "vllm" / "serve-detailed.json").read_bytes()
    saved = json.loads(raw)
    console = (TOOLS / "vllm" / "serve-detailed.console.txt").read_text()
    doc = adapt("vllm", raw, inference_recipe).document
    assert len(doc["samples"]) == saved["completed"] == 8  # the failed request is left out, as vLLM does
    facts = inference_facts(doc["samples"], doc["duration_s"])
    h = facts.headline
    # Equal to the saved figures (full precision) and to the printed ones (two decimals).
    for key, name, label in (
        ("mean_ttft_ms", "ttft_ms", "Mean TTFT (ms):"),
        ("mean_tpot_ms", "tpot_ms", "Mean TPOT (ms):"),
        ("output_throughput", "output_tok_s", "Output token throughput (tok/s):"),
    ):
        assert h[name] == pytest.approx(saved[key], rel=1e-7)
        assert f"{h[name]:.2f}" == console_value(console, label)
    assert h["decode_tok_s"] == pytest.approx(1000 / saved["mean_tpot_ms"], rel=1e-7)
    assert doc["summary"] == {
        "ttft_ms": saved["mean_ttft_ms"],
        "tpot_ms": saved["mean_tpot_ms"],
        "output_tok_s": saved["output_throughput"],
        "decode_tok_s": 1000 / saved["mean_tpot_ms"],
    }
    assert doc["serving"] == {"context_len": 8192, "concurrency": 1}
    assert doc["measured_at"] == "2026-10-18T10:15:03" and doc["checkpoint"] == "Qwen/Qwen3.8-27B-FP8"
    assert doc["samples"][0]["start_ms"] == 0.0 and doc["samples"][1]["start_ms"] > 0


def test_vllm_summary_only_result_has_no_samples(inference_recipe: str) -> None:
    converted = adapt("vllm", (TOOLS / "vllm" / "serve-summary-only.json").read_bytes(), inference_recipe)
    assert "samples" not in converted.document
    assert set(converted.document["summary"]) == {"ttft_ms", "tpot_ms", "output_tok_s", "decode_tok_s"}
    assert any("tier T1 only" in n and "--save-detailed" in n for n in converted.notes)


def test_vllm_legacy_result_rebuilds_e2e_from_ttft_and_itls(inference_recipe: str) -> None:
    raw = (TOOLS / "vllm" / "benchmark_serving-legacy.json").read_bytes()
    saved = json.loads(raw)
    converted = adapt("vllm", raw, inference_recipe)
    h = inference_facts(converted.document["samples"], converted.document["duration_s"]).headline
    assert h["ttft_ms"] == pytest.approx(saved["mean_ttft_ms"], rel=1e-7)
    # Without recorded latencies the stream's tail after the last token is missing: TPOT is a
    # little lower than vLLM's, well inside the 2% the adapter allows (docs/metrics.md).
    assert h["tpot_ms"] < saved["mean_tpot_ms"]
    assert h["tpot_ms"] == pytest.approx(saved["mean_tpot_ms"], rel=1e-3)
    assert any("TTFT + sum of inter-token latencies" in n for n in converted.notes)


def test_vllm_result_whose_means_disagree_with_its_requests_is_refused(inference_recipe: str) -> None:
    saved = json.loads((TOOLS / "vllm" / "serve-detailed.json").read_bytes())
    saved["mean_ttft_ms"] *= 0.8  # a flattering edit
    raw = json.dumps(saved, indent=1).encode()
    with pytest.raises(AdapterError) as exc:
        adapt("vllm", raw, inference_recipe)
    line = raw.decode().split("\n").index(next(l for l in raw.decode().split("\n") if '"mean_ttft_ms"' in l)) + 1
    assert codes(exc) == [("ORV109", line)]


def test_vllm_truncated_per_request_arrays_are_refused(inference_recipe: str) -> None:
    saved = json.loads((TOOLS / "vllm" / "serve-detailed.json").read_bytes())
    saved["ttfts"] = saved["ttfts"][:-1]
    with pytest.raises(AdapterError) as exc:
        adapt("vllm", json.dumps(saved).encode(), inference_recipe)
    assert [c for c, _ in codes(exc)] == ["ORV109"]
    assert "different lengths" in exc.value.diagnostics[0].message


def test_vllm_syntax_error_is_located(inference_recipe: str) -> None:
    with pytest.raises(AdapterError) as exc:
        adapt("vllm", b'{\n  "duration": 1.0,\n  "completed": }\n', inference_recipe)
    assert exc.value.diagnostics[0].code == "ORV101"
    assert (exc.value.diagnostics[0].line, exc.value.diagnostics[0].col) == (3, 16)


def test_vllm_without_recipe_needs_each_missing_field_named(tmp_path: Path) -> None:
    with pytest.raises(AdapterError) as exc:
        adapt("vllm", (TOOLS / "vllm" / "serve-detailed.json").read_bytes(), None, model="qwen3.8-27b")
    missing = {d.message.split("`")[1] for d in exc.value.diagnostics}
    assert missing == {"gpu", "gpus", "software", "quant", "measured_by", "tool_version"}


def test_a_training_recipe_cannot_describe_a_vllm_run() -> None:
    with pytest.raises(AdapterError) as exc:
        adapt("vllm", (TOOLS / "vllm" / "serve-detailed.json").read_bytes(), str(TRAINING_RECIPE))
    assert codes(exc) == [("ORV109", 1)]


# --------------------------------------------------------------------------- SGLang


def test_sglang_file_with_two_runs_needs_a_record_choice(inference_recipe: str) -> None:
    raw = (TOOLS / "sglang" / "bench_serving.jsonl").read_bytes()
    with pytest.raises(AdapterError) as exc:
        adapt("sglang", raw, inference_recipe, tool_version="0.5.4")
    assert codes(exc) == [("ORV109", 2)] and "--record" in exc.value.diagnostics[0].hint
    with pytest.raises(AdapterError) as exc:
        adapt("sglang", raw, inference_recipe, tool_version="0.5.4", record=3)
    assert codes(exc) == [("ORV109", 1)]


@pytest.mark.parametrize("name,record", [("bench_serving.jsonl", 2), ("bench_serving-details.jsonl", None)])
def test_sglang_result_recomputes_to_what_sglang_printed(inference_recipe: str, name: str, record: int | None) -> None:
    raw = (TOOLS / "sglang" / name).read_bytes()
    saved = json.loads(raw.decode().strip().split("\n")[(record or 1) - 1])  # Infinity parses, as in SGLang
    converted = adapt("sglang", raw, inference_recipe, tool_version="0.5.4", record=record)
    doc = converted.document
    details = saved.get("details", saved)
    assert len(doc["samples"]) == saved["completed"] == sum(1 for e in details["errors"] if not e)
    h = inference_facts(doc["samples"], doc["duration_s"]).headline
    assert h["ttft_ms"] == pytest.approx(saved["mean_ttft_ms"], rel=1e-7)
    assert h["output_tok_s"] == pytest.approx(saved["output_throughput"], rel=1e-7)
    assert f"{h['ttft_ms']:.2f}" == f"{saved['mean_ttft_ms']:.2f}"  # SGLang prints two decimals
    # e2e is rebuilt from TTFT + ITLs (SGLang saves no per-request latency): TPOT within 0.1%.
    assert h["tpot_ms"] == pytest.approx(saved["mean_tpot_ms"], rel=1e-3)
    assert doc["tool"] == {"name": "sglang", "version": "0.5.4", "format": "sglang-bench-serving-jsonl"}
    assert doc["measured_at"] == "2026-10-18"  # SGLang records no date: the recipe's


def test_sglang_concurrency_in_the_output_wins_over_the_recipe(inference_recipe: str) -> None:
    raw = (TOOLS / "sglang" / "bench_serving.jsonl").read_bytes()
    converted = adapt("sglang", raw, inference_recipe, tool_version="0.5.4", record=1)
    assert converted.document["serving"]["concurrency"] == 4
    assert any("serving.concurrency = 4; the recipe says 1" in n for n in converted.notes)


# --------------------------------------------------------------------------- the command line


def test_add_run_from_megatron_stores_a_content_addressed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    log = TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"
    code = main(
        [
            "add-run",
            "--root",
            str(root),
            "--from",
            "megatron",
            str(log),
            "--recipe",
            str(TRAINING_RECIPE),
            "--measured-by",
            "lab-a",
            "--tool-version",
            "0.30.0",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0 and out.startswith("sha256:")
    digest = out.strip().split(":")[1]
    stored = root / "runs" / digest[:2] / f"{digest}.json"
    assert content_address(stored.read_bytes()) == digest
    assert json.loads(stored.read_bytes())["measured_by"] == "lab-a"
    assert "stored: runs/" in err


def test_add_run_reports_adapter_problems_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    bad = tmp_path / "result.json"
    bad.write_text('{"duration": 12.5,', encoding="utf-8")
    code = main(["add-run", "--root", str(root), "--from", "vllm", str(bad), "--model", "qwen3.8-27b"])
    err = capsys.readouterr().err
    assert code == 1 and "ORV101" in err and "Traceback" not in err
    assert not any((root / "runs").iterdir())


def test_metadata_flags_without_from_are_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    doc = tmp_path / "run.json"
    doc.write_text("{}", encoding="utf-8")
    assert main(["add-run", "--root", str(root), str(doc), "--model", "qwen3.8-27b"]) == 2
    assert "need --from" in capsys.readouterr().err


# --------------------------------------------------------------------------- no input makes an adapter raise

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=12,
)
VLLM_SAVED = json.loads((TOOLS / "vllm" / "serve-detailed.json").read_bytes())
MEGATRON_LINES = (TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log").read_text().split("\n")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(VLLM_SAVED)), JSON_VALUES, st.integers(0, 8), JSON_VALUES)
def test_a_damaged_vllm_result_is_a_finding_not_a_crash(key: str, value: Any, index: int, item: Any) -> None:
    saved = json.loads(json.dumps(VLLM_SAVED))
    saved[key] = value
    for array in ("ttfts", "itls", "output_lens", "errors"):  # and one damaged per-request entry
        if isinstance(saved.get(array), list) and index < len(saved[array]):
            saved[array][index] = item
            break
    meta = metadata(
        "vllm",
        BASE,
        None,
        {
            "model": "qwen3.8-27b",
            "gpu": "h100",
            "gpus": 1,
            "quant": "fp8",
            "measured_by": "x",
            "tool_version": "0.11.0",
        },
    )
    meta = meta.with_values(
        "flag", software={"engine": {"name": "vllm", "version": "0.11.0"}}, serving={"concurrency": 1}
    )
    try:
        convert("vllm", Source("r.json", json.dumps(saved).encode()), meta)
    except AdapterError as exc:
        # ORV1xx for a malformed file, ORV215/ORV216 for fields that contradict each other
        assert exc.diagnostics and all(
            d.code.startswith(("ORV1", "ORV215", "ORV216")) and d.hint for d in exc.diagnostics
        )


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(MEGATRON_LINES) - 1), st.text(max_size=40), st.booleans())
def test_a_damaged_megatron_log_is_a_finding_not_a_crash(index: int, junk: str, replace: bool) -> None:
    lines = list(MEGATRON_LINES)
    if replace:
        lines[index] = re.sub(r"[\d.E+-]+\s*\|", lambda _: junk + " |", lines[index], count=1)
    else:
        lines.insert(index, junk)
    try:
        adapt("megatron", "\n".join(lines).encode(), str(TRAINING_RECIPE))
    except AdapterError as exc:
        assert exc.diagnostics and all(d.code.startswith("ORV1") and d.hint for d in exc.diagnostics)
