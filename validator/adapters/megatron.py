"""Megatron-LM and NeMo training logs -> run file: one sample per optimizer step.

Megatron-LM (megatron/training/training.py `training_log`, printed by the last rank every
`--log-interval` iterations):
  [2026-10-18 09:14:03.512345] iteration        3/      24 | consumed samples:          384 |
  elapsed time per iteration (ms): 88538.1 | learning rate: 1.000000E-06 | global batch size:   128 |
  lm loss: 1.991234E+00 | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 |
  number of nan iterations:   0 |
(one line; older versions omit the timestamp or the global batch size). The start-up
`arguments` block (`  tensor_model_parallel_size ....... 1`) gives the layout, world size,
sequence length, global batch and precision. A NaN step is not printed as NaN: its loss is left
out of the average, so the line shows `lm loss: 0.000000E+00` and `number of nan iterations: 1`.

NeMo 2 (nemo/lightning/pytorch/callbacks/progress_printer.py, values printed with 4 significant
digits):
  Training epoch 0, iteration 3/23 | lr: 2.941e-07 | global_batch_size: 128 | global_step: 3 |
  reduced_train_loss: 1.991 | train_step_timing in s: 88.54 | consumed_samples: 512
NeMo counts steps from 0 (global_step 0 is the first optimizer step); the run file counts from 1
as Megatron does, so step = global_step + 1.

Both print per-interval averages, so the log must have one line per iteration (log interval 1).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from validator.adapters.common import (
    Converted,
    Problems,
    RunMetadata,
    Source,
    common_fields,
    merge_mapping,
    require,
    stated,
    tool_block,
)
from validator.science import bounds
from validator.science.bounds import Bound
from validator.science.throughput import SKIPPED, training_facts

# An iteration number has at most 15 digits (bounds.ITERATION); a longer run of digits is not read as one.
_MEGATRON_LINE = re.compile(r"\biteration\s+(\d{1,15})\s*/\s*(\d{1,15})\s*\|(.*)$")
_TIMESTAMP = re.compile(r"\[(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.\d+)?\]")
_NEMO_LINE = re.compile(r"Training epoch (\d{1,15}), iteration (\d{1,15})/(\d{1,15})((?: \| [^|]+)+)\s*$")
_ARG_LINE = re.compile(r"\b([A-Za-z_]\w*) (?:\.+ )?(\S.*?)\s*$")
_PRINTED_RATE_TOLERANCE = 0.01  # NeMo prints 4 significant digits; a wrong GPU count is off by 2x


@dataclass(frozen=True)
class LoggedStep:
    line: int
    step: int
    time_s: float
    batch: int | None
    consumed: int | None
    loss: float | str  # "nan"/"inf" for a diverged step, "skipped" for an fp16 overflow skip
    printed_rate: float | None = None  # the tool's own tokens/s/GPU for this step, if it prints one
    timestamp: str | None = None


@dataclass(frozen=True)
class ParsedLog:
    steps: tuple[LoggedStep, ...]
    args: Mapping[str, tuple[str, int]]  # Megatron arguments block: name -> (value, line)


def _fields(rest: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in rest.split("|"):
        part = part.strip()
        if not part:
            continue
        if ":" in part:
            key, value = part.rsplit(":", 1)
        else:  # very old Megatron wrote "lm loss 2.0E+00" without a colon
            key, _, value = part.rpartition(" ")
        out[key.strip()] = value.strip()
    return out


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    value = _float(text)
    return int(value) if value is not None and value.is_integer() else None


def _loss(text: str | None) -> float | str | None:
    value = _float(text)
    if value is None:
        return None
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


# --------------------------------------------------------------------------- Megatron-LM


def _arguments(lines: list[str]) -> dict[str, tuple[str, int]]:
    args: dict[str, tuple[str, int]] = {}
    inside = False
    for number, line in enumerate(lines, start=1):
        if "end of arguments" in line:
            break
        if re.search(r"-{3,} arguments -{3,}", line):
            inside = True
            continue
        if inside:
            m = _ARG_LINE.search(line)
            if m:
                args[m.group(1)] = (m.group(2), number)
    return args


def _step_loss(fields: Mapping[str, str]) -> float | str | None:
    """The loss of one logged iteration as `training_log` prints it (core_v0.14.0 .. core_v0.17.0).

    - fp16 with dynamic loss scaling skips an iteration whose gradients overflowed: `number of
      skipped iterations` is 1, the loss is not accumulated, and its average (0) is left out
      (`if avg > 0.0`, up to core_v0.16) or printed as `lm loss: 0.000000E+00` (`avg >= 0.0`, from
      core_v0.17). A skipped step, not a NaN: recorded as "skipped". When the skipped iteration's
      loss itself was NaN/Inf, `number of nan iterations` is 1 as well: a diverged step ("nan").
    - bf16 has no loss scaler and skips nothing: a NaN loss is accumulated, its average is NaN,
      `nan > 0.0` is false so no `lm loss` is printed, and `grad norm: nan` shows it: "nan".
    - an explicit `lm loss: nan` / `NAN` / `inf` (other versions, other loss keys) is taken as printed.
    None when the line has no loss and no sign of why (the log is not as Megatron-LM prints it).
    """
    skipped = _int(fields.get("number of skipped iterations")) or 0
    nan_iters = _int(fields.get("number of nan iterations")) or 0
    if skipped:
        return "nan" if nan_iters else SKIPPED
    loss = _loss(fields.get("lm loss"))
    if loss is not None:
        return loss
    grad_norm = _float(fields.get("grad norm"))
    if grad_norm is not None and not math.isfinite(grad_norm):
        return "nan"
    return None


_VALIDATION = re.compile(r"validation(?: \S+)? loss at (?:iteration|step) (\d{1,15})\s*\|(.*)$")


def parse_megatron(source: Source, problems: Problems, notes: list[str]) -> ParsedLog:
    lines = source.lines()
    steps: list[LoggedStep] = []
    validation_nan: dict[int, int] = {}  # iteration -> line of a non-finite validation loss
    for number, line in enumerate(lines, start=1):
        v = _VALIDATION.search(line)
        if v:
            value = _loss(_fields(v.group(2)).get("lm loss value"))
            if isinstance(value, str):
                validation_nan.setdefault(int(v.group(1)), number)
            continue
        m = _MEGATRON_LINE.search(line)
        if not m or "elapsed time per iteration" not in m.group(3):
            continue
        fields = _fields(m.group(3))
        elapsed = _float(fields.get("elapsed time per iteration (ms)"))
        if elapsed is None or elapsed <= 0:
            problems.add(
                "ORV104",
                f"iteration {m.group(1)}: no positive `elapsed time per iteration (ms)`",
                "give the log Megatron-LM wrote, unchanged",
                number,
                line.find("elapsed") + 1,
            )
            continue
        loss = _step_loss(fields)
        if loss is None:
            problems.add(
                "ORV108",
                f"iteration {m.group(1)}: no `lm loss` on the line, and no skipped iteration "
                "or non-finite grad norm to explain it",
                "the run file needs the training loss of every step; give the log Megatron-LM's "
                "pretrain_gpt.py wrote (it reports `lm loss`), unchanged",
                number,
                m.start(3) + 1,
            )
            continue
        stamp = _TIMESTAMP.search(line[: m.start()])
        steps.append(
            LoggedStep(
                number,
                int(m.group(1)),
                elapsed / 1000.0,
                _int(fields.get("global batch size")),
                _int(fields.get("consumed samples")),
                loss,
                None,
                f"{stamp.group(1)}T{stamp.group(2)}" if stamp else None,
            )
        )
    skipped = [s.step for s in steps if s.loss == SKIPPED]
    if skipped:
        notes.append(
            f"{len(skipped)} iteration(s) skipped by fp16 loss scaling (first {skipped[0]}): recorded as "
            "skipped steps, left out of the loss comparison and the warm-up count"
        )
    if validation_nan:
        first = min(validation_nan)
        for i, step in enumerate(steps):
            if step.step >= first and isinstance(step.loss, float):
                steps[i] = dataclasses.replace(step, loss="nan")
                notes.append(
                    f"the validation loss at iteration {first} is not finite (line {validation_nan[first]}): "
                    f"the model's weights are, so iteration {step.step}'s loss is recorded as nan"
                )
                break
    return ParsedLog(tuple(steps), _arguments(lines))


# The arguments that size the model and the layout, and their physical bounds (docs/limits.md): checked
# before the layout is built, so a layer split for 10^9 stages is refused here, never enumerated.
ARGUMENT_BOUNDS: dict[str, Bound] = {
    "num_layers": bounds.LAYERS,
    "decoder_first_pipeline_num_layers": bounds.LAYERS,
    "decoder_last_pipeline_num_layers": bounds.LAYERS,
    "pipeline_model_parallel_size": bounds.PIPELINE,
    "virtual_pipeline_model_parallel_size": bounds.VIRTUAL_PIPELINE,
    "tensor_model_parallel_size": bounds.PARALLEL,
    "context_parallel_size": bounds.PARALLEL,
    "data_parallel_size": bounds.PARALLEL,
    "expert_model_parallel_size": bounds.PARALLEL,
    "expert_tensor_parallel_size": bounds.PARALLEL,
    "world_size": bounds.PARALLEL,
    "hidden_size": bounds.HIDDEN,
    "num_attention_heads": bounds.HEADS,
    "num_experts": bounds.EXPERTS,
    "moe_router_topk": bounds.EXPERTS,
    "seq_length": bounds.SEQ_LEN,
    "global_batch_size": bounds.GLOBAL_BATCH,
    "log_interval": bounds.ITERATION,
    "train_iters": bounds.ITERATION,
}


def argument_bounds_hold(args: Mapping[str, tuple[str, int]], problems: Problems) -> bool:
    """Each sizing argument the log states is a whole number within its bound, or a finding at its line."""
    held = True
    for name, bound in ARGUMENT_BOUNDS.items():
        if name not in args or args[name][0] in ("None", "False", "True"):
            continue  # not set: Megatron prints None for an unset size
        text, line = args[name]
        value = _float(text)
        if value is None:
            continue  # not a number at all: the layout falls back to the recipe, which ORV206 compares
        stated: Any = int(value) if math.isfinite(value) and value.is_integer() else value
        why = bounds.out_of_bounds(stated, bound)
        if why:
            problems.add(
                "ORV109",
                f"argument `{name}` {why}",
                "give the log Megatron-LM wrote, unchanged; no real model or cluster has that many",
                line,
            )
            held = False
    return held


def _check_world(args: Mapping[str, tuple[str, int]], problems: Problems) -> None:
    """Megatron derives its data-parallel size as world_size ÷ (tp × pp × cp) (arguments.py), so the block states the
    GPU count twice: a world size that is not their product was edited, and would divide tokens/s by another count."""
    names = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")
    sizes = [_int(args[n][0]) if n in args else None for n in (*names, "data_parallel_size", "world_size")]
    if any(size is None or size <= 0 for size in sizes):
        return  # a size not stated: the recipe's layout and ORV206 stand
    tp, pp, cp, dp, world = (size for size in sizes if size is not None)
    if tp * pp * cp * dp != world:
        problems.add(
            "ORV109",
            f"argument `world_size` is {world} but tensor × pipeline × context × data parallel sizes are "
            f"{tp} × {pp} × {cp} × {dp} = {tp * pp * cp * dp}",
            "give the log Megatron-LM wrote, unchanged: Megatron derives the data-parallel size from the world size",
            args["world_size"][1],
        )


def _layout_from_args(args: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    def value(name: str) -> int | None:
        return _int(args[name][0]) if name in args else None

    layout: dict[str, Any] = {}
    for key, name in (
        ("tp", "tensor_model_parallel_size"),
        ("pp", "pipeline_model_parallel_size"),
        ("cp", "context_parallel_size"),
        ("dp", "data_parallel_size"),
    ):
        if value(name) is not None:
            layout[key] = value(name)
    if "virtual_pipeline_model_parallel_size" in args:
        layout["vpp"] = value("virtual_pipeline_model_parallel_size") or 1  # "None" means no interleaving
    if value("num_experts"):  # expert sizes only mean something for MoE models
        for key, name in (("ep", "expert_model_parallel_size"), ("etp", "expert_tensor_parallel_size")):
            if value(name) is not None:
                layout[key] = value(name)
    split = _layer_split(
        value("num_layers"),
        layout.get("pp"),
        layout.get("vpp", 1),
        value("decoder_first_pipeline_num_layers"),
        value("decoder_last_pipeline_num_layers"),
    )
    if split:
        layout["layer_split"] = split
    return layout


def _layer_split(layers: int | None, pp: int | None, vpp: int, first: int | None, last: int | None) -> list[int] | None:
    """Megatron's uneven pipeline split: first/last stages as given, the middle stages share the rest."""
    if not layers or not pp or pp < 2 or vpp != 1 or (first is None and last is None):
        return None
    if pp > bounds.PIPELINE.high or pp > layers:  # argument_bounds_hold refused it; never build such a list
        return None
    middle_stages = pp - (first is not None) - (last is not None)
    rest = layers - (first or 0) - (last or 0)
    if middle_stages <= 0 or rest % middle_stages:
        return None
    split = [rest // middle_stages] * middle_stages
    return ([first] if first is not None else []) + split + ([last] if last is not None else [])


def _check_protocol(args: Mapping[str, tuple[str, int]], meta: RunMetadata, problems: Problems) -> None:
    """The arguments must follow the workload's protocol: sequence length and precision."""
    if "seq_length" in args and meta.seq_len and _int(args["seq_length"][0]) != meta.seq_len:
        problems.add(
            "ORV109",
            f"the log trained with seq_length {args['seq_length'][0]}, but workload "
            f"`{meta.workload}` fixes {meta.seq_len}",
            "a run is evidence only for the workload it followed; rerun with the workload's protocol",
            args["seq_length"][1],
        )
    precision = {k: args[k][0] for k in ("bf16", "fp16", "fp8") if k in args}
    wrong = None
    if meta.dtype == "bf16" and (
        precision.get("bf16") == "False" or precision.get("fp8") not in (None, "None", "False")
    ):
        wrong = "fp8" if precision.get("fp8") not in (None, "None", "False") else "bf16"
    if meta.dtype == "fp16" and precision.get("fp16") == "False":
        wrong = "fp16"
    if wrong:
        problems.add(
            "ORV109",
            f"the log's precision arguments ({', '.join(f'{k}={v}' for k, v in precision.items())}) "
            f"do not match workload `{meta.workload}` ({meta.dtype})",
            "a run is evidence only for the workload it followed; rerun in the workload's precision",
            args[wrong][1],
        )


def convert_megatron(source: Source, meta: RunMetadata) -> Converted:
    notes: list[str]
    problems, notes = Problems(source), []
    parsed = parse_megatron(source, problems, notes)
    args = parsed.args
    interval = _int(args["log_interval"][0]) if "log_interval" in args else None
    if interval is not None and interval != 1:
        problems.add(
            "ORV109",
            f"the run logged every {interval} iterations, so its lines are {interval}-step averages",
            "rerun with --log-interval 1: the run file needs every optimizer step",
            args["log_interval"][1],
        )
    _check_protocol(args, meta, problems)
    if not argument_bounds_hold(args, problems):
        problems.raise_if_any()  # before any size drives the layout, the split or the arithmetic
    _check_world(args, problems)
    seq_len = _int(args["seq_length"][0]) if "seq_length" in args else meta.seq_len
    args_batch = _int(args["global_batch_size"][0]) if "global_batch_size" in args else None
    meta = merge_mapping(meta, "layout", _layout_from_args(args), "Megatron-LM", notes)
    world = _int(args["world_size"][0]) if "world_size" in args else None
    first_stamp = parsed.steps[0].timestamp if parsed.steps else None
    for name, value in (("gpus", world), ("measured_at", first_stamp)):
        meta = stated(meta, name, value, "Megatron-LM", notes)
    document = training_document(
        "megatron-lm", "megatron-lm-training-log", parsed, seq_len, args_batch, meta, problems, notes
    )
    architecture = _architecture(args, source.lines())
    if architecture:
        document["architecture"] = architecture  # compared with the catalog: ORV227 (validator/evidence/identity.py)
    return Converted(document, tuple(notes))


# megatron/training/tokenizer/tokenizer.py `_vocab_size_with_padding` and
# megatron/training/theoretical_memory_usage.py (core_v0.14.0 .. core_v0.17.0)
_PADDED_VOCAB = re.compile(r"> padded vocab \(size: (\d{1,15})\) with \d+ dummy tokens")
_TOTAL_PARAMS = re.compile(r"Total number of parameters in billions:\s*([0-9.]+)")


def _architecture(args: Mapping[str, tuple[str, int]], lines: list[str]) -> dict[str, Any]:
    """What the log states about the model it trained: arguments and the printed parameter count."""
    out: dict[str, Any] = {}
    for key, name in (
        ("layers", "num_layers"),
        ("hidden_size", "hidden_size"),
        ("attention_heads", "num_attention_heads"),
        ("experts", "num_experts"),
        ("experts_per_token", "moe_router_topk"),
    ):
        value: float | None = _int(args[name][0]) if name in args else None
        if value and value > 0:
            out[key] = value
    if "experts" not in out:
        out.pop("experts_per_token", None)  # the router's top-k argument has a default on dense models too
    for line in lines:
        m = _PADDED_VOCAB.search(line)
        if m and "vocab_size" not in out:
            out["vocab_size"] = int(m.group(1))
        m = _TOTAL_PARAMS.search(line)
        if m and "params_b" not in out:
            value = _float(m.group(1))
            if value and value > 0:
                out["params_b"] = value
    return out


# --------------------------------------------------------------------------- NeMo


def parse_nemo(source: Source, problems: Problems) -> ParsedLog:
    steps: list[LoggedStep] = []
    for number, line in enumerate(source.lines(), start=1):
        m = _NEMO_LINE.search(line)
        if not m:
            continue
        fields = _fields(m.group(4))
        timing = _float(fields.get("train_step_timing in s"))
        loss = _loss(fields.get("reduced_train_loss"))
        missing = (
            "train_step_timing in s"
            if timing is None or timing <= 0
            else "reduced_train_loss"
            if loss is None
            else None
        )
        if missing:
            problems.add(
                "ORV108",
                f"iteration {m.group(2)}: no valid `{missing}` on the line",
                "the run file needs every step's time and loss; keep NeMo's TimingCallback and ProgressPrinter on",
                number,
                m.start(4) + 1,
            )
            continue
        assert timing is not None and loss is not None
        global_step = _int(fields.get("global_step"))
        step = (global_step if global_step is not None else int(m.group(2))) + 1
        steps.append(
            LoggedStep(
                number,
                step,
                timing,
                _int(fields.get("global_batch_size")),
                _int(fields.get("consumed_samples")),
                loss,
                _float(fields.get("tokens_per_sec_per_gpu")),
            )
        )
    return ParsedLog(tuple(steps), {})


def convert_nemo(source: Source, meta: RunMetadata) -> Converted:
    notes: list[str]
    problems, notes = Problems(source), []
    parsed = parse_nemo(source, problems)
    document = training_document("nemo", "nemo-progress-log", parsed, meta.seq_len, None, meta, problems, notes)
    _check_printed_rates(parsed, document, meta, problems)
    problems.raise_if_any()
    rates = [s.printed_rate for s in parsed.steps[meta.warmup_steps :] if s.printed_rate]
    if rates and len(rates) == len(parsed.steps[meta.warmup_steps :]):
        document["summary"]["tokens_per_s_per_gpu"] = math.fsum(rates) / len(rates)
        notes.append("summary.tokens_per_s_per_gpu is the mean of NeMo's printed per-step tokens_per_sec_per_gpu")
    return Converted(document, tuple(notes))


def _check_printed_rates(parsed: ParsedLog, document: dict[str, Any], meta: RunMetadata, problems: Problems) -> None:
    """NeMo's own per-step tokens/s/GPU must follow from batch x sequence / step time / GPUs."""
    gpus = document["hardware"]["count"]
    for step, sample in zip(parsed.steps, document["samples"]):
        if step.printed_rate is None:
            continue
        computed = sample["tokens"] / sample["time_s"] / gpus
        if not math.isclose(step.printed_rate, computed, rel_tol=_PRINTED_RATE_TOLERANCE):
            problems.add(
                "ORV109",
                f"iteration prints tokens_per_sec_per_gpu {step.printed_rate:g}, but "
                f"global batch x {meta.seq_len} tokens / step time / {gpus} GPUs = {computed:.4g}",
                "check the GPU count (--gpus or the recipe) and the workload's sequence length",
                step.line,
            )
            return


# --------------------------------------------------------------------------- shared


def _check_steps(steps: tuple[LoggedStep, ...], problems: Problems, tool: str) -> None:
    if not steps:
        problems.add(
            "ORV108",
            f"no {tool} training iteration lines found",
            f"give the {tool} log of the training run (stdout of the last rank)",
        )
        return
    for prev, cur in zip(steps, steps[1:]):
        if cur.step != prev.step + 1:
            what = (
                "a restart or a second run"
                if cur.step <= prev.step
                else f"a gap of {cur.step - prev.step} steps (log interval > 1)"
            )
            problems.add(
                "ORV109",
                f"step {cur.step} follows step {prev.step}: {what}",
                "give the log of one uninterrupted run that logs every iteration",
                cur.line,
            )
            return


def _batches(parsed: ParsedLog, args_batch: int | None, meta: RunMetadata, problems: Problems) -> list[int]:
    """Global batch of every step: printed on the line, else the arguments, consumed samples, the workload."""
    out: list[int] = []
    previous_consumed: int | None = None
    for step in parsed.steps:
        delta = (
            step.consumed - previous_consumed if step.consumed is not None and previous_consumed is not None else None
        )
        batch = step.batch or args_batch or delta or meta.global_batch
        previous_consumed = step.consumed
        if not batch:
            problems.add(
                "ORV108",
                f"step {step.step}: the global batch size is not stated",
                "pass --workload (its global batch) or give a log that prints it",
                step.line,
            )
            return out
        why = bounds.out_of_bounds(batch, bounds.GLOBAL_BATCH)
        if why:
            problems.add(
                "ORV109",
                f"step {step.step}: the global batch {why}",
                "give the log the training run wrote, unchanged",
                step.line,
            )
            return out
        if meta.global_batch and batch != meta.global_batch:
            problems.add(
                "ORV109",
                f"step {step.step} trained a global batch of {batch}, but workload "
                f"`{meta.workload}` fixes {meta.global_batch}",
                "a run is evidence only for the workload it followed; rerun with its global batch",
                step.line,
            )
            return out
        out.append(batch)
    return out


def training_document(
    tool: str,
    fmt: str,
    parsed: ParsedLog,
    seq_len: int | None,
    args_batch: int | None,
    meta: RunMetadata,
    problems: Problems,
    notes: list[str],
) -> dict[str, Any]:
    _check_steps(parsed.steps, problems, tool)
    if seq_len is None:
        problems.add(
            "ORV108",
            "the sequence length is not stated",
            "pass --workload (its sequence length) or --recipe; tokens per step = global batch x sequence length",
        )
    batches = _batches(parsed, args_batch, meta, problems)
    require(
        meta,
        ("model", "gpu", "gpus", "software", "workload", "layout", "measured_at", "measured_by", "tool_version"),
        problems,
        f"the {tool} log",
    )
    layout = dict(meta.layout or {})
    missing = [k for k in ("tp", "pp", "dp") if k not in layout]
    if meta.layout and missing:
        problems.add("ORV108", f"the layout lacks {', '.join(missing)}", "pass --recipe with a complete layout")
    problems.raise_if_any()
    assert seq_len is not None and meta.gpus is not None
    samples = [
        {"step": s.step, "time_s": round(s.time_s, 6), "tokens": b * seq_len, "loss": s.loss}
        for s, b in zip(parsed.steps, batches)
    ]
    facts = training_facts(samples, meta.gpus, meta.warmup_steps)
    if "tokens_per_s_per_gpu" not in facts.headline:
        problems.add(
            "ORV109",
            f"the log has {len(samples)} iteration(s); workload `{meta.workload}` excludes "
            f"the first {meta.warmup_steps} as warm-up",
            "give the log of a longer run",
            parsed.steps[-1].line,
        )
        problems.raise_if_any()
    summary: dict[str, Any] = {"tokens_per_s_per_gpu": facts.headline["tokens_per_s_per_gpu"]}
    if isinstance(samples[-1]["loss"], float):
        summary["final_loss"] = samples[-1]["loss"]
    doc = common_fields("training", meta)
    doc.update(
        {
            "tool": tool_block(tool, fmt, meta),
            "workload": meta.workload,
            "layout": layout,
            "summary": summary,
            "samples": samples,
        }
    )
    return doc
