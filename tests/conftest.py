"""Shared fixtures: registry trees in temporary folders, and the CLI run in-process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CASES = HERE / "cases"
BASE = CASES / "_base"


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
