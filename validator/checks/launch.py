"""ORV25x launch: a recipe's command line is an argument list that agrees with the rest of the recipe
(ORV251 for an inference recipe's serve command, ORV252 for a training recipe's framework arguments)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.models import InferenceRecipe, TrainingRecipe
from validator.registry.snapshot import Snapshot
from validator.stacks.megatron_args import PRECISION_FLAGS, implied_args, same_value, stated

E = Severity.ERROR


def _split(arg: str) -> list[str] | None:
    """The tokens a shell would make of one list item holding several (None: it is one token)."""
    if not any(c.isspace() for c in arg):
        return None
    try:
        parts = shlex.split(arg)
    except ValueError:
        parts = arg.split()
    return parts if len(parts) > 1 and any(p.startswith("-") for p in parts) else None


@check("ORV250", E, "launch argument holds a shell command line", per_file=True)
def launch_args_are_a_list(snapshot: Snapshot) -> Iterator[Finding]:
    """
    `launch.args` is the command's arguments as a list, one token per item, so that a reader (and
    `orv reproduce`) runs exactly what was run and orv can check it against the recipe. An item
    that holds several flags separated by spaces (`"--tensor-parallel-size 2 --max-num-seqs 8"`)
    is a shell string in disguise: quoting, variables and word splitting would decide what runs.
    Write one item per token; the hint gives the list.
    """
    for entry, recipe in snapshot.valid_recipes():
        if recipe.launch is None:
            continue
        for i, arg in enumerate(recipe.launch.args):
            parts = _split(arg)
            if parts:
                yield Finding(
                    entry.path,
                    f"launch.args[{i}] holds a shell command line: {arg!r}",
                    "write one item per token: [" + ", ".join(f'"{p}"' for p in parts) + "]",
                    at=("launch", "args", i),
                )


def _flag(args: list[str], *names: str) -> tuple[int | None, str | None]:
    """(index of the value, value) of the last `--name VALUE` or `--name=VALUE` among args."""
    found: tuple[int | None, str | None] = (None, None)
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                found = (i + 1, args[i + 1])
            elif arg.startswith(name + "="):
                found = (i, arg.split("=", 1)[1])
    return found


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@check("ORV251", E, "launch disagrees with the recipe", per_file=True)
def launch_agrees_with_recipe(snapshot: Snapshot) -> Iterator[Finding]:
    """
    An inference recipe's `launch.args` (the serve command) must describe the configuration the
    rest of the recipe states: `--tensor-parallel-size`/`--tp` equal to `serving.tp` (or, without
    it, at most `hardware.count`); `--max-num-seqs`/`--max-running-requests` not below
    `serving.concurrency` (the server would queue what the benchmark sends at once, measuring
    another concurrency); and the model path (`--model`, `--model-path` or vLLM's positional
    `serve MODEL`) equal to the recipe's `checkpoint` when it names one. Fix whichever side is wrong.
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, InferenceRecipe) or recipe.launch is None:
            continue
        args = list(recipe.launch.args)
        i, tp = _flag(args, "--tensor-parallel-size", "--tp", "--tp-size", "-tp")
        tp_n = _int(tp)
        if tp_n is not None and i is not None:
            want = recipe.serving.tp
            if want is not None and tp_n != want:
                yield Finding(
                    entry.path,
                    f"launch sets tensor parallel size {tp_n}, serving.tp is {want}",
                    f"make them agree: `serving.tp: {tp_n}` or `{args[i - 1] if tp == args[i] else '--tensor-parallel-size'} {want}`",
                    at=("launch", "args", i),
                )
            elif want is None and tp_n > recipe.hardware.count:
                yield Finding(
                    entry.path,
                    f"launch sets tensor parallel size {tp_n} on {recipe.hardware.count} GPU(s)",
                    f"tensor parallelism cannot exceed hardware.count ({recipe.hardware.count})",
                    at=("launch", "args", i),
                )
        i, seqs = _flag(args, "--max-num-seqs", "--max-running-requests")
        seqs_n = _int(seqs)
        concurrency = recipe.serving.concurrency
        if seqs_n is not None and i is not None and concurrency is not None and seqs_n < concurrency:
            yield Finding(
                entry.path,
                f"launch caps the server at {seqs_n} sequences, below serving.concurrency {concurrency}",
                f"raise the cap to at least {concurrency}, or state the concurrency the server really ran",
                at=("launch", "args", i),
            )
        i, model = _flag(args, "--model", "--model-path")
        if model is None and len(args) >= 2 and args[0] == "serve" and not args[1].startswith("-"):
            i, model = 1, args[1]
        if model is not None and i is not None and recipe.checkpoint and model != recipe.checkpoint:
            yield Finding(
                entry.path,
                f"launch serves `{model}`, the recipe's checkpoint is `{recipe.checkpoint}`",
                f"serve the checkpoint the recipe names (`{recipe.checkpoint}`), or fix `checkpoint:`",
                at=("launch", "args", i),
            )


@check("ORV252", E, "training launch disagrees with the layout, tuning or workload", per_file=True)
def training_launch_agrees_with_recipe(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A training recipe's `launch.args` holds the framework arguments its layout, tuning and workload
    do not already imply (docs/protocols.md). A flag that restates one of those must say the same:
    `--tensor-model-parallel-size` equal to `layout.tp`, `--pipeline-model-parallel-size` to
    `layout.pp`, `--context-parallel-size`, `--expert-model-parallel-size`,
    `--expert-tensor-parallel-size` and `--num-virtual-stages-per-pipeline-rank` to the layout's
    cp, ep, etp and vpp (1 when the layout leaves them out), `--seq-length` and
    `--global-batch-size` to the workload's, `--micro-batch-size`, `--recompute-granularity`,
    `--optimizer-offload-fraction`, `--moe-token-dispatcher-type` and `--attention-backend` to the
    tuning's, and no `--fp16` on a BF16 workload (nor `--bf16` on an FP16 one). Otherwise the run
    measured another configuration than the one the recipe ranks. Fix whichever side is wrong;
    better, drop the flag: `orv reproduce` prints it from the recipe.
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, TrainingRecipe) or recipe.launch is None:
            continue
        args = list(recipe.launch.args)
        given = stated(args)
        implied = implied_args(recipe, snapshot.catalog.workloads.get(recipe.workload))
        for arg in implied:
            if arg.value is None or arg.flag not in given:
                continue
            i, value = given[arg.flag]
            if not same_value(arg.value, value):
                yield Finding(
                    entry.path,
                    f"launch sets {arg.flag} {value}, {arg.source} is {arg.value}",
                    f"make them agree, or drop {arg.flag} from launch.args: the recipe already "
                    f"implies `{arg.flag} {arg.value}` (orv reproduce prints it)",
                    at=("launch", "args", i),
                )
        precision = next((a.flag for a in implied if a.flag in PRECISION_FLAGS), None)
        for flag in PRECISION_FLAGS:
            if precision is not None and flag != precision and flag in given:
                yield Finding(
                    entry.path,
                    f"launch sets {flag}, workload `{recipe.workload}` trains in {precision[2:].upper()}",
                    f"drop {flag}: the workload fixes the precision ({precision})",
                    at=("launch", "args", given[flag][0]),
                )
