"""ORV211: a run file over its kind's size budget is refused, by `orv check` and by `orv add-run` before storing.

Budgets (validator/load/run_budget.py, docs/limits.md): training 4 MiB, inference 2 MiB, quality 8 MiB, each
several times an honest run of its kind measured by bench/run_sizes.py.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.testing.factories import training_recipe, training_run, write_recipe
from tests.testing.paths import REPO
from tests.testing.registry import make_registry
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.hashing import canonical_bytes, content_address, run_path
from validator.load.run_budget import MIB, RUN_FILE_BUDGET, over_budget


def _stored_as_is(root: Path, document: dict) -> str:
    """Write a run document's canonical bytes under their hash, as a hand (not orv add-run) would."""
    raw = canonical_bytes(document)
    digest = content_address(raw)
    path = root / run_path(digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return digest


def _long_training_run(steps: int) -> dict:
    recipe = training_recipe("long", 1480.4)
    return training_run(recipe, steps=steps)


def test_budgets_are_the_documented_ones() -> None:
    assert RUN_FILE_BUDGET == {"training": 4 * MIB, "inference": 2 * MIB, "quality": 8 * MIB}
    limits = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")
    for kind, budget in RUN_FILE_BUDGET.items():
        assert f"| {kind} run file | {budget // MIB} MiB" in limits, kind
    assert "ORV211" in limits


def test_the_edge_of_each_budget() -> None:
    for kind, budget in RUN_FILE_BUDGET.items():
        assert over_budget(kind, budget) is None
        message, hint = over_budget(kind, budget + 1)  # type: ignore[misc]
        assert f"{budget + 1:,} bytes" in message and f"{budget:,} bytes" in message and kind in message and hint
    # a kind orv does not know never escapes: it gets the smallest budget (the forgery: `kind: trainingX`)
    smallest = min(RUN_FILE_BUDGET.values())
    assert over_budget("trainingX", smallest + 1) is not None and over_budget(None, smallest + 1) is not None


def test_an_oversized_training_run_in_the_registry_is_orv211_with_the_figure_and_the_budget(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    document = _long_training_run(70_000)
    size = len(canonical_bytes(document))
    assert 4 * MIB < size < 16 * MIB  # over its kind's budget, under ORV111's 16 MiB for any file
    digest = _stored_as_is(root, document)
    recipe = training_recipe("long", 1480.4)
    recipe["runs"] = [f"sha256:{digest}"]
    write_recipe(root, recipe)
    found = [d for d in run(Config(root=str(root), skip_boards=True)).diagnostics if d.code == "ORV211"]
    assert [(d.path, d.severity.value) for d in found] == [(run_path(digest), "error")]
    assert f"{size:,} bytes" in found[0].message and "4 MiB (4,194,304 bytes)" in found[0].message
    assert "window" in found[0].hint


def test_padding_a_small_run_past_its_budget_is_caught_too(tmp_path: Path) -> None:
    """The cheapest forgery that keeps every figure: an honest short run padded with notes."""
    root = make_registry(tmp_path / "registry")
    document = _long_training_run(24)
    document["notes"] = "x" * (4 * MIB)
    digest = _stored_as_is(root, document)
    codes = {d.code for d in run(Config(root=str(root), skip_boards=True)).diagnostics if d.path == run_path(digest)}
    assert "ORV211" in codes


def test_add_run_refuses_an_oversized_run_document_before_storing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    given = tmp_path / "run.json"
    given.write_text(json.dumps(_long_training_run(70_000)))
    assert main(["add-run", str(given), "--root", str(root)]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "ORV211" in text and "4,194,304 bytes" in text and str(given) in text
    assert not list((root / "runs").rglob("*.json"))  # nothing stored


def _fixtures() -> object:
    spec = importlib.util.spec_from_file_location("make_fixtures", REPO / "tests/fixtures/tools/make_fixtures.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_fixtures"] = module
    spec.loader.exec_module(module)
    return module


def test_add_run_from_a_tool_refuses_an_oversized_sweep_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the real vLLM adapter: 30,000 requests make a run file over the 2 MiB inference budget."""
    fx = _fixtures()
    requests = [
        fx.Request(1024, 8, 0.06, [0.024] * 7, 3e-4, 1.0 + i * 0.3)  # type: ignore[attr-defined]
        for i in range(30_000)
    ]
    result, _ = fx.vllm_result(requests, detailed=True)  # type: ignore[attr-defined]
    given = tmp_path / "result.json"
    given.write_text(json.dumps(result))
    root = make_registry(tmp_path / "registry", REPO / "tests" / "cases" / "valid-inference")
    recipe = next((root / "recipes" / "inference").rglob("*.yaml"))
    code = main(
        [
            "add-run",
            str(given),
            "--root",
            str(root),
            "--from",
            "vllm",
            "--recipe",
            str(recipe),
            "--no-write-recipe",
            "--tool-version",
            "0.11.0",
        ]
    )
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 1, text
    assert "ORV211" in text and "2,097,152 bytes" in text and "inference run file" in text
    assert not [p for p in (root / "runs").rglob("*.json") if p.stat().st_size > 2 * MIB]


def test_the_repositorys_own_run_files_are_within_budget() -> None:
    runs = sorted((REPO / "runs").rglob("*.json"))
    assert runs
    for path in runs:
        raw = path.read_bytes()
        assert over_budget(json.loads(raw).get("kind"), len(raw)) is None, path
