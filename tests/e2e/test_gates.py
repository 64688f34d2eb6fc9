"""The code gates run in CI as part of the test command the README gives: ruff (lint and format) on
validator/, tests/ and bench/, and mypy on validator/, at the settings in pyproject.toml — the same hooks
.pre-commit-config.yaml runs on a commit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.testing.paths import REPO

ROOT = REPO
CODE = ("validator", "tests", "bench")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_lint_passes() -> None:
    done = _run("ruff", "check", *CODE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_applied() -> None:
    done = _run("ruff", "format", "--check", *CODE)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_passes() -> None:
    done = _run("mypy")  # files and strictness from pyproject.toml's [tool.mypy]
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_gates_are_the_pre_commit_hooks() -> None:
    """One set of gates: what CI runs here is what a contributor's pre-commit runs."""
    config = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    for entry in ("ruff check", "ruff format", "mypy"):
        assert f"entry: {entry}" in config, entry
