"""How to run a recipe again, ready to paste: its pinned stack, its launch, the benchmark for its workload and
the `orv add-run` line (`orv reproduce`, and what the import report says a recipe lacks; docs/protocols.md).

Prints, from what the recipe and its workload state: how to get the pinned engine or framework,
the launch command, the benchmark command that produces evidence for the workload at the recipe's
concurrency, and the `orv add-run` line that stores it. What the recipe does not state is named as
missing, never invented.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Any

from validator.adapters import load_gpu, load_recipe, load_workload
from validator.git.plumbing import tracked
from validator.git.sparse import materialize
from validator.models import Component, InferenceRecipe, Recipe, TrainingRecipe, WorkloadSpec
from validator.stacks.engines import (
    CLIENT_MEASURED,
    LLAMA_CPP_NAMES,
    LLAMA_CPP_SERVED,
    SGLANG_NAMES,
    TRT_LLM_ENGINES,
    VLLM_NAMES,
)
from validator.stacks.launch_args import PROGRAMS, load_table, parse
from validator.stacks.megatron_args import PRECISION_FLAGS, Implied, implied_args, printed, same_value


@dataclass
class Reproduction:
    lines: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what the recipe lacks to be re-run exactly


LLAMA_CPP_REPOSITORY = "https://github.com/ggml-org/llama.cpp"


def _get_llama_cpp(component: Component, cpu_host: bool) -> list[str]:
    """llama.cpp is built from its build tag (or commit): llama-bench then states that build (ORV248).
    A CPU host's recipe takes only a CPU-only build's run, a GPU's only a GPU backend's (ORV249)."""
    ref = component.commit or component.version
    if not ref:
        return []
    repo = component.repository or LLAMA_CPP_REPOSITORY
    backend = (
        "  # a CPU-only build (no GPU backend): the recipe's hardware is a CPU host"
        if cpu_host
        else "  # add your GPU backend: -DGGML_CUDA=ON, -DGGML_VULKAN=ON, -DGGML_HIP=ON …"
    )
    return [
        f"git clone {repo} llama.cpp && git -C llama.cpp checkout {ref}",
        "cmake -S llama.cpp -B llama.cpp/build -DCMAKE_BUILD_TYPE=Release" + backend,
        "cmake --build llama.cpp/build --config Release --target llama-bench llama-server -j",
    ]


def _get(component: Component, cpu_host: bool = False) -> list[str]:
    """Commands that fetch the pinned component (`cpu_host`: the recipe's hardware is a CPU host)."""
    if component.name.lower() in LLAMA_CPP_NAMES:
        return _get_llama_cpp(component, cpu_host)
    out = []
    if component.image:
        out.append(f"docker pull {component.image}")
    if component.commit:
        repo = component.repository or f"<{component.name} repository>"
        out.append(f"git clone {repo} {component.name} && git -C {component.name} checkout {component.commit}")
    if component.version and not out:
        out.append(f"python -m pip install {shlex.quote(f'{component.name}=={component.version}')}")
    for patch in component.patches:
        out.append(f"# apply patch {patch.name} (sha256 {patch.sha256 or 'not stated'})")
    return out


def _symmetric(workload: WorkloadSpec, nominal: int) -> tuple[int, float]:
    """vLLM's current --random-*-len and --random-range-ratio for the workload's [⌊r·L⌋, L] range:
    `vllm bench serve` draws from [len·(1−ratio), len·(1+ratio)]."""
    low, high = workload.length_bounds(nominal)
    centre = (low + high) / 2
    return round(centre), round((high - low) / (high + low), 4) if high > low else 0.0


# llama-bench's -r, one source for `orv reproduce` and docs/contributing.md: the workload's minimum (5) verifies a
# figure (T2), but a run that is to count toward a reproduction (T3) needs MIN_DISTINCT (8) distinct timings
# (science/independence.py); 10 is llama-bench's -r the docs name, with room for a coarse clock's repeats.
LLAMA_BENCH_REPETITIONS = 10


def llama_bench_command(workload: WorkloadSpec, model: str, output: str = "llama-bench.json") -> str:
    """The llama-bench run whose output proves a llama-bench workload (docs/contributing.md)."""
    return (
        shlex.join(
            [
                "llama.cpp/build/bin/llama-bench",
                "-m",
                model,
                "-p",
                str(workload.n_prompt),
                "-n",
                str(workload.n_gen),
                "-d",
                str(workload.n_depth),
                "-r",
                str(max(workload.min_repetitions or 1, LLAMA_BENCH_REPETITIONS)),
                "-o",
                "json",
            ]
        )
        + f" > {output}"
    )


def _llama_bench(recipe: InferenceRecipe, path: str, workload: WorkloadSpec, out: Reproduction) -> None:
    model = recipe.checkpoint or f"<the GGUF file of {recipe.model}>"
    if not recipe.checkpoint:
        out.missing.append("checkpoint (the GGUF file)")
    out.lines.append(f"# 2. llama-bench's {workload.llama_bench_test()} test (the recipe's workload; no server)")
    out.lines.append(llama_bench_command(workload, model))
    out.lines.append("# 3. store the evidence")
    out.lines.append(f"orv add-run llama-bench.json --from llama-bench --recipe {path} --write-recipe")


def _trtllm_bench(
    recipe: InferenceRecipe, path: str, workload: WorkloadSpec, model: str, prompts: int, warmups: int, concurrency: int
) -> list[str]:
    """trtllm-bench's dataset and throughput commands (tensorrt_llm/bench/dataset/prepare_synthetic_data.py
    `token_unif_dist`: lengths uniform in [min, max]; benchmark/throughput.py options), and add-run."""
    assert workload.input_len is not None and workload.output_len is not None
    in_low, in_high = workload.length_bounds(workload.input_len)
    out_low, out_high = workload.length_bounds(workload.output_len)
    serving = recipe.serving
    return [
        shlex.join(
            [
                "trtllm-bench",
                "--model",
                model,
                "prepare-dataset",
                "--output",
                "dataset.jsonl",
                "token-unif-dist",
                "--num-requests",
                str(prompts),
                "--input-min",
                str(in_low),
                "--input-max",
                str(in_high),
                "--output-min",
                str(out_low),
                "--output-max",
                str(out_high),
            ]
        ),
        shlex.join(
            [
                "trtllm-bench",
                "--model",
                model,
                "throughput",
                "--dataset",
                "dataset.jsonl",
                "--backend",
                "pytorch",
                "--tp",
                str(serving.tp or recipe.hardware.count),
                "--pp",
                str(serving.pp or 1),
                "--concurrency",
                str(concurrency),
                "--warmup",
                str(warmups),
                "--streaming",
                "--request_json",
                "requests.json",
                "--report_json",
                "report.json",
            ]
        ),
        "# 4. store the evidence",
        f"orv add-run requests.json --from trtllm-bench --report report.json --recipe {path} --write-recipe",
    ]


def _program(name: str | None, args: list[str]) -> list[str]:
    """The program that reads the launch's arguments, unless the arguments already start with it: a printed
    command always runs (vLLM's `serve` subcommand is the one word a launch may carry)."""
    key = (name or "").lower()
    if key in VLLM_NAMES:
        return ["vllm"] if args[:1] == ["serve"] else ["vllm", "serve"]
    if key in SGLANG_NAMES:
        program = list(PROGRAMS["sglang"])
    elif key in LLAMA_CPP_SERVED:
        program = list(PROGRAMS["llama.cpp"])
    elif key in TRT_LLM_ENGINES:
        program = list(PROGRAMS["tensorrt-llm"])
    elif key == "tabbyapi":
        program = list(PROGRAMS["tabbyapi"])
    else:
        return [f"<{name or 'engine'} server>"] if args[:1] and args[0].startswith("-") else []
    return [] if args[: len(program)] == program or (args and args[0] == program[-1]) else program


def _inference(recipe: InferenceRecipe, path: str, workload: WorkloadSpec | None, out: Reproduction) -> None:
    if workload is not None and workload.is_llama_bench:
        _llama_bench(recipe, path, workload, out)
        return
    engine = recipe.software.get("engine")
    name = engine.name if engine else None
    model = recipe.checkpoint or f"<checkpoint of {recipe.model}>"
    if not recipe.checkpoint:
        out.missing.append("checkpoint (the served model path)")
    out.lines.append("# 2. launch the server")
    if recipe.launch and recipe.launch.args:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(recipe.launch.env.items()))
        command = shlex.join(_program(name, list(recipe.launch.args)) + list(recipe.launch.args))
        out.lines.append((env + " " if env else "") + command)
    elif name in TRT_LLM_ENGINES:
        out.lines.append("# trtllm-bench loads the model itself (PyTorch backend): no server to launch")
    else:
        out.missing.append("launch.args (the serve command's arguments)")
        out.lines.append(f"# not stated by the recipe: add launch.args ({name or 'engine'} serve {model} …)")
    out.lines.append("# 3. the benchmark for the recipe's workload and concurrency")
    concurrency = recipe.serving.concurrency
    if workload is None or not workload.is_inference or workload.input_len is None or workload.output_len is None:
        out.missing.append(f"a workload (`{recipe.workload_id}` gives no lengths)")
        out.lines.append("# not stated: the recipe names no workload a benchmark can follow")
    elif concurrency is None:
        out.missing.append("serving.concurrency")
        out.lines.append("# not stated: serving.concurrency (the benchmark's --max-concurrency)")
    else:
        prompts = workload.required_prompts(concurrency)
        warmups = (workload.warmups_per_concurrency or 0) * concurrency
        if name in TRT_LLM_ENGINES:
            out.lines += _trtllm_bench(recipe, path, workload, model, prompts, warmups, concurrency)
        elif name in SGLANG_NAMES:
            # SGLang 0.5.23 (sglang/benchmark/datasets): `random-ids` draws token ids, `random` ShareGPT text;
            # `sglang-oai` takes prompt and output lengths from the server's own usage counts (serving.py);
            # compute_random_lens draws lengths from [int(L·r), L], the workload's range; EOS ignored by default.
            bench = [
                "python",
                "-m",
                "sglang.bench_serving",
                "--backend",
                "sglang-oai",
                "--model",
                model,
                "--dataset-name",
                "random-ids",
                "--random-input-len",
                str(workload.input_len),
                "--random-output-len",
                str(workload.output_len),
                "--random-range-ratio",
                f"{workload.range_ratio:g}",
                "--num-prompts",
                str(prompts),
                "--max-concurrency",
                str(concurrency),
                "--request-rate",
                "inf",
                "--warmup-requests",
                str(warmups),
            ]
            if not workload.ignore_eos:
                bench.append("--disable-ignore-eos")
            out.lines.append(shlex.join(bench + ["--output-file", "result.jsonl", "--output-details"]))
            out.lines.append("# 4. store the evidence")
            out.lines.append(f"orv add-run result.jsonl --from sglang --recipe {path} --write-recipe")
        else:
            isl, in_ratio = _symmetric(workload, workload.input_len)
            osl, out_ratio = _symmetric(workload, workload.output_len)
            if in_ratio != out_ratio:
                out.lines.append("# vLLM takes one range ratio for both lengths; these lengths share it")
            client = name in CLIENT_MEASURED
            if client:
                out.lines.append(
                    f"# {name} has no serving benchmark of its own: vLLM's client measures its "
                    "OpenAI-compatible server (set --base-url to it)"
                )
            bench = ["vllm", "bench", "serve", "--backend", "openai-chat" if client else "vllm"]
            bench += ["--base-url", "http://127.0.0.1:8000", "--endpoint", "/v1/chat/completions"] if client else []
            bench += [
                "--model",
                model,
                "--dataset-name",
                "random",
                "--random-input-len",
                str(isl),
                "--random-output-len",
                str(osl),
                "--random-range-ratio",
                f"{in_ratio:g}",
                "--num-prompts",
                str(prompts),
                "--max-concurrency",
                str(concurrency),
                "--request-rate",
                "inf",
            ]
            if workload.ignore_eos:
                bench.append("--ignore-eos")
            if warmups:
                bench += ["--num-warmups", str(warmups)]
            bench += ["--save-result", "--save-detailed", "--result-filename", "result.json"]
            out.lines.append(shlex.join(bench))
            out.lines.append("# 4. store the evidence")
            version = " --tool-version VLLM_VERSION" if client else ""  # the client's version is not the engine's
            out.lines.append(f"orv add-run result.json --from vllm{version} --recipe {path} --write-recipe")


