"""What a tool's output says about the model must agree with the recipe and the catalog (ORV226, ORV227).

The issue's two cases: a vLLM result for meta-llama/Llama-3.1-8B-Instruct attached to a Qwen
recipe, and a Megatron-LM log of a 1.5B, 16-layer model attached to a 64-layer 27B recipe. Both
are add-run errors, and findings of `orv check` on a run file stored by other means.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.testing.registry import INFERENCE_RECIPE_TEXT, TOOLS, VALID_TRAINING_RECIPE, make_registry
from validator.adapters import Source, convert, metadata
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.evidence.identity import (
    PARAMS_TOLERANCE,
    checkpoint_problem,
    gguf_quant_problem,
    reported_layout_problems,
    reported_quant_problem,
)
from validator.models import ModelSpec, RunMeta
from validator.registry.store import store_run_document
from validator.stacks.llamacpp import GGUF_FTYPE_NAMES, gguf_ftype, quant_ftype

INFERENCE_PATH = "recipes/inference/qwen3.8-27b/qwen3-8-27b-h100-vllm-fp8-c1.yaml"
TRAINING_PATH = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"


def registry(
    tmp_path: Path,
    checkpoints: list[str] | None = None,
    derived: list[dict[str, str]] | None = None,
    recipe_checkpoint: str | None = None,
) -> Path:
    root = make_registry(tmp_path / "registry")
    if checkpoints is not None:
        models_path = root / "catalog" / "models.yaml"
        models = yaml.safe_load(models_path.read_text())
        models["models"]["qwen3.8-27b"].update(checkpoints=checkpoints, derived_checkpoints=derived or [])
        models_path.write_text(yaml.safe_dump(models, sort_keys=False))
    text = INFERENCE_RECIPE_TEXT
    if recipe_checkpoint:
        text = text.replace("quant: fp8", f"checkpoint: {recipe_checkpoint}\nquant: fp8")
    (root / INFERENCE_PATH).parent.mkdir(parents=True)
    (root / INFERENCE_PATH).write_text(text)
    (root / TRAINING_PATH).parent.mkdir(parents=True)
    (root / TRAINING_PATH).write_text(VALID_TRAINING_RECIPE.read_text())
    return root


def vllm_output(tmp_path: Path, model_id: str, tokenizer_id: str | None = None) -> Path:
    data = json.loads((TOOLS / "vllm" / "serve-detailed.json").read_text())
    data["model_id"] = model_id
    data["tokenizer_id"] = tokenizer_id or model_id
    out = tmp_path / "result.json"
    out.write_text(json.dumps(data))
    return out


def add_run(root: Path, fmt: str, output: Path, recipe: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["add-run", "--root", str(root), "--from", fmt, str(output), "--recipe", str(root / recipe)])
    out, err = capsys.readouterr()
    return code, out + err


def reference(root: Path, recipe: str, digest: str) -> None:
    path = root / recipe
    path.write_text(path.read_text().replace("runs: []", f'runs: ["sha256:{digest}"]'))


def stored_anyway(root: Path, fmt: str, output: Path, recipe: str) -> str:
    """The run file as a contributor could store it without add-run's gate (by hand, or an old orv)."""
    meta = metadata(fmt, str(root), str(root / recipe), {})
    digest = store_run_document(str(root), convert(fmt, Source(output.name, output.read_bytes()), meta).document).digest
    reference(root, recipe, digest)
    return digest


def errors(root: Path) -> list[str]:
    return sorted(
        d.code for d in run(Config(root=str(root), skip_boards=True)).diagnostics if d.severity.value == "error"
    )


