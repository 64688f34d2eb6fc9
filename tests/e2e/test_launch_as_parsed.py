"""Issue 50: what a recipe says it launched is what the engine parses, and what `orv reproduce` prints runs.

Each row of the issue's table as a pull request on a scratch registry repository, checked as the Action runs
it (`orv check --base main`): the respelled, abbreviated or added flag is refused with a finding naming the
flag and the recipe's value; the honest twin (the same settings spelled as the recipe states them) passes.
`orv reproduce`'s printed commands are parsed with the engine's flag table (stacks/flags/): the engines'
own parsers need torch (vLLM, SGLang, Megatron-LM all import it), which this suite does not install.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.testing.checking import check
from tests.testing.factories import registry_repo
from tests.testing.git import commit_all, git
from tests.testing.registry import write
from validator.engine.evaluate import analyse
from validator.evidence.tiers import derive
from validator.stacks.launch_args import REQUIRES, load_table, parse
from validator.stacks.reproduce import reproduce

INFERENCE = "recipes/inference/glm-5.3-flash/{rid}.yaml"


def inference_text(rid: str, engine: str, args: list[str], *, count: int = 1, extra: str = "") -> str:
    version = "0.34.0" if engine == "vllm" else "0.5.23"
    return (
        f"id: {rid}\nkind: inference\nmodel: glm-5.3-flash\ncheckpoint: zai-org/GLM-5.3-Flash\n"
        f'hardware: {{gpu: h100, count: {count}}}\nauthor: ATTUNE\nmeasured: "2026-10-18"\n'
        f'software:\n  engine: {{name: {engine}, version: "{version}"}}\nquant: bf16\n'
        f"serving: {{context_len: 8192, concurrency: 16{extra}}}\nworkload: isl1k-osl1k\n"
        f"launch:\n  args: {json.dumps(args)}\nclaimed: {{decode_tok_s: 41.5}}\nruns: []\n"
    )


def pr_findings(repo: Path, rel: str, text: str) -> list[tuple[str, str]]:
    write(repo, rel, text)
    commit_all(repo, "a recipe")
    return [(d.code, d.message) for d in check(repo).result.diagnostics if d.path == rel]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return registry_repo(tmp_path)


VLLM_SERVE = ["serve", "zai-org/GLM-5.3-Flash"]
SGLANG = ["--model-path", "zai-org/GLM-5.3-Flash"]


@pytest.mark.git
@pytest.mark.parametrize(
    "engine, args, expected",
    [
        # row 1: vLLM's FlexibleArgumentParser turns `_` into `-`
        (
            "vllm",
            [*VLLM_SERVE, "--max_num_seqs", "4"],
            [
                (
                    "ORV251",
                    "launch caps the server at 4 sequences (--max_num_seqs → --max-num-seqs), below serving.concurrency 16",
                )
            ],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--max_num_seqs=4"],
            [
                (
                    "ORV251",
                    "launch caps the server at 4 sequences (--max_num_seqs=4 → --max-num-seqs), below serving.concurrency 16",
                )
            ],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--tensor_parallel_size", "2"],
            [("ORV251", "launch sets --tensor_parallel_size 2 (--tensor-parallel-size) on 1 GPU(s)")],
        ),
        # row 2: SGLang's plain argparse resolves a unique prefix
        (
            "sglang",
            [*SGLANG, "--max-running", "4"],
            [
                (
                    "ORV251",
                    "launch caps the server at 4 sequences (--max-running → --max-running-requests), below serving.concurrency 16",
                )
            ],
        ),
        (
            "sglang",
            [*SGLANG, "--tensor-parallel", "2"],
            [("ORV251", "launch sets --tensor-parallel 2 (--tp-size) on 1 GPU(s)")],
        ),
        (
            "sglang",
            ["--model-pa", "Qwen/Qwen3-8B"],
            [("ORV251", "launch serves `Qwen/Qwen3-8B`, the recipe's checkpoint is `zai-org/GLM-5.3-Flash`")],
        ),
        # row 3: speculative decoding the recipe does not state
        (
            "vllm",
            [
                *VLLM_SERVE,
                "--speculative-config",
                '{"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}',
            ],
            [
                (
                    "ORV254",
                    "launch runs speculative decoding (--speculative-config: method ngram, draft length 5); the recipe states no serving.speculative",
                )
            ],
        ),
        (
            "sglang",
            [*SGLANG, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3"],
            [
                (
                    "ORV254",
                    "launch runs speculative decoding (--speculative-algorithm: method eagle, draft length 3); the recipe states no serving.speculative",
                )
            ],
        ),
        # row 4: parallelism beyond the GPUs, another context length, a quantized KV cache
        (
            "vllm",
            [*VLLM_SERVE, "-pp", "4"],
            [
                ("ORV251", "launch sets -pp 4 (--pipeline-parallel-size), serving.pp is 1"),
                ("ORV251", "launch needs 4 GPUs (tensor × pipeline × data parallel sizes), hardware.count is 1"),
            ],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--data-parallel-size", "8"],
            [("ORV251", "launch needs 8 GPUs (tensor × pipeline × data parallel sizes), hardware.count is 1")],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--max-model-len", "2048"],
            [("ORV251", "launch sets --max-model-len 2048, serving.context_len is 8192")],
        ),
        (
            "vllm",
            [*VLLM_SERVE, "--kv-cache-dtype", "fp8"],
            [("ORV255", "launch sets --kv-cache-dtype fp8, quant `bf16` states no quantized KV cache")],
        ),
        # an unknown flag names the nearest known one
        (
            "vllm",
            [*VLLM_SERVE, "--max-num-sequences", "16"],
            [("ORV253", "launch.args[2] `--max-num-sequences` is not a vllm 0.34.0 flag")],
        ),
    ],
)
def test_a_launch_is_read_as_the_engine_reads_it(
    repo: Path, engine: str, args: list[str], expected: list[tuple[str, str]]
) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-launch")
    found = pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-launch", engine, args))
    assert sorted(f for f in found if f[0].startswith("ORV25")) == sorted(expected)


@pytest.mark.git
@pytest.mark.parametrize(
    "engine, args",
    [
        ("vllm", [*VLLM_SERVE, "--max_num_seqs", "16", "--max-model-len=8192", "-tp", "1", "--kv-cache-dtype", "auto"]),
        ("vllm", ["serve", "--model", "zai-org/GLM-5.3-Flash", "--max-num-seq", "32", "--port", "8001"]),
        (
            "sglang",
            ["--model-pa", "zai-org/GLM-5.3-Flash", "--max-running", "16", "--context-length", "8192", "--tp", "1"],
        ),
    ],
)
def test_the_honest_twin_spelled_any_way_the_engine_accepts_passes(repo: Path, engine: str, args: list[str]) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-launch")
    found = pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-launch", engine, args))
    assert [f for f in found if f[0].startswith(("ORV25", "ORV3"))] == []


@pytest.mark.git
def test_a_stated_speculation_that_agrees_passes_and_one_that_disagrees_is_named(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-launch")
    spec = ", speculative: {method: ngram, k: 5}"
    args = [*VLLM_SERVE, "--speculative_config.method", "ngram", "--speculative-config.num_speculative_tokens", "5"]
    assert [
        f
        for f in pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-launch", "vllm", args, extra=spec))
        if f[0] == "ORV254"
    ] == []
    args[-1] = "3"
    assert [
        f
        for f in pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-launch", "vllm", args, extra=spec))
        if f[0] == "ORV254"
    ] == [("ORV254", "launch drafts 3 tokens (--speculative-config), serving.speculative.k is 5")]


@pytest.mark.git
def test_a_quantized_kv_cache_in_the_launch_asks_the_quality_gate_for_evidence(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-launch")
    write(repo, rel, inference_text("glm-5-3-flash-h100-launch", "vllm", [*VLLM_SERVE, "--kv_cache_dtype=fp8_e4m3"]))
    analysis = analyse(str(repo))
    needs = derive(analysis.snapshot, analysis.diagnostics)[rel].quality_needs
    assert "quantized KV cache (launch --kv-cache-dtype fp8_e4m3)" in needs
    write(repo, rel, inference_text("glm-5-3-flash-h100-launch", "vllm", [*VLLM_SERVE, "--kv-cache-dtype", "auto"]))
    analysis = analyse(str(repo))
    assert derive(analysis.snapshot, analysis.diagnostics)[rel].quality_needs == ()


@pytest.mark.git
@pytest.mark.parametrize("respelled", [["--max-num-seqs=64"], ["--max_num_seqs", "64", "--port", "8001"]])
def test_the_same_configuration_respelled_is_orv302(repo: Path, respelled: list[str]) -> None:
    """Row 5: ORV302 compares the launch as the engine reads it; a port changes no figure."""
    git(repo, "checkout", "-q", "main")
    write(
        repo,
        INFERENCE.format(rid="glm-5-3-flash-h100-c64-a"),
        inference_text("glm-5-3-flash-h100-c64-a", "vllm", [*VLLM_SERVE, "--max-num-seqs", "64"]),
    )
    commit_all(repo, "an inference recipe on main")
    git(repo, "checkout", "-q", "-B", "pr", "main")
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-c64-b")
    found = pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-c64-b", "vllm", [*VLLM_SERVE, *respelled]))
    assert [code for code, _ in found] == ["ORV302"]
    # its honest twin: another figure-changing value is another configuration
    found = pr_findings(
        repo, rel, inference_text("glm-5-3-flash-h100-c64-b", "vllm", [*VLLM_SERVE, "--max-num-seqs", "32"])
    )
    assert [code for code, _ in found] == []


TRAINING = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"


@pytest.mark.git
@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--num-layers-per-virtual-pipeline-stage", "4"],
            "launch sets --num-layers-per-virtual-pipeline-stage 4 (virtual pipeline stages), layout.vpp is 1",
        ),
        (
            ["--decoder-first-pipeline-num-layers", "10"],
            "launch sets --decoder-first-pipeline-num-layers 10, layout.layer_split gives that stage 16 layers",
        ),
        (
            ["--fp8-format", "hybrid"],
            "launch trains in FP8 (--fp8-format hybrid), workload `sft-8k-gb128-bf16` dtype is bf16",
        ),
        (
            ["--rampup-batch-size", "16", "16", "1000"],
            "launch ramps the batch size up (--rampup-batch-size 16 16 1000), workload `sft-8k-gb128-bf16` trains at a "
            "constant global batch 128",
        ),
    ],
)
def test_a_megatron_launch_setting_what_the_recipe_does_not_state_is_orv256(
    repo: Path, args: list[str], message: str
) -> None:
    """Row 6 on the registry's own TP1 PP4 BF16 recipe (layer_split 16/17/17/14, no virtual stages)."""
    text = (repo / TRAINING).read_text(encoding="utf-8") + f"launch:\n  args: {json.dumps(args)}\n"
    write(repo, TRAINING, text)
    commit_all(repo, "launch flags")
    found = [(d.code, d.message) for d in check(repo).result.diagnostics if d.path == TRAINING]
    assert found == [("ORV256", message)]


