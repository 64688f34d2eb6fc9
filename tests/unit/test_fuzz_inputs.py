"""Fuzzing the inputs no golden case reaches (issue 12): training run files (the registry holds only
inference runs today) and the importers' seed files. A mutated input gives findings or a report
with reasons — never a traceback, never ORV900.

CI runs a fixed, derandomized budget (tests/conftest.py); `HYPOTHESIS_PROFILE=explore` runs these
with random seeds and ORV_EXPLORE_EXAMPLES examples each, for long fuzzing sessions.
"""

from __future__ import annotations

import contextlib
import copy
import json
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples
from tests.testing.bounds import bytes_read, hang_guard
from tests.testing.paths import FIXTURES
from tests.testing.registry import (
    CASES,
    INFERENCE_RECIPE_TEXT,
    TOOLS,
    VALID_TRAINING_RECIPE,
    fresh_registry,
    make_registry,
    written,
)
from validator.cli import main
from validator.commands.add_run import AddRunRequest, execute
from validator.engine.evaluate import Config, run
from validator.errors import UsageError
from validator.hashing import canonical_bytes, content_address, run_path

SEEDS = FIXTURES / "import"
LMEVAL = FIXTURES / "lmeval"
TRAIN_RUN = (
    CASES
    / "valid-training-run"
    / "runs"
    / "b7"
    / "b7f2578794a34ac68613116cc9ac6a76b9e6b5bb08db2adce7a53c449372d0ef.json"
)
SEED_RUN: dict[str, Any] = json.loads(TRAIN_RUN.read_text(encoding="utf-8"))
SEED_RUN["samples"] = SEED_RUN["samples"][:6]

ODD = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        1.5,
        2**53,
        2**64,
        10**400,
        1e300,
        -1e-300,
        "",
        "nan",
        "inf",
        "x\n",
        " h100",
        "H100",
        "\u200b",
        "\ud800",
        "{0}",
        [],
        {},
        [None],
        {"k": 1},
        [1, 2],
        "2026-13-45T25:61:00Z",
        "sha256:" + "0" * 64,
        "0" * 65,
        "a" * 5000,
    ]
)
BUDGET = dict(deadline=None, suppress_health_check=list(HealthCheck))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@st.composite
def mutated_run(draw: st.DrawFn) -> bytes:
    """The seed training run with a few nodes replaced, deleted or added, then (sometimes) its bytes cut."""
    doc = copy.deepcopy(SEED_RUN)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths[1:] or [()]))
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        # a copy: ODD's lists and dicts are shared objects, and a later step may edit inside the one
        # placed here (which made the strategy differ between examples: FlakyStrategyDefinition)
        if action == "replace" or not path:
            parent[path[-1]] = copy.deepcopy(draw(ODD))
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["tier", "extra", "Kind", "samples", "x\n"]))] = copy.deepcopy(draw(ODD))
        doc = doc
    try:
        raw = canonical_bytes(doc)
    except Exception:  # noqa: BLE001 - what JCS refuses still goes in, as plain JSON
        raw = json.dumps(doc).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(raw)))
        raw = raw[:cut] + draw(st.sampled_from([b"", b"}", b",", b"\xff", b"1" * 4400, b"NaN", b'"\\ud800"']))
    return raw


@settings(max_examples=fuzz_examples(40), **BUDGET)
@given(raw=mutated_run())
def test_mutated_training_run_files_give_findings_not_crashes(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes
) -> None:
    root = make_registry(tmp_path_factory.mktemp("fuzz") / "registry", CASES / "valid-training-run")
    rel = run_path(content_address(raw))
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(raw)
    result = run(Config(root=str(root), skip_boards=True))
    assert not [d for d in result.diagnostics if d.code == "ORV900"], result.diagnostics
    for d in result.diagnostics:
        assert d.line >= 1 and d.col >= 1 and d.hint, d
    assert result.errors or raw == canonical_bytes(SEED_RUN)  # the changed run is an orphan at least


INSERTS = [
    b"",
    b"|",
    b"{",
    b"}",
    b'"',
    b"\n",
    b"\x00",
    b"\xff",
    b"1e999",
    b"NaN",
    b"-",
    b"0x_",
    b"\\ud800",
    b"9" * 5000,
    b"| x | y |\n",
    b"\t",
    b"\r\n",
    b"H100",
    b"x" * 300,
]


