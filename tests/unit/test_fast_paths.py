"""The fast paths must agree with the slow, obviously-correct ones they stand in for.

- strict pydantic models accept only what the JSON Schemas accept (the engine skips jsonschema
  when pydantic accepts);
- the column-wise samples check accepts only what the schema's `samples` accepts;
- the orjson canonical-form test agrees with rfc8785;
- the run's own consistency (ORV212-ORV214) read from decoded columns, in C, agrees with the
  value-by-value definitions.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.testing.paths import REPO
from validator import hashing
from validator.boards.split import read_boards
from validator.hashing import is_canonical
from validator.load import schema
from validator.load.documents import load_yaml_document
from validator.load.pipeline import samples_fast_ok
from validator.models import InferenceRecipe, RunMeta, TrainingRecipe
from validator.registry.layout import CATALOG_FILES
from validator.registry.snapshot import strip_samples
from validator.science import consistency
from validator.science.samples import Columns
from validator.science.workload_fit import LengthStats, length_stats, peak_in_flight

TRAINING = {
    "id": "qwen3-8-27b-h100-tp1-pp4-dp2",
    "kind": "training",
    "model": "qwen3.8-27b",
    "hardware": {"gpu": "h100", "count": 8},
    "author": "ATTUNE",
    "measured": "2026-10-18",
    "workload": "sft-8k-gb128-bf16",
    "software": {"framework": {"name": "megatron-core", "version": "0.30.0"}},
    "layout": {"tp": 1, "pp": 4, "dp": 2, "layer_split": [16, 17, 17, 14]},
    "tuning": {"max_tokens_per_gpu": 16384, "recompute": {"kind": "block", "layers": 14}},
    "claimed": {"tokens_per_s_per_gpu": 1480.4},
    "runs": [],
    "notes": "x",
}
INFERENCE = {
    "id": "glm-5-3-flash-2x-cmp-170hx",
    "kind": "inference",
    "model": "glm-5.3-flash",
    "hardware": {"gpu": "cmp-170hx", "count": 2},
    "author": "key-2952",
    "measured": "2026-10-17",
    "software": {"engine": {"name": "exllamav3", "commit": "0f685aa"}},
    "quant": "exl3-3-05bpw",
    "serving": {"context_len": 78, "concurrency": 1, "slots": 4},
    "claimed": {"decode_tok_s": 41.47},
    "runs": ["sha256:" + "a" * 64],
}
RUN = {
    "kind": "inference",
    "tool": {"name": "llm-inference-bench", "version": "0.8.0"},
    "model": "glm-5.3-flash",
    "hardware": {"gpu": "cmp-170hx", "count": 2},
    "software": {"engine": {"name": "exllamav3", "commit": "0f685aa"}},
    "quant": "exl3-3-05bpw",
    "serving": {"context_len": 78, "concurrency": 1},
    "measured_at": "2026-10-17T12:50:29Z",
    "measured_by": "key-2952",
    "summary": {"decode_tok_s": 41.47},
    "samples": [{"prompt_tokens": 78, "output_tokens": 200, "ttft_ms": 331.8, "e2e_ms": 5100.0}],
}

# Values a contributor could plausibly write in place of any field.
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            "",
            "0.30",
            "0.30.0",
            "H100",
            "h100",
            "qwen3.8-27b",
            "abc\n",
            "sha256:" + "b" * 64,
            "2026-10-18",
            "latest",
            "x" * 120,
        ]
    ),
    st.lists(st.integers(0, 20), max_size=3),
    st.dictionaries(st.sampled_from(["a", "name", "k"]), st.integers(0, 3), max_size=2),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(document: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    doc = copy.deepcopy(document)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["tier", "extra", "layout", "version", "commit"]))] = data.draw(ODD_VALUES)
        else:
            parent[path[-1]] = data.draw(ODD_VALUES)
        if not paths:
            break
    return doc


def _pydantic_ok(model: Any, document: Any) -> bool:
    """What the engine's fast path accepts: no nulls, then the strict model."""
    from validator.load.pipeline import _has_null

    if _has_null(document):
        return False
    try:
        model.model_validate(document)
        return True
    except ValidationError:
        return False


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_strict_models_accept_only_schema_valid_documents(data: st.DataObject) -> None:
    for model, kind, base in (
        (TrainingRecipe, "recipe-training", TRAINING),
        (InferenceRecipe, "recipe-inference", INFERENCE),
    ):
        doc = _mutate(base, data)
        if _pydantic_ok(model, doc):
            assert schema.validate(kind, doc) == [], doc
    run = strip_samples(_mutate(RUN, data))
    if _pydantic_ok(RunMeta, run):
        assert schema.validate(f"run-{run['kind']}", run) == [], run


