"""A llama.cpp build as a pin: the build tag `b<build_number>` plus its commit (docs/versions.md).

llama-bench states both for the build that ran (`build_number`, `build_commit`: cmake/build-info.cmake
takes them from `git rev-list --count HEAD` and `git rev-parse --short HEAD`). A recipe's engine pins
llama.cpp as `version: b<N>` and optionally `commit`; a llama-bench run backs it only when the two name
the same build (ORV248; add-run refuses such a run before it is stored).
"""

from __future__ import annotations

from validator.models import Component
from validator.stacks.engines import LLAMA_BENCH, LLAMA_CPP_NAMES

TOOL = LLAMA_BENCH


def build_tag(build_number: int) -> str:
    return f"b{build_number}"


def same_commit(a: str, b: str) -> bool:
    """Short and full hashes of one commit agree on their common prefix (git prints 7 to 12 characters)."""
    a, b = a.lower(), b.lower()
    return len(min(a, b, key=len)) >= 7 and (a.startswith(b) or b.startswith(a))


def pin_problem(engine: Component | None, tool_version: str, tool_commit: str | None) -> str | None:
    """Why a llama-bench build (tool_version `b<N>`, tool_commit) is not the recipe's engine pin, or None."""
    built = f"{tool_version}" + (f" (commit {tool_commit})" if tool_commit else "")
    if engine is None:
        return f"the recipe names no engine; the llama-bench output was built from llama.cpp {built}"
    if engine.name.lower() not in LLAMA_CPP_NAMES:
        return f"the recipe's engine is {engine.name}, but llama-bench measures llama.cpp (build {built})"
    if engine.version is not None and engine.version != tool_version:
        return f"the recipe pins llama.cpp {engine.version}, the llama-bench output was built from {built}"
    if engine.commit and tool_commit and not same_commit(engine.commit, tool_commit):
        return (
            f"the recipe pins llama.cpp commit {engine.commit}, the llama-bench output was built from "
            f"commit {tool_commit} ({tool_version})"
        )
    return None