@st.composite
def mutated_seed(draw: st.DrawFn, raw: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        span = draw(st.integers(0, 400))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "truncate"]))
        if action == "delete":
            raw = raw[:at] + raw[at + span :]
        elif action == "duplicate":
            raw = raw[:at] + raw[at : at + span] * 2 + raw[at + span :]
        elif action == "insert":
            raw = raw[:at] + draw(st.sampled_from(INSERTS)) + raw[at:]
        else:
            raw = raw[:at]
    return raw


def _import(tmp: Path, command: str, raw: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh_registry(tmp / "registry")
    source = tmp / "seed.txt"
    source.write_bytes(raw)
    code = main(["import", command, str(source), "--root", str(root), "--report", str(tmp / "report.md")])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert "internal error" not in err
    if code == 0:  # a report with reasons for what it did not import
        assert (tmp / "report.md").read_text(encoding="utf-8").strip()


@pytest.mark.slow
@settings(max_examples=fuzz_examples(20), **BUDGET)
@given(raw=mutated_seed((SEEDS / "000_1e2c7c041290fe1e.txt").read_bytes()))
def test_mutated_leaderboard_seed_gives_a_report_not_a_crash(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], raw: bytes
) -> None:
    _import(tmp_path_factory.mktemp("lb"), "leaderboard", raw, capsys)


@settings(max_examples=fuzz_examples(15), **BUDGET)
@given(raw=mutated_seed((SEEDS / "004_cbf1754cfd687db7.txt").read_bytes()))
def test_mutated_boards_export_gives_a_report_not_a_crash(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], raw: bytes
) -> None:
    _import(tmp_path_factory.mktemp("lb"), "legacy-boards", raw, capsys)


# --------------------------------------------------------------------------- a contributor's tool output (issue 35)
# `orv add-run` on any bytes or any JSON tree gives a stored run or findings: never an exception, within a
# memory bound (1 GiB over what the test process holds), nothing written on refusal. Each input gets
# HANG_SECONDS (tests/testing/bounds.py) before it fails as a hang; no stopwatch judges its speed. What it
# may read is bounded instead: the inputs are kilobytes, the registry's recipe and catalog a few more.

READS_PER_INPUT = 16 * 1024**2
MEMORY_MARGIN = 1 << 30
RESULT_KEYS = [
    "duration",
    "date",
    "model_id",
    "tokenizer_id",
    "endpoint_type",
    "dataset_name",
    "details",
    "max_concurrency",
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "latencies",
    "errors",
    "start_times",
    "mean_ttft_ms",
    "mean_tpot_ms",
    "output_throughput",
    "completed",
    "label",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["20261018-101503", "inf", "", "vllm"]),
)
TREES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(RESULT_KEYS) | st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=40,
)
BOMBS = [
    "[" * 200_000 + "]" * 200_000,
    "9" * 5000,
    "1e400",
    "-1e400",
    "NaN",
    "-Infinity",
    '"\\ud800"',
    "[" * 1100 + "]" * 1100,
]


@contextlib.contextmanager
def memory_bound() -> Iterator[None]:
    """Cap this process's address space at what it holds now plus MEMORY_MARGIN, for the block's duration."""
    with open("/proc/self/status", encoding="ascii") as fh:
        held = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = held + MEMORY_MARGIN if hard == resource.RLIM_INFINITY else min(hard, held + MEMORY_MARGIN)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@st.composite
def json_result(draw: st.DrawFn) -> bytes:
    """Any JSON tree (keys the adapters read among them), sometimes with a bomb as one value, sometimes as lines."""
    tree = draw(TREES)
    text = json.dumps(tree)
    if isinstance(tree, dict) and draw(st.booleans()):
        key = draw(st.sampled_from(RESULT_KEYS))
        text = text[:-1] + ("," if tree else "") + f'"{key}": {draw(st.sampled_from(BOMBS))}}}'
    if draw(st.booleans()):
        text += "\n" + json.dumps(draw(TREES))
    return text.encode("utf-8", "surrogatepass")


@st.composite
def odd_values(draw: st.DrawFn, doc: Any, least: int) -> None:
    """Replace `least` to 3 values of the JSON tree `doc`, in place, by odd ones or bombs."""
    for _ in range(draw(st.integers(least, 3))):
        path = draw(st.sampled_from(_paths(doc)[1:]))
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = copy.deepcopy(draw(ODD))


