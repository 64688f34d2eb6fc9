"""Fuzzing the inputs no golden case reaches (issue 12): training run files (the registry holds only
inference runs today) and the importers' seed files. A mutated input gives findings or a report
with reasons — never a traceback, never ORV900.

CI runs a fixed, derandomized budget (tests/conftest.py); `HYPOTHESIS_PROFILE=explore` runs these
with random seeds and ORV_EXPLORE_EXAMPLES examples each, for long fuzzing sessions.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples
from tests.testing.registry import CASES, fresh_registry, make_registry
from validator.cli import main
from validator.engine import Config, run
from validator.hashing import canonical_bytes, content_address, run_path

REPO = Path(__file__).resolve().parent.parent
SEEDS = Path(__file__).parent / "fixtures" / "import"
TRAIN_RUN = CASES / "valid-training-run" / "runs" / "b7" / \
    "b7f2578794a34ac68613116cc9ac6a76b9e6b5bb08db2adce7a53c449372d0ef.json"
SEED_RUN: dict[str, Any] = json.loads(TRAIN_RUN.read_text(encoding="utf-8"))
SEED_RUN["samples"] = SEED_RUN["samples"][:6]

ODD = st.sampled_from([None, True, False, 0, -1, 1.5, 2**53, 2**64, 10**400, 1e300, -1e-300, "", "nan", "inf",
                       "x\n", " h100", "H100", "\u200b", "\ud800", "{0}", [], {}, [None], {"k": 1}, [1, 2],
                       "2026-13-45T25:61:00Z", "sha256:" + "0" * 64, "0" * 65, "a" * 5000])
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
def test_mutated_training_run_files_give_findings_not_crashes(tmp_path_factory: pytest.TempPathFactory,
                                                               raw: bytes) -> None:
    root = make_registry(tmp_path_factory.mktemp("fuzz") / "registry", CASES / "valid-training-run")
    rel = run_path(content_address(raw))
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(raw)
    result = run(Config(root=str(root), skip_boards=True))
    assert not [d for d in result.diagnostics if d.code == "ORV900"], result.diagnostics
    for d in result.diagnostics:
        assert d.line >= 1 and d.col >= 1 and d.hint, d
    assert result.errors or raw == canonical_bytes(SEED_RUN)  # the changed run is an orphan at least


INSERTS = [b"", b"|", b"{", b"}", b'"', b"\n", b"\x00", b"\xff", b"1e999", b"NaN", b"-", b"0x_", b"\\ud800",
           b"9" * 5000, b"| x | y |\n", b"\t", b"\r\n", b"H100", b"x" * 300]


@st.composite
def mutated_seed(draw: st.DrawFn, raw: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        span = draw(st.integers(0, 400))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "truncate"]))
        if action == "delete":
            raw = raw[:at] + raw[at + span:]
        elif action == "duplicate":
            raw = raw[:at] + raw[at:at + span] * 2 + raw[at + span:]
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


@settings(max_examples=fuzz_examples(20), **BUDGET)
@given(raw=mutated_seed((SEEDS / "000_1e2c7c041290fe1e.txt").read_bytes()))
def test_mutated_leaderboard_seed_gives_a_report_not_a_crash(tmp_path_factory: pytest.TempPathFactory,
                                                             capsys: pytest.CaptureFixture[str], raw: bytes) -> None:
    _import(tmp_path_factory.mktemp("lb"), "leaderboard", raw, capsys)


@settings(max_examples=fuzz_examples(15), **BUDGET)
@given(raw=mutated_seed((SEEDS / "004_cbf1754cfd687db7.txt").read_bytes()))
def test_mutated_boards_export_gives_a_report_not_a_crash(tmp_path_factory: pytest.TempPathFactory,
                                                          capsys: pytest.CaptureFixture[str], raw: bytes) -> None:
    _import(tmp_path_factory.mktemp("lb"), "legacy-boards", raw, capsys)
