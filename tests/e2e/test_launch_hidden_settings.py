"""Issue 50, the reviewer's second pass: launch settings the first parser missed, each as a pull request on a
scratch registry checked as the Action runs it (`orv check --base main`), with its honest twin.

- weight quantization in the launch (vLLM `-q`/`--quantization`, SGLang `--quantization`) and `--dtype`
  against the recipe's quant (ORV257), and the quality gate judging a quantized launch as quantized;
- values read as the engine reads them (vLLM's `--max-model-len 2k` is 2000, `8K` is 8192), and one it would
  refuse is a finding (ORV259), never a silent skip;
- `--config FILE` hides every setting from orv (ORV258);
- llama-server: `-c` is the context all `-np` slots share, a draft model is speculative decoding, and
  `LLAMA_ARG_*` variables in launch.env are the flags they stand for (the command line overrides them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_launch_as_parsed import INFERENCE, SGLANG, VLLM_SERVE, inference_text, pr_findings
from tests.testing.checking import check
from tests.testing.factories import registry_repo
from tests.testing.git import commit_all, git
from tests.testing.registry import write
from validator.engine.evaluate import analyse
from validator.evidence.tiers import derive


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return registry_repo(tmp_path)


def launch_findings(repo: Path, rid: str, text: str) -> list[tuple[str, str]]:
    return sorted(f for f in pr_findings(repo, INFERENCE.format(rid=rid), text) if f[0].startswith("ORV25"))


def with_quant(text: str, quant: str) -> str:
    return text.replace("quant: bf16\n", f"quant: {quant}\n")


def llama(args: list[str], env: dict[str, str] | None = None, extra: str = "") -> str:
    text = inference_text("glm-5-3-flash-h100-llama", "llama.cpp", args, extra=extra)
    return text.replace("launch:\n", "launch:\n  env: " + json.dumps(env) + "\n") if env else text


@pytest.mark.git
@pytest.mark.parametrize(
    "engine, args, quant, expected",
    [
        (
            "vllm",
            [*VLLM_SERVE, "-q", "fp8"],
            "bf16",
            [("ORV257", "launch quantizes the weights (-q → --quantization fp8), quant `bf16` states bf16 weights")],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--quantization=awq"],
            "bf16",
            [
                (
                    "ORV257",
                    "launch quantizes the weights (--quantization awq), quant `bf16` states bf16 weights",
                )
            ],
        ),
        (
            "sglang",
            [*SGLANG, "--quantization", "fp8"],
            "bf16-fp8-kv",  # the KV part says nothing of the weights
            [("ORV257", "launch quantizes the weights (--quantization fp8), quant `bf16-fp8-kv` states bf16 weights")],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--quantization", "awq"],
            "fp8",
            [("ORV257", "launch loads the weights as awq (--quantization), quant `fp8` names another format")],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--dtype", "float16"],
            "bf16",
            [("ORV257", "launch runs the model in fp16 (--dtype float16), quant `bf16` is bf16")],
        ),
        # the honest twins: the launch loads what the quant states
        ("vllm", [*VLLM_SERVE, "-q", "fp8"], "fp8", []),
        ("sglang", [*SGLANG, "--quantization", "fp8"], "fp8", []),
        ("vllm", [*VLLM_SERVE, "--quantization", "awq_marlin"], "awq-w4a16-g32", []),
        ("vllm", [*VLLM_SERVE, "--dtype", "bfloat16", "--quantization", "none"], "bf16", []),
    ],
)
def test_the_launch_s_weight_format_is_the_quant(
    repo: Path, engine: str, args: list[str], quant: str, expected: list[tuple[str, str]]
) -> None:
    text = with_quant(inference_text("glm-5-3-flash-h100-q", engine, args), quant)
    assert launch_findings(repo, "glm-5-3-flash-h100-q", text) == expected


@pytest.mark.git
def test_a_launch_that_quantizes_the_weights_asks_the_quality_gate_for_evidence(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-q")

    def needs(text: str) -> tuple[str, ...]:
        write(repo, rel, text)
        analysis = analyse(str(repo))
        return tuple(derive(analysis.snapshot, analysis.diagnostics)[rel].quality_needs)

    assert "quantized weights (launch --quantization fp8)" in needs(
        inference_text("glm-5-3-flash-h100-q", "vllm", [*VLLM_SERVE, "-q", "fp8"])
    )
    assert needs(inference_text("glm-5-3-flash-h100-q", "vllm", VLLM_SERVE)) == ()
    # stated as fp8, the quant itself asks for evidence; the launch adds no second reason
    stated = needs(with_quant(inference_text("glm-5-3-flash-h100-q", "vllm", [*VLLM_SERVE, "-q", "fp8"]), "fp8"))
    assert stated and not any(w.startswith("quantized weights") for w in stated)


@pytest.mark.git
@pytest.mark.parametrize(
    "engine, args, expected",
    [
        # vLLM's human_readable_int_or_auto: k is 1000, K is 1024
        (
            "vllm",
            [*VLLM_SERVE, "--max-model-len", "2k"],
            [("ORV251", "launch sets --max-model-len 2000 (`2k` as vllm reads it), serving.context_len is 8192")],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--max-model-len", "8k"],
            [("ORV251", "launch sets --max-model-len 8000 (`8k` as vllm reads it), serving.context_len is 8192")],
        ),
        ("vllm", [*VLLM_SERVE, "--max-model-len", "8K"], []),
        ("vllm", [*VLLM_SERVE, "--max_model_len=8192"], []),
        ("vllm", [*VLLM_SERVE, "--max-model-len", "auto"], []),  # the model's own length, as the flag left out
        # a value the engine would refuse: named, not skipped
        (
            "vllm",
            [*VLLM_SERVE, "--max-model-len", "2.5K"],
            [("ORV259", "launch sets --max-model-len to '2.5K', which vllm 0.34.0 does not read as a number")],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "-tp", "two"],
            [
                (
                    "ORV259",
                    "launch sets -tp → --tensor-parallel-size to 'two', which vllm 0.34.0 does not read as a number",
                )
            ],
        ),
        # SGLang's --context-length is argparse's int: no suffixes
        (
            "sglang",
            [*SGLANG, "--context-length", "8k"],
            [("ORV259", "launch sets --context-length to '8k', which sglang 0.5.23 does not read as a number")],
        ),
        ("sglang", [*SGLANG, "--context-length", "8192"], []),
    ],
)
def test_a_value_is_read_as_the_engine_reads_it(
    repo: Path, engine: str, args: list[str], expected: list[tuple[str, str]]
) -> None:
    assert launch_findings(repo, "glm-5-3-flash-h100-len", inference_text("glm-5-3-flash-h100-len", engine, args)) == (
        expected
    )


@pytest.mark.git
@pytest.mark.parametrize(
    "engine, args, expected",
    [
        (
            "vllm",
            [*VLLM_SERVE, "--config", "serve.yaml"],
            [
                (
                    "ORV258",
                    "launch reads its settings from `serve.yaml` (--config), a file orv never reads: nothing it sets "
                    "can be compared with the recipe",
                )
            ],
        ),
        (
            "sglang",
            [*SGLANG, "--config=x.yaml"],
            [
                (
                    "ORV258",
                    "launch reads its settings from `x.yaml` (--config), a file orv never reads: "
                    "nothing it sets can be compared with the recipe",
                )
            ],
        ),
        # the twin: the file's settings spelled as flags
        ("vllm", [*VLLM_SERVE, "--max-model-len", "8192", "--max-num-seqs", "16"], []),
    ],
)
def test_a_config_file_hiding_the_settings_is_refused(
    repo: Path, engine: str, args: list[str], expected: list[tuple[str, str]]
) -> None:
    assert launch_findings(repo, "glm-5-3-flash-h100-cfg", inference_text("glm-5-3-flash-h100-cfg", engine, args)) == (
        expected
    )


@pytest.mark.git
@pytest.mark.parametrize(
    "args, env, expected",
    [
        # -c is shared by the -np slots: 2048 / 16 = 128, rounded up to 256 tokens a request
        (
            ["-m", "glm.gguf", "-np", "16", "-c", "2048"],
            None,
            [
                (
                    "ORV251",
                    "launch gives each request 256 tokens of context (-c → --ctx-size 2048: 2048 shared by 16 slots, "
                    "each rounded up to a multiple of 256), serving.context_len is 8192",
                )
            ],
        ),
        (["-m", "glm.gguf", "-np", "16", "-c", "131072"], None, []),  # 16 slots × 8192
        (["-m", "glm.gguf", "-np", "16", "-kvu", "-c", "8192"], None, []),  # unified: a request may use all
        (["-m", "glm.gguf", "-c", "8192"], None, []),  # -np left to auto: 4 slots, unified
        (["-m", "glm.gguf", "-np", "16", "-c", "131000"], None, []),  # 131072 after padding: 8192 a slot
        (
            ["-m", "glm.gguf", "-np", "16", "-kvu", "-c", "32768", "--kv-unified-per-slot", "4096"],
            None,
            [
                (
                    "ORV251",
                    "launch gives each request 4096 tokens of context (-c → --ctx-size 32768: a unified KV cache of "
                    "32768: one request may use all of it, capped by --kv-unified-per-slot 4096), "
                    "serving.context_len is 8192",
                )
            ],
        ),
        # LLAMA_ARG_* variables are the flags they stand for
        (
            ["-m", "glm.gguf"],
            {"LLAMA_ARG_N_PARALLEL": "4"},
            [
                (
                    "ORV251",
                    "launch caps the server at 4 sequences (LLAMA_ARG_N_PARALLEL=4 → --parallel), below "
                    "serving.concurrency 16",
                )
            ],
        ),
        (
            ["-m", "glm.gguf", "-np", "16"],
            {"LLAMA_ARG_CTX_SIZE": "2048"},
            [
                (
                    "ORV251",
                    "launch gives each request 256 tokens of context (LLAMA_ARG_CTX_SIZE=2048 → --ctx-size 2048: "
                    "2048 shared by 16 slots, each rounded up to a multiple of 256), serving.context_len is 8192",
                )
            ],
        ),
        (
            ["-m", "glm.gguf", "-np", "16"],
            {"LLAMA_ARG_CACHE_TYPE_K": "q4_0"},
            [("ORV255", "launch sets --cache-type-k q4_0, quant `bf16` states no quantized KV cache")],
        ),
        (
            ["-m", "glm.gguf", "-np", "16"],
            {"LLAMA_ARG_CTX_SIZE": "abc"},
            [
                (
                    "ORV259",
                    "launch sets LLAMA_ARG_CTX_SIZE=abc → --ctx-size to 'abc', which llama.cpp (llama-cpp-python "
                    "0.3.36) does not read as a number",
                )
            ],
        ),
        # the command line overrides the variable (common_params_parse_ex reads the environment first)
        (["-m", "glm.gguf", "-np", "16"], {"LLAMA_ARG_N_PARALLEL": "4", "LLAMA_ARG_CTX_SIZE": "131072"}, []),
        # a draft model is speculative decoding
        (
            ["-m", "glm.gguf", "-np", "16", "-md", "draft.gguf"],
            None,
            [
                (
                    "ORV254",
                    "launch runs speculative decoding (--spec-draft-model: method draft model (type from its GGUF)); "
                    "the recipe states no serving.speculative",
                )
            ],
        ),
        (
            ["-m", "glm.gguf", "-np", "16"],
            {"LLAMA_ARG_SPEC_DRAFT_MODEL": "draft.gguf"},
            [
                (
                    "ORV254",
                    "launch runs speculative decoding (--spec-draft-model: method draft model (type from its GGUF)); "
                    "the recipe states no serving.speculative",
                )
            ],
        ),
    ],
)
def test_a_llama_server_launch_s_context_draft_and_environment(
    repo: Path, args: list[str], env: dict[str, str] | None, expected: list[tuple[str, str]]
) -> None:
    assert launch_findings(repo, "glm-5-3-flash-h100-llama", llama(args, env)) == expected


@pytest.mark.git
def test_a_stated_draft_model_passes_and_another_draft_length_is_named(repo: Path) -> None:
    args = ["-m", "glm.gguf", "-np", "16", "--model-draft", "draft.gguf", "--spec-draft-n-max", "8"]
    assert (
        launch_findings(repo, "glm-5-3-flash-h100-llama", llama(args, extra=", speculative: {method: mtp, k: 8}")) == []
    )
    assert launch_findings(
        repo, "glm-5-3-flash-h100-llama", llama(args, extra=", speculative: {method: mtp, k: 4}")
    ) == [("ORV254", "launch drafts 8 tokens (--spec-draft-model), serving.speculative.k is 4")]


@pytest.mark.git
def test_a_finding_on_a_launch_variable_points_at_its_line(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-llama")
    write(repo, rel, llama(["-m", "glm.gguf"], {"LLAMA_ARG_N_PARALLEL": "4"}))
    commit_all(repo, "a recipe")
    (found,) = [d for d in check(repo).result.diagnostics if d.path == rel and d.code == "ORV251"]
    lines = (repo / rel).read_text(encoding="utf-8").splitlines()
    assert found.line is not None and "LLAMA_ARG_N_PARALLEL" in lines[found.line - 1]


@pytest.mark.git
def test_orv302_sees_a_llama_arg_variable_and_its_flag_as_one_configuration(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    write(repo, INFERENCE.format(rid="glm-5-3-flash-h100-llama"), llama(["-m", "glm.gguf", "-np", "16"]))
    commit_all(repo, "an inference recipe on main")
    git(repo, "checkout", "-q", "-B", "pr", "main")
    rid = "glm-5-3-flash-h100-llamaenv"  # after main's in path order: ORV302 is reported on it

    def codes(env: dict[str, str]) -> list[str]:
        text = llama(["-m", "glm.gguf"], env).replace("id: glm-5-3-flash-h100-llama\n", f"id: {rid}\n")
        return [code for code, _ in pr_findings(repo, INFERENCE.format(rid=rid), text)]

    assert "ORV302" in codes({"LLAMA_ARG_N_PARALLEL": "16"})
    # its honest twin: a variable that changes a figure is another configuration
    assert "ORV302" not in codes({"LLAMA_ARG_N_PARALLEL": "16", "LLAMA_ARG_CACHE_TYPE_K": "q8_0"})
