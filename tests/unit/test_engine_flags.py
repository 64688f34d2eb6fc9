"""The engine flag tables (validator/stacks/flags/) and the launch parser that reads them (issue 50).

A property test: a launch built from a table parses to the same canonical settings under every spelling the
engine accepts (vLLM's `_` for `-`, `--flag=value`, an alias, a unique prefix where the parser allows it, a
repeated flag whose last value wins), and ORV302's identity sees recipes differing only in spelling, or in a
setting that changes no figure (a port, a log level), as one configuration. Where the engines' source is at
hand (ORV_ENGINE_SOURCES=DIR holding vllm/, sglang/, megatron/, llama.cpp/, tensorrt-llm/ source trees) the
tables are re-derived from it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from validator.checks.launch import LOW_PRECISION_FLAGS, UNEVEN_STAGE_FLAGS, VIRTUAL_STAGE_FLAGS
from validator.models import InferenceRecipe, TrainingRecipe
from validator.registry.relations import identity
from validator.stacks import launch_args
from validator.stacks.flag_source import EXTRACTORS
from validator.stacks.launch_args import FLAGS_DIR, INFERENCE_FLAGS, NO_FIGURE, REQUIRES, load_table, parse
from validator.stacks.megatron_args import implied_args

ENGINES = ("vllm", "sglang", "megatron", "llama.cpp", "tensorrt-llm")
# flags that read a file, print and exit, or take a JSON sub-key: not settings a launch list states
NOT_SETTINGS = {"--config", "--help", "--version", "-h"}


def _shortest_prefix(table: launch_args.Table, flag: str) -> str | None:
    for end in range(3, len(flag)):
        prefix = flag[:end]
        if prefix not in table.names and launch_args._resolve(table, prefix) == (flag, False):
            return prefix
    return None


def _value_tokens(nargs: Any) -> list[str]:
    if nargs == 0:
        return []
    if nargs in ("+", "*"):
        return ["7", "8"]
    if isinstance(nargs, int) and nargs > 1:
        return ["7"] * nargs
    return ["7"]


def _candidates(engine: str) -> list[str]:
    table = load_table(engine)
    return sorted(f for f in table.flags if f.startswith("--") and f not in NOT_SETTINGS)


@st.composite
def launches(draw: st.DrawFn, engine: str) -> tuple[list[str], list[str]]:
    """(canonical launch, the same launch respelled as the engine also accepts it)."""
    table = load_table(engine)
    flags = draw(st.lists(st.sampled_from(_candidates(engine)), min_size=1, max_size=6, unique=True))
    head = ["serve", "org/model"] if engine == "vllm" else []
    canonical, respelled = list(head), list(head)
    for flag in flags:
        nargs = table.flags[flag].get("nargs", 1)
        values = _value_tokens(nargs)
        canonical += [flag, *values]
        spellings = [flag] + [a for a in table.flags[flag].get("aliases", [])]
        if table.underscores and "-" in flag[2:]:
            spellings.append("--" + flag[2:].replace("-", "_"))
        prefix = _shortest_prefix(table, flag) if table.abbrev else None
        if prefix:
            spellings.append(prefix)
        name = draw(st.sampled_from(spellings))
        multiple = table.flags[flag].get("multiple")  # Click collects those: no value is overridden
        if draw(st.booleans()) and nargs != 0 and not multiple:  # an earlier value the last occurrence overrides
            respelled += [name, *(["99"] * len(values))]
        if nargs in (1, "?") and name.startswith("--") and table.equals and draw(st.booleans()):
            respelled.append(f"{name}={values[0]}")
        else:
            respelled += [name, *values]
    return canonical, respelled


@pytest.mark.parametrize("engine", ENGINES)
@given(data=st.data())
def test_every_spelling_the_engine_accepts_normalises_alike(engine: str, data: st.DataObject) -> None:
    canonical, respelled = data.draw(launches(engine))
    table = load_table(engine)
    want, got = parse(table, canonical), parse(table, respelled)
    assert not want.unknown and not got.unknown and not got.ambiguous, (respelled, got.unknown, got.ambiguous)
    assert got.figure_settings() == want.figure_settings(), respelled


def _inference(args: list[str], engine: str = "vllm") -> InferenceRecipe:
    doc = {
        "id": "r",
        "kind": "inference",
        "model": "glm-5.3-flash",
        "hardware": {"gpu": "h100", "count": 1},
        "author": "a",
        "measured": "2026-10-18",
        "software": {"engine": {"name": engine, "version": "1"}},
        "quant": "bf16",
        "serving": {"concurrency": 4},
        "claimed": {"decode_tok_s": 1.0},
        "runs": [],
        "launch": {"args": args},
    }
    return InferenceRecipe.model_validate(doc)


@pytest.mark.parametrize("engine", ("vllm", "sglang", "llama.cpp", "tensorrt-llm"))
@given(data=st.data())
def test_orv302_sees_a_respelled_launch_and_a_no_figure_setting_as_one_configuration(
    engine: str, data: st.DataObject
) -> None:
    canonical, respelled = data.draw(launches(engine))
    extra = data.draw(st.sampled_from(sorted(NO_FIGURE[engine])))
    nargs = load_table(engine).flags[extra].get("nargs", 1)
    assert identity(_inference(canonical, engine)) == identity(
        _inference(respelled + [extra, *_value_tokens(nargs)], engine)
    )


def test_a_figure_setting_is_another_configuration() -> None:
    base = ["serve", "m", "--max-num-seqs", "64"]
    assert identity(_inference(base)) != identity(_inference(["serve", "m", "--max-num-seqs", "32"]))
    assert identity(_inference(base)) != identity(_inference([*base, "--kv-cache-dtype", "fp8"]))
    assert identity(_inference(base)) != identity(_inference([*base, "--max-num-sequences", "8"]))  # unknown kept


def test_the_parser_rules_follow_each_engine() -> None:
    vllm, sglang, megatron, llama = (load_table(e) for e in ENGINES[:4])
    # llama.cpp: `_` -> `-`, but neither a prefix nor `--flag=value` (the token is looked up whole)
    assert parse(llama, ["--ctx_size", "4096", "-np", "4"]).figure_settings() == [
        ("--ctx-size", "4096"),
        ("--parallel", "4"),
    ]
    assert parse(llama, ["--ctx-size=4096"]).unknown and parse(llama, ["--ctx", "4096"]).unknown
    assert parse(llama, ["--cont-batching", "-nocb"]).settings["--cont-batching"].value == "false"
    # vLLM: `_` -> `-`, prefixes (allow_abbrev left at argparse's default), `--no-X` for a boolean
    p = parse(vllm, ["serve", "m", "--enable_prefix_caching", "--no-enable-prefix-caching", "--max-num-b", "8"])
    assert p.settings["--enable-prefix-caching"].value == "false"
    # EnableDisableAction: `--disable-x` is the other half of a boolean `--enable-x`
    assert parse(vllm, ["serve", "m", "--disable_prefix_caching"]).settings["--enable-prefix-caching"].value == "false"
    assert p.settings["--max-num-batched-tokens"].value == "8"
    # an ambiguous prefix is refused, as argparse refuses it
    assert parse(vllm, ["serve", "m", "--max-num", "8"]).ambiguous
    # SGLang: no `_` rewriting (its parser is plain argparse)
    assert parse(sglang, ["--tp_size", "2"]).unknown
    # Megatron-LM: allow_abbrev=False, a prefix is unknown
    assert parse(megatron, ["--tensor-model-parallel", "2"]).unknown
    assert (
        parse(megatron, ["--rampup-batch-size", "16", "16", "1000", "--bf16"]).settings["--rampup-batch-size"].value
        == "16 16 1000"
    )


def test_every_flag_orv_compares_is_in_its_engine_table() -> None:
    for engine, flags in INFERENCE_FLAGS.items():
        table = load_table(engine)
        assert set(flags.values()) <= set(table.flags), engine
        assert NO_FIGURE[engine] <= set(table.flags), engine  # canonical names: what settings are keyed by
    megatron = load_table("megatron")
    recipe = TrainingRecipe.model_validate(
        yaml.safe_load(
            "id: r\nkind: training\nmodel: m\nhardware: {gpu: h100, count: 8}\nauthor: a\nmeasured: '2026-10-18'\n"
            "workload: w\nsoftware: {framework: {name: megatron-core, version: '1'}}\nlayout: {tp: 1, pp: 1, dp: 8}\n"
            "tuning: {micro_batch_size: 1, recompute: {kind: full}, optimizer_cpu_offload: 0.5, moe_dispatcher: flex,"
            " attention_backend: flash}\nclaimed: {tokens_per_s_per_gpu: 1}\nruns: []\n"
        )
    )
    compared = {a.flag for a in implied_args(recipe, None)} | set(VIRTUAL_STAGE_FLAGS) | set(UNEVEN_STAGE_FLAGS)
    compared |= set(LOW_PRECISION_FLAGS) | {"--rampup-batch-size", "--bf16", "--fp16", "--seq-length"}
    compared |= {f for k, v in REQUIRES["megatron"].items() for f in (k, *v)}
    assert compared <= set(megatron.flags), compared - set(megatron.flags)


SOURCES = os.environ.get("ORV_ENGINE_SOURCES")


@pytest.mark.parametrize("engine", ENGINES)
def test_the_stored_table_is_what_the_engine_source_gives(engine: str) -> None:
    source = Path(SOURCES or "/nonexistent") / engine
    if not source.is_dir():
        pytest.skip(f"no {engine} source at hand (set ORV_ENGINE_SOURCES; docs/protocols.md names the version)")
    stored = json.loads((FLAGS_DIR / f"{engine}.json").read_text(encoding="utf-8"))
    assert EXTRACTORS[engine](source) == stored["flags"]


@pytest.mark.parametrize("engine", ENGINES)
@given(
    tokens=st.lists(
        st.one_of(
            st.text(max_size=12),
            st.sampled_from(["--", "-", "--=", "--.x", "-1.5", "--speculative-config.method", "{", "--max-num"]),
        ),
        max_size=12,
    )
)
def test_no_launch_makes_the_parser_raise(engine: str, tokens: list[str]) -> None:
    parsed = parse(load_table(engine), tokens)
    parsed.figure_settings()
    for index, _token, _near in parsed.unknown:
        assert 0 <= index < len(tokens)
    for setting in parsed.settings.values():
        assert 0 <= setting.index < max(len(tokens), 1)


def _click_command(table: launch_args.Table) -> click.Command:
    """trtllm-serve's `serve` rebuilt from its table with Click itself: what Click's parser makes of a launch."""
    params: list[click.Parameter] = [click.Argument(["model"])]
    for canonical, entry in table.flags.items():
        if canonical == "--help":
            continue
        names = [canonical, *entry["aliases"], canonical[2:]]
        if entry["nargs"] == 0:
            params.append(click.Option(names, is_flag=True))
        else:
            params.append(click.Option(names, multiple=bool(entry.get("multiple"))))
    return click.Command("serve", params=params)


@given(data=st.data())
def test_trtllm_serve_s_table_parses_a_launch_as_click_does(data: st.DataObject) -> None:
    """Every spelling the table accepts, Click accepts with the same values; what Click refuses (a `-` for `_`,
    a prefix), the table calls unknown."""
    table = load_table("tensorrt-llm")
    _, respelled = data.draw(launches("tensorrt-llm"))
    tokens = ["org/model", *respelled]
    ctx = _click_command(table).make_context("trtllm-serve", list(tokens))
    parsed = parse(table, tokens)
    assert not parsed.unknown
    for canonical, setting in parsed.settings.items():
        got = ctx.params[canonical[2:]]
        if table.flags[canonical]["nargs"] == 0:
            assert got is True
        else:
            assert (" ".join(got) if isinstance(got, tuple) else got) == setting.value, (tokens, canonical)
    respelled_wrong = ["org/model", "--tp-size", "2"]
    with pytest.raises(click.NoSuchOption):
        _click_command(table).make_context("trtllm-serve", list(respelled_wrong))
    assert parse(table, respelled_wrong).unknown
    with pytest.raises(click.NoSuchOption):  # Click resolves no prefix
        _click_command(table).make_context("trtllm-serve", ["m", "--tensor_parallel", "2"])
    assert parse(table, ["m", "--tensor_parallel", "2"]).unknown


def test_trtllm_serve_s_rules() -> None:
    table = load_table("tensorrt-llm")
    p = parse(table, ["serve", "m", "--tp_size=2", "--tensor_parallel_size", "4", "--ep_size", "2"])
    assert p.settings["--tensor_parallel_size"].value == "4"  # the last wins, alias or not
    assert p.settings["--moe_expert_parallel_size"].value == "2"
    assert p.positionals == [(1, "m")]  # `serve` is the default subcommand: written or not, the same launch
    assert p.figure_settings() == parse(table, ["m", "--tp_size", "4", "--ep_size", "2"]).figure_settings()
    both = parse(table, ["m", "--custom_module_dirs", "a", "--custom_module_dirs", "b"])
    assert both.settings["--custom_module_dirs"].value == "a b"  # multiple=True: Click keeps both
