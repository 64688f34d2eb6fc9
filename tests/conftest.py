"""Shared fixtures: registry trees in temporary folders (helpers live in tests/testing/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.registry import make_registry


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry")
