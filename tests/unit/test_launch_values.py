"""A compared launch value is read as its engine reads it (stacks/launch_args.py's value readers).

Where vLLM's source is at hand (ORV_ENGINE_SOURCES=DIR holding vllm/), orv's reader is checked against vLLM's own
human_readable_int_or_auto, taken out of vllm/utils/argparse_utils.py (importing the module needs torch).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from validator.stacks.launch_args import (
    Setting,
    Unreadable,
    cpp_stoi,
    load_table,
    parse,
    per_slot_context,
    setting_int,
    vllm_human_readable_int_or_auto,
)

SPELLINGS = ["2k", "2K", "8k", "8K", "25.6k", "2.5K", "1m", "1M", "1g", "1T", "auto", "AUTO", "-1", " 8192 ", "x", ""]


def test_vllm_s_max_model_len_reads_k_as_a_thousand_and_K_as_1024() -> None:
    assert [vllm_human_readable_int_or_auto(s) for s in ("2k", "8K", "25.6k", "1M", "auto", "-1", " 8192 ")] == [
        2000,
        8192,
        25600,
        1048576,
        -1,
        -1,
        8192,
    ]
    for refused in ("2.5K", "8 k", "eight", ""):
        with pytest.raises(ValueError):
            vllm_human_readable_int_or_auto(refused)


def test_each_engine_reads_a_compared_setting_with_its_own_type() -> None:
    def read(engine: str, flag: str, value: str | None) -> int:
        return setting_int(engine, Setting(flag, value, 0, flag))

    assert read("vllm", "--max-model-len", "8K") == 8192
    assert read("llama.cpp", "--ctx-size", " 2048tokens") == 2048  # std::stoi ignores what follows the digits
    for engine, flag, value in [
        ("vllm", "--max-num-seqs", "8k"),  # argparse's int: no suffix but on --max-model-len
        ("sglang", "--context-length", "8k"),
        ("llama.cpp", "--ctx-size", "k8"),
        ("vllm", "--tensor-parallel-size", None),  # a flag written last, with no value
    ]:
        with pytest.raises(Unreadable):
            read(engine, flag, value)
    assert cpp_stoi("-1") == -1


def _vllm_reader() -> Callable[[str], int] | None:
    source = Path(os.environ.get("ORV_ENGINE_SOURCES") or "/nonexistent") / "vllm" / "vllm/utils/argparse_utils.py"
    if not source.is_file():
        return None
    tree = ast.parse(source.read_text(encoding="utf-8"))
    wanted = {"human_readable_int", "human_readable_int_or_auto"}
    module = ast.Module([n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted], [])
    namespace: dict[str, object] = {"re": re, "argparse": argparse}
    exec(compile(module, str(source), "exec"), namespace)  # noqa: S102 - the engine's own two functions
    return namespace["human_readable_int_or_auto"]  # type: ignore[return-value]


@given(st.one_of(st.sampled_from(SPELLINGS), st.from_regex(r"\A-?\d{1,4}(\.\d{1,2})?[kKmMgGtT]?\Z")))
def test_orv_reads_max_model_len_as_vllm_s_own_function_does(text: str) -> None:
    theirs = _vllm_reader()
    if theirs is None:
        pytest.skip("no vllm source at hand (set ORV_ENGINE_SOURCES; docs/protocols.md names the version)")

    def outcome(reader: Callable[[str], int]) -> int | str:
        try:
            return reader(text)
        except (ValueError, argparse.ArgumentTypeError):
            return "refused"

    assert outcome(vllm_human_readable_int_or_auto) == outcome(theirs)


@given(
    env=st.dictionaries(
        st.sampled_from(
            ["LLAMA_ARG_CTX_SIZE", "LLAMA_ARG_N_PARALLEL", "LLAMA_ARG_NO_KV_UNIFIED", "LLAMA_ARG_KV_UNIFIED"]
        ),
        st.text(max_size=8),
    ),
    args=st.lists(st.sampled_from(["-c", "-np", "2048", "-kvu", "x", "--ctx-size"]), max_size=6),
)
def test_no_llama_cpp_environment_makes_the_reading_raise(env: dict[str, str], args: list[str]) -> None:
    parsed = parse(load_table("llama.cpp"), args, env)
    for setting in parsed.settings.values():
        try:
            number = setting_int("llama.cpp", setting)
        except Unreadable:
            continue
        if setting.flag == "--ctx-size" and number > 0:
            per_slot, _how = per_slot_context(parsed, number)
            assert 0 <= per_slot <= number
