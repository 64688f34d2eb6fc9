"""Hypothesis properties: a content address ignores key order and whitespace; no input makes the engine raise.

Each property prints how many examples it tried (`pytest -s tests/unit/test_properties.py`). Measured:
json order/whitespace 150, add-run canonical round trip 100, add-run order/whitespace 40, random
text 50, random YAML 50, plausible registries ~62 (Hypothesis adds a few) — about 450 examples in
~9 s of CPU; ORV_PROPERTY_SCALE=6 (2,700 examples, ~50 s) also passes. The canonical round trip
found two bugs in hashing.py (fixed): 1e-06 and integral doubles beyond 2^53 were stored by
add-run yet called non-canonical (ORV202) by the check.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.testing.registry import make_registry
from validator.diagnostics import Result
from validator.engine.evaluate import Config, run
from validator.hashing import canonical_bytes, is_canonical, run_path
from validator.load.documents import parse_json
from validator.registry.store import add_run, store_run_document

JCS_INT = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)  # RFC 8785's exact integer range
FINITE = st.floats(allow_nan=False, allow_infinity=False)

json_values = st.recursive(
    st.none() | st.booleans() | JCS_INT | FINITE | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=25,
)


# ORV_PROPERTY_SCALE=10 tries ten times as many examples (a deeper run than the default seconds).
SCALE = float(os.environ.get("ORV_PROPERTY_SCALE", "1"))


def run_property(examples: int, strategy: st.SearchStrategy[Any], prop: Callable[[Any], None]) -> int:
    """Run prop on `examples` (× SCALE) generated inputs; return (and print) how many Hypothesis tried."""
    examples = max(1, int(examples * SCALE))
    tried = 0

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(strategy)
    def check(value: Any) -> None:
        nonlocal tried
        tried += 1
        prop(value)

    check()
    print(f"{prop.__name__}: {tried} examples")
    assert tried >= examples // 2, "Hypothesis could not generate enough inputs; the property was barely tested"
    return tried


def render(value: Any, rng: random.Random) -> str:
    """JSON text of value with keys in a random order and random whitespace between every token."""
    ws = lambda: rng.choice(["", " ", "\n", "\t", "  ", "\r\n "])  # noqa: E731
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        items = [f"{ws()}{json.dumps(k)}{ws()}:{ws()}{render(value[k], rng)}{ws()}" for k in keys]
        return "{" + ",".join(items) + ws() + "}"
    if isinstance(value, list):
        return "[" + ",".join(f"{ws()}{render(v, rng)}{ws()}" for v in value) + ws() + "]"
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


# A seed rather than Hypothesis draws for the layout choices: thousands of draws per document made
# generation, not checking, the cost. The seed still shrinks and replays.
seeds = st.integers(min_value=0, max_value=2**32 - 1).map(random.Random)


@pytest.mark.slow
def test_key_order_and_whitespace_never_change_the_canonical_bytes() -> None:
    def same_canonical_bytes(case: tuple[Any, random.Random]) -> None:
        value, rng = case
        assert canonical_bytes(json.loads(render(value, rng))) == canonical_bytes(value)

    run_property(150, st.tuples(json_values, seeds), same_canonical_bytes)


# --------------------------------------------------------------------------- plausible documents

GPUS = ["h100", "h200", "b200", "rtx-3090", "not-a-gpu"]
MODELS = ["qwen3.8-27b", "qwen3.5-122b-a10b", "glm-5.3-flash", "unknown-model"]
QUANTS = ["w4a16", "exl3-3-05bpw", "fp8", "bf16", "nvfp4", "official", "iq2-xxs-experts-nvfp4-mamba-q8-0-rest"]
small = st.integers(min_value=1, max_value=16)
wild_int = st.one_of(small, st.integers(min_value=1, max_value=2**40))
positive = st.one_of(st.floats(min_value=1e-6, max_value=1e6), st.floats(min_value=1e-300, max_value=1e300))
version = st.sampled_from(["0.30.0", "0.29.0", "v0.5.21", "0.26.1rc1.dev1024+g1fe3a1571"])


@st.composite
def layouts(draw: Any) -> dict[str, Any]:
    lay: dict[str, Any] = {"tp": draw(small), "pp": draw(small), "dp": draw(wild_int)}
    for key in ("vpp", "cp", "ep", "etp"):
        if draw(st.booleans()):
            lay[key] = draw(small)
    if draw(st.booleans()):
        lay["layer_split"] = draw(st.lists(st.integers(min_value=1, max_value=80), min_size=1, max_size=20))
    return lay


@st.composite
def servings(draw: Any) -> dict[str, Any]:
    serving: dict[str, Any] = {}
    for key in ("context_len", "concurrency", "slots"):
        if draw(st.booleans()):
            serving[key] = draw(wild_int)
    if draw(st.booleans()):
        serving["speculative"] = {"method": draw(st.sampled_from(["mtp", "eagle", "dflash"])), "k": draw(small)}
    return serving


@st.composite
def training_runs(draw: Any) -> dict[str, Any]:
    steps = draw(
        st.lists(
            st.tuples(
                st.integers(min_value=0, max_value=40),
                positive,
                st.integers(min_value=1, max_value=2**30),
                st.one_of(FINITE, st.sampled_from(["nan", "inf"])),
            ),
            max_size=12,
        )
    )
    return {
        "kind": "training",
        "tool": {"name": "bench", "version": draw(version)},
        "model": draw(st.sampled_from(MODELS)),
        "hardware": {"gpu": draw(st.sampled_from(GPUS)), "count": draw(wild_int)},
        "software": {"framework": {"name": "megatron-core", "version": draw(version)}},
        "workload": draw(st.sampled_from(["sft-8k-gb128-bf16", "other"])),
        "layout": draw(layouts()),
        "measured_at": "2026-10-18",
        "measured_by": draw(st.sampled_from(["a", "b"])),
        "summary": {"tokens_per_s_per_gpu": draw(positive)},
        "samples": [{"step": s, "time_s": t, "tokens": n, "loss": loss} for s, t, n, loss in steps],
    }


@st.composite
def inference_runs(draw: Any) -> dict[str, Any]:
    reqs = draw(
        st.lists(
            st.tuples(
                st.integers(min_value=0, max_value=10**6),
                st.integers(min_value=0, max_value=4096),
                st.floats(min_value=0, max_value=1e7),
                st.floats(min_value=0, max_value=1e7),
            ),
            max_size=12,
        )
    )
    doc: dict[str, Any] = {
        "kind": "inference",
        "tool": {"name": "bench", "version": draw(version)},
        "model": draw(st.sampled_from(MODELS)),
        "hardware": {"gpu": draw(st.sampled_from(GPUS)), "count": draw(wild_int)},
        "software": {"engine": {"name": "vllm", "version": draw(version)}},
        "quant": draw(st.sampled_from(QUANTS)),
        "serving": draw(servings()),
        "measured_at": "2026-10-20",
        "measured_by": "a",
        "summary": draw(
            st.dictionaries(
                st.sampled_from(["decode_tok_s", "prefill_tok_s", "ttft_ms", "output_tok_s", "tpot_ms"]),
                positive,
                min_size=1,
            )
        ),
        "samples": [{"prompt_tokens": p, "output_tokens": o, "ttft_ms": t, "e2e_ms": e} for p, o, t, e in reqs],
    }
    if draw(st.booleans()):
        doc["duration_s"] = draw(positive)
    return doc


@st.composite
def recipes(draw: Any, digests: list[str]) -> dict[str, Any]:
    kind = draw(st.sampled_from(["training", "inference"]))
    recipe: dict[str, Any] = {
        "id": "r",
        "kind": kind,
        "model": draw(st.sampled_from(MODELS)),
        "hardware": {"gpu": draw(st.sampled_from(GPUS)), "count": draw(wild_int)},
        "author": "a",
        "measured": "2026-10-18",
        "runs": [f"sha256:{d}" for d in draw(st.lists(st.sampled_from(digests), unique=True))] if digests else [],
    }
    if kind == "training":
        recipe.update(
            {
                "workload": draw(st.sampled_from(["sft-8k-gb128-bf16", "other"])),
                "software": {"framework": {"name": "megatron-core", "version": draw(version)}},
                "layout": draw(layouts()),
                "claimed": {"tokens_per_s_per_gpu": draw(positive)},
            }
        )
        if draw(st.booleans()):
            recipe["tuning"] = {
                "micro_batch_size": draw(wild_int),
                "optimizer_cpu_offload": draw(st.floats(allow_nan=False, allow_infinity=False)),
            }
    else:
        recipe.update(
            {
                "software": {"engine": {"name": "vllm", "version": draw(version)}},
                "quant": draw(st.sampled_from(QUANTS)),
                "serving": draw(servings()),
                "claimed": draw(
                    st.dictionaries(st.sampled_from(["decode_tok_s", "prefill_tok_s", "ttft_ms"]), positive, min_size=1)
                ),
            }
        )
    return recipe


def test_what_add_run_writes_the_check_calls_canonical() -> None:
    def canonical_round_trip(doc: dict[str, Any]) -> None:
        raw = canonical_bytes(doc)
        assert is_canonical(raw, parse_json(raw))

    run_property(100, st.one_of(training_runs(), inference_runs()), canonical_round_trip)


def _check_engine(result: Result) -> None:
    """The property: the engine returned, no check crashed (ORV900), every finding is located and hinted."""
    for d in result.diagnostics:
        assert d.code != "ORV900", d.message
        assert d.line >= 1 and d.col >= 1 and d.hint


def _write(root: str, rel: str, data: bytes) -> None:
    full = os.path.join(root, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(data)


class _Registry:
    """A fresh registry (base catalog) in a temporary folder, removed on exit."""

    def __enter__(self) -> str:
        self._tmp = tempfile.TemporaryDirectory(prefix="orv-prop-")
        return str(make_registry(Path(self._tmp.name) / "reg"))

    def __exit__(self, *exc: object) -> None:
        self._tmp.cleanup()


@pytest.mark.slow
def test_add_run_gives_the_same_address_whatever_the_key_order_and_spacing() -> None:
    def same_address(case: tuple[dict[str, Any], random.Random]) -> None:
        doc, rng = case
        with _Registry() as root:
            first = add_run(root, render(doc, rng).encode("utf-8"))
            second = add_run(root, render(doc, rng).encode("utf-8"))
            assert first.digest == second.digest and not second.created
            with open(os.path.join(root, first.path), "rb") as fh:
                assert fh.read() == canonical_bytes(doc)

    # add-run refuses a request ending before its first token (ORV214): its drawn e2e is taken as the decode time
    run_property(
        40, st.tuples(st.one_of(training_runs(), inference_runs().map(_ends_after_first_token)), seeds), same_address
    )


def _ends_after_first_token(doc: dict[str, Any]) -> dict[str, Any]:
    for sample in doc["samples"]:
        sample["e2e_ms"] = sample["ttft_ms"] + sample["e2e_ms"] + (1.0 if sample["output_tokens"] > 1 else 0.0)
    return doc


@pytest.mark.slow
def test_random_text_never_makes_the_engine_raise() -> None:
    run_bytes = st.one_of(st.binary(max_size=300), json_values.map(lambda v: json.dumps(v).encode()))

    def engine_returns(case: tuple[str, bytes]) -> None:
        recipe_text, raw = case
        with _Registry() as root:
            _write(root, "recipes/training/qwen3.8-27b/r.yaml", recipe_text.encode("utf-8", "surrogatepass"))
            _write(root, run_path("ab" + "0" * 62), raw)
            _check_engine(run(Config(root=root, skip_boards=True)))

    run_property(50, st.tuples(st.text(max_size=300), run_bytes), engine_returns)


def test_random_yaml_values_never_make_the_engine_raise() -> None:
    def engine_returns(value: Any) -> None:
        with _Registry() as root:
            _write(root, "recipes/inference/glm-5.3-flash/r.yaml", yaml.safe_dump(value).encode("utf-8"))
            _check_engine(run(Config(root=root, skip_boards=True)))

    run_property(50, json_values, engine_returns)


@pytest.mark.slow
def test_plausible_registries_never_make_the_engine_raise() -> None:
    def engine_returns(data: st.DataObject) -> None:
        with _Registry() as root:
            docs = data.draw(st.lists(st.one_of(training_runs(), inference_runs()), max_size=3))
            digests = [store_run_document(root, d).digest for d in docs]
            for i, recipe in enumerate(data.draw(st.lists(recipes(digests), min_size=1, max_size=3))):
                recipe["id"] = f"r{i}"
                _write(
                    root,
                    f"recipes/{recipe['kind']}/{recipe['model']}/r{i}.yaml",
                    yaml.safe_dump(recipe).encode("utf-8"),
                )
            _check_engine(run(Config(root=root, skip_boards=True)))

    run_property(60, st.data(), engine_returns)
