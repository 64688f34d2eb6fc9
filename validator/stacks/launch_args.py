"""A recipe's `launch.args` read as its engine's parser reads them, once, into canonical settings.

The tables under stacks/flags/ are the engines' own flags at a cited version (stacks/flag_source.py derives
them from the source). Parsing follows each parser's rules: vLLM turns `_` into `-` in a `--key`;
`--flag=value` equals `--flag value`; argparse resolves a unique prefix of a long option where the parser
allows it (vLLM, SGLang; never Megatron-LM, nor trtllm-serve's Click, which also takes a flag only as declared,
`_` and all); a repeated flag's last value wins (Click's `multiple=True` options keep every value); a `--no-X` negation sets X
false. Every rule that reads a launch (ORV251–259, ORV302's identity, the quality gate, `orv reproduce`)
reads the `Parsed` form, so two spellings the engine treats alike are alike to orv. llama.cpp options set by
their `LLAMA_ARG_*` variable in `launch.env` are read first, and the command line overrides them, as
common_params_parse_ex does.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from validator.errors import OrvError
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
    env: dict[str, str] = field(default_factory=dict)  # environment variable -> canonical (llama.cpp's set_env)


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
        {entry["env"]: canonical for canonical, entry in data["flags"].items() if entry.get("env")},
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
    env: str | None = None  # set by this variable of launch.env, not by a token of launch.args

    @property
    def said(self) -> str:
        """How the recipe named it, and the canonical flag when that differs (`-q → --quantization`)."""
        key = self.spelled.partition("=")[0]
        return self.flag if key == self.flag else f"{self.spelled} → {self.flag}"

    @property
    def at(self) -> tuple[str | int, ...]:
        """Where a finding points: the launch.args token, or the launch.env variable."""
        return ("launch", "env", self.env) if self.env else ("launch", "args", self.index)


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


# llama.cpp's is_truthy / is_falsey (common/arg.cpp): how an environment variable turns a switch on or off
_TRUTHY = frozenset({"on", "enabled", "true", "1"})


def _from_env(table: Table, env: dict[str, str], out: Parsed) -> None:
    """The settings an engine reads from its environment before the command line (which overrides them):
    llama.cpp's common_params_parse_ex reads each option's LLAMA_ARG_* variable, and LLAMA_ARG_NO_* for one
    with a negation."""
    for var, value in sorted(env.items()):
        negated = var.startswith("LLAMA_ARG_NO_") and var.replace("LLAMA_ARG_NO_", "LLAMA_ARG_", 1) in table.env
        canonical = table.env.get(var.replace("LLAMA_ARG_NO_", "LLAMA_ARG_", 1) if negated else var)
        if canonical is None:
            continue
        entry = table.flags[canonical]
        if negated:
            value_: str | None = "false"
        elif entry.get("nargs", 1) == 0:
            if entry.get("negations"):
                value_ = None if value.strip().lower() in _TRUTHY else "false"  # parse_bool_value
            elif value.strip().lower() in _TRUTHY:
                value_ = None  # handler_void runs only for a truthy value
            else:
                continue
        else:
            value_ = value
        out.settings[canonical] = Setting(canonical, value_, 0, f"{var}={value}", 0, env=var)


def parse(table: Table, args: list[str], env: dict[str, str] | None = None) -> Parsed:
    out = Parsed(table)
    if env and table.env:
        _from_env(table, env, out)
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
    """The recipe's launch through its engine's table; None when no table reads it. Every launch rule,
    the quality gate and ORV302's relation keys ask for it: a launch is parsed once and the one result,
    which no caller changes, is shared."""
    engine = engine_of(recipe)
    if engine is None or recipe.launch is None:
        return None
    return _parsed_launch(engine, tuple(recipe.launch.args), tuple(recipe.launch.env.items()))


@lru_cache(maxsize=4096)
def _parsed_launch(engine: str, args: tuple[str, ...], env: tuple[tuple[str, str], ...]) -> Parsed | None:
    table = load_table(engine)
    if not args and not any(is_flag_variable(table, var) for var, _ in env):
        return None
    return parse(table, list(args), dict(env))


def is_flag_variable(table: Table, var: str) -> bool:
    """Is this environment variable one the engine reads as a flag (llama.cpp's LLAMA_ARG_*, LLAMA_ARG_NO_*)?"""
    return var in table.env or var.replace("LLAMA_ARG_NO_", "LLAMA_ARG_", 1) in table.env


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
    # llama-server: -np/--parallel slots; -c the context all slots share (per_slot_context); the model is a GGUF
    # path, not the recipe's checkpoint name
    "llama.cpp": {
        "seqs": "--parallel",
        "context": "--ctx-size",  # the context all slots share: per_slot_context() gives one request's
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


class Unreadable(OrvError, ValueError):
    """A compared setting's value its engine's parser would not read as a number either."""


def argparse_int(text: str) -> int:
    """argparse's `type=int` (vLLM's and SGLang's integer flags): Python's int()."""
    return int(text)


_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def vllm_human_readable_int(text: str) -> int:
    """vLLM 0.34.0's vllm/utils/argparse_utils.py human_readable_int: `2k` is 2000, `2K` is 2048, `25.6k` is
    25600; a decimal with a binary suffix (`2.5K`) is refused; otherwise a plain int()."""
    value = text.strip()
    match = _HUMAN.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        return int(number) * _BINARY[suffix]  # ValueError for a decimal, as vLLM's ArgumentTypeError
    return int(value)


def vllm_human_readable_int_or_auto(text: str) -> int:
    """vLLM's human_readable_int_or_auto (its `--max-model-len`): `-1` or `auto` is -1, the model's own length."""
    value = text.strip()
    return -1 if value == "-1" or value.lower() == "auto" else vllm_human_readable_int(value)


_STOI = re.compile(r"\s*([+-]?\d+)")


def cpp_stoi(text: str) -> int:
    """std::stoi, as llama.cpp's common/arg.cpp reads an integer option (and its LLAMA_ARG_* variable):
    leading spaces, a sign and digits; what follows the digits is ignored; no digits is an error."""
    match = _STOI.match(text)
    if match is None:
        raise ValueError(text)
    return int(match.group(1))


# The type each engine's parser gives a compared integer flag (argparse's int unless listed): vLLM's
# EngineArgs.add_cli_args gives --max-model-len human_readable_int_or_auto; llama.cpp reads every int with stoi.
INT_TYPES: dict[str, dict[str, Callable[[str], int]]] = {
    "vllm": {"--max-model-len": vllm_human_readable_int_or_auto},
}


def setting_int(engine: str, setting: Setting) -> int:
    """The number the engine reads from a compared setting; Unreadable when its parser would refuse it."""
    reader = INT_TYPES.get(engine, {}).get(setting.flag) or (cpp_stoi if engine == "llama.cpp" else argparse_int)
    if setting.value is None:
        raise Unreadable(f"{setting.spelled} has no value")
    try:
        return reader(setting.value)
    except ValueError as exc:
        raise Unreadable(f"{setting.spelled} {setting.value}") from exc


def as_int(value: str | None) -> int | None:
    """A plain integer where a value is only read, never compared (a draft length's first reading)."""
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
    if parsed.table.engine == "llama.cpp":
        # common/arg.cpp: a draft model (-md, or --spec-draft-hf) or a --spec-type other than none drafts; with no
        # --spec-type the type comes from the draft GGUF's metadata, which orv does not read
        draft = parsed.value("--spec-draft-model", "--spec-draft-hf")
        kind = parsed.value("--spec-type")
        types = [t.strip().lower() for t in (kind.value or "").split(",")] if kind else []
        types = [t for t in types if t and t != "none"]
        if kind is not None and types:
            where, method = kind, types[0]
        elif draft is not None and draft.value:
            where, method = draft, FROM_DRAFT_FILE
        else:
            return None
        n_max = parsed.value("--spec-draft-n-max")
        return where, method, as_int(n_max.value) if n_max else None
    return None


# llama.cpp's speculative type when only a draft model is named: read from the GGUF's metadata at start-up
FROM_DRAFT_FILE = "draft model (type from its GGUF)"


def _method_family(method: str) -> str:
    """One name per speculative method however an engine spells it: vLLM's `deepseek_mtp`, `qwen3_next_mtp` …
    and SGLang's `NEXTN` are the model's own MTP heads (`mtp`, as recipes name it)."""
    m = method.lower().replace("-", "_")
    m = m.removeprefix("draft_") if m != "draft_model" else m  # llama.cpp's --spec-type draft-mtp, draft-dflash
    return "mtp" if m.endswith("mtp") or m == "nextn" else m


def same_speculation(engine: str, launch_method: str, recipe_method: str) -> bool:
    """Does the launch's method run what the recipe's names? SGLang runs a model's MTP heads through its EAGLE
    worker (`--speculative-algorithm EAGLE` with no separate draft model), so EAGLE there may be `mtp`."""
    if launch_method == FROM_DRAFT_FILE:
        return True  # the method is in a file orv does not read: the draft length is still compared
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


# The flag that quantizes the weights as they load, and the one that sets the weights' floating-point type
WEIGHT_QUANT_FLAG = {"vllm": "--quantization", "sglang": "--quantization"}
DTYPE_FLAG = {"vllm": "--dtype", "sglang": "--dtype"}
# --dtype values (vLLM's and SGLang's choices) as a recipe's quant names them
DTYPES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32"}
# What a recipe's quant calls each weight format an engine's --quantization loads (vLLM's and SGLang's method
# names): a quant naming none of a method's words states another format. A method not listed (compressed-tensors,
# modelopt, quark …) loads whatever format the checkpoint's own config holds, which orv cannot see.
QUANT_METHOD_WORDS: dict[str, tuple[str, ...]] = {
    "fp8": ("fp8",),
    "fbgemm_fp8": ("fp8",),
    "ptpc_fp8": ("fp8",),
    "w8a8_fp8": ("fp8",),
    "awq": ("awq", "int4", "w4a16"),
    "awq_marlin": ("awq", "int4", "w4a16"),
    "gptq": ("gptq", "int4", "int8", "w4a16", "w8a16"),
    "gptq_marlin": ("gptq", "int4", "int8", "w4a16", "w8a16"),
    "mxfp4": ("mxfp4",),
    "modelopt_fp4": ("nvfp4", "fp4"),
    "bitsandbytes": ("bnb", "nf4", "int8", "int4"),
    "w8a8_int8": ("int8", "w8a8"),
    "gguf": ("gguf", "q2", "q3", "q4", "q5", "q6", "q8", "iq"),
}


def launch_weight_quant(parsed: Parsed) -> Setting | None:
    """The launch's weight quantization method (`-q fp8`, `--quantization=awq`); None when it loads as stored."""
    setting = parsed.value(WEIGHT_QUANT_FLAG.get(parsed.table.engine))
    if setting is None or setting.value is None or setting.value.strip().lower() in ("", "none"):
        return None
    return setting


def quant_words_agree(method: str, weight_quant: str) -> bool | None:
    """Does the quant name the format this --quantization method loads? None: the method does not say."""
    words = QUANT_METHOD_WORDS.get(method.strip().lower().replace("-", "_"))
    if words is None:
        return None
    tokens = re.split(r"[-_]", weight_quant.lower())
    return any(w in t for t in tokens for w in words)


def launch_config_file(parsed: Parsed) -> Setting | None:
    """vLLM's and SGLang's `--config FILE`, trtllm-serve's `--config`/`--extra_llm_api_options FILE`: settings
    read from a YAML file orv never sees (trtllm-serve even applies it over the flags)."""
    return parsed.value("--config") if parsed.table.engine in ("vllm", "sglang", "tensorrt-llm") else None


def _pad256(n: int) -> int:
    return (n + 255) // 256 * 256  # GGML_PAD(n, 256)


def per_slot_context(parsed: Parsed, ctx: int) -> tuple[int, str]:
    """(one request's context, how) for llama-server's `-c`, as the pinned llama.cpp computes it: -np left to auto
    (or -1) is 4 slots with a unified KV cache (tools/server/server.cpp); src/llama-context.cpp pads n_ctx to a
    multiple of 256, and a slot gets all of it when the cache is unified (`-kvu`), else n_ctx / np padded to 256;
    `--kv-unified-per-slot N` caps a slot at N (server-context.cpp)."""

    def number(flag: str) -> int | None:
        setting = parsed.value(flag)
        try:
            return setting_int("llama.cpp", setting) if setting is not None else None
        except Unreadable:
            return None

    slots = number("--parallel")
    unified_flag = parsed.value("--kv-unified")
    if slots is None or slots < 0:
        slots, unified = 4, True
    else:
        unified = unified_flag is not None and unified_flag.value != "false"
    n_ctx = _pad256(ctx)
    if unified:
        per_slot, how = n_ctx, f"a unified KV cache of {n_ctx}: one request may use all of it"
    else:
        per_slot = _pad256(n_ctx // max(slots, 1))
        how = f"{n_ctx} shared by {slots} slots, each rounded up to a multiple of 256"
    cap = number("--kv-unified-per-slot")
    if cap is not None and 0 < cap < per_slot:
        per_slot, how = cap, how + f", capped by --kv-unified-per-slot {cap}"
    return per_slot, how


def launch_quality_reasons(recipe: InferenceRecipe) -> list[str]:
    """What the launch turns on that asks for quality evidence as a quantized model does (the quality gate)."""
    parsed_launch = parsed(recipe)
    if parsed_launch is None:
        return []
    why = []
    weights = launch_weight_quant(parsed_launch)
    if weights is not None:
        why.append(f"quantized weights (launch {weights.flag} {weights.value})")
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
