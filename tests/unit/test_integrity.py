"""ORV2xx beyond the golden cases: what the messages say, and which findings must not double up."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.testing.registry import CASES, make_registry
from validator.diagnostics import Diagnostic
from validator.engine.evaluate import Config, run
from validator.evidence.agreement import metadata_mismatches
from validator.models import RunMeta, TrainingRecipe


def _check(root: Path) -> list[Diagnostic]:
    return list(run(Config(root=str(root), skip_boards=True)).diagnostics)


def test_orv206_names_the_field_and_both_values(tmp_path: Path) -> None:
    (finding,) = _check(make_registry(tmp_path / "r", CASES / "orv206-run-mismatch"))
    assert "`software.framework.version`" in finding.message
    assert "recipe has `0.30.0`" in finding.message and "run has `0.29.0`" in finding.message


def test_orv207_gives_both_figures(tmp_path: Path) -> None:
    (finding,) = _check(make_registry(tmp_path / "r", CASES / "orv207-claim-gap"))
    assert "1,480.4" in finding.message and "1,400.0" in finding.message
    assert "claimed.tokens_per_s_per_gpu: 1400.0" in finding.hint


def test_a_misplaced_run_is_one_finding_and_a_reference_to_it_says_where_it_is(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "r", CASES / "orv209-wrong-shard")
    (misplaced,) = (root / "runs" / "00").glob("*.json")
    digest = misplaced.stem
    recipe = next((root / "recipes").rglob("*.yaml"))
    recipe.write_text(recipe.read_text().replace("runs: []", f'runs: ["sha256:{digest}"]'))
    got = {(d.code, d.path): d for d in _check(root)}
    assert sorted(code for code, _ in got) == ["ORV203", "ORV209"]  # never ORV107 as well
    orv203 = next(d for (code, _), d in got.items() if code == "ORV203")
    assert f"runs/00/{digest}.json" in orv203.hint and f"runs/{digest[:2]}/{digest}.json" in orv203.hint


def test_a_run_referenced_only_by_a_schema_invalid_recipe_is_not_called_an_orphan(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "r", CASES / "valid-training-run")
    recipe = next((root / "recipes").rglob("*.yaml"))
    recipe.write_text(recipe.read_text().replace("author: ATTUNE", "author: 42\nsurprise: true"))
    codes = {d.code for d in _check(root)}
    assert "ORV204" not in codes and "ORV103" in codes


def test_a_run_referenced_by_no_recipe_is_an_orphan_until_referenced(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "r", CASES / "valid-training-run")
    shutil.rmtree(root / "recipes" / "training")
    assert [d.code for d in _check(root)] == ["ORV204"]


def _recipe_and_run() -> tuple[TrainingRecipe, dict[str, object]]:
    recipe = TrainingRecipe.model_validate(
        {
            "id": "r",
            "kind": "training",
            "model": "m",
            "hardware": {"gpu": "h100", "count": 8},
            "author": "a",
            "measured": "2026-01-01",
            "workload": "w",
            "software": {"framework": {"name": "megatron-core", "version": "0.30.0"}},
            "layout": {"tp": 1, "pp": 4, "dp": 2},
            "claimed": {"tokens_per_s_per_gpu": 1.0},
            "runs": [],
        }
    )
    run_meta = {
        "kind": "training",
        "tool": {"name": "t", "version": "1.0.0"},
        "model": "m",
        "hardware": {"gpu": "h100", "count": 8},
        "software": {"framework": {"name": "megatron-core", "version": "0.30.0"}},
        "workload": "w",
        "layout": {"tp": 1, "pp": 4, "dp": 2},
        "measured_at": "2026-01-01",
        "measured_by": "x",
        "summary": {"tokens_per_s_per_gpu": 1.0},
    }
    return recipe, run_meta


def test_mismatches_name_leaf_fields() -> None:
    recipe, meta = _recipe_and_run()
    assert metadata_mismatches(recipe, RunMeta.model_validate(meta)) == []
    meta["hardware"] = {"gpu": "h100", "count": 16}
    meta["layout"] = {"tp": 1, "pp": 4, "dp": 4}
    meta["software"] = {"framework": {"name": "megatron-core", "version": "0.30.0"}, "runtime": {"name": "te"}}
    fields = [(m.field, m.recipe_value, m.run_value) for m in metadata_mismatches(recipe, RunMeta.model_validate(meta))]
    assert fields == [("hardware.count", 8, 16), ("software.runtime", None, {"name": "te"}), ("layout.dp", 2, 4)]
