"""No field of a run is taken on faith (issue 49): each forgery built as a pull request and gated as the Action
gates it (`orv check --base main` on a scratch registry repository), refused with a finding that names the
field and both values; each beside its honest twin, which passes.

The runs are vLLM results built request by request (tests/testing/serving.py) and converted by the vLLM
adapter, then edited as a contributor bypassing `orv add-run` would edit the stored file; `orv add-run`
itself refuses every one of them (the same functions, validator/science/consistency.py).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.testing.checking import check
from tests.testing.factories import registry_repo
from tests.testing.git import commit_all, git
from tests.testing.registry import TOOLS, make_registry
from tests.testing.serving import Request, convert_vllm, in_waves, serial, span_s, vllm_result
from validator.cli import main
from validator.diagnostics import Diagnostic
from validator.registry.store import store_run_document
from validator.science.throughput import inference_facts

# workloads the rows need beside the base catalog's, committed on main before the contributor branches
WORKLOADS = """
  prompts-128-64:
    name: Test ~128-token prompts, 64-token answers
    label: 128/64
    kind: inference
    dataset: {name: random}
    input_len: 128
    output_len: 64
    range_ratio: 0.8
    ignore_eos: true
    min_prompts: 8
  prompts-1024-64:
    name: Test 819-1,024-token prompts, 64-token answers
    label: 1024/64
    kind: inference
    dataset: {name: random}
    input_len: 1024
    output_len: 64
    range_ratio: 0.8
    ignore_eos: true
    min_prompts: 8
"""


def recipe_text(rid: str, digest: str, claimed: dict[str, float], gpus: int, concurrency: int, workload: str) -> str:
    figures = ", ".join(f"{k}: {round(v, 3)}" for k, v in sorted(claimed.items()))
    return (
        f"id: {rid}\nkind: inference\nmodel: qwen3.8-27b\nhardware: {{gpu: h100, count: {gpus}}}\n"
        f'author: ATTUNE\nmeasured: "2026-10-18"\nsoftware:\n  engine: {{name: vllm, version: "0.11.0"}}\n'
        f"quant: fp8\nserving: {{context_len: 8192, concurrency: {concurrency}}}\nworkload: {workload}\n"
        f"claimed: {{{figures}}}\nruns:\n  - sha256:{digest}\n"
    )


def scratch_repo(tmp_path: Path) -> Path:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    with (repo / "catalog" / "workloads.yaml").open("a", encoding="utf-8") as fh:
        fh.write(WORKLOADS)
    commit_all(repo, "workloads for the consistency rows")
    git(repo, "checkout", "-q", "-B", "pr", "main")
    return repo


@dataclass(frozen=True)
class RecipeSpec:
    path: Path
    rid: str
    gpus: int
    concurrency: int
    workload: str


def recipe_file(repo: Path, gpus: int, concurrency: int, workload: str) -> RecipeSpec:
    """The recipe's path, with a first text the adapter reads its metadata from (gpus, concurrency)."""
    rid = f"qwen3-8-27b-{gpus}x-h100-vllm-fp8-{workload}-c{concurrency}"
    path = repo / "recipes" / "inference" / "qwen3.8-27b" / f"{rid}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(recipe_text(rid, "0" * 64, {"decode_tok_s": 1.0}, gpus, concurrency, workload), encoding="utf-8")
    return RecipeSpec(path, rid, gpus, concurrency, workload)


def gate(repo: Path, recipe: RecipeSpec, document: dict[str, Any]) -> list[Diagnostic]:
    """Store the run file as it stands (no add-run), record it in its recipe with claims its own samples give,
    commit on the contributor branch and run the gate; the findings."""
    digest = store_run_document(str(repo), document).digest
    facts = inference_facts(document["samples"], document.get("duration_s"))
    claimed = {k: facts.headline[k] for k in ("decode_tok_s", "ttft_ms") if k in facts.headline}
    recipe.path.write_text(
        recipe_text(recipe.rid, digest, claimed, recipe.gpus, recipe.concurrency, recipe.workload), encoding="utf-8"
    )
    commit_all(repo, "a recipe with its run")
    found = list(check(repo).result.diagnostics)
    # and as action.yml runs it: `orv check --base main`, failing exactly when there is an error
    code = main(["check", "--root", str(repo), "--base", "main", "--widen", "--format", "github"])
    assert code == (1 if errors(found) else 0)
    return found