@pytest.mark.git
def test_a_pipeline_layout_string_without_stated_stages_is_orv256_and_agreeing_flags_pass(repo: Path) -> None:
    text = (repo / TRAINING).read_text(encoding="utf-8")
    unsplit = text.replace(", layer_split: [16, 17, 17, 14]", "")
    write(repo, TRAINING, unsplit + 'launch:\n  args: [--pipeline-model-parallel-layout, "Et*16|t*17|t*17|t*14L"]\n')
    commit_all(repo, "layout string")
    found = [d.code for d in check(repo).result.diagnostics if d.path == TRAINING and d.code.startswith("ORV25")]
    assert found == ["ORV256"]
    honest = "launch:\n  args: [--bf16, --use-distributed-optimizer, --decoder-first-pipeline-num-layers, '16']\n"
    write(repo, TRAINING, text + honest)
    commit_all(repo, "honest")
    assert [d.code for d in check(repo).result.diagnostics if d.path == TRAINING] == []


# --------------------------------------------------------------------------- orv reproduce


def _commands(lines: list[str], program: str) -> list[list[str]]:
    out = []
    for line in lines:
        if line.startswith("#") or program not in line:
            continue
        tokens = shlex.split(line.split(" 2>&1")[0].split(" > ")[0].replace("$MASTER_ADDR", "10.0.0.1"))
        out.append(tokens)
    return out


