"""Megatron-LM logs as `training_log` prints them at core_v0.14.0 .. core_v0.17.0 (fixtures: make_fixtures.py).

NaN losses (bf16: no `lm loss`, `grad norm: nan`; validation `NAN`) become the convergence finding
naming the first NaN iteration; fp16 overflow-skipped iterations are skipped steps, not NaN, and
leave the loss comparison and the warm-up count; launcher prefixes and microseconds are read.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.testing.paths import CASES
from tests.testing.registry import TOOLS, VALID_TRAINING_RECIPE, make_registry
from validator.adapters import AdapterError, Source, convert, metadata
from validator.cli import main
from validator.engine.evaluate import Config, analyse, run
from validator.evidence.tiers import derive
from validator.registry.store import store_run_document
from validator.science.throughput import training_facts

BASE = str(CASES / "_base")
MEGATRON = TOOLS / "megatron"
TRAINING_PATH = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"


def samples(name: str, base: str = BASE) -> list[dict]:
    meta = metadata("megatron", base, str(VALID_TRAINING_RECIPE), {})
    return convert("megatron", Source(name, (MEGATRON / name).read_bytes()), meta).document["samples"]


def fp16_registry(tmp_path: Path) -> Path:
    """The base registry with its SFT workload in fp16 (the dtype the fp16 logs trained in)."""
    root = make_registry(tmp_path / "registry")
    workloads = root / "catalog" / "workloads.yaml"
    workloads.write_text(workloads.read_text().replace("dtype: bf16", "dtype: fp16"))
    (root / TRAINING_PATH).parent.mkdir(parents=True)
    (root / TRAINING_PATH).write_text(VALID_TRAINING_RECIPE.read_text())
    return root


@pytest.mark.parametrize("name", ["nan.log", "nan-v0.17-torchrun.log"])
def test_bf16_nan_from_iteration_77_is_recorded_from_77_on(name: str) -> None:
    got = samples(name)
    assert [s["step"] for s in got if isinstance(s["loss"], str)] == list(range(77, 101))
    assert {s["loss"] for s in got[76:]} == {"nan"}


def test_the_convergence_finding_names_iteration_77(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    (root / TRAINING_PATH).parent.mkdir(parents=True)
    recipe = root / TRAINING_PATH
    recipe.write_text(VALID_TRAINING_RECIPE.read_text())
    before = recipe.read_bytes()
    code = main(
        ["add-run", "--root", str(root), "--from", "megatron", str(MEGATRON / "nan.log"), "--recipe", str(recipe)]
    )
    err = capsys.readouterr().err
    # refused before it is stored (issue 52): its only run diverged, so `orv check` would reject the recipe
    assert code == 1 and "ORV219 error" in err and "nothing was stored" in err
    assert recipe.read_bytes() == before and not list((root / "runs").rglob("*.json"))
    # stored anyway (a run document needs no recipe), `orv check` names the iteration
    doc = convert(
        "megatron",
        Source("nan.log", (MEGATRON / "nan.log").read_bytes()),
        metadata("megatron", str(root), str(recipe), {"workload": None}),
    ).document
    digest = store_run_document(str(root), doc).digest
    recipe.write_text(recipe.read_text().replace("runs: []", f'runs: ["sha256:{digest}"]'))
    found = {d.code: d for d in run(Config(root=str(root), skip_boards=True)).diagnostics}
    assert "loss is nan at step 77" in found["ORV210"].message
    assert found["ORV219"].severity.value == "error"  # its only run diverged: the recipe is rejected


def test_a_nan_validation_loss_marks_its_iteration() -> None:
    got = samples("nan-validation.log")
    assert [s["step"] for s in got if s["loss"] == "nan"] == [20]


def test_fp16_overflow_skips_are_skipped_steps_not_nan() -> None:
    for name in ("fp16-skips.log", "fp16-skips-v0.17.log"):  # v0.16: no loss printed; v0.17: lm loss 0.0
        meta = metadata("megatron", BASE, str(VALID_TRAINING_RECIPE), {"workload": None})
        meta = meta.with_values("test", dtype="fp16")
        got = convert("megatron", Source(name, (MEGATRON / name).read_bytes()), meta).document["samples"]
        assert [s["loss"] for s in got[:3]] == ["skipped"] * 3, name
        assert all(isinstance(s["loss"], float) for s in got[3:]), name


def test_skipped_steps_do_not_use_up_the_warm_up() -> None:
    rows = [
        {"step": s, "time_s": 10.0 if s <= 5 else 1.0, "tokens": 100, "loss": "skipped" if s <= 3 else 1.0}
        for s in range(1, 11)
    ]
    # warm-up 2: steps 4 and 5 are the first two that updated the model, so timing starts at 6
    assert training_facts(rows, 1, 2).headline["tokens_per_s_per_gpu"] == pytest.approx(100.0)


def test_an_fp16_run_with_early_overflow_skips_passes_convergence_and_reaches_t2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fp16_registry(tmp_path)
    recipe = root / TRAINING_PATH
    assert (
        main(
            [
                "add-run",
                "--root",
                str(root),
                "--from",
                "megatron",
                str(MEGATRON / "fp16-skips.log"),
                "--recipe",
                str(recipe),
            ]
        )
        == 0
    ), capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "3 iteration(s) skipped by fp16 loss scaling" in err
    recipe.write_text(recipe.read_text().replace("runs: []", f'runs: ["{out.strip()}"]'))
    assert [d.code for d in run(Config(root=str(root), skip_boards=True)).diagnostics] == []
    analysis = analyse(str(root))
    assert derive(analysis.snapshot, analysis.diagnostics)[TRAINING_PATH].tier == "T2"


def test_launcher_prefixes_and_microseconds_are_read() -> None:
    meta = metadata("megatron", BASE, str(VALID_TRAINING_RECIPE), {})
    doc = convert("megatron", Source("x", (MEGATRON / "nan-v0.17-torchrun.log").read_bytes()), meta).document
    assert doc["layout"]["layer_split"] == [16, 17, 17, 14]  # the arguments block, behind "[default0]:"
    assert doc["measured_at"] == "2026-10-18T09:14:05"
    assert (MEGATRON / "nan-v0.17-torchrun.log").read_text().startswith("[default0]:")
    assert (MEGATRON / "nan.log").read_text().startswith("0: ")


def test_a_line_with_no_loss_and_no_reason_is_still_orv108() -> None:
    text = (MEGATRON / "qwen3-8-27b-tp1-pp4-dp2.log").read_text()
    text = re.sub(r" lm loss: [0-9.E+-]+ \|", "", text, count=1)
    assert text != (MEGATRON / "qwen3-8-27b-tp1-pp4-dp2.log").read_text()
    meta = metadata("megatron", BASE, str(VALID_TRAINING_RECIPE), {})
    with pytest.raises(AdapterError) as exc:
        convert("megatron", Source("x", text.encode()), meta)
    assert [d.code for d in exc.value.diagnostics] == ["ORV108"]