def errors(found: list[Diagnostic]) -> list[str]:
    return sorted({d.code for d in found if d.severity.value == "error"})


def message(found: list[Diagnostic], code: str) -> str:
    return next(d.message for d in found if d.code == code)


def forged_or_honest(
    tmp_path: Path,
    requests: list[Request],
    duration: float,
    stated: int,
    gpus: int = 1,
    workload: str = "random-512-64",
) -> list[Diagnostic]:
    repo = scratch_repo(tmp_path)
    recipe = recipe_file(repo, gpus, stated, workload)
    document = convert_vllm(vllm_result(requests, duration, stated), str(recipe.path))
    return gate(repo, recipe, document)


# --------------------------------------------------------------------------- row 1: serial under max_concurrency 16


@pytest.mark.git
def test_a_serial_run_stating_max_concurrency_16_with_a_short_duration_is_refused(tmp_path: Path) -> None:
    requests = serial(32)
    measured = span_s(requests)  # 50 s of requests one after another
    found = forged_or_honest(tmp_path, requests, measured * 205 / 3271, 16)  # the 3,271 s → 205 s
    assert {"ORV212", "ORV213"} <= set(errors(found))
    assert f"duration_s is {measured * 205 / 3271:.3f}" in message(found, "ORV212")
    assert f"span {measured:.3f} s" in message(found, "ORV212")
    assert "serving.concurrency is 16" in message(found, "ORV213") and "more than 1 in flight" in message(
        found, "ORV213"
    )


@pytest.mark.git
def test_its_honest_twin_at_concurrency_16_passes(tmp_path: Path) -> None:
    requests = in_waves(160, 16)  # 10 prompts per unit of concurrency, 16 in flight at once
    assert errors(forged_or_honest(tmp_path, requests, span_s(requests) + 0.002, 16)) == []


@pytest.mark.git
def test_serial_starts_with_their_true_duration_are_still_refused_under_16(tmp_path: Path) -> None:
    requests = serial(160)
    found = forged_or_honest(tmp_path, requests, span_s(requests) + 0.002, 16)
    assert errors(found) == ["ORV213"]


# --------------------------------------------------------------------------- row 5: ms entered as s on 8 GPUs


@pytest.mark.git
def test_an_8_gpu_run_whose_duration_is_3000_times_too_long_is_refused(tmp_path: Path) -> None:
    requests = serial(8)
    found = forged_or_honest(tmp_path, requests, span_s(requests) * 3000, 1, gpus=8)
    # ORV212 names the field against the measured span; ORV217 (boards/figures.py) refuses it too when the
    # rate it leaves would show as 0.00 on the boards — either alone would keep it off main
    assert "ORV212" in errors(found) and set(errors(found)) <= {"ORV212", "ORV217"}, errors(found)
    assert f"duration_s is {span_s(requests) * 3000:,.1f} s" in message(found, "ORV212")
    assert "milliseconds given as seconds" in message(found, "ORV212")


@pytest.mark.git
def test_the_same_8_gpu_run_with_its_duration_passes(tmp_path: Path) -> None:
    requests = serial(8)
    assert errors(forged_or_honest(tmp_path, requests, span_s(requests) + 0.002, 1, gpus=8)) == []


# --------------------------------------------------------------------------- row 6: input_lens rewritten


def short_prompts() -> list[Request]:
    """Measured on ~128-token prompts: 20 ms to the first token."""
    return serial(8, prompt=120, ttft_s=0.019)