def _extra(launch: list[str], implied: list[Implied], out: Reproduction) -> list[str]:
    """The recipe's launch.args, read as Megatron-LM reads them, less every flag that restates an implied
    argument: printed after the implied ones, a disagreeing value would win (argparse keeps the last) and the
    command would run another configuration than the recipe's (ORV252 refuses such a recipe)."""
    parsed = parse(load_table("megatron"), launch)
    drop: set[int] = set()
    for arg in implied:
        setting = parsed.settings.get(arg.flag)
        if setting is None:
            continue
        # every occurrence of the flag, not only the last
        for i, token in enumerate(launch):
            if token == arg.flag or token.startswith(arg.flag + "="):
                end = i + 1 if "=" in token or arg.value is None else min(i + 2, len(launch))
                drop.update(range(i, end))
        if not same_value(arg.value, setting.value):
            out.lines.append(f"# launch.args' {arg.flag} {setting.value} left out: {arg.source} is {arg.value}")
    precision = next((a.flag for a in implied if a.flag in PRECISION_FLAGS), None)
    for flag in PRECISION_FLAGS:
        if precision is not None and flag != precision and flag in parsed.settings:
            drop.update(i for i, token in enumerate(launch) if token == flag)
            out.lines.append(f"# launch.args' {flag} left out: the workload trains in {precision[2:].upper()}")
    return [token for i, token in enumerate(launch) if i not in drop]


