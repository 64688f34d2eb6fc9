"""Per-engine release schemes (docs/versions.md): each engine's real tags are exact, others are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.paths import REPO
from tests.testing.registry import CASES, make_registry
from validator.engine.evaluate import Config, run
from validator.models import Component
from validator.stacks.pins import RELEASE_SCHEMES, component_problems, version_problem

EXACT = [
    ("llama.cpp", "b6800"),
    ("llama.cpp", "b10840"),
    ("llama-server", "b4500"),
    ("vllm", "0.11.0"),
    ("vllm", "v0.11.0"),
    ("vllm", "0.11.0+cu128"),
    ("vllm", "0.28.1rc1.dev93+cu133"),
    ("sglang", "0.5.19"),
    ("sglang", "v0.5.1.post1"),
    ("tensorrt-llm", "1.2.0rc6"),
    ("tensorrt-llm", "1.2.0rc6.post3"),
    ("TensorRT-LLM", "0.18.2"),
    ("tensorrt_llm", "0.10.0.dev2024043000"),
    ("exllamav3", "sha256:" + "a" * 64),
    ("megatron-core", "0.30.0"),
]
NOT_EXACT = [
    ("llama.cpp", "6800", "ORV407"),
    ("llama.cpp", "1.0.0", "ORV407"),
    ("llama.cpp", "b6800-cuda", "ORV407"),
    ("llama.cpp", "latest", "ORV402"),
    ("vllm", ">=0.10", "ORV407"),
    ("vllm", "0.10.*", "ORV407"),
    ("vllm", "0.11 fork", "ORV407"),
    ("sglang", "0.5.x", "ORV407"),
    ("tensorrt-llm", "1.2.0-rc6", "ORV407"),
    ("tensorrt-llm", "1.2", "ORV407"),
    ("megatron-core", "b6800", "ORV407"),
    ("vllm", "0.11.0+d20261015", "ORV406"),
]


@pytest.mark.parametrize("name, version", EXACT)
def test_each_engines_real_releases_are_exact(name: str, version: str) -> None:
    assert version_problem(version, name) is None
    assert component_problems(Component(name=name, version=version)) == []


@pytest.mark.parametrize("name, version, code", NOT_EXACT)
def test_versions_outside_an_engines_scheme_are_findings(registry: Path, name: str, version: str, code: str) -> None:
    recipe = registry / "recipes/inference/qwen3.8-27b/qwen3-8-27b-h100-x.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text(
        f"""id: qwen3-8-27b-h100-x
kind: inference
model: qwen3.8-27b
hardware: {{gpu: h100, count: 1}}
author: a
measured: "2026-10-18"
software:
  engine: {{name: {name}, version: "{version}"}}
quant: fp8
serving: {{concurrency: 1}}
claimed: {{decode_tok_s: 40.0}}
runs: []
workload: chat-1000-100
""",
        encoding="utf-8",
    )
    found = [d for d in run(Config(root=str(registry), skip_boards=True)).diagnostics if d.path.endswith("-x.yaml")]
    assert [(d.code, d.line) for d in found] == [(code, 8)], found
    if code == "ORV407" and name in ("llama.cpp", "tensorrt-llm"):
        scheme = next(s for s in RELEASE_SCHEMES if name in s.names)
        # the hint names the scheme's grammar, never an example number to paste (issue 15)
        assert scheme.grammar in found[0].hint and "docs/versions.md" in found[0].hint
        assert scheme.example not in found[0].hint


def test_docs_name_every_scheme_and_its_names() -> None:
    text = (REPO / "docs" / "versions.md").read_text(encoding="utf-8")
    for scheme in RELEASE_SCHEMES:
        assert f"| {scheme.engine} |" in text and scheme.example in text
        for name in scheme.names - {
            "ggml-org/llama.cpp",
            "vllm-project/vllm",
            "sgl-project/sglang",
            "nvidia/tensorrt-llm",
        }:
            assert f"`{name}`" in text, name


def test_llama_cpp_build_tag_case(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "valid-llama-cpp-build-tag")
    assert run(Config(root=str(root), skip_boards=True)).diagnostics == ()
