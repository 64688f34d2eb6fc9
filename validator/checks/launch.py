"""ORV25x launch: a recipe's command line is an argument list that agrees with the rest of the recipe
(ORV251 for an inference recipe's serve command, ORV252 for a training recipe's framework arguments)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.models import InferenceRecipe, TrainingRecipe
from validator.quality.status import full_precision_weights, kv_quantized, weight_quant
from validator.registry.snapshot import Snapshot
from validator.stacks import launch_args
from validator.stacks.launch_args import Parsed, Setting, Unreadable, setting_int
from validator.stacks.megatron_args import PRECISION_FLAGS, implied_args, same_value, stated

E, W = Severity.ERROR, Severity.WARNING


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


def _inference_launches(snapshot: Snapshot) -> Iterator[tuple[Any, InferenceRecipe, Parsed, dict[str, str]]]:
    for entry, recipe in snapshot.valid_recipes():
        if isinstance(recipe, InferenceRecipe):
            parsed = launch_args.parsed(recipe)
            if parsed is not None and parsed.table.engine in launch_args.INFERENCE_FLAGS:
                yield entry, recipe, parsed, launch_args.INFERENCE_FLAGS[parsed.table.engine]


@check("ORV251", E, "launch disagrees with the recipe", per_file=True)
def launch_agrees_with_recipe(snapshot: Snapshot) -> Iterator[Finding]:
    """
    An inference recipe's `launch.args` (the serve command), read as its engine parses it (vLLM's
    `_`/`-` equivalence, `--flag=value`, a unique prefix of a flag, the last of a repeated flag), must
    describe the configuration the rest of the recipe states: tensor parallel size equal to
    `serving.tp` (or, without it, at most `hardware.count`; a launch that leaves a degree the recipe
    states above 1 at the engine's default of 1 disagrees too); pipeline parallel size equal to
    `serving.pp` (1 unstated); the expert parallel size (SGLang's `--ep-size`; vLLM's tensor × data
    parallel size with `--enable-expert-parallel`, else 1) equal to `serving.ep`; tensor × pipeline ×
    data parallel sizes within `hardware.count`; the maximum number of running sequences
    (`--max-num-seqs`, `--max-running-requests`) not below `serving.concurrency` (the server would queue
    what the benchmark sends at once, measuring another concurrency); the context length
    (`--max-model-len`, `--context-length`) equal to `serving.context_len`; and the served model equal
    to the recipe's `checkpoint` when it names one. llama-server's `-c` is the context all `-np` slots
    share: each request gets c / np, rounded up to a multiple of 256 (all of c with a unified KV cache,
    `-kvu`, as when `-np` is left to auto: 4 slots), capped by `--kv-unified-per-slot`, and that is
    compared with `serving.context_len`. llama.cpp's `LLAMA_ARG_*` variables
    in `launch.env` are read as the flags they stand for (the command line overrides them). vLLM's
    `--max-model-len auto` (or -1) and llama.cpp's `-c 0` take the model's own length, as when the flag
    is absent. Values are read as the engine reads them (ORV259 names one it would not). Fix whichever
    side is wrong.
    """
    for entry, recipe, parsed, flags in _inference_launches(snapshot):
        serving, count = recipe.serving, recipe.hardware.count

        def finding(setting: Setting, message: str, hint: str, path: str = entry.path) -> Finding:
            return Finding(path, message, hint, at=setting.at)

        def number(setting: Setting | None, engine: str = parsed.table.engine) -> int | None:
            """The value as the engine reads it; None when unset or unreadable (ORV259 names the latter)."""
            try:
                return setting_int(engine, setting) if setting is not None else None
            except Unreadable:
                return None

        degrees: dict[str, int] = {}
        for key, field in (("tp", "tp"), ("pp", "pp"), ("ep", "ep")):
            setting = parsed.value(flags.get(key))
            n = number(setting)
            stated_degree = getattr(serving, field)
            shell_string = any(any(c.isspace() for c in token) for _, token, _ in parsed.unknown)  # ORV250's
            if (
                setting is None
                and key in flags
                and stated_degree is not None
                and stated_degree > 1
                and not shell_string
            ):
                # the engine's default is 1: the server ran without the parallelism the recipe states
                yield Finding(
                    entry.path,
                    f"launch leaves {flags[key]} at the engine's default 1, serving.{field} is {stated_degree}",
                    f"add `{flags[key]} {stated_degree}` to launch.args, or state the degree the server ran",
                    at=("launch", "args"),
                )
            if setting is None or n is None:
                continue
            degrees[key] = n
            want = getattr(serving, field)
            if want is None and key != "tp":
                want = 1 if key == "pp" else None
            if want is not None and n != want:
                yield finding(
                    setting,
                    f"launch sets {setting.spelled} {n} ({setting.flag}), serving.{field} is {want}",
                    f"make them agree: `serving.{field}: {n}` or `{setting.flag} {want}`",
                )
            elif want is None and key == "tp" and n > count:
                yield finding(
                    setting,
                    f"launch sets {setting.spelled} {n} ({setting.flag}) on {count} GPU(s)",
                    f"tensor parallelism cannot exceed hardware.count ({count})",
                )
        dp = parsed.value(flags.get("dp"))
        dp_n = number(dp)
        if parsed.value("--enable-dp-attention"):
            dp, dp_n = None, None  # SGLang's deprecated spelling: attention DP inside the TP ranks, no more GPUs
        expert = parsed.value("--enable-expert-parallel") if parsed.table.engine == "vllm" else None
        if serving.ep is not None and parsed.table.engine == "vllm":
            # vLLM's expert parallel group spans the tensor × data parallel ranks, or is 1 when off
            on = expert is not None and expert.value != "false"
            ep = degrees.get("tp", serving.tp or 1) * (dp_n or 1) if on else 1
            if ep != serving.ep:
                where = expert or parsed.value(flags.get("tp")) or parsed.value(flags.get("model"))
                if where is not None:
                    yield finding(
                        where,
                        f"launch runs expert parallel size {ep} (--enable-expert-parallel "
                        f"{'on' if on else 'off'}: tensor × data parallel), serving.ep is {serving.ep}",
                        "make them agree: vLLM's expert parallel size is tp × dp with --enable-expert-parallel",
                    )
        world = degrees.get("tp", serving.tp or 1) * degrees.get("pp", serving.pp or 1) * (dp_n or 1)
        if world > count:
            where = dp or parsed.value(flags.get("pp"))  # tensor parallelism alone: the finding above
            if where is not None:
                yield finding(
                    where,
                    f"launch needs {world} GPUs (tensor × pipeline × data parallel sizes), hardware.count is {count}",
                    f"state the GPUs the server really used (`hardware.count: {world}`), or fix {where.flag}",
                )
        seqs = parsed.value(flags.get("seqs"))
        seqs_n = number(seqs)
        if seqs and seqs_n is not None and serving.concurrency is not None and seqs_n < serving.concurrency:
            yield finding(
                seqs,
                f"launch caps the server at {seqs_n} sequences ({seqs.spelled} → {seqs.flag}), "
                f"below serving.concurrency {serving.concurrency}",
                f"raise the cap to at least {serving.concurrency}, or state the concurrency the server really ran",
            )
        if seqs and seqs_n is not None and parsed.table.engine == "llama.cpp" and serving.slots not in (None, seqs_n):
            yield finding(
                seqs,
                f"launch sets {seqs.flag} {seqs_n} (server slots), serving.slots is {serving.slots}",
                f"make them agree: `serving.slots: {seqs_n}` or `{seqs.flag} {serving.slots}`",
            )
        context = parsed.value(flags.get("context"))
        context_n = number(context)
        if context_n is not None and context_n <= 0:
            context_n = None  # vLLM's -1/auto, llama.cpp's 0: the model's own length, as when the flag is absent
        if context and context_n is not None and parsed.table.engine == "llama.cpp" and serving.context_len:
            per_slot, how = launch_args.per_slot_context(parsed, context_n)
            if per_slot != serving.context_len:
                yield finding(
                    context,
                    f"launch gives each request {per_slot} tokens of context ({context.said} "
                    f"{context_n}: {how}), serving.context_len is {serving.context_len}",
                    "make them agree: llama-server's -c is the context all -np slots share (each gets c / np "
                    "unless -kvu), so state one request's context or size -c for every slot "
                    f"(`-c {serving.context_len * max(1, number(parsed.value('--parallel')) or 1)}`)",
                )
        elif context and context_n is not None and serving.context_len is not None and context_n != serving.context_len:
            yield finding(
                context,
                f"launch sets {context.flag} {context_n}"
                + (
                    f" (`{context.value}` as {parsed.table.engine} reads it)"
                    if (context.value or "").strip() != str(context_n)
                    else ""
                )
                + f", serving.context_len is {serving.context_len}",
                f"make them agree: `serving.context_len: {context_n}` or `{context.flag} {serving.context_len}`",
            )
        model = parsed.value(flags.get("model"))
        if model and model.value and recipe.checkpoint and model.value != recipe.checkpoint:
            yield finding(
                model,
                f"launch serves `{model.value}`, the recipe's checkpoint is `{recipe.checkpoint}`",
                f"serve the checkpoint the recipe names (`{recipe.checkpoint}`), or fix `checkpoint:`",
            )


@check("ORV253", W, "launch flag unknown to the engine", per_file=True)
def launch_flags_are_known(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Every flag of `launch.args` must be one the engine's parser accepts (stacks/flags/, the engine's own
    flags at the version and commit docs/protocols.md names), spelled as it accepts it or a prefix of
    exactly one. An unknown or ambiguous flag stops the engine at start-up: the launch did not run as
    written. A warning, since the recipe may pin another version whose flags differ: check the spelling
    against the engine's `--help` at the pinned version (the hint names the nearest known flag).
    """
    for entry, recipe in snapshot.valid_recipes():
        parsed = launch_args.parsed(recipe)
        if parsed is None:
            continue
        table = parsed.table
        known = f"{table.engine} {table.version}"
        for i, token, near in parsed.unknown:
            if any(c.isspace() for c in token):
                continue  # several tokens in one item: ORV250's finding
            yield Finding(
                entry.path,
                f"launch.args[{i}] `{token}` is not a {known} flag",
                f"did you mean `{near}`?" if near else f"see `{' '.join(table.program)} --help` at the pinned version",
                at=("launch", "args", i),
            )
        for i, token, candidates in parsed.ambiguous:
            yield Finding(
                entry.path,
                f"launch.args[{i}] `{token}` is an ambiguous prefix for {known}: "
                + ", ".join(candidates[:5])
                + (" …" if len(candidates) > 5 else ""),
                "write the full flag name: the engine refuses an ambiguous prefix",
                at=("launch", "args", i),
            )


@check("ORV254", E, "launch's speculative decoding disagrees with serving.speculative", per_file=True)
def launch_speculation_agrees(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Speculative decoding changes the decode figure (ORV512's bound) and what the model answers (the
    quality gate), so a launch that turns it on (vLLM's `--speculative-config`, SGLang's
    `--speculative-algorithm`, llama-server's `--spec-type` or draft model `-md`/`--model-draft`, as flags
    or `LLAMA_ARG_*` variables) must be stated as `serving.speculative` with the same method and draft
    length (`num_speculative_tokens`; SGLang's `--speculative-num-steps`; llama.cpp's
    `--spec-draft-n-max`). A llama.cpp draft model without `--spec-type` takes its type from the GGUF's
    metadata, which orv does not read: only its draft length is compared. Methods compare however the
    engine spells them: vLLM's `deepseek_mtp` and SGLang's `NEXTN` (or `EAGLE` without a draft model)
    run the model's own MTP heads, `mtp` in a recipe. A recipe stating speculation while its launch
    runs none is wrong the other way. Fix whichever side is wrong.
    """
    for entry, recipe, parsed, _ in _inference_launches(snapshot):
        found = launch_args.launch_speculation(parsed)
        stated_spec = recipe.serving.speculative
        if found is None:
            if stated_spec is not None and not parsed.value("--config"):  # a config file may hold it
                yield Finding(
                    entry.path,
                    f"the launch runs no speculative decoding, serving.speculative is {stated_spec.method}",
                    "add the engine's speculative flags to launch.args, or drop serving.speculative",
                    at=("launch", "args"),
                )
            continue
        setting, method, k = found
        at = setting.at
        k_text = f", draft length {k}" if k is not None else ""
        if stated_spec is None:
            yield Finding(
                entry.path,
                f"launch runs speculative decoding ({setting.flag}: method {method}{k_text}); "
                "the recipe states no serving.speculative",
                "state it: `serving: {speculative: {method: "
                + ("<the draft GGUF's type>" if method == launch_args.FROM_DRAFT_FILE else method)
                + (f", k: {k}" if k is not None else "")
                + "}}`, so the decode bound and the quality gate judge it",
                at=at,
            )
            continue
        if not launch_args.same_speculation(parsed.table.engine, method, stated_spec.method):
            yield Finding(
                entry.path,
                f"launch's speculative method is {method} ({setting.flag}), serving.speculative.method is "
                f"{stated_spec.method}",
                "make them agree",
                at=at,
            )
        if k is not None and stated_spec.k is not None and k != stated_spec.k:
            yield Finding(
                entry.path,
                f"launch drafts {k} tokens ({setting.flag}), serving.speculative.k is {stated_spec.k}",
                "make them agree",
                at=at,
            )


@check("ORV255", E, "launch quantizes the KV cache the quant does not state", per_file=True)
def launch_kv_cache_is_stated(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A quantized KV cache (`--kv-cache-dtype fp8`, `int8`, `fp4` …) changes both speed and answers, as
    a quantized model does: the recipe's `quant` must say it (`…-fp8-kv`, `kv-int8`), so that the
    boards show it and the quality gate asks for quality evidence. A launch that quantizes the cache
    under a quant that does not say so is judged as the quantized-KV configuration it ran.
    """
    for entry, recipe, parsed, _ in _inference_launches(snapshot):
        setting = launch_args.launch_kv_dtype(parsed)
        if setting is not None and setting.value is not None and not kv_quantized(recipe.quant):
            yield Finding(
                entry.path,
                f"launch sets {setting.flag} {setting.value}, quant `{recipe.quant}` states no quantized KV cache",
                f"name it in quant (e.g. `{recipe.quant}-{setting.value.lower().split('_')[0]}-kv`) and add "
                "quality evidence, or drop the flag",
                at=setting.at,
            )


@check("ORV257", E, "launch loads the weights in another format than the quant states", per_file=True)
def launch_weights_are_the_quant(snapshot: Snapshot) -> Iterator[Finding]:
    """
    vLLM's and SGLang's `--quantization` (`-q`) quantizes the weights as they load, and `--dtype` sets
    their floating-point type: what the server ran is that format, whatever the recipe's `quant`
    says. A launch that quantizes the weights (`-q fp8`) under a full-precision quant (`bf16`), that
    loads a format the quant does not name (`--quantization awq` under `fp8`), or whose `--dtype`
    (`float16`) is not the quant's precision (`bf16`) ran another configuration than the one the
    boards rank: state the quant the server ran (and its quality evidence; the quality gate judges a
    quantized launch as quantized) or drop the flag. Methods that load whatever the checkpoint's own
    config holds (`compressed-tensors`, `modelopt` …) are compared by that config, which orv does not read.
    """
    for entry, recipe, parsed, _ in _inference_launches(snapshot):
        weights = weight_quant(recipe.quant)
        setting = launch_args.launch_weight_quant(parsed)
        if setting is not None and setting.value is not None:
            method = setting.value.strip().lower()
            if full_precision_weights(recipe.quant):
                yield Finding(
                    entry.path,
                    f"launch quantizes the weights ({setting.said} {method}), quant "
                    f"`{recipe.quant}` states {weights} weights",
                    f"state the quant the server ran (e.g. `quant: {method}`) with its quality evidence, or drop "
                    f"{setting.flag}",
                    at=setting.at,
                )
            elif launch_args.quant_words_agree(method, weights) is False:
                yield Finding(
                    entry.path,
                    f"launch loads the weights as {method} ({setting.said}), quant "
                    f"`{recipe.quant}` names another format",
                    f"make them agree: a quant naming {method}, or the --quantization method of `{recipe.quant}`",
                    at=setting.at,
                )
        dtype = parsed.value(launch_args.DTYPE_FLAG.get(parsed.table.engine))
        named = launch_args.DTYPES.get((dtype.value or "").strip().lower()) if dtype is not None else None
        if dtype is not None and named is not None and full_precision_weights(recipe.quant) and named != weights:
            yield Finding(
                entry.path,
                f"launch runs the model in {named} ({dtype.said} {dtype.value}), quant `{recipe.quant}` is {weights}",
                f"make them agree: `quant: {named}` or `{dtype.flag} {'bfloat16' if weights == 'bf16' else weights}`",
                at=dtype.at,
            )


@check("ORV258", E, "launch reads settings from a file orv cannot see", per_file=True)
def launch_has_no_config_file(snapshot: Snapshot) -> Iterator[Finding]:
    """
    vLLM's and SGLang's `--config FILE`, and trtllm-serve's `--config`/`--extra_llm_api_options FILE`
    (which it applies over the flags), read settings from a YAML file: tensor parallelism, context
    length, quantization, the KV-cache dtype, speculative decoding … all hidden from the recipe. The file is not in the
    registry and orv never reads it, so no rule (ORV251, ORV254, ORV255, ORV257, the quality gate,
    ORV302's identity) could compare what it set. Spell every setting of the file as flags in
    `launch.args`, which `orv reproduce` then prints as run.
    """
    for entry, _recipe, parsed, _ in _inference_launches(snapshot):
        setting = launch_args.launch_config_file(parsed)
        if setting is not None:
            yield Finding(
                entry.path,
                f"launch reads its settings from `{setting.value}` ({setting.said}), a file "
                "orv never reads: nothing it sets can be compared with the recipe",
                f"spell the file's settings as flags in launch.args and drop {setting.flag}",
                at=setting.at,
            )


@check("ORV259", E, "launch value the engine does not read as a number", per_file=True)
def launch_numbers_are_readable(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Each setting orv compares with the recipe (parallel sizes, maximum sequences or slots, context
    length) is read as its engine reads it: argparse's `int` for vLLM and SGLang, except vLLM's
    `--max-model-len`, which takes `2k` (2000), `2K` (2048), `25.6k` and `auto`; llama.cpp's `std::stoi`
    for its flags and `LLAMA_ARG_*` variables. A value the engine's parser would refuse (`8 k`, `2.5K`,
    `eight`, a flag with no value) stopped the server, or ran something orv cannot know; either way
    the comparison cannot be made, so it is a finding rather than a silent skip.
    """
    for entry, _recipe, parsed, flags in _inference_launches(snapshot):
        engine = parsed.table.engine
        for key in ("tp", "pp", "dp", "ep", "seqs", "context"):
            setting = parsed.value(flags.get(key))
            if setting is None:
                continue
            try:
                setting_int(engine, setting)
            except Unreadable:
                yield Finding(
                    entry.path,
                    f"launch sets {setting.said} to {setting.value!r}, which {engine} "
                    f"{parsed.table.version} does not read as a number",
                    "write a whole number"
                    + (" (vLLM's --max-model-len also takes 8k = 8000, 8K = 8192, auto)" if key == "context" else ""),
                    at=setting.at,
                )


def _megatron_given(recipe: TrainingRecipe) -> dict[str, tuple[int, str | None]]:
    """canonical flag -> (index, value) as Megatron-LM's parser reads the launch (stacks/flags/megatron.json);
    a framework without a table: the literal `--flag VALUE` reading."""
    parsed = launch_args.parse(launch_args.load_table("megatron"), list(recipe.launch.args)) if recipe.launch else None
    if parsed is None or launch_args.engine_of(recipe) not in (None, "megatron"):
        return stated(list(recipe.launch.args)) if recipe.launch else {}
    return {flag: (s.index, s.value) for flag, s in parsed.settings.items()}


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
        given = _megatron_given(recipe)
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


# Megatron-LM flags that set the pipeline's stages, the precision or the batch schedule beyond what a recipe's
# layout and workload state (megatron/training/arguments.py, the FP8/FP4 fields of TransformerConfig).
VIRTUAL_STAGE_FLAGS = ("--num-layers-per-virtual-pipeline-stage", "--pipeline-model-parallel-layout")
UNEVEN_STAGE_FLAGS = {"--decoder-first-pipeline-num-layers": 0, "--decoder-last-pipeline-num-layers": -1}
LOW_PRECISION_FLAGS = {"--fp8-format": "fp8", "--fp8-recipe": "fp8", "--fp4-format": "fp4", "--fp4-recipe": "fp4"}


@check("ORV256", E, "training launch sets stages, precision or batch schedule the recipe does not state", per_file=True)
def training_launch_states_nothing_else(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A Megatron-LM launch can change what a step measures through flags no recipe field restates, so
    each is compared with the field it changes: virtual pipeline stages
    (`--num-layers-per-virtual-pipeline-stage`, `--pipeline-model-parallel-layout`) with `layout.vpp`
    (and `layout.layer_split`); uneven first and last stages (`--decoder-first-pipeline-num-layers`,
    `--decoder-last-pipeline-num-layers`) with `layout.layer_split`; FP8 or FP4 training
    (`--fp8-format`, `--fp8-recipe`, `--fp4-format`, `--fp4-recipe`) with the workload's dtype; and a
    batch-size ramp-up (`--rampup-batch-size`) with the workload's constant global batch. State the
    setting in the recipe (another layout, another workload) or drop the flag.
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, TrainingRecipe) or recipe.launch is None:
            continue
        if launch_args.engine_of(recipe) not in (None, "megatron"):
            continue
        given = _megatron_given(recipe)
        lay = recipe.layout
        workload = snapshot.catalog.workloads.get(recipe.workload)

        def finding(
            flag: str, message: str, hint: str, path: str = entry.path, given: dict[str, Any] = given
        ) -> Finding:
            return Finding(path, message, hint, at=("launch", "args", given[flag][0]))

        for flag in VIRTUAL_STAGE_FLAGS:
            if flag in given and lay.vpp in (None, 1) and not (flag.endswith("layout") and lay.layer_split):
                yield finding(
                    flag,
                    f"launch sets {flag} {given[flag][1]} (virtual pipeline stages), layout.vpp is 1",
                    "state the virtual stages in the layout (`vpp:`, `layer_split:`), or drop the flag",
                )
        for flag, end in UNEVEN_STAGE_FLAGS.items():
            if flag not in given:
                continue
            split = lay.layer_split
            if not split:
                yield finding(
                    flag,
                    f"launch sets {flag} {given[flag][1]} (uneven pipeline stages), the layout states no layer_split",
                    "state every stage's layers in `layout.layer_split`, or drop the flag",
                )
            elif not same_value(str(split[end]), given[flag][1]):
                yield finding(
                    flag,
                    f"launch sets {flag} {given[flag][1]}, layout.layer_split gives that stage {split[end]} layers",
                    "make them agree",
                )
        dtype = (workload.dtype if workload else None) or "unstated"
        for flag, precision in LOW_PRECISION_FLAGS.items():
            if flag in given and dtype != precision:
                yield finding(
                    flag,
                    f"launch trains in {precision.upper()} ({flag} {given[flag][1]}), workload `{recipe.workload}` "
                    f"dtype is {dtype}",
                    f"file the recipe under an {precision.upper()} workload, or drop {flag}",
                )
        if "--rampup-batch-size" in given:
            batch = workload.global_batch if workload else None
            yield finding(
                "--rampup-batch-size",
                f"launch ramps the batch size up (--rampup-batch-size {given['--rampup-batch-size'][1]}), "
                f"workload `{recipe.workload}` trains at a constant global batch {batch}",
                "drop --rampup-batch-size: the workload's figure is measured at its global batch from the first step",
            )