def test_reproduce_prints_sglang_s_program_and_arguments_its_table_accepts(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-sg")
    write(repo, rel, inference_text("glm-5-3-flash-h100-sg", "sglang", [*SGLANG, "--tp", "1", "--max-running", "16"]))
    lines = reproduce(str(repo), str(repo / rel)).lines
    (command,) = _commands(lines, "sglang.launch_server")
    assert command[:3] == ["python", "-m", "sglang.launch_server"]
    parsed = parse(load_table("sglang"), command[3:])
    assert not parsed.unknown and not parsed.ambiguous
    assert parsed.settings["--tp-size"].value == "1" and parsed.settings["--max-running-requests"].value == "16"


def test_reproduce_prints_vllm_serve_before_a_launch_without_it(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-v")
    write(repo, rel, inference_text("glm-5-3-flash-h100-v", "vllm", ["--model", "zai-org/GLM-5.3-Flash", "-tp", "1"]))
    (command,) = _commands(reproduce(str(repo), str(repo / rel)).lines, "vllm serve")
    assert command[:2] == ["vllm", "serve"]
    parsed = parse(load_table("vllm"), command[1:])
    assert not parsed.unknown and parsed.settings["--model"].value == "zai-org/GLM-5.3-Flash"


BIG = """id: qwen3-8-27b-h100-tp4-pp8-ep32-dp8
kind: training
model: qwen3.8-27b
hardware: {gpu: h100, count: 256}
author: ATTUNE
measured: "2026-10-18"
workload: sft-8k-gb128-bf16
software:
  framework: {name: megatron-core, version: "0.30.0"}
layout: {tp: 4, pp: 8, ep: 32, dp: 8}
tuning: {optimizer_cpu_offload: 1.0, micro_batch_size: 1}
launch:
  args: [--use-distributed-optimizer, --lr, "1e-5", --tensor-model-parallel-size=4]
claimed: {tokens_per_s_per_gpu: 1480.4}
runs: []
"""


def test_reproduce_of_a_256_gpu_job_prints_one_torchrun_per_node_filling_the_layout(repo: Path) -> None:
    """Rows 8 and 9: 32 nodes × 8 ranks = TP4 × PP8 × DP8; the offload flag with the one validate_args asserts."""
    rel = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp4-pp8-ep32-dp8.yaml"
    write(repo, rel, BIG)
    commands = _commands(reproduce(str(repo), str(repo / rel)).lines, "torchrun")
    assert len(commands) == 32
    table = load_table("megatron")
    ranks = set()
    for rank, command in enumerate(commands):
        launcher = dict(
            t.split("=", 1)
            for t in command[1:]
            if t.startswith("--") and "=" in t and command.index(t) < command.index("pretrain_gpt.py")
        )
        assert launcher["--nnodes"] == "32" and launcher["--node-rank"] == str(rank)
        assert launcher["--master-addr"] == "10.0.0.1"
        ranks |= {(rank, local) for local in range(int(launcher["--nproc-per-node"]))}
        parsed = parse(table, command[command.index("pretrain_gpt.py") + 1 :])
        assert not parsed.unknown and not parsed.ambiguous
        given = parsed.settings
        tp, pp = (
            int(given["--tensor-model-parallel-size"].value or 0),
            int(given["--pipeline-model-parallel-size"].value or 0),
        )
        assert given["--expert-model-parallel-size"].value == "32"
        for flag, required in REQUIRES["megatron"].items():
            assert flag not in given or all(r in given for r in required), (flag, required)
        assert "--use-precision-aware-optimizer" in given and "--optimizer-cpu-offload" in given
    assert len(ranks) == 256 and 256 % (tp * pp) == 0 and 256 // (tp * pp) == 8  # the world the layout fills


@pytest.mark.git
def test_vllm_s_expert_parallel_size_is_tensor_times_data_parallel(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-ep")
    args = [*VLLM_SERVE, "-tp", "2", "-ep"]
    text = inference_text("glm-5-3-flash-h100-ep", "vllm", args, count=2, extra=", tp: 2, ep: 2")
    assert [f for f in pr_findings(repo, rel, text) if f[0].startswith("ORV25")] == []
    text = inference_text("glm-5-3-flash-h100-ep", "vllm", args[:-1], count=2, extra=", tp: 2, ep: 2")
    assert [f for f in pr_findings(repo, rel, text) if f[0].startswith("ORV25")] == [
        (
            "ORV251",
            "launch runs expert parallel size 1 (--enable-expert-parallel off: tensor × data parallel), serving.ep is 2",
        )
    ]


def test_reproduce_leaves_out_a_launch_flag_that_would_override_the_recipe(repo: Path) -> None:
    """argparse keeps the last value: a contradicting launch flag printed after the implied ones would run
    another layout than the recipe's (and ORV252 refuses the recipe); the printed command runs the recipe's."""
    text = (repo / TRAINING).read_text(encoding="utf-8")
    write(repo, TRAINING, text + "launch:\n  args: [--tensor-model-parallel-size, '2', --fp16, --lr, '1e-5']\n")
    lines = reproduce(str(repo), str(repo / TRAINING)).lines
    (command,) = _commands(lines, "torchrun")
    parsed = parse(load_table("megatron"), command[command.index("pretrain_gpt.py") + 1 :])
    assert parsed.settings["--tensor-model-parallel-size"].value == "1" and "--fp16" not in parsed.settings
    assert command.count("--tensor-model-parallel-size") == 1 and parsed.settings["--lr"].value == "1e-5"
    assert "# launch.args' --tensor-model-parallel-size 2 left out: layout.tp is 1" in lines


@pytest.mark.git
@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["-m", "glm.gguf", "-np", "4"],
            [
                (
                    "ORV251",
                    "launch caps the server at 4 sequences (-np → --parallel), below serving.concurrency 16",
                ),
                ("ORV251", "launch sets --parallel 4 (server slots), serving.slots is 16"),
            ],
        ),
        (
            ["-m", "glm.gguf", "--parallel", "16", "-ctk", "q8_0"],
            [("ORV255", "launch sets --cache-type-k q8_0, quant `bf16` states no quantized KV cache")],
        ),
        # llama.cpp looks the whole token up: `--flag=value` and a prefix are not its flags
        (
            ["-m", "glm.gguf", "--parallel=16"],
            [("ORV253", "launch.args[2] `--parallel=16` is not a llama.cpp (llama-cpp-python 0.3.36) flag")],
        ),
        # -c is the context the 16 slots share: 16 × 8192
        (["-m", "glm.gguf", "--parallel", "16", "--ctx_size", "131072", "--cache_type_k", "f16"], []),
    ],
)
def test_a_llama_server_launch_is_read_as_llama_cpp_reads_it(
    repo: Path, args: list[str], expected: list[tuple[str, str]]
) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-llama")
    text = inference_text("glm-5-3-flash-h100-llama", "llama.cpp", args, extra=", slots: 16")
    assert sorted(f for f in pr_findings(repo, rel, text) if f[0].startswith("ORV25")) == sorted(expected)