def test_the_unmutated_documents_pass_both() -> None:
    assert _pydantic_ok(TrainingRecipe, TRAINING) and schema.validate("recipe-training", TRAINING) == []
    assert _pydantic_ok(InferenceRecipe, INFERENCE) and schema.validate("recipe-inference", INFERENCE) == []
    assert _pydantic_ok(RunMeta, strip_samples(RUN)) and schema.validate("run-inference", RUN) == []


SAMPLE_VALUE = st.one_of(
    st.integers(-2, 10**6),
    st.floats(-1, 1e4, allow_nan=False),
    st.booleans(),
    st.none(),
    st.sampled_from(["nan", "1.5", ""]),
)
TRAINING_SAMPLE = st.fixed_dictionaries(
    {"step": SAMPLE_VALUE, "time_s": SAMPLE_VALUE, "tokens": SAMPLE_VALUE, "loss": SAMPLE_VALUE},
    optional={"extra": SAMPLE_VALUE},
)
INFERENCE_SAMPLE = st.fixed_dictionaries(
    {"prompt_tokens": SAMPLE_VALUE, "output_tokens": SAMPLE_VALUE, "ttft_ms": SAMPLE_VALUE, "e2e_ms": SAMPLE_VALUE},
    optional={"start_ms": SAMPLE_VALUE, "extra": SAMPLE_VALUE},
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TRAINING_SAMPLE, max_size=4), st.lists(INFERENCE_SAMPLE, max_size=4))
def test_samples_fast_check_agrees_with_the_schema(training: list[Any], inference: list[Any]) -> None:
    items = {
        "training": schema.validator_for("run-training").schema["properties"]["samples"],
        "inference": schema.validator_for("run-inference").schema["properties"]["samples"],
    }
    for kind, samples in (("training", training), ("inference", inference)):
        validator = schema.validator_for(f"run-{kind}")
        schema_ok = not list(validator.evolve(schema=items[kind]).iter_errors(samples))
        if samples_fast_ok(kind, samples):  # sound; a doubt (e.g. 0.0 as an integer) goes to jsonschema
            assert schema_ok, samples


# Strings as run files carry them: any code point but a surrogate (UTF-8 cannot hold one), weighted
# towards what canonical form treats specially: escapes (controls, quote, backslash, DEL, U+2028),
# and the ranges whose key order differs between UTF-16 and code points (U+E000..U+FFFF vs astral).
SPECIAL_CHARS = st.sampled_from(
    [
        "\x00",
        "\x1f",
        "\b",
        "\f",
        "\n",
        "\r",
        "\t",
        '"',
        "\\",
        "/",
        "\x7f",
        "\u2028",
        "\u00e9",
        "\u4e2d",
        "\ue000",
        "\uff61",
        "\ufffd",
        "\U0001f600",
        "\U00010000",
        "\U0010fffd",
        "a",
        "Z",
        "1",
    ]
)
TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)), SPECIAL_CHARS), max_size=5)

# Run files are I-JSON (RFC 7493): integers beyond ±(2**53 - 1) have no canonical form.
JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**53) + 1, 2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: abs(f) < 2**53 or abs(f) >= 1e21),
        TEXT,
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES)
def test_canonical_fast_path_agrees_with_rfc8785(value: Any) -> None:
    canonical = rfc8785.dumps(value)
    assert is_canonical(canonical, orjson.loads(canonical))
    relaxed = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    parsed = orjson.loads(relaxed)
    assert is_canonical(relaxed, parsed) == (relaxed == rfc8785.dumps(parsed))


