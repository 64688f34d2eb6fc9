"""Registry trees for tests: the golden cases' small catalog, overlays on top of it, and shipped tool outputs."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from tests.testing.paths import CASES, FIXTURES, REPO

BASE = CASES / "_base"
TOOLS = FIXTURES / "tools"  # real benchmark-tool output formats (made by make_fixtures.py there)
VLLM = TOOLS / "vllm" / "serve-detailed.json"  # 9 requests, 1 failed (vllm's own `failed`: 1)
VALID_TRAINING_RECIPE = (
    CASES / "valid-training" / "recipes" / "training" / "qwen3.8-27b" / "qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
)
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
workload: random-512-64
claimed: {decode_tok_s: 41.5, ttft_ms: 63.5}
runs: []
"""


def make_registry(dest: Path, *overlays: Path) -> Path:
    """A registry at dest: the base catalog, then each overlay's files on top (expected.txt left out)."""
    shutil.copytree(BASE, dest, symlinks=True, dirs_exist_ok=True)
    for overlay in overlays:
        shutil.copytree(overlay, dest, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("expected.txt"))
    for folder in ("recipes", "runs"):
        (dest / folder).mkdir(exist_ok=True)
    return dest


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def fresh_registry(dest: Path) -> Path:
    """The repository's hand-written catalog and nothing generated (what the legacy importers start from)."""
    shutil.copytree(REPO / "catalog", dest / "catalog")
    (dest / "catalog" / "starting-points.yaml").unlink(missing_ok=True)
    (dest / "recipes").mkdir()
    (dest / "runs").mkdir()
    return dest


def written(root: Path) -> dict[str, str]:
    """Every file under recipes/, runs/ and catalog/ with the SHA-256 of its bytes: equal before and after a
    command that refused its input means it wrote nothing there."""
    out = {}
    for top in ("recipes", "runs", "catalog"):
        for path in sorted((root / top).rglob("*")):
            if path.is_file():
                out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


# A recipe as a person writes it: comments, single and double quotes, odd spacing, a folded note.
HAND_WRITTEN = """\
# yaml-language-server: $schema=../../../schema/recipe-inference.schema.json
# Measured on our lab box; keep these comments.
id: qwen3-8-27b-h100-vllm-fp8-c1
kind: inference
model: 'qwen3.8-27b'      # single quotes on purpose
hardware:   {gpu: h100,  count: 1}
author: "ATTUNE"
measured: '2026-10-18'
software:
  engine: {name: vllm, version: "0.11.0"}   # pinned
quant: fp8
serving: {context_len: 8192, concurrency: 1}
workload: random-512-64
claimed: {}
runs: []
notes: >-
  Single stream, 8k context,
  default scheduler.
"""


def hand_written_registry(dest: Path) -> tuple[Path, Path]:
    """A registry holding HAND_WRITTEN, the recipe the vLLM fixture (VLLM) was measured for: (root, recipe)."""
    root = make_registry(dest)
    recipe = root / "recipes" / "inference" / "qwen3.8-27b" / "qwen3-8-27b-h100-vllm-fp8-c1.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text(HAND_WRITTEN, encoding="utf-8")
    return root, recipe


def boards_tree(root: Path) -> dict[str, bytes]:
    """Every file under a registry's boards/, by path (what a full and an incremental update must agree on)."""
    out = {}
    for here, _dirs, names in os.walk(root / "boards"):
        for name in names:
            full = Path(here) / name
            out[full.relative_to(root).as_posix()] = full.read_bytes()
    return out