def test_reproduce_prints_llama_server_before_its_arguments(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-llama")
    write(repo, rel, inference_text("glm-5-3-flash-h100-llama", "llama.cpp", ["-m", "glm.gguf", "-np", "16"]))
    lines = reproduce(str(repo), str(repo / rel)).lines
    (command,) = _commands([line for line in lines if line.startswith("llama.cpp/build/bin/llama-server")], "llama")
    assert command[0] == "llama.cpp/build/bin/llama-server"
    parsed = parse(load_table("llama.cpp"), command[1:])
    assert not parsed.unknown and parsed.settings["--parallel"].value == "16"


@pytest.mark.git
def test_a_launch_without_the_stated_tensor_parallelism_runs_the_engine_s_default_of_one(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-tp2")
    text = inference_text("glm-5-3-flash-h100-tp2", "sglang", SGLANG, count=2, extra=", tp: 2")
    assert [f for f in pr_findings(repo, rel, text) if f[0].startswith("ORV25")] == [
        ("ORV251", "launch leaves --tp-size at the engine's default 1, serving.tp is 2")
    ]
    text = inference_text("glm-5-3-flash-h100-tp2", "sglang", [*SGLANG, "--tp", "2"], count=2, extra=", tp: 2")
    assert [f for f in pr_findings(repo, rel, text) if f[0].startswith("ORV25")] == []


@pytest.mark.git
@pytest.mark.parametrize(
    "engine, args, method, agrees",
    [
        (
            "vllm",
            [*VLLM_SERVE, "--speculative-config", '{"method": "deepseek_mtp", "num_speculative_tokens": 3}'],
            "mtp",
            True,
        ),
        ("sglang", [*SGLANG, "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3"], "mtp", True),
        ("sglang", [*SGLANG, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3"], "mtp", True),
        (
            "vllm",
            [*VLLM_SERVE, "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3}'],
            "mtp",
            False,
        ),
    ],
)
def test_a_speculative_method_is_compared_however_the_engine_spells_it(
    repo: Path, engine: str, args: list[str], method: str, agrees: bool
) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-spec")
    text = inference_text("glm-5-3-flash-h100-spec", engine, args, extra=f", speculative: {{method: {method}, k: 3}}")
    found = [f for f in pr_findings(repo, rel, text) if f[0] == "ORV254"]
    assert found == (
        []
        if agrees
        else [
            ("ORV254", "launch's speculative method is ngram (--speculative-config), serving.speculative.method is mtp")
        ]
    )


@pytest.mark.git
def test_a_stated_speculation_the_launch_does_not_run_is_orv254(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-spec")
    text = inference_text("glm-5-3-flash-h100-spec", "vllm", VLLM_SERVE, extra=", speculative: {method: mtp, k: 3}")
    assert [f for f in pr_findings(repo, rel, text) if f[0] == "ORV254"] == [
        ("ORV254", "the launch runs no speculative decoding, serving.speculative is mtp")
    ]


@pytest.mark.git
def test_sglang_s_dp_attention_needs_no_more_gpus_and_a_deprecated_switch_takes_no_value(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-dpa")
    args = [*SGLANG, "--tp", "8", "--dp", "8", "--enable-dp-attention", "--disable-cuda-graph", "--max-running", "16"]
    text = inference_text("glm-5-3-flash-h100-dpa", "sglang", args, count=8, extra=", tp: 8")
    assert [f for f in pr_findings(repo, rel, text) if f[0].startswith("ORV25")] == []
    text = inference_text(
        "glm-5-3-flash-h100-dpa", "sglang", [a for a in args if a != "--enable-dp-attention"], count=8, extra=", tp: 8"
    )
    assert [f for f in pr_findings(repo, rel, text) if f[0].startswith("ORV25")] == [
        ("ORV251", "launch needs 64 GPUs (tensor × pipeline × data parallel sizes), hardware.count is 8")
    ]


TRTLLM = ["zai-org/GLM-5.3-Flash"]


@pytest.mark.git
@pytest.mark.parametrize(
    "args, expected",
    [
        # trtllm-serve's Click options are spelled with `_`: `--tp_size` is `--tensor_parallel_size`
        (
            [*TRTLLM, "--tp_size", "2"],
            [("ORV251", "launch sets --tp_size 2 (--tensor_parallel_size) on 1 GPU(s)")],
        ),
        (
            ["serve", *TRTLLM, "--max_batch_size=4"],
            [
                (
                    "ORV251",
                    "launch caps the server at 4 sequences (--max_batch_size=4 → --max_batch_size), "
                    "below serving.concurrency 16",
                )
            ],
        ),
        (
            [*TRTLLM, "--max_seq_len", "2048"],
            [("ORV251", "launch sets --max_seq_len 2048, serving.context_len is 8192")],
        ),
        # Click rewrites no `-` to `_` and resolves no prefix: the server refuses both at start-up
        (
            [*TRTLLM, "--tp-size", "1"],
            [("ORV253", "launch.args[1] `--tp-size` is not a tensorrt-llm main@00209af1 flag")],
        ),
        (
            [*TRTLLM, "--tensor_parallel", "1"],
            [("ORV253", "launch.args[1] `--tensor_parallel` is not a tensorrt-llm main@00209af1 flag")],
        ),
    ],
)
def test_a_trtllm_serve_launch_is_read_as_click_reads_it(
    repo: Path, args: list[str], expected: list[tuple[str, str]]
) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-trt")
    found = pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-trt", "tensorrt-llm", args))
    assert sorted(f for f in found if f[0].startswith("ORV25")) == sorted(expected)


@pytest.mark.git
def test_the_honest_trtllm_serve_twin_passes(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-trt")
    args = ["serve", *TRTLLM, "--tp_size", "1", "--max_batch_size=16", "--max_seq_len", "8192", "--port", "8001"]
    found = pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-trt", "tensorrt-llm", args))
    assert [f for f in found if f[0].startswith(("ORV25", "ORV3"))] == []


def test_reproduce_prints_trtllm_serve_and_arguments_its_table_accepts(repo: Path) -> None:
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-trt")
    args = [*TRTLLM, "--tp_size", "1", "--max_batch_size", "16", "--max_seq_len", "8192"]
    write(repo, rel, inference_text("glm-5-3-flash-h100-trt", "tensorrt-llm", args))
    lines = reproduce(str(repo), str(repo / rel)).lines
    (command,) = _commands([line for line in lines if line.startswith("trtllm-serve")], "trtllm-serve")
    assert command[0] == "trtllm-serve"
    parsed = parse(load_table("tensorrt-llm"), command[1:])
    assert not parsed.unknown and parsed.positionals == [(0, "zai-org/GLM-5.3-Flash")]
    assert parsed.settings["--tensor_parallel_size"].value == "1"
    assert parsed.settings["--max_batch_size"].value == "16" and parsed.settings["--max_seq_len"].value == "8192"


@pytest.mark.git
@pytest.mark.parametrize("flag", ["--extra_llm_api_options", "--config"])
def test_a_trtllm_serve_yaml_file_is_refused(repo: Path, flag: str) -> None:
    """trtllm-serve applies its YAML over the flags (update_llm_args_with_extra_dict): a KV-cache dtype or
    speculative decoding set there would be unseen, so the file is refused like vLLM's --config (ORV258).
    Its twin is test_the_honest_trtllm_serve_twin_passes."""
    rel = INFERENCE.format(rid="glm-5-3-flash-h100-trt")
    args = ["serve", *TRTLLM, "--tp_size", "1", "--max_batch_size=16", "--max_seq_len", "8192", flag, "extra.yaml"]
    found = pr_findings(repo, rel, inference_text("glm-5-3-flash-h100-trt", "tensorrt-llm", args))
    assert [code for code, _ in found if code == "ORV258"] == ["ORV258"], found