def test_non_ascii_run_files_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Valid UTF-8 with non-ASCII text is confirmed by orjson alone, without the pure-Python JCS."""
    monkeypatch.setattr(hashing, "canonical_bytes", _refuse)
    doc = {"notes": "mesuré à 25 °C — 中文 😀", "\u00e9": [1, "\n\x01"], "z": "\u00ff"}
    assert is_canonical(rfc8785.dumps(doc), doc)


def test_keys_sorting_differently_in_utf16_are_settled_exactly() -> None:
    # by code point U+FF61 < U+1F600; by UTF-16 code units (JCS) it sorts after
    doc = {"\uff61": 1, "\U0001f600": 2}
    by_code_point = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    assert not is_canonical(by_code_point, doc)
    assert is_canonical(rfc8785.dumps(doc), doc)


def _refuse(document: Any) -> bytes:
    raise AssertionError("the slow path ran")


def test_integral_floats_and_exponents_take_the_exact_path() -> None:
    for text in (b'{"a":1.0}', b'{"a":1e+16}', b'{"a":-0.0}', b'{"b":[2.0]}'):
        assert not is_canonical(text, orjson.loads(text))
    assert is_canonical(b'{"a":1e+21,"b":1e-7,"v":"0.30.0"}', {"a": 1e21, "b": 1e-7, "v": "0.30.0"})
    assert not math.isnan(0.0)


BOARDS_DOC = read_boards(str(REPO))  # the committed boards, assembled


def _boards_paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _boards_paths(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:3]):
            out += _boards_paths(value, (*at, i))
    return out


BOARDS_PATHS = _boards_paths(BOARDS_DOC)
MUTANT = st.one_of(JSON_VALUES, st.sampled_from(["T4", "", "sha256:x", "runs/aa/b.json", -1, 0, 1.5, 2**40]))


def _mutated(original: Any, path: tuple[Any, ...], value: Any, drop: bool) -> Any:
    """A copy of `original` with the item at `path` set to `value` (or dropped from its mapping)."""
    if not path:
        return value
    doc = copy.deepcopy(original)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.sampled_from(BOARDS_PATHS), MUTANT, st.booleans())
def test_compiled_boards_check_agrees_with_jsonschema(path: tuple[Any, ...], value: Any, drop: bool) -> None:
    """The compiled validator (jsonschema-rs) that checks generated boards accepts exactly what jsonschema does."""
    doc = _mutated(BOARDS_DOC, path, value, drop)
    assert schema.is_valid("boards", doc) == (schema.validate("boards", doc) == [])


CATALOG_DOCS = {
    kind: load_yaml_document(str(REPO), rel).data for rel, kind in CATALOG_FILES.items() if (REPO / rel).is_file()
}
CATALOG_PATHS = [(kind, path) for kind, doc in CATALOG_DOCS.items() for path in _boards_paths(doc)]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.sampled_from(CATALOG_PATHS), MUTANT, st.booleans())
def test_compiled_catalog_check_agrees_with_jsonschema(
    where: tuple[str, tuple[Any, ...]], value: Any, drop: bool
) -> None:
    """The compiled validator that checks the catalog first (registry/catalog.py) accepts exactly what jsonschema does."""
    kind, path = where
    doc = _mutated(CATALOG_DOCS[kind], path, value, drop)
    assert schema.is_valid(kind, doc) == (schema.validate(kind, doc) == [])


def test_the_shipped_catalog_is_valid_to_both() -> None:
    assert len(CATALOG_DOCS) >= 3
    for kind, doc in CATALOG_DOCS.items():
        assert schema.is_valid(kind, doc) and schema.validate(kind, doc) == []
        assert not schema.is_valid(kind, {**doc, "unexpected": 1}) and schema.validate(kind, {**doc, "unexpected": 1})


def test_small_numbers_orjson_writes_as_jcs_does_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """1e-5 <= |x| < 1e-4 is written "0.0000…" by both (a learning rate, say): confirmed without rfc8785.
    Below 1e-5 JCS still writes "0.00000…" where orjson writes an exponent: the comparison fails and
    rfc8785 settles it, so no marker search is needed for that."""
    with monkeypatch.context() as patched:
        patched.setattr(hashing, "canonical_bytes", _refuse)
        for value in (0.00001, 0.000025, -0.0000999):
            doc = {"lr": value, "v": "0.30.0"}
            assert is_canonical(rfc8785.dumps(doc), doc)
    for value in (0.000001, 0.0000035, 1e-7, 1e16, 1e-300):
        doc = {"lr": value}
        assert is_canonical(rfc8785.dumps(doc), doc)
        assert is_canonical(orjson.dumps(doc), doc) == (orjson.dumps(doc) == rfc8785.dumps(doc))


@pytest.mark.parametrize("limit", [1000, 50])
def test_a_file_that_grew_after_lstat_is_read_whole_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    # read_bytes asks for the size lstat gave: a file that grew in between is read on, never cut short
    import os
    import types

    from validator.errors import LoadError
    from validator.load import documents

    (tmp_path / "f.json").write_bytes(b"x" * 100)
    real = os.lstat
    monkeypatch.setattr(documents.os, "lstat", lambda p: types.SimpleNamespace(st_mode=real(p).st_mode, st_size=10))
    if limit >= 100:
        assert documents.read_bytes(str(tmp_path), "f.json", limit) == b"x" * 100
    else:
        with pytest.raises(LoadError) as raised:
            documents.read_bytes(str(tmp_path), "f.json", limit)
        assert raised.value.code == "ORV111"


class _Float(float):
    """A float subclass (numpy's float64 is one): not a JSON file's type, still a number."""


COLUMN_VALUE = st.one_of(
    st.integers(-5, 10**6),
    st.floats(-1, 1e4, allow_nan=False),
    st.sampled_from([True, None, "1.5", math.inf, -math.inf, math.nan, 10**400, 2**53 + 1, _Float(2.5), 0.0, -0.0]),
)
COLUMN_SAMPLE = st.one_of(
    st.fixed_dictionaries({"ttft_ms": COLUMN_VALUE}, optional={"e2e_ms": COLUMN_VALUE}),
    st.sampled_from([[], "x", 3]),  # not a mapping
)


@settings(max_examples=500, deadline=None)
@given(st.lists(COLUMN_SAMPLE, min_size=1, max_size=6))
def test_consistency_columns_agree_with_reading_value_by_value(samples: list[Any]) -> None:
    for key in ("ttft_ms", "e2e_ms"):
        fast = consistency._column(Columns(samples), key)
        plain = consistency._column_of_values(samples, key)
        assert fast == plain and (fast is None or all(type(v) is float for v in fast)), samples


def _peak_by_events(starts: list[float], e2es: list[float]) -> int:
    """The definition: every start and end as an event in time order, an end before a start at one instant."""
    events = sorted([(s + e, 0) for s, e in zip(starts, e2es)] + [(s, 1) for s in starts])
    open_now = peak = 0
    for _, is_start in events:
        open_now += 1 if is_start else -1
        peak = max(peak, open_now)
    return peak


TIME = st.one_of(st.integers(0, 20), st.floats(0, 20, allow_nan=False), st.sampled_from([0, 0.0, 1.0, 2**53 - 1]))


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.tuples(TIME, TIME), max_size=30))
def test_peak_in_flight_agrees_with_an_event_sweep(requests: list[tuple[float, float]]) -> None:
    starts, e2es = [s for s, _ in requests], [e for _, e in requests]
    assert peak_in_flight(starts, e2es) == _peak_by_events(starts, e2es)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e6, allow_nan=False), st.floats(0, 1e5, allow_nan=False)), min_size=1))
def test_span_and_mean_in_flight_agree_with_their_definitions(requests: list[tuple[float, float]]) -> None:
    starts, e2es = [s for s, _ in requests], [e for _, e in requests]
    assert consistency.measured_span_ms(starts, e2es) == max(s + e for s, e in requests) - min(starts)
    first, last = min(starts), max(starts)
    mean = consistency.mean_in_flight_queued(starts, e2es)
    if last <= first:
        assert mean is None
    else:
        busy = math.fsum(max(0.0, min(s + e, last) - s) for s, e in requests)
        assert mean == busy / (last - first)


REQUEST = st.tuples(st.integers(0, 5000), st.integers(0, 3), st.floats(0, 1e5, allow_nan=False), st.floats(0, 1e4))


@settings(max_examples=500, deadline=None)
@given(st.lists(REQUEST, max_size=12), st.booleans())
def test_length_stats_are_over_the_completed_requests(requests: list[Any], timed: bool) -> None:
    done = [r for r in requests if r[1] > 0]
    prompts, outputs, starts, e2es = (list(column) for column in zip(*requests)) if requests else ([], [], [], [])
    found = length_stats(prompts, outputs, starts if timed else None, e2es)
    if not done:
        assert found is None
        return
    p, o = [r[0] for r in done], [r[1] for r in done]
    peak = peak_in_flight([r[2] for r in done], [r[3] for r in done]) if timed else None
    expected = LengthStats(
        len(done), math.fsum(p) / len(p), min(p), max(p), math.fsum(o) / len(o), min(o), max(o), peak
    )
    assert found == expected
