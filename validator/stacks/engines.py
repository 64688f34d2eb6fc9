"""How engines are spelled: every name a recipe's component (or a tool) gives each engine family, in one place."""

from __future__ import annotations

LLAMA_BENCH = "llama-bench"  # llama.cpp's own benchmark tool (adapters/llamabench.py)
# llama.cpp as a recipe's served engine: the project and its server binary
LLAMA_CPP_SERVED = frozenset({"llama.cpp", "llama-cpp", "llamacpp", "llama-server"})
# every spelling of llama.cpp (lower case): served, its bench tool, its repository; one release scheme (pins.py)
LLAMA_CPP_NAMES = LLAMA_CPP_SERVED | {LLAMA_BENCH, "ggml-org/llama.cpp"}

# TensorRT-LLM as a recipe's engine component (trtllm-bench loads the model itself, stacks/reproduce.py) ...
TRT_LLM_ENGINES = frozenset({"tensorrt-llm", "tensorrt_llm", "trtllm"})
# ... and every spelling of it (lower case), for its release scheme
TRT_LLM_NAMES = TRT_LLM_ENGINES | {"trt-llm", "nvidia/tensorrt-llm"}

VLLM_NAMES = frozenset({"vllm", "vllm-project/vllm"})
SGLANG_NAMES = frozenset({"sglang", "sgl-project/sglang"})
# Megatron-LM as a training recipe's framework (its launch is read through stacks/flags/megatron.json)
MEGATRON_NAMES = frozenset({"megatron", "megatron-lm", "megatron-core", "megatron_core", "nvidia/megatron-lm"})

# Engines that ship no serving benchmark of their own: measured through their OpenAI-compatible server
# with vLLM's client (docs/contributing.md, "Any OpenAI-compatible server").
CLIENT_MEASURED = frozenset({"exllamav3", "exllamav2", "tabbyapi"}) | LLAMA_CPP_SERVED