GPUS_PER_NODE = 8  # the largest NVLink/NVSwitch domain recipes in the registry use (HGX, DGX)


def _launcher_lines(recipe: TrainingRecipe, arguments: list[str], env: str, out: Reproduction) -> list[str]:
    """torchrun lines: one on a single node, else one per node (`--nnodes N --node-rank R --master-addr`),
    together starting `hardware.count` ranks, the world size the layout must fill."""
    count = recipe.hardware.count
    per_node = min(count, GPUS_PER_NODE)
    nodes = -(-count // per_node)
    lay = recipe.layout
    model_parallel = lay.tp * lay.pp * lay.cp
    if count % per_node:
        out.missing.append(f"a node shape for {count} GPUs ({count} is not a multiple of {per_node} per node)")
    if count % model_parallel or (lay.dp and model_parallel * lay.dp != count):
        out.lines.append(
            f"# the layout (tp {lay.tp} × pp {lay.pp} × cp {lay.cp} × dp {lay.dp}) does not fill {count} GPUs: "
            "Megatron-LM will refuse the world size"
        )
    head = (env + " ") if env else ""
    tail = " 2>&1 | tee train.log"
    if nodes == 1:
        return [head + shlex.join(["torchrun", f"--nproc-per-node={per_node}", *arguments]) + tail]
    lines = [
        f"# {nodes} nodes × {per_node} GPUs = {nodes * per_node} ranks: run line R on node R; MASTER_ADDR is node 0"
    ]
    for rank in range(nodes):
        launcher = [
            "torchrun",
            f"--nnodes={nodes}",
            f"--node-rank={rank}",
            f"--nproc-per-node={per_node}",
            "--master-addr=$MASTER_ADDR",
            "--master-port=29500",
        ]
        # $MASTER_ADDR is left for the shell to expand: shlex would quote it
        command = shlex.join(launcher).replace("'--master-addr=$MASTER_ADDR'", "--master-addr=$MASTER_ADDR")
        lines.append(
            head + command + " " + shlex.join(arguments) + (tail if rank == 0 else f" > train.node{rank}.log 2>&1")
        )
    return lines


def _training(recipe: TrainingRecipe, path: str, workload: WorkloadSpec | None, out: Reproduction) -> None:
    if "framework" not in recipe.software:
        out.missing.append("software.framework (the training framework, pinned by version, commit or image)")
        out.lines.append("# software.framework: not stated by the recipe")
    implied = implied_args(recipe, workload)
    if workload is None or not workload.seq_len or not workload.global_batch:
        out.missing.append(f"a training workload (`{recipe.workload}` states no sequence length and batch)")
    extra = _extra(list(recipe.launch.args), implied, out) if recipe.launch else []
    out.lines.append(
        "# 2. train (Megatron-LM pretrain_gpt.py: the workload, layout and tuning give these arguments; "
        "launch.args the rest)"
    )
    if recipe.layout.layer_split:
        out.lines.append(
            "# layout.layer_split "
            + "/".join(map(str, recipe.layout.layer_split))
            + ": uneven pipeline stages have no single Megatron flag; set them as your version allows"
        )
    if not extra:
        out.missing.append(
            "launch.args (the framework arguments the layout and tuning do not imply: model, data, optimizer)"
        )
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(recipe.launch.env.items())) if recipe.launch else ""
    out.lines += _launcher_lines(recipe, ["pretrain_gpt.py", *printed(implied), *extra], env, out)
    out.lines.append("# 3. store the evidence")
    out.lines.append(f"orv add-run train.log --from megatron --recipe {path} --write-recipe")


