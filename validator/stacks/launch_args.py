"""A recipe's `launch.args` read as its engine's parser reads them, once, into canonical settings.

The tables under stacks/flags/ are the engines' own flags at a cited version (stacks/flag_source.py derives
them from the source). Parsing follows each parser's rules: vLLM turns `_` into `-` in a `--key`;
`--flag=value` equals `--flag value`; argparse resolves a unique prefix of a long option where the parser
allows it (vLLM, SGLang; never Megatron-LM, nor trtllm-serve's Click, which also takes a flag only as declared,
`_` and all); a repeated flag's last value wins (Click's `multiple=True` options keep every value); a `--no-X` negation sets X
false. Every rule that reads a launch (ORV251–256, ORV302's identity, the quality gate, `orv reproduce`)
reads the `Parsed` form, so two spellings the engine treats alike are alike to orv.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from validator.models import InferenceRecipe, Recipe
from validator.stacks.engines import LLAMA_CPP_SERVED, MEGATRON_NAMES, SGLANG_NAMES, TRT_LLM_ENGINES, VLLM_NAMES

FLAGS_DIR = Path(__file__).parent / "flags"

# Settings that change no figure: where the server listens, what it logs, how it names the model. ORV302
# leaves them out of a recipe's identity (the same configuration on another port is the same configuration).
NO_FIGURE = {
    "vllm": frozenset(
        {
            "--host",
            "--port",
            "--uvicorn-log-level",
            "--disable-log-stats",
            "--log-level",
            "--enable-log-outputs",
            "--max-log-len",
            "--log-config-file",
            "--served-model-name",
            "--api-key",
            "--enable-log-requests",
            "--disable-uvicorn-access-log",
            "--ssl-keyfile",
            "--ssl-certfile",
            "--allowed-origins",
            "--root-path",
            "--download-dir",
        }
    ),
    "sglang": frozenset(
        {
            "--host",
            "--port",
            "--log-level",
            "--log-level-http",
            "--log-requests",
            "--served-model-name",
            "--api-key",
            "--download-dir",
            "--show-time-cost",
        }
    ),
    "llama.cpp": frozenset(
        {
            "--host",
            "--port",
            "--api-key",
            "--alias",
            "--verbosity",
            "--log-disable",
            "--log-timestamps",
            "--log-prefix",
            "--log-file",
            "--log-colors",
            "--verbose",
            "--timeout",
            "--threads-http",
            "--metrics",
            "--slots",
            "--props",
        }
    ),
    "tensorrt-llm": frozenset({"--host", "--port", "--log_level", "--otlp_traces_endpoint"}),
    "megatron": frozenset(
        {
            "--log-interval",
            "--tensorboard-dir",
            "--wandb-project",
            "--wandb-exp-name",
            "--save",
            "--load",
            "--save-interval",
            "--eval-interval",
            "--log-throughput",
            "--timing-log-level",
        }
    ),
}


@dataclass(frozen=True)
class Table:
    engine: str
    version: str
    commit: str
    source: str
    underscores: bool
    abbrev: bool
    equals: bool  # `--flag=value` accepted (argparse); llama.cpp looks the whole token up
    program: tuple[str, ...]
    flags: dict[str, dict[str, Any]]  # canonical -> {aliases, nargs, negation?}
    names: dict[str, tuple[str, bool]]  # every accepted spelling -> (canonical, negated)


@cache
def load_table(engine: str) -> Table:
    data = json.loads((FLAGS_DIR / f"{engine}.json").read_text(encoding="utf-8"))
    names: dict[str, tuple[str, bool]] = {}
    for canonical, entry in data["flags"].items():
        names[canonical] = (canonical, False)
        for alias in entry.get("aliases", []):
            names[alias] = (canonical, False)
        for negation in ([entry["negation"]] if entry.get("negation") else []) + entry.get("negations", []):
            names[negation] = (canonical, True)
    parser = data["parser"]
    return Table(
        engine,
        data["version"],
        data["commit"],
        data["source"],
        parser["underscores"],
        parser["abbrev"],
        parser.get("equals", True),
        tuple(parser["program"]),
        data["flags"],
        names,
    )


def engine_of(recipe: Recipe) -> str | None:
    """Which table reads this recipe's launch: its engine (inference) or framework (training)."""
    component = recipe.software.get("engine") or recipe.software.get("framework")
    name = component.name.lower() if component else ""
    if name in VLLM_NAMES:
        return "vllm"
    if name in SGLANG_NAMES:
        return "sglang"
    if name in LLAMA_CPP_SERVED and isinstance(recipe, InferenceRecipe):
        return "llama.cpp"
    if name in TRT_LLM_ENGINES and isinstance(recipe, InferenceRecipe):
        return "tensorrt-llm"
    if name in MEGATRON_NAMES or (not isinstance(recipe, InferenceRecipe) and name.startswith("megatron")):
        return "megatron"
    return None