@st.composite
def mutated_result(draw: st.DrawFn, fixture: Path) -> bytes:
    """A real result with a few values replaced by odd ones or bombs."""
    lines = fixture.read_text(encoding="utf-8").strip().split("\n")
    doc = json.loads(lines[0])
    draw(odd_values(doc, 1))
    text = json.dumps(doc)
    if draw(st.booleans()):
        text = text.replace('"duration"', f'"label": {draw(st.sampled_from(BOMBS))}, "duration"', 1)
    return text.encode("utf-8", "surrogatepass")


LOG_INSERTS = INSERTS + [
    b"  num_layers .............. 1000000000\n",
    b"  pipeline_model_parallel_size .... 1000000000\n",
    b"  decoder_first_pipeline_num_layers ... 1\n",
    b"  seq_length ..... 1e308\n",
    b"  global_batch_size ..... " + b"9" * 400 + b"\n",
    b" iteration " + b"9" * 5000 + b"/ 24 | elapsed time per iteration (ms): 1.0 |",
    b" global batch size: 1e300 |",
    b" consumed samples: -5 |",
]


@st.composite
def mutated_log(draw: st.DrawFn, fixture: Path) -> bytes:
    raw = fixture.read_bytes()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        if draw(st.booleans()):
            raw = raw[:at] + draw(st.sampled_from(LOG_INSERTS)) + raw[at:]
        else:
            raw = raw[:at] + raw[at + draw(st.integers(0, 400)) :]
    return raw


def _add_run(root: Path, source: Path, fmt: str, recipe: Path | None, **given: Any) -> None:
    before = written(root)
    start = bytes_read()
    with memory_bound(), hang_guard():
        outcome = execute(
            AddRunRequest(
                root=str(root), file=str(source), fmt=fmt, recipe_path=str(recipe) if recipe else None, given=given
            )
        )
    assert bytes_read() - start <= READS_PER_INPUT, "read far more than the input, the recipe and the catalog"
    assert outcome.exit_code in (0, 1)
    event(f"exit {outcome.exit_code}")  # --hypothesis-show-statistics: how many inputs became runs
    if outcome.exit_code:
        assert written(root) == before, "a refused input wrote a file"
        findings = outcome.findings.diagnostics if outcome.findings else ()
        assert findings or any(stream == "err" for stream, _ in outcome.lines)
        for d in findings:
            assert d.line >= 1 and d.col >= 1 and d.hint and d.code != "ORV900", d
    else:
        assert any(text.startswith("sha256:") for stream, text in outcome.lines if stream == "out")


@pytest.fixture(scope="module")
def add_run_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_registry(tmp_path_factory.mktemp("add-run") / "registry")


@pytest.fixture(scope="module")
def inference_recipe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("recipe") / "qwen3-8-27b-h100-vllm-fp8-c1.yaml"
    path.write_text(INFERENCE_RECIPE_TEXT, encoding="utf-8")
    return path


@settings(max_examples=fuzz_examples(40), **BUDGET)
@given(
    fmt=st.sampled_from(["vllm", "sglang", None]),
    raw=st.one_of(
        json_result(),
        mutated_result(TOOLS / "vllm" / "serve-detailed.json"),
        mutated_result(TOOLS / "sglang" / "bench_serving-details.jsonl"),
        st.binary(max_size=300),
    ),
)
def test_any_serving_result_gives_a_run_or_a_finding(
    tmp_path_factory: pytest.TempPathFactory,
    add_run_registry: Path,
    inference_recipe: Path,
    fmt: str | None,
    raw: bytes,
) -> None:
    source = tmp_path_factory.mktemp("result") / "result.json"
    source.write_bytes(raw)
    if fmt is None:  # detected from the bytes: a run document, a tool's output, or a usage error
        try:
            _add_run(add_run_registry, source, None, None)  # type: ignore[arg-type]
        except UsageError:
            pass
        return
    _add_run(add_run_registry, source, fmt, inference_recipe, tool_version="0.11.0", record=1)