def rewritten(result: dict[str, Any]) -> dict[str, Any]:
    forged = copy.deepcopy(result)
    forged["input_lens"] = [819 + 29 * i for i in range(len(forged["input_lens"]))]  # 819-1,022
    return forged


@pytest.mark.git
def test_input_lens_rewritten_is_refused_at_add_run_and_by_the_prefill_bound_at_the_gate(tmp_path: Path) -> None:
    repo = scratch_repo(tmp_path)
    recipe = recipe_file(repo, 1, 1, "prompts-1024-64")
    requests = short_prompts()
    forged = rewritten(vllm_result(requests, span_s(requests) + 0.002, 1))
    path = tmp_path / "result.json"
    path.write_text(json.dumps(forged), encoding="utf-8")
    code = main(["add-run", "--root", str(repo), "--from", "vllm", str(path), "--recipe", str(recipe.path)])
    assert code != 0  # the tool's own total_input_tokens contradicts Σ input_lens: ORV215
    # the contributor edits total_input_tokens too, or writes the run file by hand: the samples then
    # claim a prefill no H100 can compute
    forged["total_input_tokens"] = sum(forged["input_lens"])
    found = gate(repo, recipe, convert_vllm(forged, str(recipe.path)))
    assert errors(found) == ["ORV513"]
    assert "prefill_tok_s recomputed from the run's raw samples = 4" in message(found, "ORV513")
    assert "= 46,314.5 tok/s" in message(found, "ORV513")  # ~920 tokens in 19-21 ms
    assert "= 42,513.3 tok/s" in message(found, "ORV513")  # 989.4 TFLOP/s × 2 (fp8) × 1.1 ÷ (2 × 25.6B)


def test_the_tools_total_input_tokens_names_both_values(tmp_path: Path) -> None:
    from validator.adapters import Source, convert, metadata
    from validator.errors import AdapterError

    root = make_registry(tmp_path / "r")
    recipe = recipe_file(root, 1, 1, "random-512-64")
    requests = short_prompts()
    forged = rewritten(vllm_result(requests, span_s(requests) + 0.002, 1))
    with pytest.raises(AdapterError) as exc:
        convert(
            "vllm", Source("r.json", json.dumps(forged).encode()), metadata("vllm", str(root), str(recipe.path), {})
        )
    (finding,) = [d for d in exc.value.diagnostics if d.code == "ORV215"]
    assert finding.message == "`total_input_tokens` is 981 but Σ `input_lens` over the 8 completed requests is 7364"


@pytest.mark.git
def test_the_honest_short_prompt_run_passes_on_its_own_workload(tmp_path: Path) -> None:
    requests = short_prompts()
    assert errors(forged_or_honest(tmp_path, requests, span_s(requests) + 0.002, 1, workload="prompts-128-64")) == []


# --------------------------------------------------------------------------- row 7: e2e_ms 0 in a run document


def honest_document(tmp_path: Path, repo: Path) -> tuple[dict[str, Any], RecipeSpec]:
    recipe = recipe_file(repo, 1, 1, "random-512-64")
    requests = serial(8)
    return convert_vllm(vllm_result(requests, span_s(requests) + 0.002, 1), str(recipe.path)), recipe


@pytest.mark.git
def test_a_run_document_with_e2e_0_on_half_its_requests_is_refused_by_add_run_and_the_gate(tmp_path: Path) -> None:
    repo = scratch_repo(tmp_path)
    document, recipe = honest_document(tmp_path, repo)
    for sample in document["samples"][::2]:
        sample["e2e_ms"] = 0
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["add-run", "--root", str(repo), str(path)]) != 0  # ORV214, not stored
    assert not list((repo / "runs").glob("*/*.json"))[1:]  # only main's training run
    found = gate(repo, recipe, document)
    assert "ORV214" in errors(found)
    assert document["samples"][0]["ttft_ms"] == 60.0
    assert "request 0: e2e_ms is 0 but its ttft_ms is 60 and it produced 64 tokens" in message(found, "ORV214")