@pytest.mark.parametrize(
    "listed",
    [None, ["Qwen/Qwen3.8-27B", "Qwen/Qwen3.8-27B-FP8"]],
    ids=["catalog-names-no-checkpoints", "catalog-lists-checkpoints"],
)
def test_llama_output_on_a_qwen_recipe_is_an_error(
    listed: list[str] | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = registry(tmp_path, listed)
    llama = vllm_output(tmp_path, "meta-llama/Llama-3.1-8B-Instruct")
    code, printed = add_run(root, "vllm", llama, INFERENCE_PATH, capsys)
    assert code == 1 and "ORV226" in printed and "meta-llama/Llama-3.1-8B-Instruct" in printed
    assert not list((root / "runs").rglob("*.json"))  # nothing stored
    stored_anyway(root, "vllm", llama, INFERENCE_PATH)
    assert errors(root) == ["ORV226"]


def test_the_models_own_checkpoint_and_a_local_path_to_it_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = registry(tmp_path, ["Qwen/Qwen3.8-27B", "Qwen/Qwen3.8-27B-FP8"])
    code, printed = add_run(root, "vllm", vllm_output(tmp_path, "/models/Qwen3.8-27B-FP8"), INFERENCE_PATH, capsys)
    assert code == 0, printed
    reference(root, INFERENCE_PATH, printed.split()[0].split(":")[1])
    assert errors(root) == []


def test_a_mismatched_tokenizer_is_an_add_run_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = registry(tmp_path)
    output = vllm_output(tmp_path, "Qwen/Qwen3.8-27B-FP8", tokenizer_id="meta-llama/Llama-3.1-8B-Instruct")
    code, printed = add_run(root, "vllm", output, INFERENCE_PATH, capsys)
    assert code == 1 and "ORV226" in printed


def test_a_derived_checkpoint_needs_the_recipe_to_name_it_and_the_catalog_to_link_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    derived = [
        {"id": "acme/Qwen3.8-27B-FP8-finetune", "base": "Qwen/Qwen3.8-27B", "source": "https://example.org/card"}
    ]
    output = vllm_output(tmp_path, "acme/Qwen3.8-27B-FP8-finetune")
    root = registry(tmp_path / "unnamed", ["Qwen/Qwen3.8-27B"], derived)
    code, printed = add_run(root, "vllm", output, INFERENCE_PATH, capsys)
    assert code == 1 and "does not name it" in printed
    root = registry(
        tmp_path / "named", ["Qwen/Qwen3.8-27B"], derived, recipe_checkpoint="acme/Qwen3.8-27B-FP8-finetune"
    )
    code, printed = add_run(root, "vllm", output, INFERENCE_PATH, capsys)
    assert code == 0, printed
    root = registry(tmp_path / "unlinked", ["Qwen/Qwen3.8-27B"], [], recipe_checkpoint="acme/Qwen3.8-27B-FP8-finetune")
    code, printed = add_run(root, "vllm", output, INFERENCE_PATH, capsys)
    assert code == 1 and "not a checkpoint of catalog model" in printed


def test_a_small_models_megatron_log_on_a_27b_recipe_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the log prints num_layers 16 and "Total number of parameters in billions: 1.51"
    root = registry(tmp_path)
    log = TOOLS / "megatron" / "small-model-1.5b.log"
    code, printed = add_run(root, "megatron", log, TRAINING_PATH, capsys)
    assert code == 1 and printed.count("ORV227") == 2, printed
    assert "layers 16" in printed and "1.51B parameters" in printed
    stored_anyway(root, "megatron", log, TRAINING_PATH)
    assert errors(root) == ["ORV206", "ORV227", "ORV227"]  # its 16 layers also split differently (layout)


def test_the_right_models_log_records_its_architecture_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = registry(tmp_path)
    code, printed = add_run(root, "megatron", TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log", TRAINING_PATH, capsys)
    assert code == 0, printed
    digest = printed.split()[0].split(":")[1]
    stored = json.loads((root / "runs" / digest[:2] / f"{digest}.json").read_text())
    assert stored["architecture"] == {"layers": 64}


def test_a_gpu_count_the_log_states_against_the_recipe_is_an_add_run_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = registry(tmp_path)
    text = (TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log").read_text()
    text = text.replace(
        "  world_size ...................................... 8",
        "  world_size ...................................... 16",
    )
    text = text.replace(
        "  data_parallel_size .............................. 2", "  data_parallel_size .............................. 4"
    )
    log = tmp_path / "sixteen.log"
    log.write_text(text)
    code, printed = add_run(root, "megatron", log, TRAINING_PATH, capsys)
    assert code == 1 and "ORV206" in printed and "hardware.count = 16" in printed


def test_parameter_tolerance_is_stated_and_applied() -> None:
    spec = ModelSpec(name="Qwen3-30B-A3B", family="Qwen", params_b=30, checkpoints=("Qwen/Qwen3-30B-A3B",))
    assert PARAMS_TOLERANCE == 0.10
    assert checkpoint_problem("qwen3-30b-a3b", spec, "Qwen/Qwen3-30B-A3B", None) is None
    assert checkpoint_problem("qwen3-30b-a3b", spec, "Qwen/Qwen3-30B-A3B-Base", None) is not None


# ---- llama.cpp's file-type names and trtllm-bench's quantization, normalised once (validator/stacks/llamacpp.py,
# validator/evidence/identity.py)


@pytest.mark.parametrize(("printed", "ftype"), sorted(GGUF_FTYPE_NAMES.items()))
def test_every_llama_cpp_file_type_name_reads_back_as_its_quant(printed: str, ftype: str) -> None:
    assert gguf_ftype(f"qwen3 8B {printed}") == ftype
    assert gguf_ftype(f"qwen3 8B {printed} (guessed)") == ftype
    assert quant_ftype(ftype) == quant_ftype(ftype.replace("_", "-")) == quant_ftype(ftype.upper()) == ftype
    assert gguf_quant_problem(ftype, f"qwen3 8B {printed}") is None
    others = [o for o in GGUF_FTYPE_NAMES.values() if o != ftype]
    assert all(gguf_quant_problem(o, f"qwen3 8B {printed}") is not None for o in others)


def test_a_file_type_llama_cpp_does_not_name_is_refused_not_guessed() -> None:
    found = gguf_quant_problem("q4_k_m", "qwen3 8B Q4_K - Enormous")
    assert found is not None and "names no GGUF file type" in found.message


def _trt_run(quant: str, **reported: object) -> RunMeta:
    return RunMeta.model_validate(
        {
            "kind": "inference",
            "tool": {"name": "trtllm-bench", "version": "1.2.1"},
            "model": "m",
            "hardware": {"gpu": "h100", "count": 1},
            "software": {"engine": {"name": "tensorrt-llm", "version": "1.2.1"}},
            "quant": quant,
            "serving": {"concurrency": 1},
            "measured_at": "2026-12-05T10:00:00Z",
            "measured_by": "t",
            "summary": {"decode_tok_s": 50.0},
            "reported": {
                "tool": "trtllm-bench",
                "machine_name": "NVIDIA H100 80GB HBM3",
                "tp_size": 1,
                "pp_size": 1,
                "world_size": 1,
                **reported,
            },
        }
    )


@pytest.mark.parametrize(
    ("quant", "reported", "refused"),
    [
        ("fp8", {"quantization": "FP8"}, False),
        ("w4a16-awq-g128", {"quantization": "W4A16_AWQ"}, False),
        ("nvfp4", {"quantization": "NVFP4"}, False),
        ("bf16", {"quantization": "FP8"}, True),  # a quantized engine on an unquantized recipe
        ("fp8", {"quantization": "FP8_BLOCK_SCALES"}, True),  # another recipe: fp8-block-scales
        ("w4a16", {"quantization": "W4A16_AWQ"}, True),
        ("fp8", {}, True),  # an unquantized engine on a quantized recipe
        ("fp8", {"quantization": "None", "dtype": "bfloat16"}, True),
        ("bf16", {"dtype": "bfloat16"}, False),
        ("bf16", {"quantization": "None", "dtype": "bfloat16"}, False),
        ("fp16", {"dtype": "bfloat16"}, True),
    ],
)
def test_trtllm_quantization_is_the_recipes(quant: str, reported: dict[str, str], refused: bool) -> None:
    assert (reported_quant_problem(_trt_run(quant, **reported)) is not None) is refused


def test_trtllm_layout_is_whole_and_the_runs() -> None:
    assert reported_layout_problems(_trt_run("fp8")) == []
    assert [p.field for p in reported_layout_problems(_trt_run("fp8", tp_size=2))] == ["reported.world_size"]
    # tp 2 on 2 GPUs is whole, but not the run's one GPU
    found = reported_layout_problems(_trt_run("fp8", tp_size=2, world_size=2))
    assert [p.field for p in found] == ["reported.world_size"] and "1 × `h100`" in found[0].message
