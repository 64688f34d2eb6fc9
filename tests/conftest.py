"""Shared fixtures: registry trees in temporary folders, and the CLI run in-process."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis: CI (.ci/run, the default) is derandomized — every run tries the same inputs, so a
# failure is reproducible and a pass is not luck. HYPOTHESIS_PROFILE=explore draws new random
# inputs each run and, for tests that leave max_examples to the profile, many more of them; a
# failure it finds becomes an explicit case in tests/test_crash_regressions.py.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, database=None, deadline=None, print_blob=True,
                          max_examples=int(os.environ.get("ORV_EXPLORE_EXAMPLES", "20000")))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def fuzz_examples(ci: int) -> int:
    """A fuzz test's budget: `ci` examples in CI, the explore profile's many when exploring."""
    return settings.default.max_examples if os.environ.get("HYPOTHESIS_PROFILE") == "explore" else ci

HERE = Path(__file__).parent
CASES = HERE / "cases"
BASE = CASES / "_base"
TOOLS = HERE / "fixtures" / "tools"  # real benchmark-tool output formats (made by make_fixtures.py there)
VALID_TRAINING_RECIPE = CASES / "valid-training" / "recipes" / "training" / "qwen3.8-27b" / \
    "qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
# An inference recipe the vLLM/SGLang fixtures were measured for (adapters, tiers end to end).
INFERENCE_RECIPE_TEXT = """\
id: qwen3-8-27b-h100-vllm-fp8-c1
kind: inference
model: qwen3.8-27b
hardware: {gpu: h100, count: 1}
author: ATTUNE
measured: "2026-10-18"
software:
  engine: {name: vllm, version: "0.11.0"}
quant: fp8
serving: {context_len: 8192, concurrency: 1}
claimed: {decode_tok_s: 41.5, ttft_ms: 63.5}
runs: []
"""


def make_registry(dest: Path, *overlays: Path) -> Path:
    """A registry at dest: the base catalog, then each overlay's files on top (expected.txt left out)."""
    shutil.copytree(BASE, dest, symlinks=True, dirs_exist_ok=True)
    for overlay in overlays:
        shutil.copytree(overlay, dest, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("expected.txt"))
    for folder in ("recipes", "runs"):
        (dest / folder).mkdir(exist_ok=True)
    return dest


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry")