def _checked_out(root: str, path: str) -> None:
    """A recipe git tracks that a sparse checkout (a cheap clone) leaves out is checked out to be read, as
    `orv add-run --recipe` does (validator/git/); a path git does not track is left to fail to load."""
    if os.path.exists(path):
        return
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")
    if not rel.startswith("../") and rel in (tracked(root, rel) or []):
        materialize(root, [rel])


def reproduce(root: str, path: str, catalog: dict[tuple[str, str], Any] | None = None) -> Reproduction:
    """The commands that re-run the recipe at `path`; AdapterError for a recipe that does not load.
    `catalog`: a dict the caller keeps to reuse catalog entries across many recipes (see reproduce_recipe)."""
    _checked_out(root, path)
    rel = os.path.relpath(path, root) if os.path.isabs(path) else path
    return reproduce_recipe(root, load_recipe(path), rel, catalog)


def reproduce_recipe(
    root: str, recipe: Recipe, rel: str, catalog: dict[tuple[str, str], Any] | None = None
) -> Reproduction:
    """The commands that re-run `recipe` (stored at `rel`), following the workloads of the registry at `root`.

    Each plan reads its GPU and workload from the catalog (~70% of a plan's time: the catalog files
    parsed again); a caller planning many recipes of one registry passes one `catalog` dict, keyed by
    (kind, id), so each entry is read once (validator/site/collect.py)."""
    memo: dict[tuple[str, str], Any] = {} if catalog is None else catalog

    def gpu(gpu_id: str) -> Any:
        if ("gpu", gpu_id) not in memo:
            memo["gpu", gpu_id] = load_gpu(root, gpu_id)
        return memo["gpu", gpu_id]

    def workload(workload_id: Any) -> Any:
        if ("workload", str(workload_id)) not in memo:
            memo["workload", str(workload_id)] = load_workload(root, workload_id)
        return memo["workload", str(workload_id)]

    out = Reproduction()
    out.lines.append(f"# {recipe.id}: {recipe.model} on {recipe.hardware.count} x {recipe.hardware.gpu}")
    out.lines.append("# 1. the pinned stack")
    host = gpu(recipe.hardware.gpu)
    cpu_host = host is not None and host.device == "cpu"
    for role, component in sorted(recipe.software.items()):
        got = _get(component, cpu_host)
        out.lines += got or [f"# {role} {component.name}: no pin stated"]
        if not got:
            out.missing.append(f"software.{role} pin")
    if isinstance(recipe, InferenceRecipe):
        _inference(recipe, rel, workload(recipe.workload_id), out)
    else:
        _training(recipe, rel, workload(recipe.workload), out)
    if out.missing:
        out.lines.append("# missing from the recipe (say it to reproduce exactly): " + "; ".join(out.missing))
    return out
