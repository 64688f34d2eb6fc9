"""Shard partials' data encoding (validator/engine/datacodec.py): every per-file result orv makes survives
encode -> JSON -> decode unchanged, and decode builds only the declared type from well-typed data."""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.testing.paths import REPO as ROOT
from tests.testing.registry import CASES, make_registry
from validator.diagnostics import Diagnostic, Severity
from validator.engine.datacodec import ShapeError, decode, decode_any, encode, encode_any
from validator.load.cache import Store
from validator.load.pipeline import FileResult, load_tree
from validator.registry.snapshot import RecipeEntry, RunEntry

CASE_DIRS = sorted(p for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _round_trip(entry: Any, kind: Any) -> Any:
    return decode(kind, orjson.loads(orjson.dumps(encode(kind, entry))))


def _same(a: FileResult, b: FileResult) -> None:
    assert a == b
    assert a[0] is None or (type(a[0]) is type(b[0]) and a[0].keys == b[0].keys)  # keys: compare=False


def _results(root: str) -> dict[str, FileResult]:
    return load_tree(root, 1, None, Store()).results


@pytest.mark.parametrize("case", CASE_DIRS, ids=lambda p: p.name)
def test_every_golden_cases_results_survive_the_encoding(tmp_path: Path, case: Path) -> None:
    for _rel, (entry, findings) in _results(str(make_registry(tmp_path / "r", case))).items():
        kind = RecipeEntry if isinstance(entry, RecipeEntry) else RunEntry
        back = (None if entry is None else _round_trip(entry, kind), _round_trip(findings, list[Diagnostic]))
        _same((entry, findings), back)


def test_the_repositorys_own_results_survive_the_encoding() -> None:
    results = _results(str(ROOT))
    assert len(results) > 50
    for entry, findings in results.values():
        assert entry is not None
        _same((entry, findings), (_round_trip(entry, type(entry)), _round_trip(findings, list[Diagnostic])))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.binary(max_size=8)  # a fingerprint's packed near print
    | st.lists(st.floats(), max_size=3).map(lambda v: array("d", v))  # its quantiles
    | st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3).map(lambda v: array("q", v)),  # its value sketch
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.sampled_from(["tuple", "float", "dict", "bytes", "array", "a", ""]), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_values_typed_any_round_trip_exactly(value: Any) -> None:
    back = decode_any(orjson.loads(orjson.dumps(encode_any(value))))
    assert repr(back) == repr(value) or _nan_equal(back, value)


def _nan_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple, array)):
        return len(a) == len(b) and all(map(_nan_equal, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_nan_equal(a[k], b[k]) for k in a)
    return bool(a == b)


@dataclass(frozen=True)
class _Point:
    x: float
    tags: tuple[str, ...] = ()
    meta: Mapping[str, int] = field(default_factory=dict)
    label: str | None = None


@pytest.mark.parametrize(
    "value,message",
    [
        ({"x": 1.0, "tags": {"tuple": []}, "meta": {}}, "exactly the fields"),
        ({"x": 1.0, "tags": {"tuple": []}, "meta": {}, "label": None, "__class__": "os.system"}, "not '__class__'"),
        ({"x": "1", "tags": {"tuple": []}, "meta": {}, "label": None}, "str where float or int belongs"),
        ({"x": 1.0, "tags": ["a"], "meta": {}, "label": None}, "where a tuple"),
        ({"x": 1.0, "tags": {"tuple": [1]}, "meta": {}, "label": None}, "int where str belongs"),
        ({"x": 1.0, "tags": {"tuple": []}, "meta": {"a": True}, "label": None}, "bool where int belongs"),
        ([1.0], "list where dict belongs"),
    ],
)
def test_decode_refuses_anything_but_the_declared_shape(value: Any, message: str) -> None:
    with pytest.raises(ShapeError, match=message.replace("(", r"\(")):
        decode(_Point, value)


@pytest.mark.parametrize(
    "tagged,message",
    [
        ({"bytes": "not base64!"}, "not base64"),
        ({"array": ["u", ["x"]]}, "`array` holds list"),  # only doubles and 64-bit integers
        ({"array": ["q", [1.5]]}, "`array` holds list"),
        ({"array": ["q", [2**64]]}, "`array` holds list"),
        ({"array": ["d", ["1"]]}, "`array` holds list"),
    ],
)
def test_a_packed_fingerprint_part_is_read_back_only_as_what_it_was(tagged: Any, message: str) -> None:
    """Bytes and arrays (a run's packed near print and its sketches, issue 54) come back as bytes and as
    arrays of numbers, or are refused: a partial cannot make them anything else."""
    with pytest.raises(ShapeError, match=message):
        decode_any({"tagged": tagged})


def test_decode_builds_the_declared_type_and_nothing_the_data_names() -> None:
    made = decode(_Point, {"x": 2, "tags": {"tuple": ["a"]}, "meta": {"dict": {"dict": 1}}, "label": "p"})
    assert made == _Point(2.0, ("a",), {"dict": 1}, "p") and type(made.x) is float
    assert decode(Severity, "error") is Severity.ERROR
    with pytest.raises(ShapeError):
        decode(Severity, "ERROR")
    assert decode(_Point, encode(_Point, _Point(math.inf))).x == math.inf