@dataclass(frozen=True)
class Setting:
    flag: str  # canonical
    value: str | None  # None: a switch turned on; "false": turned off by its negation
    index: int  # where it was written (the flag's token)
    spelled: str  # as the recipe wrote it
    end: int = 0  # one past its last token


@dataclass
class Parsed:
    table: Table
    settings: dict[str, Setting] = field(default_factory=dict)  # canonical -> last occurrence
    positionals: list[tuple[int, str]] = field(default_factory=list)
    unknown: list[tuple[int, str, str | None]] = field(default_factory=list)  # (index, token, nearest)
    ambiguous: list[tuple[int, str, list[str]]] = field(default_factory=list)

    def value(self, *flags: str | None) -> Setting | None:
        return next((self.settings[f] for f in flags if f is not None and f in self.settings), None)

    def figure_settings(self) -> list[tuple[str, str | None]]:
        """The settings that can change a figure, canonical and sorted: ORV302's view of a launch."""
        skip = NO_FIGURE.get(self.table.engine, frozenset())
        out = [(s.flag, s.value) for s in self.settings.values() if s.flag not in skip]
        out += [("<positional>", v) for _, v in self.positionals]
        out += [("<unknown>", token) for _, token, _ in self.unknown]  # the engine would refuse it: keep it
        out += [("<ambiguous>", token) for _, token, _ in self.ambiguous]
        return sorted(out, key=lambda kv: (kv[0], kv[1] or ""))


def _looks_like_option(token: str) -> bool:
    if not token.startswith("-") or token == "-":
        return False
    try:
        float(token)
        return False  # argparse reads a negative number as a value
    except ValueError:
        return True


def _resolve(table: Table, key: str) -> tuple[str, bool] | list[str] | None:
    """(canonical, negated) for a spelling; a list of candidates when a prefix is ambiguous; None unknown."""
    if key in table.names:
        return table.names[key]
    if table.abbrev and key.startswith("--") and len(key) > 2:
        matches = sorted({n for n in table.names if n.startswith(key) and n.startswith("--")})
        canon = {table.names[n] for n in matches}
        if len(canon) == 1:
            return canon.pop()
        if matches:
            return matches
    return None


def nearest(table: Table, key: str) -> str | None:
    found = difflib.get_close_matches(key, list(table.flags), n=1, cutoff=0.6)
    return found[0] if found else None