@pytest.mark.git
def test_the_same_run_document_unedited_is_stored_and_passes(tmp_path: Path) -> None:
    repo = scratch_repo(tmp_path)
    document, recipe = honest_document(tmp_path, repo)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["add-run", "--root", str(repo), str(path)]) == 0
    assert errors(gate(repo, recipe, document)) == []


def test_the_vllm_adapter_refuses_a_latency_below_its_first_token_rather_than_clamping(tmp_path: Path) -> None:
    from validator.adapters import Source, convert, metadata
    from validator.errors import AdapterError

    root = make_registry(tmp_path / "r")
    recipe = recipe_file(root, 1, 1, "random-512-64")
    requests = serial(8)
    result = vllm_result(requests, span_s(requests) + 0.002, 1)
    result["latencies"][2] = 0.0
    with pytest.raises(AdapterError) as exc:
        convert(
            "vllm", Source("r.json", json.dumps(result).encode()), metadata("vllm", str(root), str(recipe.path), {})
        )
    (finding,) = [d for d in exc.value.diagnostics if d.code == "ORV216"]
    assert "request 2: `latencies` holds 0.0 s" in finding.message


# --------------------------------------------------------------------------- row 15: AIPerf output inflated


AIPERF = TOOLS / "aiperf" / "streaming"


def test_aiperf_output_tokens_inflated_with_the_summary_edited_to_match_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "r")
    recipe = root / "recipes" / "inference" / "qwen3.8-27b" / "qwen3-8-27b-h100-vllm-fp8-single-stream-256-c1.yaml"
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(
        "id: qwen3-8-27b-h100-vllm-fp8-single-stream-256-c1\nkind: inference\nmodel: qwen3.8-27b\n"
        'checkpoint: Qwen/Qwen3.8-27B\nhardware: {gpu: h100, count: 1}\nauthor: ATTUNE\nmeasured: "2026-12-05"\n'
        'software:\n  engine: {name: vllm, version: "0.11.0"}\nquant: fp8\n'
        "serving: {context_len: 8192, concurrency: 1}\nworkload: single-stream-256\nclaimed: {}\nruns: []\n",
        encoding="utf-8",
    )
    records = [json.loads(line) for line in (AIPERF / "profile_export.jsonl").read_text().splitlines() if line.strip()]
    summary = json.loads((AIPERF / "profile_export_aiperf.json").read_text())
    profiling = [r for r in records if r["metadata"]["benchmark_phase"] == "profiling"]
    before = sum(r["metrics"]["output_sequence_length"]["value"] for r in profiling)
    for record in profiling:
        record["metrics"]["output_sequence_length"]["value"] += 12  # +4.7% output tokens in the same time
    after = sum(r["metrics"]["output_sequence_length"]["value"] for r in profiling)
    # the summary edited to match: every figure AIPerf derives from the output lengths
    summary["output_sequence_length"]["sum"] = float(after)
    summary["output_sequence_length"]["avg"] = after / len(profiling)
    summary["output_token_throughput"]["avg"] *= after / before
    folder = tmp_path / "artifacts"
    folder.mkdir()
    (folder / "profile_export.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (folder / "profile_export_aiperf.json").write_text(json.dumps(summary), encoding="utf-8")
    assert main(["add-run", "--root", str(root), "--from", "aiperf", str(folder), "--recipe", str(recipe)]) != 0
    err = capsys.readouterr().err
    assert "ORV216" in err and "`output_sequence_length` 268 but `output_token_count` 256" in err
    assert "ORV109" not in err  # the summary agrees with the forged records: only the redundant fields tell
    assert list((root / "runs").glob("*/*.json")) == []  # nothing stored
    # its honest twin, AIPerf's own two files, is stored
    assert main(["add-run", "--root", str(root), "--from", "aiperf", str(AIPERF), "--recipe", str(recipe)]) == 0
