"""End to end: a recipe climbs T0 -> T1 -> T2 -> T3 as evidence from real tool outputs is added.

Runs are stored the way contributors store them (`orv add-run`, with --from for tool outputs);
each stage is checked by the engine and tiered by validator.evidence.tiers.derive, and must be clean.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.testing.paths import FIXTURES
from tests.testing.quality import reworded
from tests.testing.registry import INFERENCE_RECIPE_TEXT, TOOLS, VALID_TRAINING_RECIPE, make_registry
from validator.checks.collect import Collector
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.evidence import tiers
from validator.hashing import run_path
from validator.load.pipeline import assemble_loaded, load_tree

TRAINING = VALID_TRAINING_RECIPE.read_text(encoding="utf-8")
TRAINING_PATH = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
INFERENCE = INFERENCE_RECIPE_TEXT
INFERENCE_PATH = "recipes/inference/qwen3.8-27b/qwen3-8-27b-h100-vllm-fp8-c1.yaml"


def registered(tmp_path: Path, root: Path, *measurers: str) -> list[Path]:
    """Fresh ssh-keygen keys for the measurers, listed in root's measurers/allowed_signers."""
    keys, lines = [], []
    for who in measurers:
        key = tmp_path / "keys" / who
        key.parent.mkdir(exist_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        keys.append(key)
        lines.append(who + " " + " ".join(key.with_suffix(".pub").read_text().split()[:2]))
    (root / "measurers").mkdir(exist_ok=True)
    (root / "measurers" / "allowed_signers").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return keys


class Registry:
    def __init__(self, root: Path, recipe_path: str, recipe_text: str) -> None:
        self.root, self.recipe_path, self.recipe_text = root, recipe_path, recipe_text
        self.write_runs([])

    def write_runs(self, digests: list[str]) -> None:
        refs = json.dumps([f"sha256:{d}" for d in digests])
        path = self.root / self.recipe_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.recipe_text.replace("runs: []", f"runs: {refs}"), encoding="utf-8")

    def add_run(self, capsys: pytest.CaptureFixture[str], *args: str) -> str:
        code = main(["add-run", "--root", str(self.root), *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out.strip().split(":")[1]

    def tier(self, digests: list[str]) -> tiers.TierResult:
        self.write_runs(digests)
        result = run(Config(root=str(self.root), skip_boards=True))
        errors = [d for d in result.diagnostics if d.severity.value == "error"]
        assert errors == [], errors
        snapshot = assemble_loaded(str(self.root), load_tree(str(self.root)), Collector())
        self.warnings = [d.code for d in result.diagnostics]
        return tiers.derive(snapshot, result.diagnostics)[self.recipe_path]


def test_training_recipe_climbs_from_claimed_to_reproduced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reg = Registry(make_registry(tmp_path / "registry"), TRAINING_PATH, TRAINING)
    recipe = str(reg.root / TRAINING_PATH)
    assert reg.tier([]).tier == "T0"

    # T1: a summary-only run document (the tool's headline, no per-step samples), stored as JSON.
    summary_only = {
        "kind": "training",
        "tool": {"name": "megatron-lm", "version": "0.30.0"},
        "model": "qwen3.8-27b",
        "hardware": {"gpu": "h100", "count": 8},
        "software": {"framework": {"name": "megatron-core", "version": "0.30.0"}},
        "workload": "sft-8k-gb128-bf16",
        "layout": {"tp": 1, "pp": 4, "dp": 2, "layer_split": [16, 17, 17, 14]},
        "measured_at": "2026-10-18",
        "measured_by": "lab-a",
        "summary": {"tokens_per_s_per_gpu": 1480.4},
    }
    doc = tmp_path / "summary.json"
    doc.write_text(json.dumps(summary_only, indent=2), encoding="utf-8")
    summary = reg.add_run(capsys, str(doc))
    t1 = reg.tier([summary])
    assert t1.tier == "T1" and "run has no raw samples" in t1.reasons

    # T2: a Megatron-LM log with every step; recomputes to the claim and converges.
    log_a = reg.add_run(
        capsys,
        "--from",
        "megatron",
        str(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"),
        "--recipe",
        recipe,
        "--measured-by",
        "lab-a",
    )
    t2 = reg.tier([summary, log_a])
    assert t2.tier == "T2" and t2.verified_runs == (log_a,)

    # Still T2: a second measurer's run agrees, but neither is signed by a registered measurer.
    alice, bob = registered(tmp_path, reg.root, "lab-a", "lab-b")
    log_b = reg.add_run(
        capsys,
        "--from",
        "megatron",
        str(TOOLS / "megatron" / "qwen3-8-27b-second-measurer.log"),
        "--recipe",
        recipe,
        "--measured-by",
        "lab-b",
    )
    assert reg.tier([summary, log_a, log_b]).tier == "T2"

    # T3: each measurer signs their own run with their registered key.
    for digest, key in ((log_a, alice), (log_b, bob)):
        assert main(["sign", str(reg.root / run_path(digest)), "--key", str(key)]) == 0
    t3 = reg.tier([summary, log_a, log_b])  # every stored run stays referenced (no orphan)
    assert t3.tier == "T3" and set(t3.verified_runs) == {log_a, log_b}


def test_a_diverged_run_alone_is_an_error_beside_a_converging_one_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reg = Registry(make_registry(tmp_path / "registry"), TRAINING_PATH, TRAINING)
    recipe = str(reg.root / TRAINING_PATH)
    diverged_log = str(TOOLS / "megatron" / "diverged.log")
    # alone it would be the recipe's only run, all diverged (ORV219): refused before it is stored (issue 52)
    code = main(["add-run", "--root", str(reg.root), "--from", "megatron", diverged_log, "--recipe", recipe])
    err = capsys.readouterr().err
    assert code == 1 and "ORV219 error" in err and not list((reg.root / "runs").rglob("*.json"))
    converged = reg.add_run(
        capsys, "--from", "megatron", str(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"), "--recipe", recipe
    )
    reg.write_runs([converged])
    diverged = reg.add_run(capsys, "--from", "megatron", diverged_log, "--recipe", recipe)  # beside it: a warning
    result = reg.tier([diverged, converged])
    assert result.tier == "T2" and result.verified_runs == (converged,)
    assert reg.warnings == ["ORV210"]


def test_inference_recipe_climbs_from_claimed_to_reproduced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reg = Registry(make_registry(tmp_path / "registry"), INFERENCE_PATH, INFERENCE)
    recipe = str(reg.root / INFERENCE_PATH)
    assert reg.tier([]).tier == "T0"

    summary = reg.add_run(capsys, "--from", "vllm", str(TOOLS / "vllm" / "serve-summary-only.json"), "--recipe", recipe)
    t1 = reg.tier([summary])
    assert t1.tier == "T1" and "run has no raw samples" in t1.reasons

    detailed = reg.add_run(capsys, "--from", "vllm", str(TOOLS / "vllm" / "serve-detailed.json"), "--recipe", recipe)
    assert reg.tier([summary, detailed]).tier == "T2"

    # A second measurer benchmarks the same vLLM server with SGLang's client (--backend vllm) and
    # signs; the first signs too (the recipe's author, ATTUNE, is the default measured_by).
    attune, bob = registered(tmp_path, reg.root, "ATTUNE", "lab-b")
    second = reg.add_run(
        capsys,
        "--from",
        "sglang",
        str(TOOLS / "sglang" / "bench_serving.jsonl"),
        "--record",
        "2",
        "--recipe",
        recipe,
        "--measured-by",
        "lab-b",
        "--tool-version",
        "0.5.4",
        "--sign-with",
        str(bob),
    )
    assert reg.tier([summary, detailed, second]).tier == "T2"
    assert main(["sign", str(reg.root / run_path(detailed)), "--key", str(attune)]) == 0
    capped = reg.tier([summary, detailed, second])
    assert capped.tier == "T2" and any("needs verified quality" in r for r in capped.reasons)

    # fp8 is not the model's published precision: T3 also needs `verified` quality (docs/quality.md).
    lmeval = FIXTURES / "lmeval"
    reg.add_run(
        capsys,
        "--from",
        "lm-eval",
        str(lmeval / "reference"),
        "--reference-for",
        "qwen3.8-27b",
        "--quant",
        "bf16",
        "--measured-by",
        "lab-a",
    )
    quality = reg.add_run(
        capsys, "--from", "lm-eval", str(reworded(lmeval / "q995", tmp_path / "own")), "--recipe", recipe
    )
    t3 = reg.tier([summary, detailed, second, quality])
    assert t3.tier == "T3" and set(t3.verified_runs) == {detailed, second}
    assert t3.quality.status == "verified" and t3.quality.ratio == pytest.approx(0.745 / 0.75)


def test_the_same_output_stored_again_as_another_measurer_is_a_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's T3-from-one-measurement attempt: `orv add-run` twice, the second `--measured-by other-lab`."""
    reg = Registry(make_registry(tmp_path / "registry"), INFERENCE_PATH, INFERENCE)
    recipe = str(reg.root / INFERENCE_PATH)
    first = reg.add_run(capsys, "--from", "vllm", str(TOOLS / "vllm" / "serve-detailed.json"), "--recipe", recipe)
    again = reg.add_run(
        capsys,
        "--from",
        "vllm",
        str(TOOLS / "vllm" / "serve-detailed.json"),
        "--recipe",
        recipe,
        "--measured-by",
        "other-lab",
    )
    assert first != again
    reg.write_runs([first, again])
    result = run(Config(root=str(reg.root), skip_boards=True))
    assert [(d.code, d.path) for d in result.diagnostics if d.severity.value == "error"] == [
        ("ORV304", run_path(again))
    ]