def parse(table: Table, args: list[str]) -> Parsed:
    out = Parsed(table)
    tokens = list(args)
    start = 0
    if table.engine in ("vllm", "tensorrt-llm") and tokens[:1] == ["serve"]:
        start = 1  # `vllm serve`; trtllm-serve's default subcommand, written or not
    i = start
    while i < len(tokens):
        token = tokens[i]
        if not _looks_like_option(token):
            out.positionals.append((i, token))
            i += 1
            continue
        key, eq, inline = token.partition("=") if table.equals else (token, "", "")
        if table.underscores and key.startswith("--"):
            base, dot, rest = key[2:].partition(".")
            key = "--" + base.replace("_", "-") + dot + rest
        sub = ""
        if table.engine == "vllm" and "." in key:  # --speculative-config.method ngram: one JSON key
            key, _, sub = key.partition(".")
        resolved = _resolve(table, key)
        if resolved is None:
            out.unknown.append((i, token, nearest(table, key)))
            # its value, if any, is not a positional argument (a guess: the table cannot say)
            i += 1 if eq or i + 1 >= len(tokens) or _looks_like_option(tokens[i + 1]) else 2
            continue
        if isinstance(resolved, list):
            out.ambiguous.append((i, token, resolved))
            i += 1
            continue
        canonical, negated = resolved
        at = i
        nargs = table.flags[canonical].get("nargs", 1)
        value: str | None
        if negated:
            value, i = "false", i + 1
        elif nargs == 0:
            value, i = None, i + 1
        elif eq:
            value, i = inline, i + 1
        elif nargs == "?":
            take = i + 1 < len(tokens) and not _looks_like_option(tokens[i + 1])
            value, i = (tokens[i + 1], i + 2) if take else (None, i + 1)
        elif nargs in ("+", "*") or (isinstance(nargs, int) and nargs > 1):
            j = i + 1
            limit = nargs if isinstance(nargs, int) else len(tokens)
            while j < len(tokens) and j - i - 1 < limit and not _looks_like_option(tokens[j]):
                j += 1
            value, i = " ".join(tokens[i + 1 : j]), j
        else:
            value = tokens[i + 1] if i + 1 < len(tokens) else None
            i += 2
        if sub:
            merged = _json_object(out.settings[canonical].value) if canonical in out.settings else {}
            merged[sub] = _scalar(value)
            value = json.dumps(merged, sort_keys=True)
        elif value is not None and value.lstrip().startswith("{"):
            value = json.dumps(_json_object(value), sort_keys=True)  # one spelling of the same JSON
        if table.flags[canonical].get("multiple") and canonical in out.settings and value is not None:
            value = f"{out.settings[canonical].value} {value}"  # Click's multiple=True collects every occurrence
        out.settings.pop(canonical, None)  # the last occurrence wins, and is the last in order
        out.settings[canonical] = Setting(canonical, value, at, token, i)
    if table.engine == "vllm" and out.positionals and "--model" not in out.settings:
        # `vllm serve MODEL` and `--model MODEL` are one setting (FlexibleArgumentParser moves --model to the front)
        at, model = out.positionals.pop(0)
        out.settings["--model"] = Setting("--model", model, at, model, at + 1)
    return out


def _scalar(value: str | None) -> Any:
    try:
        return json.loads(value) if value is not None else None
    except ValueError:
        return value


