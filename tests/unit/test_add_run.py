"""The add-run flow (validator/commands/add_run.py) driven without Click: what it stores, says and returns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.testing.registry import HAND_WRITTEN, VLLM, hand_written_registry, make_registry
from validator.cli import app as cli
from validator.commands.add_run import ADAPTER_FORMATS, QUALITY_FORMATS, AddRunRequest, execute
from validator.errors import UsageError


@pytest.fixture
def registry(tmp_path: Path) -> tuple[Path, Path]:
    return hand_written_registry(tmp_path / "registry")


def test_the_cli_offers_exactly_the_formats_the_flow_reads() -> None:
    option = next(p for p in cli.add_run_cmd.params if p.name == "fmt")
    assert tuple(option.type.choices) == ADAPTER_FORMATS + QUALITY_FORMATS


def test_a_tool_output_is_stored_and_recorded_in_its_recipe(registry: tuple[Path, Path]) -> None:
    root, recipe = registry
    outcome = execute(
        AddRunRequest(root=str(root), file=str(VLLM), fmt="vllm", recipe_path=str(recipe), write_recipe=True)
    )
    assert outcome.exit_code == 0 and outcome.findings is None
    (reference,) = [text for stream, text in outcome.lines if stream == "out"]
    digest = reference.removeprefix("sha256:")
    assert (root / "runs" / digest[:2] / f"{digest}.json").is_file()
    assert yaml.safe_load(recipe.read_text())["runs"] == [reference]
    notes = [text for stream, text in outcome.lines if stream == "err"]
    assert any(text.startswith("recomputed from 8 completed requests") for text in notes)


def test_without_write_recipe_the_recipe_is_untouched_and_the_next_step_named(registry: tuple[Path, Path]) -> None:
    root, recipe = registry
    outcome = execute(AddRunRequest(root=str(root), file=str(VLLM), fmt="vllm", recipe_path=str(recipe)))
    assert outcome.exit_code == 0 and recipe.read_text() == HAND_WRITTEN
    assert any(text.startswith('next: add `- "sha256:') for _, text in outcome.lines)


def test_a_wrong_model_comes_back_as_findings_and_stores_nothing(registry: tuple[Path, Path]) -> None:
    root, recipe = registry
    outcome = execute(
        AddRunRequest(
            root=str(root), file=str(VLLM), fmt="vllm", recipe_path=str(recipe), given={"model": "no-such-model"}
        )
    )
    assert outcome.exit_code == 1 and outcome.findings is not None and outcome.findings.errors
    assert not any((root / "runs").rglob("*.json"))


def test_a_bad_invocation_is_a_usage_error(registry: tuple[Path, Path]) -> None:
    root, _ = registry
    with pytest.raises(UsageError, match="--write-recipe needs --recipe"):
        execute(AddRunRequest(root=str(root), file=str(VLLM), fmt="vllm", write_recipe=True))
    with pytest.raises(UsageError, match="--reference-for needs --from lm-eval"):
        execute(AddRunRequest(root=str(root), file=str(VLLM), fmt="vllm", reference_for="qwen3.8-27b"))


def _new_recipe(root: Path, *extra: str) -> Path:
    assert (
        cli.main(
            [
                "new",
                "inference",
                "--root",
                str(root),
                "--model",
                "qwen3.8-27b",
                "--gpu",
                "h100",
                "--engine",
                "vllm@0.11.0",
                "--quant",
                "fp8",
                "--workload",
                "random-512-64",
                "--author",
                "Lab",
                *extra,
            ]
        )
        == 0
    )
    (recipe,) = (root / "recipes" / "inference").rglob("*.yaml")
    return recipe


def test_a_date_orv_new_chose_becomes_the_runs_date(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    recipe = _new_recipe(root)
    assert yaml.safe_load(recipe.read_text())["measured"] != "2026-10-18"
    outcome = execute(
        AddRunRequest(root=str(root), file=str(VLLM), fmt="vllm", recipe_path=str(recipe), write_recipe=True)
    )
    assert outcome.exit_code == 0
    text = recipe.read_text()
    assert yaml.safe_load(text)["measured"] == "2026-10-18"  # the day serve-detailed.json was measured
    assert "orv new's default" not in text and "# The day the benchmark ran.\n" in text
    assert cli.main(["check", "--root", str(root), "--no-cache", "-q"]) == 0


def test_a_date_a_person_typed_is_kept_and_the_difference_said(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    recipe = _new_recipe(root, "--measured", "2026-10-20")
    outcome = execute(
        AddRunRequest(root=str(root), file=str(VLLM), fmt="vllm", recipe_path=str(recipe), write_recipe=True)
    )
    assert outcome.exit_code == 0 and yaml.safe_load(recipe.read_text())["measured"] == "2026-10-20"
    assert any(
        "the recipe says measured 2026-10-20 but the run was measured 2026-10-18" in text for _, text in outcome.lines
    )


def test_a_run_at_another_point_of_a_sweep_fills_that_points_claim(
    registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, recipe = registry
    text = HAND_WRITTEN.replace(
        "serving: {context_len: 8192, concurrency: 1}",
        "serving: {context_len: 8192, concurrency: 4}\nsweep:\n  concurrency: [1, 4]",
    )
    recipe.write_text(text.replace("claimed: {}", "claimed: {decode_tok_s: 30.0}"), encoding="utf-8")
    outcome = execute(
        AddRunRequest(root=str(root), file=str(VLLM), fmt="vllm", recipe_path=str(recipe), write_recipe=True)
    )  # serve-detailed.json ran at --max-concurrency 1
    assert outcome.exit_code == 0, outcome.lines
    data = yaml.safe_load(recipe.read_text())
    assert data["claimed"] == {"decode_tok_s": 30.0}  # the headline point (concurrency 4) is untouched
    (point,) = data["sweep"]["claimed"]
    assert point["concurrency"] == 1 and point["decode_tok_s"] == pytest.approx(41.56, abs=0.01)
    assert any("filled the sweep's claim at concurrency 1" in text for _, text in outcome.lines)
    capsys.readouterr()
    cli.main(["check", "--root", str(root), "--no-cache", "--format", "json"])
    codes = {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert not codes & {"ORV206", "ORV207", "ORV520"}  # the run matches its point and its point's claim
