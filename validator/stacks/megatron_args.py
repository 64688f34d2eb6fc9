"""The Megatron-LM arguments a training recipe already states through its workload, layout and tuning.

`orv reproduce` prints them (docs/protocols.md) and ORV252 checks a recipe's `launch.args` against
them: `launch.args` holds only what these do not imply, and a flag that restates one must agree.
Flag names and choices as Megatron-LM's `megatron/training/arguments.py` defines them
(`_add_distributed_args`: --tensor-model-parallel-size, --pipeline-model-parallel-size,
--num-virtual-stages-per-pipeline-rank, --context-parallel-size, --expert-model-parallel-size,
--expert-tensor-parallel-size; `_add_training_args`: --micro-batch-size, --global-batch-size,
--recompute-granularity {full,selective}, --optimizer-cpu-offload, --optimizer-offload-fraction,
--attention-backend; `_add_network_size_args`/`_add_data_args`: --seq-length; `_add_mixed_precision_args`:
--bf16, --fp16; `_add_moe_args`: --moe-token-dispatcher-type {allgather,alltoall,flex}).
"""

from __future__ import annotations

from dataclasses import dataclass

from validator.models import TrainingRecipe, WorkloadSpec

# Megatron's --attention-backend choices (AttnBackend); the recipe's other values have no single flag.
ATTENTION_BACKENDS = ("flash", "fused", "unfused", "local")
PRECISION_FLAGS = ("--bf16", "--fp16")


@dataclass(frozen=True)
class Implied:
    flag: str
    value: str | None  # None: a switch (`--bf16`)
    source: str  # the recipe field that implies it, for a finding's message


def implied_args(recipe: TrainingRecipe, workload: WorkloadSpec | None) -> list[Implied]:
    """Every Megatron argument the recipe's workload, layout and tuning fix, in command-line order."""
    out: list[Implied] = []
    if workload is not None and workload.seq_len and workload.global_batch:
        out += [
            Implied("--seq-length", str(workload.seq_len), f"workload {recipe.workload} seq_len"),
            Implied("--global-batch-size", str(workload.global_batch), f"workload {recipe.workload} global_batch"),
        ]
        if workload.dtype in ("bf16", "fp16"):
            out.append(Implied(f"--{workload.dtype}", None, f"workload {recipe.workload} dtype"))
    lay = recipe.layout
    out += [
        Implied("--tensor-model-parallel-size", str(lay.tp), "layout.tp"),
        Implied("--pipeline-model-parallel-size", str(lay.pp), "layout.pp"),
    ]
    # Megatron's own default is 1 for each of these: the flag is printed only when the layout departs from it,
    # but a launch flag stating another value still disagrees with the layout's 1.
    for flag, value, name in (
        ("--num-virtual-stages-per-pipeline-rank", lay.vpp, "vpp"),
        ("--context-parallel-size", lay.cp, "cp"),
        ("--expert-model-parallel-size", lay.ep, "ep"),
        ("--expert-tensor-parallel-size", lay.etp, "etp"),
    ):
        out.append(Implied(flag, str(value), f"layout.{name}"))
    tuning = recipe.tuning
    if tuning is not None:
        if tuning.micro_batch_size is not None:
            out.append(Implied("--micro-batch-size", str(tuning.micro_batch_size), "tuning.micro_batch_size"))
        if tuning.recompute is not None and tuning.recompute.kind in ("selective", "full"):
            out.append(Implied("--recompute-granularity", tuning.recompute.kind, "tuning.recompute.kind"))
        if tuning.optimizer_cpu_offload is not None and tuning.optimizer_cpu_offload > 0:
            out += [
                Implied("--optimizer-cpu-offload", None, "tuning.optimizer_cpu_offload"),
                # validate_args asserts it with --optimizer-cpu-offload (stacks/launch_args.REQUIRES)
                Implied("--use-precision-aware-optimizer", None, "tuning.optimizer_cpu_offload"),
                Implied(
                    "--optimizer-offload-fraction", f"{tuning.optimizer_cpu_offload:g}", "tuning.optimizer_cpu_offload"
                ),
            ]
        if tuning.moe_dispatcher is not None:
            out.append(Implied("--moe-token-dispatcher-type", tuning.moe_dispatcher, "tuning.moe_dispatcher"))
        if tuning.attention_backend in ATTENTION_BACKENDS:
            out.append(Implied("--attention-backend", tuning.attention_backend, "tuning.attention_backend"))
    return out


def printed(implied: list[Implied]) -> list[str]:
    """The implied arguments as tokens, leaving out layout degrees at Megatron's default of 1."""
    tokens: list[str] = []
    for arg in implied:
        if arg.source.startswith("layout.") and arg.source not in ("layout.tp", "layout.pp") and arg.value == "1":
            continue
        tokens += [arg.flag] if arg.value is None else [arg.flag, arg.value]
    return tokens


def stated(args: list[str]) -> dict[str, tuple[int, str | None]]:
    """flag -> (index of its value or of the flag itself, value) for each `--flag VALUE`, `--flag=VALUE`
    or switch in a launch list; the last occurrence wins, as with argparse."""
    out: dict[str, tuple[int, str | None]] = {}
    for i, arg in enumerate(args):
        if not arg.startswith("--"):
            continue
        if "=" in arg:
            flag, value = arg.split("=", 1)
            out[flag] = (i, value)
        elif i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[arg] = (i + 1, args[i + 1])
        else:
            out[arg] = (i, None)
    return out


def same_value(implied: str | None, given: str | None) -> bool:
    """Equal as numbers when both are numbers (`1.0` and `1`), else as text."""
    if implied == given:
        return True
    try:
        return implied is not None and given is not None and float(implied) == float(given)
    except ValueError:
        return False