def _json_object(value: str | None) -> dict[str, Any]:
    try:
        data = json.loads(value or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def json_value(setting: Setting | None) -> dict[str, Any]:
    return _json_object(setting.value) if setting is not None else {}


def parsed(recipe: Recipe) -> Parsed | None:
    """The recipe's launch through its engine's table; None when no table reads it."""
    engine = engine_of(recipe)
    if engine is None or recipe.launch is None or not recipe.launch.args:
        return None
    return parse(load_table(engine), list(recipe.launch.args))


# The canonical flag (stacks/flags/<engine>.json) that sets each figure-changing setting, per engine.
INFERENCE_FLAGS: dict[str, dict[str, str]] = {
    "vllm": {
        "tp": "--tensor-parallel-size",
        "pp": "--pipeline-parallel-size",
        "dp": "--data-parallel-size",
        "seqs": "--max-num-seqs",
        "context": "--max-model-len",
        "kv": "--kv-cache-dtype",
        "model": "--model",
    },
    # llama-server: -np/--parallel slots; -c is the context all slots share (per slot: c / np), so it is not
    # compared with serving.context_len; the model is a GGUF path, not the recipe's checkpoint name
    "llama.cpp": {
        "seqs": "--parallel",
        "kv": "--cache-type-k",
        "kv_v": "--cache-type-v",
    },
    # trtllm-serve (Click, tensorrt_llm/commands/serve.py): --max_batch_size is the most requests the engine
    # schedules at once; --max_seq_len a request's prompt and output together. The KV-cache dtype and attention
    # DP live only in the --config/--extra_llm_api_options YAML file
    "tensorrt-llm": {
        "tp": "--tensor_parallel_size",
        "pp": "--pipeline_parallel_size",
        "ep": "--moe_expert_parallel_size",
        "seqs": "--max_batch_size",
        "context": "--max_seq_len",
    },
    "sglang": {
        "tp": "--tp-size",
        "pp": "--pp-size",
        "dp": "--dp-size",
        "ep": "--ep-size",
        "seqs": "--max-running-requests",
        "context": "--context-length",
        "kv": "--kv-cache-dtype",
        "model": "--model-path",
    },
}
# KV-cache dtypes that keep the model's own precision (vLLM's and SGLang's choices)
UNQUANTIZED_KV = frozenset({"auto", "bf16", "bfloat16", "fp16", "float16", "half", "float32", "fp32", "f16", "f32"})


def as_int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def launch_speculation(parsed: Parsed) -> tuple[Setting, str, int | None] | None:
    """(where, method, draft length) of the speculative decoding a launch turns on; None if it does not."""
    if parsed.table.engine == "vllm":
        setting = parsed.value("--speculative-config")
        config = json_value(setting)
        if setting is None or not config:
            return None
        method = str(config.get("method") or ("draft_model" if config.get("model") else "unknown")).lower()
        k = config.get("num_speculative_tokens")
        return setting, method, k if isinstance(k, int) else None
    if parsed.table.engine == "sglang":
        setting = parsed.value("--speculative-algorithm")
        if setting is None or setting.value is None:
            return None
        steps = parsed.value("--speculative-num-steps") or parsed.value("--speculative-num-draft-tokens")
        return setting, setting.value.lower(), as_int(steps.value) if steps else None
    return None


def _method_family(method: str) -> str:
    """One name per speculative method however an engine spells it: vLLM's `deepseek_mtp`, `qwen3_next_mtp` …
    and SGLang's `NEXTN` are the model's own MTP heads (`mtp`, as recipes name it)."""
    m = method.lower().replace("-", "_")
    return "mtp" if m.endswith("mtp") or m == "nextn" else m


def same_speculation(engine: str, launch_method: str, recipe_method: str) -> bool:
    """Does the launch's method run what the recipe's names? SGLang runs a model's MTP heads through its EAGLE
    worker (`--speculative-algorithm EAGLE` with no separate draft model), so EAGLE there may be `mtp`."""
    launch, recipe = _method_family(launch_method), _method_family(recipe_method)
    return launch == recipe or (engine == "sglang" and launch == "eagle" and recipe == "mtp")


def launch_kv_dtype(parsed: Parsed) -> Setting | None:
    """The launch's KV-cache dtype when it quantizes the cache (fp8, int8, q8_0 …); None otherwise."""
    flags = INFERENCE_FLAGS.get(parsed.table.engine, {})
    for key in ("kv", "kv_v"):
        setting = parsed.value(flags.get(key))
        if setting is not None and setting.value is not None and setting.value.lower() not in UNQUANTIZED_KV:
            return setting
    return None


def launch_quality_reasons(recipe: InferenceRecipe) -> list[str]:
    """What the launch turns on that asks for quality evidence as a quantized model does (the quality gate)."""
    parsed_launch = parsed(recipe)
    if parsed_launch is None:
        return []
    why = []
    kv = launch_kv_dtype(parsed_launch)
    if kv is not None:
        why.append(f"quantized KV cache (launch {kv.flag} {kv.value})")
    spec = launch_speculation(parsed_launch)
    if spec is not None and recipe.serving.speculative is None:
        why.append(f"speculative decoding (launch {spec[0].flag}: {spec[1]})")
    return why


# Flags an engine's own validation requires together: printing one prints the other (Megatron-LM
# megatron/training/arguments.py validate_args: "The optimizer cpu offload must be used in conjunction with
# `--use-precision-aware-optimizer`").
REQUIRES: dict[str, dict[str, tuple[str, ...]]] = {
    "megatron": {"--optimizer-cpu-offload": ("--use-precision-aware-optimizer",)},
}
# The program that reads each engine's arguments (what `orv reproduce` prints before them)
PROGRAMS: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm", "serve"),
    "sglang": ("python", "-m", "sglang.launch_server"),
    "llama.cpp": ("llama.cpp/build/bin/llama-server",),
    "tensorrt-llm": ("trtllm-serve",),
    "tabbyapi": ("python", "main.py"),
}