@settings(max_examples=fuzz_examples(40), **BUDGET)
@given(
    fmt_and_raw=st.one_of(
        st.tuples(st.just("megatron"), mutated_log(TOOLS / "megatron" / "small-model-1.5b.log")),
        st.tuples(st.just("megatron"), mutated_log(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log")),
        st.tuples(st.just("nemo"), mutated_log(TOOLS / "nemo" / "qwen3-8-27b-nemo.log")),
        st.tuples(st.sampled_from(["megatron", "nemo"]), st.binary(max_size=300)),
    )
)
def test_any_training_log_gives_a_run_or_a_finding(
    tmp_path_factory: pytest.TempPathFactory, add_run_registry: Path, fmt_and_raw: tuple[str, bytes]
) -> None:
    fmt, raw = fmt_and_raw
    source = tmp_path_factory.mktemp("log") / "train.log"
    source.write_bytes(raw)
    _add_run(add_run_registry, source, fmt, VALID_TRAINING_RECIPE, measured_by="lab-a")


@st.composite
def mutated_lmeval(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """The reference run's results (a few values odd, or a bomb) and samples (lines cut, odd bytes inserted)."""
    folder = LMEVAL / "limit50"
    results = json.loads(next(folder.glob("results_*.json")).read_text(encoding="utf-8"))
    draw(odd_values(results, 0))
    text = json.dumps(results)
    if draw(st.booleans()):
        text = text.replace('"results"', f'"bomb": {draw(st.sampled_from(BOMBS))}, "results"', 1)
    samples = next(folder.glob("samples_*.jsonl")).read_bytes()
    if draw(st.booleans()):
        samples = draw(mutated_seed(samples))
    return text.encode("utf-8", "surrogatepass"), samples


@settings(max_examples=fuzz_examples(30), **BUDGET)
@given(parts=mutated_lmeval())
def test_any_lmeval_output_gives_a_run_or_a_finding(
    tmp_path_factory: pytest.TempPathFactory, add_run_registry: Path, parts: tuple[bytes, bytes]
) -> None:
    folder = tmp_path_factory.mktemp("lmeval")
    names = [p.name for p in sorted((LMEVAL / "limit50").iterdir())]
    (folder / names[0]).write_bytes(parts[0])  # results_<date>.json sorts before samples_<task>_<date>.jsonl
    (folder / names[1]).write_bytes(parts[1])
    _add_run(add_run_registry, folder, "lm-eval", None, model="qwen3.8-27b", measured_by="x")


CONFIG_KEYS = [
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "mlp_only_layers",
    "decoder_sparse_step",
    "first_k_dense_replace",
    "moe_layer_freq",
    "kv_lora_rank",
    "q_lora_rank",
    "text_config",
    "model_type",
    "tie_word_embeddings",
    "n_shared_experts",
]


@st.composite
def mutated_config(draw: st.DrawFn) -> bytes:
    """A real config.json with a few values replaced (odd values, huge counts, bombs), or any JSON tree."""
    name = draw(st.sampled_from(sorted(p.name for p in (FIXTURES / "hf-configs").iterdir())))
    doc = json.loads((FIXTURES / "hf-configs" / name).read_text(encoding="utf-8"))
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(CONFIG_KEYS))
        doc[key] = copy.deepcopy(draw(ODD | st.integers(0, 10**20) | TREES))
    text = json.dumps(doc)
    if draw(st.booleans()):
        text = text[:-1] + f', "{draw(st.sampled_from(CONFIG_KEYS))}": {draw(st.sampled_from(BOMBS))}}}'
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=fuzz_examples(40), **BUDGET)
@given(raw=mutated_config())
def test_any_config_gives_an_entry_or_a_finding(
    tmp_path_factory: pytest.TempPathFactory, add_run_registry: Path, raw: bytes
) -> None:
    path = tmp_path_factory.mktemp("config") / "config.json"
    path.write_bytes(raw)
    before = written(add_run_registry)
    start = bytes_read()
    with memory_bound(), hang_guard():
        code = main(
            [
                "catalog",
                "add-model",
                "--root",
                str(add_run_registry),
                "--config",
                str(path),
                "--id",
                "fuzzed-model",
                "--family",
                "Llama",
                "--dry-run",
            ]
        )
    assert bytes_read() - start <= READS_PER_INPUT, "read far more than the config and the catalog"
    assert code in (0, 1)
    event(f"exit {code}")
    assert written(add_run_registry) == before
